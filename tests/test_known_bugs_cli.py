"""The issue's two examples, as a user runs them: each gives `fail` with the fix that names the cause."""

from __future__ import annotations

import json

import fakes
from fakemachine import Machine


def test_aiter_0_1_15_without_3417_is_fail_with_the_016_fix(tmp_path):
    machine = Machine(tmp_path)
    proc = machine.run(
        "explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.15", "--aiter-fix", "present",
        "--rocm", "7.2.3", "--vllm", "0.25.0",
    )  # fmt: skip
    doc = json.loads(proc.stdout)
    found = {f["id"]: f for f in doc["findings"]}
    assert (proc.returncode, doc["verdict"], found["aiter-rocm-compiler"]["severity"]) == (3, "fail", "fail")
    assert (
        "aiter 0.1.16 or later" in found["aiter-rocm-compiler"]["fix"]
        and "#3417" in found["aiter-rocm-compiler"]["detail"]
    )


def test_tilelang_0_1_11_with_apache_tvm_ffi_0_1_15_is_fail_from_metadata_alone(tmp_path):
    machine = Machine(tmp_path)
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.11")
    fakes.library(machine.site, "tvm_ffi", "0.1.15.post2", dist="apache-tvm-ffi")
    doc, proc = machine.check_json("--fast")
    mismatch = next(f for f in doc["findings"] if f["id"] == "tilelang-tvm-ffi-mismatch")
    assert (proc.returncode, mismatch["severity"]) == (3, "fail")
    assert mismatch["fix"].startswith("pip install 'apache-tvm-ffi<0.1.12'")
    assert "tilelang 0.1.11 with apache-tvm-ffi 0.1.15.post2" in mismatch["detail"]


def test_tilelang_0_1_12_with_apache_tvm_ffi_0_1_12_over_its_pin_is_fail_from_metadata_alone(tmp_path):
    machine = Machine(tmp_path)  # measured on the H200: `import tilelang` aborts with this pair
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.12", requires=["apache-tvm-ffi<=0.1.11,>=0.1.10"])
    fakes.library(machine.site, "tvm_ffi", "0.1.12", dist="apache-tvm-ffi")
    proc = machine.check("--fast")
    line = next(x.strip() for x in proc.stdout.splitlines() if "tilelang-tvm-ffi-mismatch:" in x)
    assert (proc.returncode, line) == (
        3,
        "✗ tilelang-tvm-ffi-mismatch: tilelang and apache-tvm-ffi are a known-bad pair",
    )
    assert "requires apache-tvm-ffi>=0.1.10,<=0.1.11: 0.1.12 was installed over that pin" in proc.stdout
    assert "pip install 'apache-tvm-ffi<0.1.12'" in proc.stdout
    explained = machine.run("explain")  # the same machine, as explain shows it
    assert "✗ [fail] tilelang-tvm-ffi-mismatch: tilelang and apache-tvm-ffi are a known-bad pair" in explained.stdout
    assert explained.returncode == 3


def h200_with_tilelang(machine: Machine, tilelang: str, tvm_ffi: str, init: str = "") -> None:
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", tilelang, init=init)
    fakes.library(machine.site, "tvm_ffi", tvm_ffi, dist="apache-tvm-ffi")


def test_vllm_0_26_0s_own_pins_tilelang_0_1_9_with_apache_tvm_ffi_0_1_10_are_no_finding(tmp_path):
    machine = Machine(tmp_path)  # measured on the H200: imports, compiles and runs vLLM 0.26.0's kernels
    h200_with_tilelang(machine, "0.1.9", "0.1.10")
    fakes.library(machine.site, "vllm", "0.26.0", requires=["tilelang==0.1.9", "apache-tvm-ffi==0.1.10"])
    doc, _ = machine.check_json("--fast")
    assert "tilelang-tvm-ffi-mismatch" not in {f["id"] for f in doc["findings"]}


def test_tilelang_0_1_9_with_apache_tvm_ffi_0_1_12_is_fail_from_metadata_alone(tmp_path):
    machine = Machine(tmp_path)  # measured: `import tilelang` raises (AttributeError in tvm_ffi/registry.py)
    h200_with_tilelang(machine, "0.1.9", "0.1.12")
    doc, proc = machine.check_json("--fast")
    mismatch = next(f for f in doc["findings"] if f["id"] == "tilelang-tvm-ffi-mismatch")
    assert (proc.returncode, mismatch["severity"], mismatch["fix"]) == (
        3,
        "fail",
        "pip install 'apache-tvm-ffi<0.1.12'",
    )
    assert "'__dict__' of 'type' objects is not writable" in mismatch["detail"]


def test_a_full_check_whose_child_imported_tilelang_overrules_the_metadata(tmp_path):
    machine = Machine(tmp_path)  # observed beats inferred: the pair's import abort did not happen here
    h200_with_tilelang(machine, "0.1.11", "0.1.15.post2")
    fast, _ = machine.check_json("--fast")
    assert next(f for f in fast["findings"] if f["id"] == "tilelang-tvm-ffi-mismatch")["severity"] == "fail"
    full, _ = machine.check_json()
    assert full["facts"]["tilelang"]["imports"] is True
    assert "tilelang-tvm-ffi-mismatch" not in {f["id"] for f in full["findings"]}


def test_a_full_check_whose_child_saw_the_import_abort_keeps_the_fail(tmp_path):
    machine = Machine(tmp_path)
    h200_with_tilelang(machine, "0.1.11", "0.1.15.post2", init="import os\nos.abort()")
    full, proc = machine.check_json()
    assert full["facts"]["tilelang"]["imports"] is False
    mismatch = next(f for f in full["findings"] if f["id"] == "tilelang-tvm-ffi-mismatch")
    assert (mismatch["severity"], proc.returncode) == ("fail", 3)
