"""The doctor against real packages from the package index (issue 8, "Tests on real packages").

Each package is installed with --no-deps into a cached folder (see conftest.py) and seen through a wrapper python,
on a fake machine (MHCDOCTOR_SYSROOT): an MI300X (gfx942) for aiter, an H200 for tilelang and vLLM.
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import doctor
import fakes
import pytest

AMD_AITER = "amd-aiter==0.1.7.post2.dev18"  # PyPI's only AMD aiter wheel: no aiter/ops/mhc.py
IMPOSTOR = "aiter==0.13.20191203"  # PyPI's unrelated async-iterator library
TILELANG = "tilelang==0.1.15"
TILELANG_11 = "tilelang==0.1.11"  # Requires-Dist apache-tvm-ffi>=0.1.10,~=0.1.0: pip resolves the newest 0.1.x
TVM_FFI_NEW = "apache-tvm-ffi==0.1.15.post2"  # what that resolves to today: `import tilelang` aborts with it
Z3 = "z3-solver==4.15.4.0"  # tilelang 0.1.11 requires z3-solver<4.15.5,>=4.13.0; its libtilelang loads libz3.so.4.15
TILE_KERNELS = "tile-kernels==1.0.0"
TILE_KERNELS_2 = "tile-kernels==2.1.0"  # Requires-Python >=3.12: installed with --ignore-requires-python, only read
NVML = "nvidia-ml-py==13.580.82"
VLLM = "vllm==0.34.0"

pytestmark = [pytest.mark.real, pytest.mark.slow]


def mi300x(machine) -> None:
    fakes.kfd(machine.root, [0, 90402])
    fakes.rocm(machine.root, "6.4.1-120")


def h200(machine) -> None:
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])


def ids(doc: dict) -> set[str]:
    return {f["id"] for f in doc["findings"]}


def finding(doc: dict, name: str) -> dict:
    return next(f for f in doc["findings"] if f["id"] == name)


# --- amd-aiter 0.1.7.post2.dev18: AMD's aiter, without the mHC ops ---------------------------------------------


def test_amd_aiter_from_pypi_is_seen_as_amds_aiter_without_mhc_ops(machine, installed):
    mi300x(machine)
    machine.environment(installed(AMD_AITER))
    result = doctor.run("check", "--fast", "--json", env=machine)
    aiter = result.json()["facts"]["aiter"]
    assert (aiter["genuine"], aiter["has_mhc_ops"], aiter["version"]) == (True, False, "0.1.7.post2.dev18")
    text = doctor.run("check", "--fast", env=machine).stdout
    row = next(line for line in text.splitlines() if line.split()[1:2] == ["aiter"])
    assert "without mHC ops" in row and "source build" not in text


@pytest.mark.parametrize("vllm", ["0.25.0", "0.29.0"])
def test_vllm_025_to_029_crash_on_it_at_the_first_forward(machine, installed, vllm):
    mi300x(machine)
    machine.environment(installed(AMD_AITER))
    result = doctor.run("explain", "--json", "--model", "deepseek-v4-pro", "--vllm", vllm, env=machine)
    doc = result.json()
    assert {op: d["path"] for op, d in doc["ops"].items() if op != "mhc_fused_post_pre"} == {
        "mhc_pre": "aiter",
        "mhc_post": "aiter",
        "hc_head": "triton",
    }
    assert set(finding(doc, "aiter-no-mhc")["ops"]) >= {"mhc_pre", "mhc_post"}
    assert (doc["verdict"], result.returncode) == ("fail", 3)


def test_vllm_030_falls_back_where_it_probes_and_still_crashes_in_mhc_post(machine, installed):
    mi300x(machine)
    machine.environment(installed(AMD_AITER))
    doc = doctor.run("explain", "--json", "--model", "deepseek-v4-pro", "--vllm", "0.30.0", env=machine).json()
    paths = {op: d["path"] for op, d in doc["ops"].items()}
    assert paths["mhc_pre"] == "torch" and paths["mhc_fused_post_pre"] == "torch"  # probed: fall back
    assert paths["mhc_post"] == "aiter"  # not probed: ModuleNotFoundError at the first forward
    assert finding(doc, "aiter-no-mhc")["ops"] == ["mhc_post"]
    assert not {"aiter-api-fallback", "aiter-sqrsum-unknown", "aiter-fix-unknown"} & ids(doc)


def test_full_check_imports_it_in_a_child_and_reports_why_it_fails(machine, installed):
    mi300x(machine)
    machine.environment(installed(AMD_AITER))
    doc = doctor.run("check", "--json", env=machine).json()
    assert doc["facts"]["aiter"]["imports"] is False
    assert "torch" in doc["facts"]["aiter"]["import_error"]  # --no-deps: its torch is not there


def test_the_real_wheel_with_the_mhc_code_of_v0_1_15_added_is_judged_by_that_code_not_its_label(machine, installed):
    """A source build as aiter's setup.py lays it out (the real wheel's aiter/ and aiter_meta/, install_mode
    `install`) holding v0.1.15's mHC code: its label 0.1.7.post2.dev18 says nothing, its code the RMS guard bug."""
    mi300x(machine)
    site = machine.tmp / "site"  # hard links: the cached install is never written to
    shutil.copytree(installed(AMD_AITER), site, copy_function=os.link, ignore=shutil.ignore_patterns(".complete"))
    fakes.write(site / "aiter_meta" / "csrc" / "kernels" / "mhc_kernels.cu", fakes.real_kernels("v0.1.15-rc0"))
    fakes.write(site / "aiter" / "ops" / "mhc.py", fakes.real_mhc_ops("v0.1.15-rc0"))
    machine.environment(site)
    doc = doctor.run("explain", "--json", "--model", "deepseek-v4-pro", "--vllm", "0.25.0", env=machine).json()
    aiter = doc["facts"]["aiter"]
    assert (aiter["version"], aiter["sqrsum_fix"], aiter["fixes"]["big-fuse-rms"]) == (
        "0.1.7.post2.dev18",
        "present",
        "absent",
    )
    detail = finding(doc, "aiter-rocm-compiler")["detail"]
    assert "Told by the installed code: " in detail and "aiter_meta/csrc/kernels/mhc_kernels.cu:" in detail
    assert not {"aiter-sqrsum-race", "aiter-big-fuse-sync", "aiter-mhc-post-race", "aiter-fix-unknown"} & ids(doc)


