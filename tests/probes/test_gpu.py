"""GPU probes: KFD sysfs and /proc/driver/nvidia as files, amdsmi/NVML/torch in children, merged per device."""

from __future__ import annotations

import fakes
import pytest

from mhcdoctor.probes import facts_from_probes, gpu_amdsmi, gpu_kfd, gpu_nvidia_proc, gpu_nvml, gpu_torch
from mhcdoctor.probes.devices import gfx_from_target_version

GIB = 1024**3
MI300X = {
    "name": "AMD Instinct MI300X",
    "major": 9,
    "minor": 4,
    "total_memory": 192 * GIB,
    "gcnArchName": "gfx942:sramecc+:xnack-",
    "pci_bus_id": 0x0C,
    "pci_device_id": 0,
    "pci_domain_id": 0,
}
H200 = {
    "name": "NVIDIA H200",
    "major": 9,
    "minor": 0,
    "total_memory": 141 * GIB,
    "gcnArchName": "NVIDIA H200",  # CUDA builds put the product name here
    "pci_bus_id": 0x18,
    "pci_device_id": 0,
    "pci_domain_id": 0,
}


@pytest.mark.parametrize(
    ("value", "arch"),
    [(90402, "gfx942"), (90010, "gfx90a"), (90500, "gfx950"), (110000, "gfx1100"), (120001, "gfx1201"), (0, None)],
)
def test_kfd_gfx_target_version_names_the_llvm_target(value, arch):
    assert gfx_from_target_version(value) == arch


def test_kfd_tree_with_a_cpu_node_and_two_mi300x_is_two_gfx942_devices(tmp_path):
    root = tmp_path / "root"
    fakes.kfd(root, [0, 90402, 90402])
    result = gpu_kfd.probe(fakes.context(tmp_path, root=root, fast=True))
    facts = facts_from_probes([result])
    assert facts.platform == "rocm"
    assert facts.arch == "gfx942"
    assert [(d.vendor, d.arch, d.memory_bytes, d.driver) for d in facts.devices] == [
        ("amd", "gfx942", 192 * GIB, "6.12.12"),
        ("amd", "gfx942", 192 * GIB, "6.12.12"),
    ]
    assert result.data["cpu_nodes"] == 1
    assert facts.sources["arch"] == "probe:gpu.kfd"


def test_no_kfd_and_no_nvidia_driver_is_a_cpu_host_with_no_devices(tmp_path):
    ctx = fakes.context(tmp_path, fast=True)
    results = [gpu_kfd.probe(ctx), gpu_nvidia_proc.probe(ctx)]
    assert [r.status for r in results] == ["missing", "missing"]
    facts = facts_from_probes(results)
    assert (facts.platform, facts.arch, facts.devices) == ("cpu", None, [])


def test_proc_driver_nvidia_gives_driver_product_and_arch(tmp_path):
    root = tmp_path / "root"
    fakes.nvidia_proc(root, driver="580.95.05", gpus=[("0000:18:00.0", "NVIDIA H200"), ("0000:2a:00.0", "NVIDIA H200")])
    facts = facts_from_probes([gpu_nvidia_proc.probe(fakes.context(tmp_path, root=root, fast=True))])
    assert (facts.platform, facts.arch, facts.nvidia_driver) == ("cuda", "sm_90", "580.95.05")
    assert [d.name for d in facts.devices] == ["NVIDIA H200", "NVIDIA H200"]


def test_torch_on_rocm_names_the_kfd_devices_without_duplicating_them(tmp_path):
    root, site = tmp_path / "root", fakes.site(tmp_path)
    fakes.kfd(root, [0, 90402])
    fakes.torch(site, "2.9.1+rocm7.2", cuda=None, hip="7.2.26015", init=fakes.fake_torch_gpus([MI300X], hip="7.2"))
    ctx = fakes.context(tmp_path, site, root=root)
    torch_result = gpu_torch.probe(ctx)
    assert torch_result.status == "ok", torch_result.error
    facts = facts_from_probes([gpu_kfd.probe(ctx), torch_result])
    assert len(facts.devices) == 1
    device = facts.devices[0]
    assert (device.arch, device.name, device.memory_bytes) == ("gfx942", "AMD Instinct MI300X", 192 * GIB)
    assert device.source == "gpu.torch,gpu.kfd"


def test_torch_on_cuda_takes_the_arch_from_major_minor_not_gcnarchname(tmp_path):
    site = fakes.site(tmp_path)
    fakes.torch(site, init=fakes.fake_torch_gpus([H200]))
    facts = facts_from_probes([gpu_torch.probe(fakes.context(tmp_path, site))])
    assert (facts.platform, facts.arch, facts.devices[0].name) == ("cuda", "sm_90", "NVIDIA H200")


def test_amdsmi_without_its_shared_library_is_missing_not_a_crash(tmp_path):
    site = fakes.site(tmp_path)
    init = "print('[amdsmi] libamd_smi.so: cannot open shared object file')\nraise KeyError('libamd_smi.so')\n"
    fakes.library(site, "amdsmi", "26.0.0", init=init)
    result = gpu_amdsmi.probe(fakes.context(tmp_path, site))
    assert result.status == "missing"
    assert result.error == "KeyError: 'libamd_smi.so'"
    assert any("libamd_smi.so: cannot open" in line for line in result.evidence), "what it printed is evidence"


