"""Issue 30's done-when: a stock install of every vLLM release 0.20.0–0.34.0 on its primary GPU (sm_90: an H200) gets
no fail that a measurement or the code does not back.

A stock install is exactly what the release's wheel declares, read from each PyPI wheel into
tests/data/vllm_wheels.json: its Requires-Dist pins of tilelang, apache-tvm-ffi and torch (a CUDA 13.0 build), and the
DeepGEMM it vendors as vllm.third_party.deep_gemm; with CUDA 13.0's nvcc, as in vLLM's CUDA images. Each is a fake
machine with real dist-info folders, checked by `mhcdoctor check --fast` through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import fakes
import pytest
from fakemachine import Machine, check_json
from packaging.version import Version

from mhcdoctor.knowledge.bugs import BY_ID
from mhcdoctor.knowledge.vllm_releases import RELEASES

WHEELS = json.loads((Path(__file__).parents[1] / "data" / "vllm_wheels.json").read_text())["releases"]


def stock_h200(machine: Machine, release: str) -> None:
    wheel = WHEELS[release]
    pins = {name: spec.removeprefix("==") for name, spec in wheel["requires"].items()}
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.executable(machine.root / "usr/local/cuda/bin/nvcc", fakes.NVCC_VERSION)
    fakes.torch(machine.site, version=pins["torch"] + "+cu130", cuda="13.0")
    fakes.library(machine.site, "tilelang", pins["tilelang"])
    fakes.library(machine.site, "tvm_ffi", pins["apache-tvm-ffi"], dist="apache-tvm-ffi")
    vllm = fakes.library(machine.site, "vllm", release, requires=[f"{n}{s}" for n, s in wheel["requires"].items()])
    prenorm = "def tf32_hc_prenorm_gemm(*args):\n    pass\n" if wheel["vendored_prenorm_gemm"] else ""
    fakes.write(vllm / "third_party/__init__.py", "")
    fakes.write(vllm / "third_party/deep_gemm/__init__.py", f"__version__ = {wheel['vendored_deep_gemm']!r}\n{prenorm}")


def test_the_wheel_data_and_the_knowledge_agree():
    assert [r.version for r in RELEASES] == list(WHEELS)
    for r in RELEASES:
        wheel = WHEELS[r.version]
        assert (f"=={r.tilelang}", f"=={r.tvm_ffi}", f"=={r.torch}", r.deepgemm) == (
            wheel["requires"]["tilelang"],
            wheel["requires"]["apache-tvm-ffi"],
            wheel["requires"]["torch"],
            wheel["vendored_deep_gemm"],
        ), r.version


# Fails a stock install may show, each with the code that backs it: vLLM before 0.30.0 has no models/deepseek_v41
# (DeepseekV41ForCausalLM first ships in 0.30.0), so the built-in DeepSeek-V4.1 model cannot load there.
CODE_BACKED = {"model-v41-unsupported": lambda release: Version(release) < Version("0.30.0")}

# Stock installs measured broken for a DeepSeek-V4 model (the measurement is in the record's evidence): vLLM 0.22.x's
# pre with the RMSNorm folded in, under its pinned tilelang 0.1.9, wrong at V4-Pro's hidden 7168 from 512 tokens on
# the H200 (DeepGEMM on, as stock); 0.22.1's kernel files are 0.22.0's.
MEASURED_STOCK_FAILS = {("0.22.0", "deepseek-v4-pro"): "tilelang-pre-norm-stages",
                        ("0.22.1", "deepseek-v4-pro"): "tilelang-pre-norm-stages"}  # fmt: skip


@pytest.mark.parametrize("release", list(WHEELS))
def test_a_stock_install_on_an_h200_gets_no_fail_without_proof(tmp_path, release):
    machine = Machine(tmp_path)
    stock_h200(machine, release)
    doc, _ = check_json(machine, "--fast")
    assert (doc["facts"]["vllm"]["version"], doc["facts"]["arch"]) == (release, "sm_90")
    fails = {f["id"] for f in doc["findings"] if f["severity"] == "fail"}
    proven = {i for i in fails if i in BY_ID and BY_ID[i].proof != "report"}
    backed = {i for i in fails if i in CODE_BACKED and CODE_BACKED[i](release)}
    assert fails - proven - backed == set(), f"vLLM {release} stock on an H200: fail without proof"
    for model in doc["models"]:  # DeepSeek-V4 itself runs on every release's stock install, but where measured broken
        name = model["model"]["name"] or ""
        if "v4.1" in name:
            continue
        fails = {f["id"] for f in model["findings"] if f["severity"] == "fail"}
        measured = MEASURED_STOCK_FAILS.get((release, name))
        assert fails == ({measured} if measured else set()), f"vLLM {release}, {name}: {model['findings']}"
        if measured:
            assert BY_ID[measured].proof == "measured"
