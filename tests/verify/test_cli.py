"""`mhcdoctor verify` as a user runs it: real child processes, a stand-in aiter installed in a temporary folder.

No AMD GPU exists here: the aiter path is exercised only through the stand-in (tests/verify/aiter_standin),
installed as the distribution amd-aiter, on the CPU.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import doctor
import jsonschema
import pytest

from mhcdoctor.kernels import REGISTRY

HERE = Path(__file__).parent
SCHEMA = json.loads((HERE.parents[1] / "mhcdoctor" / "schemas" / "verify.schema.json").read_text())
SMALL = ["--hidden", "256", "--device", "cpu"]


@pytest.fixture
def aiter_site(tmp_path: Path) -> Path:
    """The stand-in installed as amd-aiter 0.1.13: the package and its dist-info in a site folder."""
    site = tmp_path / "site"
    shutil.copytree(HERE / "aiter_standin" / "aiter", site / "aiter")
    info = site / "amd_aiter-0.1.13.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: amd-aiter\nVersion: 0.1.13\n")
    (info / "top_level.txt").write_text("aiter\n")
    return site


def verify(*args: str, site: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ, **env)
    if site is not None:
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), environ.get("PYTHONPATH")]))
    return doctor.run("verify", *args, env=environ)


def results(proc: subprocess.CompletedProcess[str], path: str) -> dict[tuple[str, int], str]:
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    return {(r["op"], r["tokens"]): r["status"] for r in doc["results"] if r["path"] == path}


@pytest.mark.slow
def test_racy_aiter_fails_past_16_tokens_under_stress(aiter_site: Path) -> None:
    proc = verify(*SMALL, "--path", "aiter", "--stress", "--json", site=aiter_site, AITER_STANDIN_RACE="1")
    got = results(proc, "aiter")
    assert (proc.returncode, got[("mhc_pre", 7)], got[("mhc_pre", 80)], got[("mhc_pre", 16384)]) == (
        3,
        "pass",
        "fail",
        "fail",
    )


@pytest.mark.slow
def test_fixed_aiter_passes_under_stress(aiter_site: Path) -> None:
    proc = verify(*SMALL, "--path", "aiter", "--stress", "--json", site=aiter_site)
    assert (proc.returncode, set(results(proc, "aiter").values())) == (0, {"pass"})


@pytest.mark.slow
def test_a_hanging_kernel_is_a_timeout_row_and_the_rest_still_report(aiter_site: Path) -> None:
    proc = verify(*SMALL, "--path", "aiter", "--tokens", "7", "--timeout", "15", "--json",
                  site=aiter_site, AITER_STANDIN_FAULT="hang")  # fmt: skip
    got = results(proc, "aiter")
    assert (proc.returncode, got) == (
        3,
        {("mhc_pre", 7): "pass", ("mhc_post", 7): "timeout", ("mhc_fused_post_pre", 7): "skip"},
    )


@pytest.mark.slow
def test_a_crashing_kernel_is_an_error_row_with_the_signal(aiter_site: Path) -> None:
    proc = verify(*SMALL, "--path", "aiter", "--tokens", "7", "--json", site=aiter_site, AITER_STANDIN_FAULT="crash")
    row = next(r for r in json.loads(proc.stdout)["results"] if r["op"] == "mhc_post")
    assert (proc.returncode, row["status"], "SIGABRT" in row["reason"]) == (3, "error", True)


@pytest.mark.slow
def test_text_table_and_progress_on_stderr(aiter_site: Path) -> None:
    proc = verify(*SMALL, "--path", "aiter", "--path", "torch", "--tokens", "7", site=aiter_site)
    assert proc.returncode == 0
    assert "aiter 0.1.13 on cpu" in proc.stdout and "verdict: ok" in proc.stdout
    assert "aiter on cpu: importing aiter.ops.mhc" in proc.stderr


@pytest.mark.slow
def test_without_a_gpu_nothing_is_verified_and_the_verdict_is_fail() -> None:
    proc = verify("--hidden", "256", "--path", "torch", "--tokens", "1", "--json", CUDA_VISIBLE_DEVICES="")
    doc = json.loads(proc.stdout)
    assert (proc.returncode, doc["verdict"], doc["results"][0]["status"]) == (3, "fail", "skip")
    assert "no GPU visible" in doc["results"][0]["reason"]


@pytest.mark.slow
def test_without_a_gpu_the_text_says_nothing_ran_and_counts_paths_not_rows() -> None:
    proc = verify("--hidden", "256", "--tokens", "1,7", CUDA_VISIBLE_DEVICES="")
    assert "on no device: nothing ran" in proc.stdout and "cuda:0" not in proc.stdout
    assert f"verdict: fail ({len(REGISTRY.default())} paths not run;" in proc.stdout


@pytest.mark.slow
def test_a_gpu_torch_does_not_see_is_a_usage_error() -> None:
    """Torch itself is asked, in a child; how each spelling of a GPU reads is in the next test."""
    proc = verify("--hidden", "256", "--device", "cuda:9", CUDA_VISIBLE_DEVICES="")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "mhcdoctor: error: --device cuda:9: there is no such GPU; torch sees no GPU here; "
        "--device cpu runs the paths on the CPU"
    )


@pytest.mark.parametrize(
    ("device", "seen", "devices"),
    [
        ("9", 0, "--device 9: there is no such GPU; torch sees no GPU here; --device cpu runs the paths on the CPU"),
        (
            "cuda:9",
            0,
            "--device cuda:9: there is no such GPU; torch sees no GPU here; --device cpu runs the paths on the CPU",
        ),
        (
            "all",
            0,
            "--device all: torch sees no GPU here; --device cpu runs the paths on the CPU",
        ),  # as for an index: GPUs named that are not here
        ("HIP:2", 2, "--device HIP:2: there is no such GPU; torch sees 2 GPUs (cuda:0 to cuda:1)"),
        ("1", 1, "--device 1: there is no such GPU; torch sees 1 GPU (cuda:0)"),
        ("1", 2, ["cuda:1"]),
        ("cuda:0", 1, ["cuda:0"]),
        ("all", 2, ["cuda:0", "cuda:1"]),
        ("auto", 0, ["cuda:0"]),  # auto asks no child: the path children find the GPU, or that there is none
    ],
)
def test_each_spelling_of_a_gpu_is_checked_against_what_torch_sees(
    monkeypatch: pytest.MonkeyPatch, device: str, seen: int, devices: str | list[str]
) -> None:
    from mhcdoctor import verify as verify_module
    from mhcdoctor.errors import InputError
    from mhcdoctor.probes.context import ProbeContext

    asked: list[float] = []

    def count_gpus(ctx: ProbeContext, timeout: float) -> tuple[int, str | None]:
        asked.append(timeout)
        return seen, None

    monkeypatch.setattr(verify_module, "count_gpus", count_gpus)
    if isinstance(devices, str):
        with pytest.raises(InputError) as error:
            verify_module.resolve_devices(device, ProbeContext(), 5.0)
        assert str(error.value) == devices
    else:
        assert verify_module.resolve_devices(device, ProbeContext(), 5.0) == devices
    assert asked == ([] if device == "auto" else [5.0])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tokens", "0"], "--tokens takes comma-separated positive integers"),
        (["--tokens", "1,,7"], "--tokens takes comma-separated positive integers, not '1,,7'"),
        # sizes that would make the child allocate until the kernel kills it: refused with the bytes needed
        (["--tokens", "99999999999", "--device", "cpu"], "99999999999 tokens at hidden 7168, hc_mult 4 need at least "),
        (
            ["--hc-mult", "1000", "--device", "cpu"],
            "80 tokens at hidden 7168, hc_mult 1000 need at least 57.5 TB on cpu",
        ),
        (["--device", "gpu0"], "--device must be auto, all, cpu, N or cuda:N"),
        (["--model", "deepseek-v9"], "unknown model"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    proc = verify(*args)
    assert (proc.returncode, proc.stdout, message in proc.stderr, len(proc.stderr.strip().splitlines())) == (
        2,
        "",
        True,
        1,
    )


@pytest.mark.slow
def test_a_failing_path_the_rules_do_not_select_is_degraded_not_fail(aiter_site: Path) -> None:
    from mhcdoctor.models import ModelConfig
    from mhcdoctor.probes.context import ProbeContext
    from mhcdoctor.verify import run_verify

    ctx = ProbeContext(search_path=[str(aiter_site), *sys.path], env=dict(os.environ, AITER_STANDIN_RACE="1"))
    picked = {"mhc_pre": "tilelang", "mhc_post": "tilelang", "mhc_fused_post_pre": "tilelang", "hc_head": "triton"}
    doc = run_verify(ModelConfig(None, 256), paths=["aiter", "torch"], tokens=[80], device="cpu", ctx=ctx,
                     selected=picked, progress=lambda _: None)  # fmt: skip
    failing = {(r["path"], r["op"], r["selected"]) for r in doc["results"] if r["status"] == "fail"}
    assert (doc["verdict"], failing) == ("degraded", {("aiter", "mhc_pre", False)})


@pytest.mark.slow
def test_broken_libraries_are_skip_rows_with_their_error_and_the_rest_still_runs(tmp_path: Path) -> None:
    """PyPI's unrelated `aiter` (an async-iterator library) and a tilelang whose import fails on libnvrtc."""
    site = tmp_path / "site"
    (site / "aiter").mkdir(parents=True)
    (site / "aiter" / "__init__.py").write_text("async def aiter_from(iterable):\n    return iterable\n")
    info = site / "aiter-0.13.20191203.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: aiter\nVersion: 0.13.20191203\n")
    (site / "tilelang").mkdir()
    (site / "tilelang" / "__init__.py").write_text(
        "raise OSError('libnvrtc.so.13: cannot open shared object file: No such file or directory')\n"
    )
    proc = verify(*SMALL, "--path", "aiter", "--path", "tilelang", "--path", "torch", "--tokens", "1", "--json",
                  site=site)  # fmt: skip
    doc = json.loads(proc.stdout)
    reasons = {r["path"]: r["reason"] for r in doc["results"] if r["status"] == "skip"}
    assert proc.returncode == 0
    assert "(1 token count at hidden 256)" in proc.stderr  # singular
    assert reasons["aiter"].startswith("aiter.ops.mhc does not import: ModuleNotFoundError")
    assert reasons["tilelang"] == (
        "tilelang does not import: OSError: libnvrtc.so.13: cannot open shared object file: No such file or directory"
    )


