"""--plot: a real PNG with one line per path in each op's panel and the peak as a line; a clear error without
matplotlib."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mhcdoctor.bench import plot as plot_module
from mhcdoctor.errors import InputError

pytest.importorskip("matplotlib")


def doc() -> dict:
    results: list[dict[str, object]] = [
        {"path": path, "op": op, "tokens": t, "tb_per_s": bw * t / (t + 64)}
        for path, bw in (("tilelang", 3.0), ("torch", 0.4))
        for op in ("mhc_pre", "mhc_post")
        for t in (1, 64, 4096)
    ]
    results.append({"path": "triton", "op": "mhc_post", "tokens": 64, "tb_per_s": None})  # wrong: not drawn
    return {
        "results": results,
        "peak": {"tb_per_s": 4.8, "how": "table"},
        "model": {"name": "deepseek-v4-pro", "hidden_size": 7168},
        "device_name": "NVIDIA H200",
        "device": "cuda:0",
    }


def test_the_png_has_a_line_per_path_and_the_peak_in_each_panel(tmp_path: Path) -> None:
    out = tmp_path / "bw.png"
    summary = plot_module.plot(doc(), str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert summary["panels"] == {
        "mhc_pre": ["tilelang", "torch", "peak 4.8 TB/s (table)"],
        "mhc_post": ["tilelang", "torch", "peak 4.8 TB/s (table)"],
    }


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
    assert len(drawn) == 3 and len(torch_colours) == 1
    assert torch_colours != {colour for _, label, colour in drawn if label == "tilelang"}


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"pip install 'mhcdoctor\[plot\]'"):
        plot_module.plot(doc(), "never-written.png")
