"""A vLLM that is installed but does not import (issue 8 §2), and vLLM's own pins (§3), through `check --python`."""

from __future__ import annotations

import json
import subprocess

import doctor
import fakes
import pytest
from fakemachine import Machine, check_json, finding_ids

NO_TORCH = fakes.raises("ModuleNotFoundError(\"No module named 'torch'\")")
PINS_034 = ["torch==2.14.0", "tilelang==0.1.12", "zentorch==2.14.0.2; extra == 'zen'", "numpy"]


@pytest.fixture
def machine(tmp_path) -> Machine:
    return Machine(tmp_path)


def explain(machine: Machine, *args: str) -> subprocess.CompletedProcess[str]:
    """`mhcdoctor explain --python <the fake environment> ARGS` on the fake machine."""
    return doctor.run("explain", *args, env=machine)


def test_a_vllm_that_does_not_import_is_a_fail_finding_with_its_error(machine):
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "vllm", "0.34.0", init=NO_TORCH)
    doc, proc = check_json(machine)
    finding = next(f for f in doc["findings"] if f["id"] == "vllm-not-importable")
    assert finding["severity"] == "fail" and "No module named 'torch'" in finding["detail"]
    assert proc.returncode == 3
    assert "pip show vllm" in finding["fix"]


def test_explain_deep_sees_the_vllm_that_does_not_import(machine):
    fakes.library(machine.site, "vllm", "0.34.0", init=NO_TORCH)
    proc = explain(machine, "--platform", "cuda", "--arch", "sm_90", "--tilelang", "0.1.12", "--deep")
    assert "vllm-not-importable" in proc.stdout and "verdict: fail" in proc.stdout
    assert proc.returncode == 3


def test_fast_check_does_not_import_vllm_so_raises_no_import_finding(machine):
    fakes.nvidia_proc(machine.root)
    fakes.library(machine.site, "vllm", "0.34.0", init=NO_TORCH)
    doc, _ = check_json(machine, "--fast")
    assert "vllm-not-importable" not in finding_ids(doc)


def test_each_pin_that_differs_is_named_and_extras_are_ignored(machine):
    fakes.nvidia_proc(machine.root)
    fakes.torch(machine.site, version="2.13.0+cu130")
    fakes.library(machine.site, "tilelang", "0.1.15")
    fakes.library(machine.site, "vllm", "0.34.0", requires=PINS_034)
    doc, _ = check_json(machine, "--fast")
    assert doc["facts"]["vllm_pins"] == {"torch": "==2.14.0", "tilelang": "==0.1.12"}
    finding = next(f for f in doc["findings"] if f["id"] == "vllm-pin-mismatch")
    assert finding["severity"] == "warn"
    assert "torch 2.13.0+cu130 (vLLM pins torch==2.14.0)" in finding["detail"]
    assert "tilelang 0.1.15 (vLLM pins tilelang==0.1.12)" in finding["detail"]
    assert finding["ops"] == []  # a warning about the install, not about one op


def test_a_local_build_of_the_pinned_version_matches_the_pin(machine):
    fakes.nvidia_proc(machine.root)
    fakes.torch(machine.site, version="2.14.0+cu130")
    fakes.library(machine.site, "tilelang", "0.1.12")
    fakes.library(machine.site, "vllm", "0.34.0", requires=PINS_034)
    doc, _ = check_json(machine, "--fast")
    assert "vllm-pin-mismatch" not in finding_ids(doc)


def test_a_tilelang_without_the_api_vllms_kernels_call_is_a_fail(machine):
    fakes.nvidia_proc(machine.root)
    fakes.torch(machine.site, version="2.14.0")
    fakes.library(machine.site, "tilelang", "0.1.7")  # no T.pdl_sync before 0.1.8
    fakes.library(machine.site, "vllm", "0.34.0", requires=PINS_034)
    doc, proc = check_json(machine, "--fast")
    finding = next(f for f in doc["findings"] if f["id"] == "vllm-pin-mismatch")
    assert finding["severity"] == "fail" and "T.pdl_sync" in finding["detail"]
    assert "mhc_pre" in finding["ops"]
    assert proc.returncode == 3


