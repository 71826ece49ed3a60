"""Intel XPU and CPU per vLLM release, and vLLM's own platform detection, as the rules decide them.

Read from each release's wheel: models/deepseek_v4/__init__.py (which model module a platform imports),
models/deepseek_v4/{xpu,cpu}/model.py, the forward_xpu/forward_cpu methods in layers/mhc.py, custom_op.py
(dispatch_forward) and platforms/__init__.py (detection).
"""

from __future__ import annotations

import pytest

from mhcdoctor.facts import Facts, PackageFacts, TorchFacts, VllmFacts, VllmSelfCheck
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules import decide, rules_for_vllm
from mhcdoctor.rules.dispatch import dispatch
from mhcdoctor.rules.findings import FindingContext, selfcheck_disagreements

PRO = ModelConfig("deepseek-v4-pro", 7168)


def xpu_machine(kernels: bool | None = True) -> Facts:
    facts = Facts(platform="xpu")
    facts.torch = TorchFacts(present=True, version="2.11.0+xpu", xpu="20250101", build="xpu")
    facts.xpu_kernels = PackageFacts(present=kernels)
    return facts


def paths(decision) -> str:
    return " ".join(decision.ops[op].path for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"))


# release | paths of pre post fused-op hc_head | the XPU model fuses | verdict
XPU_CASES = [
    ("0.20.0", "unavailable unavailable unavailable unavailable", False, "fail"),  # no xpu/ model
    ("0.22.1", "unavailable unavailable unavailable unavailable", False, "fail"),
    ("0.23.0", "torch torch torch triton", False, "ok"),  # xpu/ arrives: forward_xpu = forward_native, no fused op
    ("0.24.0", "torch torch torch triton", True, "ok"),  # the XPU model now fuses post+pre
    ("0.26.0", "torch torch torch triton", True, "ok"),
    ("0.27.0", "xpu xpu xpu xpu", True, "ok"),  # forward_xpu calls torch.ops._xpu_C for all four
    ("0.34.0", "xpu xpu xpu xpu", True, "ok"),
]


@pytest.mark.parametrize("release, expected, fused, verdict", XPU_CASES)
def test_intel_xpu_per_release(release, expected, fused, verdict):
    decision = decide(xpu_machine(), PRO, release)
    assert (paths(decision), decision.fused_post_pre, decision.verdict) == (expected, fused, verdict)
    if verdict == "fail":
        assert [f.id for f in decision.findings if f.severity == "fail"] == ["vllm-no-platform-model"]


def test_xpu_without_vllm_xpu_kernels_cannot_load_the_platform():
    decision = decide(xpu_machine(kernels=False), PRO, "0.34.0")
    assert paths(decision) == "unavailable unavailable unavailable unavailable"
    assert "xpu-kernels-missing" in {f.id for f in decision.findings}


def test_an_intel_gpu_with_a_cpu_build_of_torch_is_no_xpu_platform():
    facts = xpu_machine()
    facts.torch = TorchFacts(present=True, version="2.13.0+cpu", build="cpu")  # torch/version.py: no cuda, hip, xpu
    decision = decide(facts, PRO, "0.34.0")
    assert decision.vllm.platform == "unspecified"
    assert "torch-build-mismatch" in {f.id for f in decision.findings}


@pytest.mark.parametrize(
    "release, expected, verdict",
    [
        ("0.29.0+cpu", "unavailable unavailable unavailable unavailable", "fail"),  # no cpu/ model before 0.30
        ("0.30.0+cpu", "cpu cpu cpu cpu", "ok"),
        ("0.34.0+cpu", "cpu cpu cpu cpu", "ok"),
        ("0.34.0", "unavailable unavailable unavailable unavailable", "fail"),  # PyPI's CUDA wheel: unspecified
    ],
)
def test_cpu_per_release(release, expected, verdict):
    decision = decide(Facts(), PRO, release)
    assert (paths(decision), decision.verdict) == (expected, verdict)
    assert decision.fused_post_pre is False  # cpu/model.py fuses only with HAS_TILELANG_MHC, False on CPU


def test_cpu_findings_say_why_it_cannot_run():
    assert {f.id for f in decide(Facts(), PRO, "0.34.0").findings} >= {"no-gpu"}
    assert {f.id for f in decide(Facts(), PRO, "0.29.0+cpu").findings} >= {"vllm-no-platform-model"}
    assert "no-gpu" not in {f.id for f in decide(Facts(), PRO, "0.30.0+cpu").findings}


def test_a_cpu_build_on_an_nvidia_machine_runs_on_cpu():
    decision = decide(Facts(platform="cuda", arch="sm_90"), PRO, "0.34.0+cpu")
    assert paths(decision) == "cpu cpu cpu cpu"
    assert decision.vllm.platform == "cpu"


def test_a_cpu_build_on_an_amd_machine_activates_two_plugins():
    decision = decide(Facts(platform="rocm", arch="gfx942"), PRO, "0.34.0+cpu")
    assert decision.vllm.platform == "conflict"
    assert "vllm-platform-conflict" in {f.id for f in decision.findings} and decision.verdict == "fail"


def test_a_cuda_build_on_rocm_is_a_build_mismatch():
    facts = Facts(platform="rocm", arch="gfx950")
    facts.vllm = VllmFacts(present=True, version="0.34.0", build="cuda", build_evidence="vllm_flash_attn")
    decision = decide(facts, PRO)
    assert "vllm-build-mismatch" in {f.id for f in decision.findings}
    assert decision.vllm.runs_here is False


def selfcheck_ctx(facts: Facts, release: str) -> FindingContext:
    rules = rules_for_vllm(release)
    assert rules is not None
    return FindingContext(facts, PRO, rules, dispatch(rules, facts, PRO), release, "installed")


def test_the_self_check_compares_only_where_both_sides_have_a_value():
    facts = Facts(platform="cuda", arch="sm_90")
    facts.tilelang = PackageFacts(present=True, imports=True, version="0.1.12")
    facts.vllm = VllmFacts(present=True, version="0.34.0")
    facts.vllm.selfcheck = VllmSelfCheck(platform="CudaPlatform", forward="forward_cuda", has_tilelang=True,
                                         has_tilelang_mhc=True, has_aiter_mhc=False, aiter_fused=None)  # fmt: skip
    assert selfcheck_disagreements(selfcheck_ctx(facts, "0.34.0")) == []
    facts.vllm.selfcheck.has_aiter_mhc = True
    assert selfcheck_disagreements(selfcheck_ctx(facts, "0.34.0")) == ["HAS_AITER_MHC: rules False, vLLM True"]


def test_the_self_check_says_nothing_about_a_what_if_release():
    facts = Facts(platform="cuda", arch="sm_90")
    facts.vllm = VllmFacts(present=True, version="0.34.0", selfcheck=VllmSelfCheck(platform="RocmPlatform"))
    rules = rules_for_vllm("0.25.0")
    ctx = FindingContext(facts, PRO, rules, dispatch(rules, facts, PRO, "0.25.0"), "0.25.0", "installed")
    assert selfcheck_disagreements(ctx) == []


def test_a_saved_report_keeps_the_build_and_the_self_check():
    facts = Facts(platform="cpu")
    facts.vllm = VllmFacts(present=True, version="0.34.0+cpu", build="cpu", build_evidence="version 0.34.0+cpu")
    facts.vllm.selfcheck = VllmSelfCheck(platform="CpuPlatform", has_tilelang=False, fused={"7168x4": "false"})
    assert Facts.from_dict(facts.to_dict()) == facts