def test_amdsmi_market_name_and_vram_join_the_kfd_device_by_pci_address(tmp_path):
    root, site = tmp_path / "root", fakes.site(tmp_path)
    fakes.kfd(root, [0, 90402])
    amdsmi = (
        "def amdsmi_init(): pass\n"
        "def amdsmi_shut_down(): pass\n"
        "def amdsmi_get_processor_handles(): return ['h0']\n"
        "def amdsmi_get_gpu_asic_info(h): return {'market_name': 'AMD Instinct MI300X', "
        "'target_graphics_version': 'gfx942'}\n"
        "def amdsmi_get_gpu_vram_info(h): return {'vram_size': 196592}\n"
        "def amdsmi_get_gpu_driver_info(h): return {'driver_version': '6.16.13'}\n"
        "def amdsmi_get_gpu_device_bdf(h): return '0000:0c:00.0'\n"
    )
    fakes.library(site, "amdsmi", "26.0.0", init=amdsmi)
    ctx = fakes.context(tmp_path, site, root=root)
    facts = facts_from_probes([gpu_kfd.probe(ctx), gpu_amdsmi.probe(ctx)])
    assert len(facts.devices) == 1
    device = facts.devices[0]
    assert (device.name, device.arch, device.driver, device.memory_bytes) == (
        "AMD Instinct MI300X",
        "gfx942",
        "6.16.13",
        196592 * 1024 * 1024,
    )


def test_nvml_without_its_library_is_missing(tmp_path):
    site = fakes.site(tmp_path)
    pynvml = (
        "class NVMLError(Exception): pass\n"
        "class NVMLError_LibraryNotFound(NVMLError): pass\n"
        "def nvmlInit(): raise NVMLError_LibraryNotFound('NVML Shared Library Not Found')\n"
    )
    fakes.write(site / "pynvml.py", pynvml)
    result = gpu_nvml.probe(fakes.context(tmp_path, site))
    assert (result.status, result.error) == ("missing", "NVMLError_LibraryNotFound: NVML Shared Library Not Found")


def test_nvml_gives_compute_capability_and_cuda_version_and_merges_with_proc(tmp_path):
    root, site = tmp_path / "root", fakes.site(tmp_path)
    fakes.nvidia_proc(root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    pynvml = (
        "import types\n"
        "def nvmlInit(): pass\n"
        "def nvmlShutdown(): pass\n"
        "def nvmlSystemGetDriverVersion(): return b'580.95.05'\n"
        "def nvmlSystemGetCudaDriverVersion(): return 13000\n"
        "def nvmlDeviceGetCount(): return 1\n"
        "def nvmlDeviceGetHandleByIndex(i): return i\n"
        "def nvmlDeviceGetCudaComputeCapability(h): return (9, 0)\n"
        "def nvmlDeviceGetName(h): return 'NVIDIA H200'\n"
        "def nvmlDeviceGetMemoryInfo(h): return types.SimpleNamespace(total=150754820096)\n"
        "def nvmlDeviceGetPciInfo(h): return types.SimpleNamespace(busId=b'00000000:18:00.0')\n"
    )
    fakes.write(site / "pynvml.py", pynvml)
    ctx = fakes.context(tmp_path, site, root=root)
    facts = facts_from_probes([gpu_nvidia_proc.probe(ctx), gpu_nvml.probe(ctx)])
    assert (facts.cuda_driver_version, facts.nvidia_driver) == ("13.0", "580.95.05")
    assert facts.sources["cuda_driver_version"] == "probe:gpu.nvml"
    assert [(d.arch, d.memory_bytes, d.source) for d in facts.devices] == [
        ("sm_90", 150754820096, "gpu.nvml,gpu.nvidia-proc")
    ]


def test_a_mixed_host_keeps_every_device_and_follows_the_torch_build(tmp_path):
    root, site = tmp_path / "root", fakes.site(tmp_path)
    fakes.kfd(root, [0, 90402])
    fakes.nvidia_proc(root)
    fakes.torch(site, "2.11.0+cu130", cuda="13.0")
    ctx = fakes.context(tmp_path, site, root=root, fast=True)
    from mhcdoctor.probes import torch_build

    facts = facts_from_probes([gpu_kfd.probe(ctx), gpu_nvidia_proc.probe(ctx), torch_build.probe(ctx)])
    assert sorted(d.vendor for d in facts.devices) == ["amd", "nvidia"]
    assert (facts.platform, facts.arch) == ("cuda", "sm_90")


@pytest.mark.parametrize("probe", [gpu_amdsmi.probe, gpu_nvml.probe, gpu_torch.probe])
def test_child_gpu_probes_are_skipped_in_fast_mode(tmp_path, probe):
    result = probe(fakes.context(tmp_path, fast=True))
    assert result.status == "skipped"


def test_a_gpu_query_that_raises_in_the_child_is_an_error_naming_the_exception(tmp_path):
    site = fakes.site(tmp_path)
    init = fakes.fake_torch_gpus([H200]).replace("is_available=lambda: bool(_DEVICES)", "is_available=lambda: 1 / 0")
    fakes.torch(site, init=init)
    result = gpu_torch.probe(fakes.context(tmp_path, site))
    assert result.status == "error"
    assert result.error == "ZeroDivisionError: division by zero"
    assert result.data["imported"] is True, "torch itself imported; the GPU query failed"