def test_asking_about_another_vllm_forgets_the_installed_pins(machine):
    fakes.nvidia_proc(machine.root)
    fakes.torch(machine.site, version="2.13.0")
    fakes.library(machine.site, "vllm", "0.34.0", requires=PINS_034)
    assert "vllm-pin-mismatch" in {f["id"] for f in json.loads(explain(machine, "--json").stdout)["findings"]}
    proc = explain(machine, "--json", "--vllm", "0.29.0")
    assert "vllm-pin-mismatch" not in {f["id"] for f in json.loads(proc.stdout)["findings"]}


def test_a_relative_python_path_reaches_the_import_children(machine):
    fakes.library(machine.site, "vllm", "0.34.0", init=NO_TORCH)
    relative = str(machine.python.relative_to(machine.tmp))
    proc = doctor.run("check", "--json", "--python", relative, env=machine.env(), cwd=machine.tmp)
    assert json.loads(proc.stdout)["facts"]["vllm"]["import_error"] == "ModuleNotFoundError: No module named 'torch'"


def test_a_no_deps_vllm_without_its_requirements_is_no_plain_tick_in_a_fast_check(machine):
    """`pip install --no-deps vllm==0.34.0`: its Requires-Dist (torch, tilelang) is in METADATA, readable by --fast;
    `check --fast --fail-on fail` is the image gate the playbook recommends, so a vLLM that cannot import fails it."""
    fakes.nvidia_proc(machine.root)
    fakes.library(machine.site, "vllm", "0.34.0", requires=PINS_034)
    doc, proc = check_json(machine, "--fast", "--fail-on", "fail")
    finding = next(f for f in doc["findings"] if f["id"] == "vllm-pin-mismatch")
    assert finding["severity"] == "fail" and proc.returncode == 3
    assert "torch not installed (vLLM pins torch==2.14.0)" in finding["detail"]
    assert "tilelang not installed (vLLM pins tilelang==0.1.12)" in finding["detail"]
    vllm_row = next(line for line in doctor.run("check", "--fast", env=machine).stdout.splitlines() if " vLLM " in line)
    assert "✓" not in vllm_row and "its Requires-Dist is not met" in vllm_row


def test_a_full_check_imports_vllm_in_one_child_and_still_reports_the_import(machine):
    """Importing a real vLLM costs about 10 s of CPU: the self-check's child imports it once for both probes."""
    imports = machine.tmp / "vllm-imports"
    folder = fakes.vllm(machine.site, "0.34.0+cpu")
    init = folder / "__init__.py"
    init.write_text(f"open({str(imports)!r}, 'a').write('imported\\n')\n" + init.read_text())
    doc, _ = check_json(machine)
    assert imports.read_text().count("imported") == 1
    probes = {p["name"]: p for p in doc["probes"]}
    assert (probes["vllm.import"]["status"], probes["vllm.import"]["data"]["version"]) == ("ok", "0.34.0+cpu")
    assert probes["vllm.selfcheck"]["data"]["platform"] == "CpuPlatform"
    assert doc["facts"]["vllm"]["imports"] is True
    names = [p["name"] for p in doc["probes"]]
    assert names.index("vllm.import") < names.index("vllm_xpu_kernels")  # in the probes' own order


def test_a_vllm_that_does_not_import_fails_the_import_probe_from_the_one_child(machine):
    fakes.library(machine.site, "vllm", "0.34.0", init=NO_TORCH)
    doc, _ = check_json(machine)
    probes = {p["name"]: p for p in doc["probes"]}
    assert probes["vllm.import"]["status"] == "error"
    assert probes["vllm.import"]["error"] == "ModuleNotFoundError: No module named 'torch'"


@pytest.mark.slow
def test_explain_deep_finds_a_vllm_that_does_not_import_as_check_does(machine: Machine) -> None:
    """`import vllm` passes, `vllm.platforms` does not (as with vLLM's requirements missing): check said
    vllm-not-importable and explain --deep, whose own child imported `vllm` alone, said nothing."""
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "vllm", "0.30.0")  # a package without vllm/platforms
    check, _ = check_json(machine)
    deep = doctor.run("explain", "--deep", "--json", env=machine).json()
    assert "vllm-not-importable" in finding_ids(check)
    assert "vllm-not-importable" in {f["id"] for f in deep["findings"]}
