"""Multi-GPU hosts: results per device, and a host with mixed architectures or mismatched drivers is a finding."""

from __future__ import annotations

import fakes

from mhcdoctor.facts import Device, Facts
from mhcdoctor.models import builtin
from mhcdoctor.probes import facts_from_probes, run_probes
from mhcdoctor.rules import decide


def _ids(facts: Facts) -> set[str]:
    return {f.id for f in decide(facts, builtin("deepseek-v4-pro")).findings}


def _probed(tmp_path, nodes: list[int]) -> Facts:
    root = tmp_path / "root"
    fakes.kfd(root, nodes)
    return facts_from_probes(run_probes(fakes.context(tmp_path, root=root, fast=True)))


def test_a_host_with_gfx942_and_gfx90a_is_a_mixed_arch_finding(tmp_path):
    facts = _probed(tmp_path, [0, 90402, 90402, 90010])
    assert [d.arch for d in facts.devices or []] == ["gfx942", "gfx942", "gfx90a"]
    finding = next(f for f in decide(facts, builtin("deepseek-v4-pro")).findings if f.id == "multi-gpu-mixed-arch")
    assert (finding.severity, "gfx942 x2, gfx90a x1" in finding.detail) == ("warn", True)


def test_eight_identical_gpus_raise_no_multi_gpu_finding(tmp_path):
    assert not {"multi-gpu-mixed-arch", "multi-gpu-driver-mismatch"} & _ids(_probed(tmp_path, [0] + [90402] * 8))


def _amd(index: int, driver: str | None, arch: str = "gfx942") -> Device:
    return Device(index=index, vendor="amd", arch=arch, driver=driver, source="kfd")


def test_gpus_of_one_vendor_with_different_drivers_are_a_finding():
    facts = Facts(platform="rocm", arch="gfx942", devices=[_amd(0, "6.12.12"), _amd(1, "6.12.12"), _amd(2, "6.8.5")])
    finding = next(f for f in decide(facts, builtin("deepseek-v4-pro")).findings if f.id == "multi-gpu-driver-mismatch")
    assert "amd 6.12.12 (GPU 0, 1); amd 6.8.5 (GPU 2)" in finding.detail


def test_an_unknown_driver_is_no_mismatch():
    facts = Facts(platform="rocm", arch="gfx942", devices=[_amd(0, "6.12.12"), _amd(1, None)])
    assert "multi-gpu-driver-mismatch" not in _ids(facts)


def test_amd_and_nvidia_drivers_differ_by_nature_but_the_archs_are_mixed():
    nvidia = Device(index=1, vendor="nvidia", arch="sm_90", driver="580.95.05", source="nvml")
    ids = _ids(Facts(platform="rocm", arch="gfx942", devices=[_amd(0, "6.12.12"), nvidia]))
    assert ("multi-gpu-mixed-arch" in ids, "multi-gpu-driver-mismatch" in ids) == (True, False)
