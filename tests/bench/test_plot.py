"""--plot: a real PNG with one line per path in each op's panel and the peak as a line; a clear error without
matplotlib."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import needs
import pytest

from mhcdoctor.bench import plot as plot_module
from mhcdoctor.bench import role
from mhcdoctor.documents.bench import BenchDocument, BenchResult
from mhcdoctor.documents.vocabulary import Op
from mhcdoctor.errors import InputError
from mhcdoctor.models import ModelConfig
from mhcdoctor.verify import cases

pytestmark = needs.library("matplotlib")


def result(path: str, op: Op, tokens: int, tb_per_s: float | None) -> BenchResult:
    return {
        "path": path,
        "role": role(path),
        "op": op,
        "tokens": tokens,
        "status": "pass" if tb_per_s else "fail",
        "called": None,
        "torch_piece": False,
        "median_ms": None,
        "graph_ms": None,
        "graph_error": None,
        "min_ms": None,
        "runs": None,
        "bytes": 0,
        "tb_per_s": tb_per_s,
        "fraction_of_peak": None,
        "max_abs_err": None,
        "max_rel_err": None,
        "reason": None,
    }


def doc() -> BenchDocument:
    results = [
        result(path, op, t, bw * t / (t + 64))
        for path, bw in (("vllm:tilelang", 4.0), ("tilelang", 3.0), ("torch", 0.4))
        for op in ("mhc_pre", "mhc_post")
        for t in (1, 64, 4096)
    ]
    results.append(result("triton", "mhc_post", 64, None))  # wrong: not drawn
    model = ModelConfig("deepseek-v4-pro", 7168).to_dict()
    return {
        "schema": "mhcdoctor.bench/1",
        "mhcdoctor_version": "0",
        "created": "",
        "model": {**model, "sublayers_per_layer": 2},
        "params": cases.Params.from_model(ModelConfig("deepseek-v4-pro", 7168)).to_dict(),
        "tokens": [1, 64, 4096],
        "device": "cuda:0",
        "device_name": "NVIDIA H200",
        "timer": "cuda-events",
        "peak": {"tb_per_s": 4.8, "how": "table", "device": "H200", "source": ""},
        "selected": None,
        "fused_post_pre": None,
        "vllm": "0.34.0",
        "roles": {"vllm:tilelang": "vllm", "tilelang": "probe", "torch": "torch", "triton": "probe"},
        "paths": [],
        "results": results,
        "step": {"plan": None, "reason": None, "batches": []},
        "verdict": "ok",
        "problems": [],
        "seconds": 0.0,
    }


@pytest.mark.slow
def test_the_png_has_a_line_per_path_and_the_peak_in_each_panel(tmp_path: Path) -> None:
    out = tmp_path / "bw.png"
    summary = plot_module.plot(doc(), str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert summary["panels"] == {
        "mhc_pre": ["vllm:tilelang", "tilelang (probe, not vLLM's)", "torch", "peak 4.8 TB/s (table)"],
        "mhc_post": ["vllm:tilelang", "tilelang (probe, not vLLM's)", "torch", "peak 4.8 TB/s (table)"],
    }


@pytest.mark.slow
def test_a_path_keeps_its_colour_in_every_panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.axes import Axes

    drawn: list[tuple[str, str, str]] = []
    plain = Axes.plot

    def recording(ax: Axes, *args: Any, **kwargs: Any) -> Any:
        drawn.append((ax.get_title(), str(kwargs.get("label")), str(kwargs.get("color"))))
        return plain(ax, *args, **kwargs)

    monkeypatch.setattr(Axes, "plot", recording)
    only_torch_in_pre = doc()
    only_torch_in_pre["results"] = [
        r for r in only_torch_in_pre["results"] if not (r["op"] == "mhc_pre" and r["path"] == "tilelang")
    ]
    plot_module.plot(only_torch_in_pre, str(tmp_path / "bw.png"))
    torch_colours = {colour for _, label, colour in drawn if label == "torch"}
    assert len(drawn) == 5 and len(torch_colours) == 1
    assert torch_colours != {colour for _, label, colour in drawn if label == "tilelang (probe, not vLLM's)"}


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"pip install 'mhcdoctor\[plot\]'"):
        plot_module.plot(doc(), "never-written.png")