# --- PyPI's `aiter`: not AMD's -----------------------------------------------------------------------------------


def test_pypis_aiter_is_an_impostor_and_its_version_is_not_shown_as_aiters(machine, installed):
    mi300x(machine)
    machine.environment(installed(IMPOSTOR))
    result = doctor.run("explain", "--model", "deepseek-v4-pro", "--vllm", "0.25.0", env=machine)
    assert result.returncode == 3
    assert "aiter-impostor" in result.stdout
    header = result.stdout.splitlines()[1]
    assert "aiter not AMD's (aiter 0.13.20191203)" in header
    assert "finds aiter 0.13.20191203, which is importable as aiter but is not AMD's aiter" in result.stdout


# --- tilelang, tile-kernels ----------------------------------------------------------------------------------------


def test_tilelang_without_its_requirements_is_seen_and_its_import_failure_is_a_fail_on_cuda(machine, installed):
    h200(machine)
    machine.environment(installed(TILELANG))
    fast = doctor.run("check", "--fast", "--json", env=machine).json()
    assert fast["facts"]["tilelang"]["version"] == "0.1.15"
    doc = doctor.run("check", "--json", env=machine).json()
    assert doc["facts"]["tilelang"]["imports"] is False
    assert "tilelang-missing" in ids(doc) and "torch" in finding(doc, "tilelang-missing")["detail"]


def test_tilelang_0_1_11_with_apache_tvm_ffi_0_1_15_aborts_and_check_names_the_pair_even_with_fast(machine, installed):
    h200(machine)
    torch_site = Path(__import__("torch").__file__).parents[1]  # the test venv's CPU torch, which tilelang imports
    # libtilelang's RUNPATH finds tvm_ffi and z3 beside it ($ORIGIN/../../tvm_ffi/lib): one site folder, hard links
    site = machine.tmp / "site"
    for spec in (TILELANG_11, TVM_FFI_NEW, Z3):
        ignore = shutil.ignore_patterns(".complete")
        shutil.copytree(installed(spec), site, copy_function=os.link, dirs_exist_ok=True, ignore=ignore)
    machine.environment(site, torch_site)
    fast = doctor.run("check", "--fast", "--json", env=machine).json()
    assert (fast["facts"]["tilelang"]["version"], fast["facts"]["tvm_ffi"]["version"]) == ("0.1.11", "0.1.15.post2")
    mismatch = finding(fast, "tilelang-tvm-ffi-mismatch")
    assert mismatch["severity"] == "fail" and "apache-tvm-ffi<0.1.12" in mismatch["fix"]
    assert "0.1.11" in mismatch["detail"] and "0.1.15.post2" in mismatch["detail"]
    # the real import, in a child: it aborts. The time limit is raised from its 20 s default: under CI's load the
    # import itself has taken longer than that before it got as far as the abort
    doc = doctor.run("check", "--json", "--timeout", "120", env=machine).json()
    assert doc["facts"]["tilelang"]["imports"] is False
    assert (
        "__ffi_repr__" in doc["facts"]["tilelang"]["import_error"]
        or "SIGABRT" in doc["facts"]["tilelang"]["import_error"]
    )
    assert "tilelang-tvm-ffi-mismatch" in ids(doc) and doc["verdict"] == "fail"