@pytest.mark.slow
def test_vllm_ops_are_their_own_rows_and_a_wrong_one_fails(tmp_path: Path) -> None:
    """A stand-in vLLM: its torch fallback functions, and a tilelang custom op that reads comb transposed."""
    mhc = tmp_path / "site" / "vllm" / "model_executor" / "kernels" / "mhc"
    mhc.mkdir(parents=True)
    (tmp_path / "site" / "vllm" / "__init__.py").write_text("__version__ = '0.30.0'\n")
    for folder in (mhc.parent.parent, mhc.parent, mhc):
        (folder / "__init__.py").touch()
    (mhc / "torch.py").write_text(
        "from mhcdoctor.reference import mhc_post as mhc_post_torch, mhc_pre as mhc_pre_torch\n"
    )
    (mhc / "tilelang.py").write_text(
        "import torch\n"
        "from mhcdoctor.reference import mhc_post\n"
        "lib = torch.library.Library('vllm', 'FRAGMENT')\n"
        "lib.define('mhc_post_tilelang(Tensor x, Tensor residual, Tensor post, Tensor comb) -> Tensor')\n"
        "lib.impl('mhc_post_tilelang', lambda x, r, p, c: mhc_post(x, r, p, c.transpose(-1, -2)), 'CPU')\n"
    )
    proc = verify(*SMALL, "--path", "vllm:torch", "--path", "vllm:tilelang", "--tokens", "7", "--json",
                  site=tmp_path / "site")  # fmt: skip
    rows = {(r["path"], r["op"]): r["status"] for r in json.loads(proc.stdout)["results"]}
    assert (proc.returncode, rows) == (
        3,
        {("vllm:tilelang", "mhc_post"): "fail", ("vllm:torch", "mhc_pre"): "pass", ("vllm:torch", "mhc_post"): "pass"},
    )


