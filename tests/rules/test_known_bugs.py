"""The known-bugs catalogue fires from facts: each entry on the versions its source names, and not one tag beside."""

from __future__ import annotations

import pytest

from mhcdoctor.facts import DeepGemmFacts, Facts, PackageFacts
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules import decide
from mhcdoctor.whatif import WhatIf, build_facts

PRO, FLASH = 7168, 4096


def machine(platform: str, arch: str, aiter: str = "none", tilelang: str = "0.1.12") -> Facts:
    return build_facts(WhatIf(platform, arch, aiter, None, tilelang, None, None), base=Facts)


def found(facts: Facts, vllm: str, hidden: int = PRO) -> dict[str, str]:
    return {f.id: f.severity for f in decide(facts, ModelConfig("m", hidden), vllm).findings}


@pytest.mark.parametrize(
    "tilelang, ffi, severity, pin",
    [("0.1.11", "0.1.15.post2", "fail", "apache-tvm-ffi<0.1.12"), ("0.1.10", "0.1.12", "fail", "apache-tvm-ffi<0.1.12"),
     ("0.1.9", "0.1.12", "fail", "apache-tvm-ffi<0.1.12"), ("0.1.8", "0.1.10", "fail", "apache-tvm-ffi<0.1.10"),
     ("0.1.9", "0.1.10", None, None), ("0.1.9", "0.1.11", None, None), ("0.1.11", "0.1.11", None, None),
     ("0.1.12", "0.1.11", None, None), ("0.1.13", "0.1.12", None, None), ("0.1.7.post3", "0.1.12", None, None)],
)  # fmt: skip
def test_tvm_ffi_pair_on_cuda(tilelang, ffi, severity, pin):
    facts = machine("cuda", "sm_90", tilelang=tilelang)
    facts.tvm_ffi = PackageFacts(present=True, version=ffi)
    decision = decide(facts, ModelConfig("m", PRO), "0.30.0")
    hit = [f for f in decision.findings if f.id == "tilelang-tvm-ffi-mismatch"]
    assert (hit[0].severity if hit else None) == severity
    if hit:
        assert pin in hit[0].fix and tilelang in hit[0].detail and ffi in hit[0].detail
        assert decision.verdict == "fail"


def test_tvm_ffi_pair_unused_on_rocm_aiter_is_a_warning():
    facts = machine("rocm", "gfx942", aiter="0.1.16", tilelang="0.1.11")  # 0.30 on gfx942: no tilelang mHC
    facts.tvm_ffi = PackageFacts(present=True, version="0.1.12")
    assert found(facts, "0.30.0")["tilelang-tvm-ffi-mismatch"] == "warn"


@pytest.mark.parametrize(
    "aiter, arch, fires",
    [("0.1.19", "gfx942", True), ("0.1.18", "gfx942", True), ("0.1.20.post1", "gfx942", True),
     ("0.1.17", "gfx942", False), ("0.1.19", "gfx950", False)],
)  # fmt: skip
def test_aiter_4633_invalid_config_on_mi300x(aiter, arch, fires):
    ids = found(machine("rocm", arch, aiter=aiter), "0.30.0", FLASH)
    assert (ids.get("aiter-mhc-pre-invalid-config") == "warn") is fires


@pytest.mark.parametrize(
    "deepgemm, problem",
    [(DeepGemmFacts(present=True, vendored=True, has_prenorm_gemm=True), None),
     (DeepGemmFacts(present=False), "neither the standalone deep_gemm"),
     (DeepGemmFacts(present=True, version="2.1.0", vendored=False, has_prenorm_gemm=False),
      "standalone deep_gemm 2.1.0")],
)  # fmt: skip
def test_deepgemm_prenorm_broken_from_the_deep_gemm_found(deepgemm, problem):
    facts = build_facts(WhatIf("cuda", "sm_90", None, None, "0.1.12", "0.26.0", None), base=Facts)  # vLLM installed
    facts.deepgemm = deepgemm
    decision = decide(facts, ModelConfig("m", PRO), "0.26.0")
    hit = [f for f in decision.findings if f.id == "deepgemm-prenorm-broken"]
    assert bool(hit) is (problem is not None)
    if hit:
        assert problem in hit[0].detail and hit[0].severity == "fail" and hit[0].ops == ["mhc_pre"]


@pytest.mark.parametrize(
    "vllm, arch, fires",
    [("0.29.0", "gfx950", True), ("0.30.0", "gfx90a", True), ("0.31.0", "gfx950", False), ("0.28.0", "gfx950", False),
     ("0.30.0", "gfx1100", False)],
)  # fmt: skip
def test_hip_allreduce_offset_in_029_030_on_wave64(vllm, arch, fires):
    ids = found(machine("rocm", arch), vllm)  # no aiter: tilelang runs the fused post+pre with the norm folded in
    assert (ids.get("tilelang-hip-allreduce-offset") == "fail") is fires


