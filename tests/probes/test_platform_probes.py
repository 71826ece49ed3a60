"""Which build of vLLM is installed (files only), and Intel GPUs from sysfs and xpu-smi."""

from __future__ import annotations

import json
from pathlib import Path

import fakes
import pytest

from mhcdoctor.knowledge.vllm_builds import build_from_version
from mhcdoctor.probes import gpu_intel, vllm_build


@pytest.mark.parametrize(
    "version, build",
    [("0.34.0+cpu", "cpu"), ("0.30.0+xpu", "xpu"), ("0.30.0+rocm700", "rocm"), ("0.34.0+cu129", "cuda"),
     ("0.34.0", None), ("0.34.0+gitabc", None)],
)  # fmt: skip
def test_the_local_version_label_names_the_build(version, build):
    assert build_from_version(version)[0] == build


def test_without_a_label_the_extension_modules_name_the_build(tmp_path: Path):
    site = fakes.site(tmp_path)
    fakes.vllm(site, "0.30.0", files={"_rocm_C.abi3.so": "", "_C.abi3.so": ""})
    result = vllm_build.probe(fakes.context(tmp_path, site, fast=True))
    assert (result.data["build"], result.data["version"]) == ("rocm", "0.30.0")
    assert "_rocm_C* ships only in the ROCm build" in str(result.data["build_evidence"])


def test_a_stand_in_without_extension_modules_has_no_established_build(tmp_path: Path):
    site = fakes.site(tmp_path)
    fakes.vllm(site, "0.34.0")
    result = vllm_build.probe(fakes.context(tmp_path, site, fast=True))
    assert result.data["build"] is None
    assert "no compiled extension module" in str(result.data["build_evidence"])


def test_xpu_smi_names_the_sysfs_devices_by_pci_address(tmp_path: Path):
    root = tmp_path / "root"
    fakes.intel_gpu(root, 0, "0000:29:00.0")
    listing = {"device_list": [{"device_id": 0, "device_name": "Intel(R) Data Center GPU Max 1550",
                                "pci_bdf_address": "0000:29:00.0"}]}  # fmt: skip
    fakes.executable(tmp_path / "bin" / "xpu-smi", json.dumps(listing))
    ctx = fakes.context(tmp_path, root=root, env={"PATH": str(tmp_path / "bin")})
    result = gpu_intel.probe(ctx)
    devices = result.data["devices"]
    assert isinstance(devices, list)
    assert [(d["name"], d["bdf"]) for d in devices if isinstance(d, dict)] == [
        ("Intel(R) Data Center GPU Max 1550", "0000:29:00.0")
    ]


def test_a_machine_without_intel_gpus_is_missing_not_an_error(tmp_path: Path):
    root = tmp_path / "root"
    (root / "sys/class/drm").mkdir(parents=True)
    result = gpu_intel.probe(fakes.context(tmp_path, root=root))
    assert (result.status, result.data["devices"]) == ("missing", [])