def _python_without(tmp_path: Path, *missing: str) -> Path:
    """An interpreter that sees this environment's packages except `missing` (as after `pip install . torch`)."""
    seen = tmp_path / "seen"
    seen.mkdir()
    # every site folder this interpreter reads, also those a .pth file adds (a venv layered on another's packages)
    for folder in [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]:
        for entry in Path(folder).iterdir():
            top = entry.name.split("-")[0].split(".")[0].lower()
            if top not in missing and not (seen / entry.name).exists():
                (seen / entry.name).symlink_to(entry)
    python = tmp_path / "python"
    repo = HERE.parents[1]
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{repo}:{seen}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    return python


def test_without_numpy_each_path_says_which_module_is_missing_and_how_to_install_it(tmp_path: Path) -> None:
    python = _python_without(tmp_path, "numpy")
    proc = doctor.spawn("verify", *SMALL, "--path", "torch", "--tokens", "1", python=python, timeout=120, cwd=tmp_path)
    assert "torch         (all)" in proc.stdout
    assert (
        "numpy is not installed (No module named 'numpy' on the search path); pip install 'mhcdoctor[verify]' "
        "installs torch and numpy" in proc.stdout
    )
    assert "not reached" not in proc.stdout


def test_a_child_that_dies_on_an_import_says_what_it_died_of(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "numpy").mkdir(parents=True)
    (site / "numpy" / "__init__.py").write_text("raise ImportError('numpy is broken here')\n")
    proc = verify(*SMALL, "--path", "torch", "--tokens", "1", "--json", site=site)
    doc = json.loads(proc.stdout)
    reasons = {r["reason"] for r in doc["results"]}
    assert reasons == {
        "not reached: the torch child exited with code 1 before finishing: ImportError: numpy is broken here"
    }


