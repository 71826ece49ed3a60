"""`mhcdoctor bench` as a user runs it, on the CPU through the torch path, with tiny token counts."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import doctor
import jsonschema
import needs
import pytest

from mhcdoctor.render.bench_text import render_text

pytestmark = pytest.mark.xdist_group("bench-run")  # torch_run, once

HERE = Path(__file__).parent
SCHEMA = json.loads((HERE.parents[1] / "mhcdoctor" / "schemas" / "bench.schema.json").read_text())
SMALL = ["--model", "deepseek-v4-flash", "--hidden", "256", "--device", "cpu", "--tokens", "1,8", "--repeats", "3"]


def bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    return doctor.run("bench", *args, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict, Path]:
    """One bench of the torch path beside a kernel author's mhc_post with a planted bug (the user path), plotted."""
    for library in ("torch", "matplotlib"):
        if not needs.installed(library):
            pytest.skip(f"needs {library}")
    png = tmp_path_factory.mktemp("plot") / "bw.png"
    planted = ("--kernel", "mhc_post=userkernels:transposed_post")
    proc = bench(*SMALL, "--path", "torch", *planted, "--json", "--plot", str(png), cwd=HERE)
    return proc, json.loads(proc.stdout), png


@pytest.mark.slow
def test_torch_on_the_cpu_times_every_op_with_bytes_and_bandwidth_and_no_fraction_of_a_peak(torch_run) -> None:
    """A copy on the CPU measured 0.001 TB/s and ops at 124-307% of it: the CPU gets no peak and no fraction."""
    _, doc, _ = torch_run
    jsonschema.validate(doc, SCHEMA)
    rows = {(r["op"], r["tokens"]): r for r in doc["results"] if r["path"] == "torch"}
    assert sorted(rows) == [(op, t) for op in ("hc_head", "mhc_fused_post_pre", "mhc_post", "mhc_pre") for t in (1, 8)]
    assert all(r["status"] == "pass" and r["median_ms"] > 0 and r["runs"] >= 3 for r in rows.values())
    post = rows[("mhc_post", 8)]
    assert post["tb_per_s"] == pytest.approx(post["bytes"] / (post["median_ms"] / 1e3) / 1e12)
    assert doc["timer"] == "perf_counter" and doc["device"] == "cpu"
    assert (doc["peak"]["tb_per_s"], doc["peak"]["source"]) == (None, "not measured on the CPU")
    assert all(r["fraction_of_peak"] is None for r in doc["results"])


@pytest.mark.slow
def test_a_planted_bug_is_reported_wrong_never_fast(torch_run) -> None:
    proc, doc, _ = torch_run
    user = [r for r in doc["results"] if r["path"] == "user"]
    assert [(r["op"], r["status"], r["median_ms"], r["tb_per_s"]) for r in user] == [
        ("mhc_post", "fail", None, None),
        ("mhc_post", "fail", None, None),
    ]
    assert (proc.returncode, doc["verdict"]) == (3, "fail")  # as verify judges a wrong --kernel
    assert all("user" not in b["paths"] for b in doc["step"]["batches"])


@pytest.mark.slow
def test_the_step_cost_follows_the_model_and_the_plot_has_the_torch_line_only(torch_run) -> None:
    _, doc, png = torch_run
    plan = doc["step"]["plan"]
    assert plan in (
        {"mhc_pre": 86, "mhc_post": 86, "hc_head": 1},
        {"mhc_pre": 1, "mhc_fused_post_pre": 85, "mhc_post": 1, "hc_head": 1},
    )
    assert [b["tokens"] for b in doc["step"]["batches"]] == [1, 8]
    assert png.read_bytes()[:4] == b"\x89PNG"
    # one line for torch in each panel, no peak on the CPU: the wrong user kernel is never drawn
    assert all(lines == ["torch"] for lines in doc["plot"]["panels"].values())


@pytest.mark.slow
def test_the_text_table_says_cpu_timing_and_the_cost_per_step(torch_run) -> None:
    proc, doc, _ = torch_run
    text = render_text(doc)  # what `bench` without --json prints of this document
    assert "time.perf_counter (CPU: no device events; CPU times swing with the machine's load" in text
    assert "peak bandwidth: unknown (not measured on the CPU)" in text
    assert "cost per decode step" in text and "at batch 8" in text
    assert "\nverdict: fail (" in text  # the planted user kernel computes wrong results: fail, as verify says
    assert "\n  - user computes mhc_post wrong at 1 token\n" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("torch ")]
    assert rows and all(row[-2] not in ("0.000", "-0.000") for row in rows)  # TB/s: a CPU's tiny figures stay readable
    assert "timing torch on cpu" in proc.stderr  # progress goes to stderr


@pytest.mark.slow
def test_without_a_gpu_nothing_is_timed_and_no_device_or_timer_is_claimed() -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # torch sees no GPU, on a GPU machine too
    proc = doctor.run("bench", "--hidden", "256", "--path", "torch", "--tokens", "1", "--json", env=env)
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert (proc.returncode, doc["device"], doc["timer"], doc["results"], doc["verdict"]) == (3, None, None, [], "fail")
    assert doc["problems"] == [
        "nothing was timed: no GPU visible to torch (torch.cuda.is_available() is False); "
        "--device cpu times the paths on the CPU"
    ]
    text = render_text(doc)
    assert text.splitlines()[0].endswith("on no device: nothing was timed") and "device events" not in text
    assert "cuda:0" not in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "all"], "bench times one device at a time"),
        (["--tokens", "99999999999", "--device", "cpu"], "need at least 43008.0 TB on cpu, which has"),
        (["--kernel", "mhc_post"], "--kernel takes OP=MODULE:FUNC"),
        (["--plot", "/nonexistent-folder/x.png"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    proc = bench("--path", "torch", *args)
    assert (proc.returncode, proc.stderr.count("\n"), message in proc.stderr) == (2, 1, True), proc.stderr


@pytest.mark.slow
def test_on_the_cpu_the_default_sizes_are_the_decode_sizes_and_it_says_so() -> None:
    """The torch path at 16384 tokens passes bench's timeout on a small CPU: its defaults there are the decode sizes."""
    proc = bench("--hidden", "256", "--device", "cpu", "--path", "torch", "--json", "--repeats", "3")
    assert json.loads(proc.stdout)["tokens"] == [1, 8, 64, 256]
    assert "on the CPU the defaults are the decode sizes 1, 8, 64, 256" in proc.stderr
