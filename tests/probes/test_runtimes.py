"""Runtimes: torch's build from torch/version.py, the ROCm version, and the nvcc/hipcc that tilelang's JIT needs."""

from __future__ import annotations

import time

import fakes
import pytest

from mhcdoctor.probes import compilers, facts_from_probes, rocm, torch_build


@pytest.mark.parametrize(
    ("version", "cuda", "hip"),
    [("2.11.0+cu130", "13.0", None), ("2.9.1+rocm7.2", None, "7.2.26015-fc0010cf6a")],
    ids=["cu130", "rocm"],
)
def test_torch_build_is_read_from_version_py_without_importing_it(tmp_path, version, cuda, hip):
    site = fakes.site(tmp_path)
    fakes.torch(site, version, cuda=cuda, hip=hip, init="raise SystemExit('torch must not be imported')\n")
    facts = facts_from_probes([torch_build.probe(fakes.context(tmp_path, site, fast=True))])
    assert (facts.torch.present, facts.torch.version, facts.torch.cuda, facts.torch.hip) == (True, version, cuda, hip)
    assert facts.sources["torch.cuda"] == facts.sources["torch.build"] == "probe:torch"
    assert facts.torch.build == ("cuda" if cuda else "rocm")


def test_no_torch_is_missing(tmp_path):
    result = torch_build.probe(fakes.context(tmp_path, fakes.site(tmp_path), fast=True))
    assert (result.status, result.data["present"]) == ("missing", False)


def test_rocm_version_comes_from_rocm_core_without_its_build_number(tmp_path):
    root = tmp_path / "root"
    fakes.rocm(root, "7.2.3-42")
    facts = facts_from_probes([rocm.probe(fakes.context(tmp_path, root=root, fast=True))])
    assert (facts.rocm_version, facts.sources["rocm_version"]) == ("7.2.3", "probe:rocm")


def test_rocm_path_wins_over_opt_rocm(tmp_path):
    root, other = tmp_path / "root", tmp_path / "rocm-7.1"
    fakes.rocm(root, "7.2.3-42")
    fakes.write(other / ".info" / "version", "7.1.0-20\n")
    result = rocm.probe(fakes.context(tmp_path, root=root, env={"ROCM_PATH": str(other)}, fast=True))
    assert (result.data["version"], result.data["via"]) == ("7.1.0", "ROCM_PATH")


def test_nvcc_under_cuda_home_is_found_and_asked_its_version(tmp_path):
    cuda = tmp_path / "cuda-13.0"
    fakes.executable(cuda / "bin" / "nvcc", fakes.NVCC_VERSION)
    facts = facts_from_probes([compilers.probe_nvcc(fakes.context(tmp_path, env={"CUDA_HOME": str(cuda)}))])
    assert (facts.nvcc.found, facts.nvcc.path, facts.nvcc.version) == (True, str(cuda / "bin" / "nvcc"), "13.0.88")


def test_nvcc_from_the_nvidia_cuda_nvcc_wheel_is_found(tmp_path):
    site = fakes.site(tmp_path)
    nvcc = fakes.executable(site / "nvidia" / "cu13" / "bin" / "nvcc", fakes.NVCC_VERSION)
    fakes.dist_info(site, "nvidia-cuda-nvcc", "13.0.88", files=["nvidia/cu13/bin/nvcc"])
    result = compilers.probe_nvcc(fakes.context(tmp_path, site, fast=True))
    assert (result.status, result.data["path"], result.data["via"]) == ("ok", str(nvcc), "nvidia-cuda-nvcc wheel")


def test_fast_mode_finds_hipcc_in_opt_rocm_but_does_not_run_it(tmp_path):
    root = tmp_path / "root"
    marker = tmp_path / "hipcc-ran"
    hipcc = fakes.executable(root / "opt" / "rocm" / "bin" / "hipcc", fakes.HIPCC_VERSION)
    hipcc.write_text(hipcc.read_text().replace("PATH=/usr/bin:/bin\n", f"PATH=/usr/bin:/bin\ntouch {marker}\n"))
    result = compilers.probe_hipcc(fakes.context(tmp_path, root=root, fast=True))
    assert (result.status, result.data["found"], result.data["version"]) == ("ok", True, None)
    assert not marker.exists()


def test_hipcc_on_path_reports_its_hip_version(tmp_path):
    bin_dir = tmp_path / "bin"
    fakes.executable(bin_dir / "hipcc", fakes.HIPCC_VERSION)
    facts = facts_from_probes([compilers.probe_hipcc(fakes.context(tmp_path, env={"PATH": str(bin_dir)}))])
    assert (facts.hipcc.found, facts.hipcc.version) == (True, "7.2.26015")


@pytest.mark.slow
def test_a_hanging_compiler_is_a_timeout_but_still_found(tmp_path):
    bin_dir = tmp_path / "bin"
    fakes.executable(bin_dir / "nvcc", fakes.NVCC_VERSION, sleep=30)
    start = time.perf_counter()
    result = compilers.probe_nvcc(fakes.context(tmp_path, env={"PATH": str(bin_dir)}, timeout=0.5))
    assert time.perf_counter() - start < 5
    assert (result.status, result.data["found"]) == ("timeout", True)
    assert facts_from_probes([result]).nvcc.found is True


def test_no_compiler_anywhere_is_missing(tmp_path):
    ctx = fakes.context(tmp_path, fast=True)
    results = [compilers.probe_nvcc(ctx), compilers.probe_hipcc(ctx)]
    assert [r.status for r in results] == ["missing", "missing"]
    facts = facts_from_probes(results)
    assert (facts.nvcc.found, facts.hipcc.found) == (False, False)