def test_tile_kernels_imports_a_tilelang_module_that_tilelang_0_1_12_moved(installed):
    kernels, tilelang = installed(TILE_KERNELS), installed(TILELANG)
    sources = "".join(p.read_text(errors="replace") for p in (kernels / "tile_kernels").rglob("*.py"))
    assert "from tilelang.utils.target import" in sources
    assert not (tilelang / "tilelang" / "utils" / "target.py").exists()
    assert (tilelang / "tilelang" / "backend" / "target.py").exists()


def functions(path: Path) -> dict[str, tuple[str, ...]]:
    """A source file's top-level functions and their parameter names (the package is read, not imported)."""
    tree = ast.parse(path.read_text())
    return {n.name: tuple(a.arg for a in n.args.args) for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_the_tilekernels_adapter_finds_the_1x_api_tile_kernels_1_0_0_has(installed):
    from mhcdoctor.kernels.tilekernels_path import _V1

    mhc = installed(TILE_KERNELS) / "tile_kernels" / "modeling" / "mhc"
    exported = (mhc / "ops" / "__init__.py").read_text()
    assert all(f"import {name}\n" in exported or f"import {name}, " in exported for name in _V1["ops"])
    assert set(_V1["functional"]) <= set(functions(mhc / "functional.py"))


def test_the_tilekernels_adapter_calls_the_kernels_of_tile_kernels_2_1_0_with_their_parameters(installed):
    from mhcdoctor.kernels.tilekernels_path import _V2

    root = installed(TILE_KERNELS_2, "--ignore-requires-python") / "tile_kernels"
    assert not (root / "modeling" / "mhc").exists() and (root / "mhc" / "__init__.py").is_file()
    init = ast.parse((root / "mhc" / "__init__.py").read_text())
    exported = {a.name: n.module for n in init.body if isinstance(n, ast.ImportFrom) for a in n.names}
    for name, params in _V2.items():
        taken = functions(root / "mhc" / f"{exported[name]}.py")[name]
        assert taken[: len(params)] == params, name


# --- nvidia-ml-py on a machine without an NVIDIA driver -------------------------------------------------------------


def test_nvml_without_a_driver_is_no_gpu_not_a_broken_probe(machine, installed):
    machine.environment(installed(NVML))
    doc = doctor.run("check", "--json", env=machine).json()
    nvml = next(p for p in doc["probes"] if p["name"] == "gpu.nvml")
    assert nvml["status"] == "missing" and "NVML" in nvml["error"]
    assert doc["facts"]["platform"] == "cpu" and "no-gpu" in ids(doc)


# --- vllm --no-deps: installed, does not import ---------------------------------------------------------------------


def test_vllm_installed_without_its_requirements_is_a_fail_and_its_pins_are_read(machine, installed):
    h200(machine)
    machine.environment(installed(VLLM), installed(TILELANG))
    doc = doctor.run("check", "--json", env=machine).json()
    assert doc["facts"]["vllm"]["version"] == "0.34.0" and doc["facts"]["vllm"]["imports"] is False
    assert "No module named" in finding(doc, "vllm-not-importable")["detail"]
    assert doc["facts"]["vllm_pins"] == {"torch": "==2.14.0", "tilelang": "==0.1.12"}
    assert "tilelang 0.1.15 (vLLM pins tilelang==0.1.12)" in finding(doc, "vllm-pin-mismatch")["detail"]
    assert doc["verdict"] == "fail"
