"""`mhcdoctor check` end to end: a real subprocess, a fake machine tree and a Python environment that holds only fakes.

The environment under test is a wrapper interpreter (`python -S` with only the fake site on its path), passed with
--python exactly as a user points mhcdoctor at vLLM's venv; the machine is a fake / given by MHCDOCTOR_SYSROOT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import doctor
import fakes
import pytest
from fakemachine import REPO, Machine, check_json, finding_ids, model


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_a_machine_without_a_gpu_fails_with_no_gpu(machine):
    doc, proc = check_json(machine, "--fast")
    assert proc.returncode == 3
    assert doc["verdict"] == "fail" and "no-gpu" in finding_ids(doc)
    assert doc["facts"]["platform"] == "cpu"
    assert {m["model"]["name"] for m in doc["models"]} >= {"deepseek-v4-pro", "deepseek-v4-flash"}
    assert proc.stderr == ""


def test_mi300x_with_a_racy_aiter_selects_aiter_and_fails_on_the_race(machine):
    fakes.kfd(machine.root, [0, 90402, 90402])
    fakes.rocm(machine.root, "6.4.1-120")
    fakes.aiter(machine.site, version="0.1.13", kernel="racy")
    fakes.library(machine.site, "vllm", "0.25.0")
    doc, proc = check_json(machine, "--fast")
    assert doc["facts"]["platform"] == "rocm" and doc["facts"]["arch"] == "gfx942"
    assert [d["arch"] for d in doc["facts"]["devices"]] == ["gfx942", "gfx942"]
    pro = model(doc, "deepseek-v4-pro")
    assert pro["ops"]["mhc_pre"]["path"] == "aiter"
    assert "aiter-sqrsum-race" in finding_ids(doc)
    assert proc.returncode == 3


def test_the_aiter_row_shows_every_fix_the_probe_read(machine):
    fakes.kfd(machine.root, [0, 90402])
    fakes.rocm(machine.root, "6.4.1-120")
    fakes.aiter(machine.site, version="0.1.14", kernel="racy")  # 0.1.14's label on the racy code of 0.1.13
    fakes.library(machine.site, "vllm", "0.25.0")
    row = next(
        line for line in doctor.run("check", "--fast", env=machine).stdout.splitlines() if " aiter " in f" {line} "
    )
    assert (
        "aiter       0.1.14, fixes: 2 of 6 present, sqrsum, big-fuse-sync, post-race absent, delayed-api unknown ("
        in row
    ), row
    assert row.lstrip().startswith("!")  # the racy sqrsum store guard makes the row a warning, as before


def test_the_impostor_aiter_is_named_in_text_output(machine):
    fakes.kfd(machine.root, [0, 90402])
    fakes.impostor_aiter(machine.site)
    fakes.library(machine.site, "vllm", "0.25.0")
    proc = doctor.run("check", "--fast", env=machine)
    assert "aiter-impostor" in proc.stdout
    assert "not AMD's aiter" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_cuda_without_tilelang_is_a_fail_with_the_fix(machine):
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.torch(machine.site)
    fakes.library(machine.site, "vllm", "0.30.0")
    doc, proc = check_json(machine, "--fast")
    assert doc["facts"]["platform"] == "cuda"
    assert "tilelang-missing" in finding_ids(doc)
    assert proc.returncode == 3
    text = doctor.run("check", "--fast", env=machine).stdout
    assert "tilelang-missing" in text and "fix:" in text


@pytest.mark.slow
def test_hanging_and_crashing_imports_still_give_a_complete_report(machine):
    fakes.nvidia_proc(machine.root)
    fakes.library(machine.site, "tilelang", "0.1.12", init=fakes.HANG)
    fakes.library(machine.site, "triton", "3.6.0", init=fakes.SEGFAULT)
    fakes.library(machine.site, "vllm", "0.30.0")
    start = time.perf_counter()
    doc, proc = check_json(machine, "--timeout", "2")
    assert time.perf_counter() - start < 30
    status = {p["name"]: p["status"] for p in doc["probes"]}
    assert status["tilelang.import"] == "timeout"
    assert status["triton.import"] == "crash"
    assert doc["facts"]["tilelang"]["imports"] is False
    assert doc["models"] and doc["verdict"] in ("degraded", "fail")
    assert "Traceback" not in proc.stderr


def test_a_library_printing_on_import_cannot_corrupt_the_json(machine):
    fakes.nvidia_proc(machine.root)
    fakes.library(
        machine.site,
        "amdsmi",
        "26.0.0",
        init="print('amdsmi banner: libamd_smi.so not found')\nraise KeyError('ROCM_PATH')\n",
    )
    doc, proc = check_json(machine, "--timeout", "10")
    amdsmi = next(p for p in doc["probes"] if p["name"] == "gpu.amdsmi")
    assert amdsmi["status"] == "missing", "amdsmi without libamd_smi.so is a missing library"
    assert any("amdsmi banner" in line for line in amdsmi["evidence"]), "what it printed is kept as evidence"


def test_text_has_no_colour_codes_in_a_pipe_and_verbose_shows_probe_evidence(machine):
    fakes.nvidia_proc(machine.root, driver="580.95.05")
    proc = doctor.run("check", "--fast", "-v", env=machine)
    assert "\033[" not in proc.stdout
    assert "Probes" in proc.stdout and "gpu.nvidia-proc" in proc.stdout
    assert "580.95.05" in proc.stdout


def test_fail_on_never_exits_zero_even_when_failing(machine):
    assert doctor.run("check", "--fast", "--fail-on", "never", env=machine).returncode == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "deepseek-v9"], "unknown model"),
        (["--hidden", "0"], "--hidden must be a positive integer"),
        (["--config", "/nonexistent/config.json"], "config not found"),
        (["--timeout", "-1"], "--timeout"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(machine, args, message):
    proc = doctor.run("check", "--fast", *args, env=machine)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_hostile_files_never_reach_the_terminal_raw(machine):
    """Binary garbage and terminal escapes in sysfs and ROCm files are reported, escaped, never printed raw."""
    nodes = machine.root / "sys/class/kfd/kfd/topology/nodes"
    fakes.write(nodes / "1/properties", "gfx_target_version banana\n")
    (nodes / "2").mkdir(parents=True)
    (nodes / "2/properties").write_bytes(b"\x1b]0;owned\x07\xff\xfe" * 50)
    (machine.root / "opt/rocm/.info").mkdir(parents=True)
    (machine.root / "opt/rocm/.info/version").write_bytes(b"\x1b[2J\x1b[31mred\xff\x00")
    proc = doctor.run("check", "--fast", "-v", env=machine)
    assert proc.returncode == 3, "no GPU could be read from that tree"
    assert "\x1b" not in proc.stdout and "\x00" not in proc.stdout
    assert "node 1: no readable gfx_target_version; skipped" in proc.stdout
    assert "opt/rocm/.info/version holds no version" in proc.stdout
    doc, _ = check_json(machine, "--fast")
    assert doc["facts"]["rocm_version"] is None


@pytest.mark.slow
def test_colour_only_on_a_terminal_and_never_with_no_color(machine):
    def run_on_terminal(extra_env: dict[str, str]) -> str:
        env = {**machine.env(), **extra_env}
        return doctor.on_terminal("check", "--fast", "--python", str(machine.python), env=env)

    assert "\033[" in run_on_terminal({})
    assert "\033[" not in run_on_terminal({"NO_COLOR": "1"})
    # https://no-color.org: only a non-empty NO_COLOR turns colour off
    assert "\033[" in run_on_terminal({"NO_COLOR": ""})


def test_a_cuda_torch_on_a_rocm_machine_is_a_fail(machine):
    """`pip install vllm` on a ROCm host pulls PyPI's CUDA torch: nothing can use the MI300X then."""
    fakes.kfd(machine.root, [0, 90402])
    fakes.torch(machine.site, "2.13.0+cu130", cuda="13.0")
    fakes.aiter(machine.site, version="0.1.16", norm_args=True, fused=True)
    fakes.library(machine.site, "vllm", "0.30.0")
    doc, proc = check_json(machine, "--fast")
    mismatch = next(f for f in doc["findings"] if f["id"] == "torch-build-mismatch")
    assert "2.13.0+cu130 is a cuda build, but this machine's GPUs are rocm" in mismatch["detail"]
    assert proc.returncode == 3