def test_a_user_kernel_for_one_op_has_rows_for_that_op_only(tmp_path: Path) -> None:
    python = _python_without(tmp_path, "numpy")
    (tmp_path / "mykernels.py").write_text("def post(x, residual, post_layer_mix, comb_res_mix):\n    return x\n")
    args = ["verify", *SMALL, "--kernel", "mhc_post=mykernels:post", "--json"]
    doc = doctor.spawn(*args, python=python, timeout=120, cwd=tmp_path).json()
    assert {(r["path"], r["op"]) for r in doc["results"]} == {("user", "mhc_post")}


def test_a_venv_without_torch_names_no_gpu_in_the_header(tmp_path: Path) -> None:
    python = _python_without(tmp_path, "torch")
    proc = doctor.spawn("verify", "--hidden", "256", "--tokens", "1", python=python, timeout=120, cwd=tmp_path)
    header = proc.stdout.splitlines()[0]
    assert header.endswith("on no device: nothing ran") and "cuda:0" not in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("device", ["9", "all", "cuda:0"])
def test_a_gpu_named_where_torch_is_missing_is_the_same_usage_error(tmp_path: Path, device: str) -> None:
    """With or without torch, naming a GPU that cannot be used is exit 2 and one line (it was 3 without torch)."""
    python = _python_without(tmp_path, "torch")
    proc = doctor.spawn("verify", "--hidden", "256", "--device", device, python=python, timeout=120, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, len(proc.stderr.splitlines())) == (2, "", 1), proc.stderr
    assert proc.stderr.startswith(f"mhcdoctor: error: --device {device}: ")
    assert proc.stderr.rstrip().endswith("--device cpu runs the paths on the CPU")


def test_a_kernel_module_that_is_not_there_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = doctor.run("verify", "--hidden", "256", "--kernel", "mhc_post=nomod:post", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "mhcdoctor: error: --kernel mhc_post=nomod:post: no module nomod in the working folder or on this Python's "
        "path\n"
    )


@pytest.mark.slow
def test_each_case_is_progress_on_stderr_and_a_terminal_gets_a_bar_never_stdout(tmp_path: Path) -> None:
    """Long CPU runs are never silent: every (path, op, size) shows as it starts, on stderr only, so --json's stdout
    stays one document; on a terminal one status line is redrawn with a bar."""
    import pty

    leader, follower = pty.openpty()
    args = doctor.argv("verify", *SMALL, "--path", "torch", "--tokens", "1,7", "--json")
    env = {**os.environ, "TERM": "xterm", "PYTHONPATH": str(HERE.parents[1])}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=follower, env=env, cwd=tmp_path)
    os.close(follower)
    terminal = doctor.read_terminal(leader).decode()
    stdout, _ = proc.communicate(timeout=120)
    assert json.loads(stdout)["verdict"] == "ok"  # stdout: the one JSON document, nothing else
    assert "\r\x1b[Kmhcdoctor verify: [" in terminal
    assert "torch on cpu: hc_head at 7 tokens (8 of 8)" in terminal
    assert "torch on cpu: mhc_pre at 1 token (1 of 8)" in verify(*SMALL, "--path", "torch", "--tokens", "1,7").stderr
