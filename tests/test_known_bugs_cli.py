"""The issue's two examples, as a user runs them: each gives `fail` with the fix that names the cause."""

from __future__ import annotations

import json

import doctor
import fakes
from fakemachine import Machine, check_json


def test_aiter_0_1_15_without_3417_is_fail_with_the_016_fix(tmp_path):
    machine = Machine(tmp_path)
    proc = doctor.run(
        "explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.15", "--aiter-fix", "present",
        "--rocm", "7.2.3", "--vllm", "0.25.0", env=machine,
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
    doc, proc = check_json(machine, "--fast")
    mismatch = next(f for f in doc["findings"] if f["id"] == "tilelang-tvm-ffi-mismatch")
    assert (proc.returncode, mismatch["severity"]) == (3, "fail")
    assert mismatch["fix"].startswith("pip install 'apache-tvm-ffi<0.1.12'")
    assert "tilelang 0.1.11 with apache-tvm-ffi 0.1.15.post2" in mismatch["detail"]


def test_tilelang_0_1_12_with_apache_tvm_ffi_0_1_12_over_its_pin_is_fail_from_metadata_alone(tmp_path):
    machine = Machine(tmp_path)  # measured on the H200: `import tilelang` aborts with this pair
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.12", requires=["apache-tvm-ffi<=0.1.11,>=0.1.10"])
    fakes.library(machine.site, "tvm_ffi", "0.1.12", dist="apache-tvm-ffi")
    proc = doctor.run("check", "--fast", env=machine)
    line = next(x.strip() for x in proc.stdout.splitlines() if "tilelang-tvm-ffi-mismatch:" in x)
    assert (proc.returncode, line) == (
        3,
        "✗ tilelang-tvm-ffi-mismatch: tilelang and apache-tvm-ffi are a known-bad pair",
    )
    assert "requires apache-tvm-ffi>=0.1.10,<=0.1.11: 0.1.12 was installed over that pin" in proc.stdout
    assert "pip install 'apache-tvm-ffi<0.1.12'" in proc.stdout
    explained = doctor.run("explain", env=machine)  # the same machine, as explain shows it
    assert "✗ [fail] tilelang-tvm-ffi-mismatch: tilelang and apache-tvm-ffi are a known-bad pair" in explained.stdout
    assert explained.returncode == 3