def test_a_rocm_torch_on_a_rocm_machine_raises_no_mismatch(machine):
    fakes.kfd(machine.root, [0, 90402])
    fakes.torch(machine.site, "2.9.1+rocm7.2", cuda=None, hip="7.2.26015")
    doc, _ = check_json(machine, "--fast")
    assert "torch-build-mismatch" not in finding_ids(doc)


def test_torch_that_sees_no_gpu_on_a_gpu_machine_is_a_fail(machine):
    """The driver shows an H200, but torch counts none (old driver, hidden devices): vLLM cannot start."""
    fakes.nvidia_proc(machine.root)
    fakes.torch(machine.site, init=fakes.fake_torch_gpus([]))
    fakes.library(machine.site, "tilelang", "0.1.12")
    fakes.library(machine.site, "vllm", "0.30.0")
    doc, proc = check_json(machine, "--timeout", "20")
    assert doc["facts"]["torch"]["gpus_visible"] == 0
    assert "torch-sees-no-gpu" in finding_ids(doc)
    assert proc.returncode == 3
    fast, _ = check_json(machine, "--fast")
    assert "torch-sees-no-gpu" not in finding_ids(fast), "--fast initialises no GPU, so it cannot know"


def test_an_aiter_that_vllm_selects_but_that_does_not_import_is_a_fail_with_its_error(machine):
    fakes.kfd(machine.root, [0, 90402])
    fakes.rocm(machine.root, "6.4.1-120")
    fakes.aiter(machine.site, version="0.1.14", init=fakes.raises('ImportError("undefined symbol: hipModuleLoad")'))
    fakes.library(machine.site, "vllm", "0.25.0")
    doc, proc = check_json(machine)
    finding = next(f for f in doc["findings"] if f["id"] == "aiter-not-importable")
    assert finding["severity"] == "fail" and "undefined symbol: hipModuleLoad" in finding["detail"]
    assert proc.returncode == 3
    assert "aiter-not-importable" in doctor.run("check", env=machine).stdout