@pytest.mark.parametrize(
    "vllm, platform, arch, env, tilelang, severity",
    [("0.25.0", "rocm", "gfx950", None, "0.1.12", None), ("0.27.0", "rocm", "gfx950", None, "0.1.12", None),
     ("0.25.0", "rocm", "gfx950", None, "0.1.11", "warn"), ("0.24.0", "cuda", "sm_80", None, "0.1.12", None),
     ("0.22.0", "cuda", "sm_90", {"VLLM_USE_DEEP_GEMM": "0"}, "0.1.9", "fail"),
     ("0.22.0", "cuda", "sm_90", None, "0.1.9", None), ("0.24.0", "cuda", "sm_80", None, "0.1.9", "fail"),
     ("0.26.0", "cuda", "sm_80", None, "0.1.8", "fail"), ("0.24.0", "cuda", "sm_80", None, "0.1.10", "warn"),
     ("0.24.0", "cuda", "sm_80", None, "0.1.14", None), ("0.24.0", "cuda", "sm_80", None, "0.1.15", None),
     ("0.24.0", "cuda", "sm_80", None, "0.1.15.post1", None), ("0.25.0", "rocm", "gfx950", None, "0.1.9", "warn"),
     ("0.27.0", "cuda", "sm_80", None, "0.1.9", None), ("0.21.0", "cuda", "sm_80", None, "0.1.9", None)],
)  # fmt: skip
def test_block_m_prenorm_gemm_by_the_tilelang_measured(vllm, platform, arch, env, tilelang, severity):
    facts = machine(platform, arch, tilelang=tilelang)
    facts.vllm_env = env
    if platform == "cuda":
        facts.deepgemm = DeepGemmFacts(present=True, vendored=True, has_prenorm_gemm=True)
    finding = next(
        (f for f in decide(facts, ModelConfig("m", PRO), vllm).findings if f.id == "tilelang-prenorm-block-m"), None
    )
    assert (finding.severity if finding else None) == severity
    if finding:
        assert "1024 tokens" in finding.detail and finding.from_tokens == 1024
        assert ("lowers it wrong" in finding.detail) is (severity == "fail")


def test_a_finding_that_shows_only_in_large_calls_says_from_how_many_tokens():
    facts = machine("rocm", "gfx950", aiter="0.1.13")
    race = next(f for f in decide(facts, ModelConfig("m", PRO), "0.25.0").findings if f.id == "aiter-sqrsum-race")
    assert (race.from_tokens, race.scope()) == (17, "from 17 tokens")
    facts = machine("rocm", "gfx950", tilelang="0.1.9")
    block_m = next(
        f for f in decide(facts, ModelConfig("m", PRO), "0.25.0").findings if f.id == "tilelang-prenorm-block-m"
    )
    assert block_m.scope() == "from 1024 tokens: prefill"


@pytest.mark.parametrize("vllm, arch, fires", [("0.23.0", "sm_103", True), ("0.34.0", "sm_103", True),
                                               ("0.22.1", "sm_103", False), ("0.23.0", "sm_100", False)])  # fmt: skip
def test_b300_prenorm_launch_failure_is_a_warning_from_0_23(vllm, arch, fires):
    assert (found(machine("cuda", arch), vllm).get("deepgemm-prenorm-b300-launch") == "warn") is fires


@pytest.mark.parametrize(
    "vllm, tilelang, platform, arch, severity",
    [("0.34.0", "0.1.15", "cuda", "sm_90", "warn"), ("0.33.0", "0.1.13", "cuda", "sm_100", "warn"),
     ("0.34.0", "0.1.12", "cuda", "sm_90", None), ("0.32.0", "0.1.15", "cuda", "sm_90", None),
     ("0.34.0", "0.1.15", "rocm", "gfx90a", None)],
)  # fmt: skip
def test_fused_post_pre_slow_where_the_tilelang_is_newer_than_vllm_034s_pin(vllm, tilelang, platform, arch, severity):
    facts = machine(platform, arch, tilelang=tilelang)
    slow = next((f for f in decide(facts, ModelConfig("m", PRO, num_layers=61), vllm).findings
                 if f.id == "tilelang-fused-post-pre-slow"), None)  # fmt: skip
    assert (slow.severity if slow else None) == severity
    if slow:
        assert slow.ops == ["mhc_fused_post_pre"] and slow.fix.startswith("pip install 'tilelang==0.1.12'")
        assert "0.0480 ms" in slow.detail and "0.0091 ms" in slow.detail and "H200 only" in slow.detail
        assert "121 times per decode step: about 4.7 ms more" in slow.detail