def test_a_report_of_another_interpreter_names_it_and_its_version(machine):
    """`--python` is the playbook's recipe when mhcdoctor lives outside vLLM's venv: the report describes that
    interpreter, not the doctor's own."""
    asked = subprocess.run([str(machine.python), "-c", "import platform; print(platform.python_version())"],
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    doc = json.loads(doctor.run("report", "--fast", "--json", "--no-redact", env=machine).stdout)
    assert (doc["host"]["python"], doc["host"]["python_version"]) == (str(machine.python), asked)
    assert doc["host"]["doctor_python"] == sys.executable
    assert f"Python    {asked} ({machine.python})" in doctor.run("check", "--fast", env=machine).stdout


def test_the_impostor_shows_why_its_mhc_ops_fail_and_is_never_called_an_old_aiter(machine):
    fakes.impostor_aiter(machine.site)
    verbose = doctor.run("check", "-v", env=machine).stdout
    probe = verbose.split("aiter.import", 1)[1]
    assert "from aiter.ops import mhc: ModuleNotFoundError: No module named 'aiter.ops'" in probe
    replay = doctor.run("explain", "--platform", "rocm", "--arch", "gfx942", env=machine).stdout
    assert "aiter before" not in replay and "Build aiter 0.1.16" not in replay
    assert "the installed `aiter` is not AMD's aiter and has no aiter.ops.mhc" in replay


@pytest.mark.slow
def test_check_verify_without_a_gpu_names_the_command_that_takes_device_cpu(tmp_path: Path) -> None:
    """check and report take no --device: the hint names `mhcdoctor verify --device cpu`, which does."""
    (tmp_path / "machine").mkdir()
    env = dict(os.environ, MHCDOCTOR_SYSROOT=str(tmp_path / "machine"), CUDA_VISIBLE_DEVICES="", NO_COLOR="1")
    shown = doctor.run("check", "--verify", "--model", "deepseek-v4-flash", env=env).stdout
    reasons = [line for line in shown.splitlines() if "(all)" in line and " skip " in line]
    assert reasons[0].endswith("; `mhcdoctor verify --device cpu` runs the paths on the CPU")
    first = reasons[0].split()[0]  # one reason, said once: the other paths point at it
    assert len(reasons) > 1 and all(line.endswith(f"skip      as for {first}") for line in reasons[1:])


def test_pypis_aiter_on_an_nvidia_machine_is_to_be_uninstalled_and_its_row_is_no_cross(machine: Machine) -> None:
    """AMD's aiter runs on AMD GPUs only: on a CUDA host the fix is to remove PyPI's `aiter`, not to build AMD's."""
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.impostor_aiter(machine.site)
    doc, proc = check_json(machine, "--fast", "--model", "deepseek-v4-pro")
    impostor = next(f for f in doc["findings"] if f["id"] == "aiter-impostor")
    assert (impostor["severity"], impostor["fix"]) == (
        "info",
        "pip uninstall aiter  # not AMD's aiter, which this machine cannot use",
    )
    row = next(line for line in doctor.run("check", "--fast", env=machine).stdout.splitlines() if " aiter " in line)
    assert row.lstrip().startswith("·") and "not AMD's aiter" in row


def test_a_tilelang_without_apache_tvm_ffi_is_told_to_install_apache_tvm_ffi(machine: Machine) -> None:
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.12", init="import tvm_ffi\n")
    fakes.library(machine.site, "vllm", "0.30.0")
    doc, _ = check_json(machine, "--model", "deepseek-v4-pro")
    missing = next(f for f in doc["findings"] if f["id"] == "tilelang-missing")
    assert missing["fix"] == "pip install apache-tvm-ffi  # tilelang is installed; the tvm_ffi module it imports is not"
    assert "No module named 'tvm_ffi'" in missing["detail"]


def test_no_vllm_here_points_at_the_python_whose_vllm_it_is(machine: Machine) -> None:
    doc, _ = check_json(machine, "--fast")
    fix = next(f["fix"] for f in doc["findings"] if f["id"] == "vllm-not-installed")
    assert fix.startswith("Installed in another environment? Point mhcdoctor at it: mhcdoctor check --python ")


def test_the_verdict_is_followed_by_what_was_found_counted(machine: Machine) -> None:
    """`2 fail, 1 warning in 3 models`, as other doctors end: here no GPU (fail) and nothing installed (info)."""
    doc, _ = check_json(machine, "--fast")
    shown = doctor.run("check", "--fast", env=machine).stdout.splitlines()
    verdict = next(i for i, line in enumerate(shown) if "Verdict" in line)
    fails = sum(1 for f in doc["findings"] if f["severity"] == "fail")
    infos = sum(1 for f in doc["findings"] if f["severity"] == "info")
    assert shown[verdict + 1] == f"  {fails} fail, {infos} info; 3 of 3 models not ok"


@pytest.mark.parametrize(
    ("sleep", "code", "said"), [(30, 0, "did not finish within 1 s"), (0, 1, "exited with code 1")]
)
def test_a_compiler_that_hangs_or_fails_is_no_tick_in_the_machine_section(machine, sleep, code, said):
    """Found is not working: an nvcc that hangs would hang tilelang's JIT too, so it is shown with what it did."""
    nvcc = fakes.executable(machine.tmp / "no-bin" / "nvcc", fakes.NVCC_VERSION, code=code, sleep=sleep)
    text = doctor.run("check", "--timeout", "1", env=machine).stdout
    row = next(line for line in text.splitlines() if line.strip().split()[1:2] == ["nvcc"])
    assert row.strip().startswith(f"! nvcc      {nvcc}: `{nvcc} --version` {said}"), row


def test_two_installs_of_one_package_in_one_folder_are_said(machine):
    """An interrupted or forced pip install leaves two dist-infos: the version shown is one reading of a broken
    install, and -v says so, naming both."""
    fakes.library(machine.site, "tilelang", "0.1.9")
    fakes.dist_info(machine.site, "tilelang", "0.1.12", top_level=["tilelang"])
    text = doctor.run("check", "--fast", "-v", env=machine).stdout
    shown = "0.1.9" if "tilelang-0.1.9.dist-info: tilelang 0.1.9" in text else "0.1.12"  # the folder read first
    other = ({"0.1.9", "0.1.12"} - {shown}).pop()
    assert f"{machine.site}: also tilelang-{other}.dist-info: two installs of tilelang in one folder" in text, text


@pytest.mark.slow
@pytest.mark.parametrize("command", ["check", "report"])
def test_verify_within_check_keeps_to_the_timeout_given(tmp_path, command):
    """`--timeout` is each child's, kernels included (its help says so): a torch whose import hangs stopped the
    folded-in verify only at verify's own 300 s per path, whatever was given. The doctor's own environment (verify's
    children import mhcdoctor), with the hanging torch first on its path."""
    site = fakes.site(tmp_path)
    fakes.library(site, "torch", "2.9.0", init=fakes.HANG)
    env = {
        **os.environ,
        "PYTHONPATH": f"{site}{os.pathsep}{REPO}",
        "MHCDOCTOR_SYSROOT": str(fakes.site(tmp_path, "root")),
    }
    began = time.monotonic()
    done = doctor.spawn(command, "--verify", "--timeout", "2", "--json", env=env, timeout=100)
    torch = next(p for p in done.json()["verify"]["paths"] if p["path"] == "torch")
    assert (torch["status"], time.monotonic() - began < 60) == ("timeout", True), torch
