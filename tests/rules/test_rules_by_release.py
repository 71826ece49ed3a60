"""vLLM's mHC dispatch per release, platform, arch, aiter, tilelang and model shape: one scenario per row.

Machines are described the way a support engineer describes them to `explain` (what-if options on top of an
empty fact set), so these rows also pin what `--aiter VERSION` means.
"""

from __future__ import annotations

import pytest

from mhcdoctor.commands.options import exit_code
from mhcdoctor.facts import Facts
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules import decide
from mhcdoctor.whatif import WhatIf, build_facts

PRO = 7168
BM = "tilelang-prenorm-block-m"  # vLLM 0.22–0.26 with tilelang's prenorm GEMM: warn, or fail under <= 0.1.9


def machine(platform: str, arch: str | None, aiter: str = "none", tilelang: str = "0.1.12", fix: str | None = None,
            rocm: str | None = None) -> Facts:  # fmt: skip
    return build_facts(WhatIf(platform, arch, aiter, fix, tilelang, None, rocm), base=Facts)


def paths(decision) -> tuple[str, str, str, str]:
    return tuple(decision.ops[op].path for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"))


# vllm, platform, arch, aiter, tilelang, hidden, hc_mult | paths of pre post fused-op hc_head (tl: tilelang,
# n/a: unavailable) | model fuses | warn and fail finding ids | verdict
# fmt: off
CASES = [
    # 0.25–0.28: aiter pre/post where HAS_AITER_MHC and hidden % 256; the model then runs post and pre apart.
    ("0.25.0", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 4, "aiter aiter tl tl", False, "", "ok"),
    ("0.25.0", "rocm", "gfx942", "0.1.13", "0.1.12", PRO, 4, "aiter aiter torch triton", False,
     "aiter-sqrsum-race aiter-big-fuse-sync aiter-mhc-post-race", "fail"),
    ("0.25.0", "rocm", "gfx942", "0.1.14", "0.1.12", PRO, 4, "aiter aiter torch triton", False, "", "ok"),
    ("0.25.0", "rocm", "gfx90a", "0.1.16", "0.1.12", PRO, 4, "tl tl tl tl", True, "", "ok"),
    ("0.25.0", "rocm", "gfx90a", "none", "none", PRO, 4, "torch torch torch triton", False, "torch-fallback",
     "degraded"),
    ("0.26.0", "rocm", "gfx1250", "0.1.16", "0.1.12", PRO, 4, "tl tl tl tl", True, "", "ok"),
    ("0.27.0", "rocm", "gfx1250", "0.1.16", "0.1.12", PRO, 4, "aiter aiter torch triton", False, "", "ok"),
    # 5000 = 4 x 1250: the small-token fused kernel's 256-thread loop leaves columns out (tilelang-fused-shape), and
    # 4 x 5000 is no multiple of the tilelang GEMM's 512 threads, which it asserts (tilelang-gemm-shape)
    ("0.25.0", "rocm", "gfx950", "0.1.16", "0.1.12", 5000, 4, "tl tl tl tl", True,
     "tilelang-fused-shape tilelang-gemm-shape", "fail"),
    ("0.25.0", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 8, "aiter aiter tl tl", False,
     "aiter-hidden-unsupported", "fail"),
    ("0.28.0", "rocm", "gfx950", "0.1.16", "0.1.12", 512, 4, "aiter aiter tl tl", False,
     "aiter-hidden-unsupported", "fail"),
    ("0.25.0", "rocm", "gfx950", "none", "none", PRO, 4, "torch torch torch triton", False, "torch-fallback",
     "degraded"),
    # 0.22–0.24: tilelang or torch; gfx942 runs tilelang mHC until 0.24 excludes it.
    ("0.22.1", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 4, "tl tl tl tl", True, "", "ok"),
    ("0.22.0", "rocm", "gfx950", "none", "none", PRO, 4, "torch torch n/a triton", False, "torch-fallback", "degraded"),
    ("0.23.0", "rocm", "gfx942", "none", "0.1.12", PRO, 4, "tl tl tl tl", True, "tilelang-wrong-arch", "fail"),
    ("0.24.0", "rocm", "gfx942", "0.1.16", "0.1.12", PRO, 4, "torch torch torch triton", False, "torch-fallback",
     "degraded"),
    # 0.29: aiter for the fused op too, with no probe of aiter's API.
    ("0.29.0", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 4, "aiter aiter aiter tl", True, "", "ok"),
    ("0.29.0", "rocm", "gfx950", "0.1.14", "0.1.12", PRO, 4, "aiter aiter aiter tl", True, "aiter-api-too-old", "fail"),
    ("0.29.0", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 8, "tl tl tl tl", True,
     "tilelang-hip-allreduce-offset tilelang-fused-shape", "fail"),  # hc_mult 8: 80 mixes, tile 3 leaves 2 out
    # 0.30+: the probes move single ops off an old aiter (an info finding says why).
    ("0.30.0", "rocm", "gfx950", "0.1.14", "0.1.12", PRO, 4, "tl aiter tl tl", True, "tilelang-hip-allreduce-offset",
     "fail"),
    ("0.32.0", "rocm", "gfx950", "0.1.15", "0.1.12", PRO, 4, "aiter aiter tl tl", True, "aiter-rocm-compiler",
     "fail"),
    ("0.34.0", "rocm", "gfx942", "0.1.14", "none", 5120, 4, "aiter aiter torch triton", True, "torch-fallback",
     "degraded"),
    ("0.31.0", "rocm", "gfx942", "0.1.16", "0.1.12", PRO, 4, "aiter aiter aiter triton", True, "", "ok"),
    # 0.20–0.21: ROCm runs CUDA code.
    ("0.20.2", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 4, "tl tl n/a tl", False,
     "rocm-dsv4-unusable tilelang-pdl-unsupported", "fail"),
    ("0.21.0", "rocm", "gfx950", "0.1.16", "0.1.12", PRO, 4, "torch torch tl torch", True,
     "rocm-dsv4-unusable torch-fallback tilelang-pdl-unsupported", "fail"),
    ("0.21.0", "rocm", "gfx950", "none", "none", PRO, 4, "n/a n/a n/a n/a", True,
     "rocm-dsv4-unusable tilelang-missing", "fail"),
    # CUDA: tilelang for everything, no fallback.
    ("0.30.0", "cuda", "sm_90", "none", "0.1.12", PRO, 4, "tl tl tl tl", True, "", "ok"),
    ("0.30.0", "cuda", "sm_90", "none", "none", PRO, 4, "n/a n/a n/a n/a", True, "tilelang-missing", "fail"),
    ("0.20.0", "cuda", "sm_90", "none", "0.1.9", PRO, 4, "tl tl n/a torch", False, "", "ok"),
    ("0.20.0", "cuda", "sm_90", "none", "none", PRO, 4, "n/a n/a n/a n/a", False, "tilelang-missing", "fail"),
    ("0.26.0", "cuda", "sm_80", "none", "0.1.9", PRO, 4, "tl tl tl tl", True, f"deepgemm-prenorm-broken {BM}",
     "fail"),
    # sm_80 (no DeepGEMM): the block-M prenorm GEMM from 1024 tokens, measured wrong under 0.1.9, right under 0.1.15.
    ("0.25.1", "cuda", "sm_80", "none", "0.1.9", PRO, 4, "tl tl tl tl", True, BM, "fail"),
    ("0.25.1", "cuda", "sm_80", "none", "0.1.15", PRO, 4, "tl tl tl tl", True, "", "ok"),
    ("0.30.0", "cuda", "sm_120", "0.1.16", "0.1.12", PRO, 4, "tl tl tl tl", True, "", "ok"),
]
# fmt: on


@pytest.mark.parametrize(
    "vllm, platform, arch, aiter, tilelang, hidden, hc_mult, expected, fused, finding_ids, verdict", CASES
)
def test_dispatch(vllm, platform, arch, aiter, tilelang, hidden, hc_mult, expected, fused, finding_ids, verdict):
    decision = decide(machine(platform, arch, aiter, tilelang), ModelConfig("m", hidden, hc_mult), vllm)
    assert paths(decision) == tuple({"tl": "tilelang", "n/a": "unavailable"}.get(p, p) for p in expected.split())
    assert decision.fused_post_pre is fused
    assert {f.id for f in decision.findings if f.severity != "info"} == set(finding_ids.split())
    assert decision.verdict == verdict


def test_old_aiter_on_030_is_explained_as_an_api_fallback():
    decision = decide(machine("rocm", "gfx950", "0.1.14"), ModelConfig("m", PRO), "0.30.0")
    found = {f.id: f.severity for f in decision.findings}
    assert found == {"aiter-api-fallback": "info", "tilelang-hip-allreduce-offset": "fail"}  # 0.31 fixes the second


@pytest.mark.parametrize(
    "vllm, arch, warned",
    [("0.30.0", "sm_100a", False), ("0.30.0", "sm_120", False), ("0.20.2", "sm_120", True), ("0.21.0", "sm_86", True),
     ("0.24.0", "sm_86", False), ("0.26.0", "sm_89", True), ("0.29.0", "sm_90a", False),
     # sm_12x: vLLM 0.24+ calls DeepGEMM there; its vendored library holds an sm120 prenorm GEMM in 0.25-0.26 and
     # from 0.28, not in 0.24 nor 0.27 (knowledge/vllm_releases.py, read from each wheel's _C library)
     ("0.24.0", "sm_120", True), ("0.25.0", "sm_120", False), ("0.26.0", "sm_120", False),
     ("0.27.0", "sm_120", True), ("0.28.0", "sm_120", False)],
)  # fmt: skip
def test_deepgemm_finding_follows_supported_archs_and_releases(vllm, arch, warned):
    decision = decide(machine("cuda", arch), ModelConfig("m", PRO), vllm)
    assert ("deepgemm-prenorm-broken" in {f.id for f in decision.findings}) is warned


def test_rule_set_follows_the_release():
    facts = machine("cuda", "sm_90")
    ids = {
        v: decide(facts, ModelConfig("m", PRO), v).rules for v in ("0.22.1", "0.27.1", "0.30.0+rocm723", "0.31.0rc1")
    }
    assert ids == {
        "0.22.1": "vllm-0.22",
        "0.27.1": "vllm-0.27",
        "0.30.0+rocm723": "vllm-0.30-0.34",
        "0.31.0rc1": "vllm-0.30-0.34",
    }


def test_installed_vllm_picks_the_rules():
    facts = machine("rocm", "gfx950", "0.1.16")
    facts.vllm.version = "0.24.0"
    assert decide(facts, ModelConfig("m", PRO)).rules == "vllm-0.24"


def test_no_vllm_uses_newest_rules_and_says_so():
    decision = decide(machine("cuda", "sm_90"), ModelConfig("m", PRO))
    assert decision.rules == "vllm-0.30-0.34"
    assert "newest" in decision.rules_note
    assert "vllm-not-installed" in {f.id for f in decision.findings}


def test_newer_vllm_uses_newest_rules_with_a_warning():
    decision = decide(machine("cuda", "sm_90"), ModelConfig("m", PRO), "0.40.1")
    assert decision.rules == "vllm-0.30-0.34"
    assert "newer" in decision.rules_note


def test_vllm_before_dsv4_has_no_support():
    decision = decide(machine("cuda", "sm_90"), ModelConfig("m", PRO), "0.19.1")
    assert {op.path for op in decision.ops.values()} == {"unavailable"}
    assert [f.id for f in decision.findings] == ["vllm-no-dsv4"]
    assert decision.verdict == "fail"


def test_cpu_has_no_gpu():
    decision = decide(Facts(), ModelConfig("m", PRO), "0.30.0")
    assert "no-gpu" in {f.id for f in decision.findings}
    assert exit_code(decision.verdict, None) == 3


@pytest.mark.parametrize("rocm", ["7.2.3", "7.0.2", None])
def test_aiter_015_without_3417_is_wrong_results_on_any_rocm(rocm):
    facts = machine("rocm", "gfx950", "0.1.15.post1", rocm=rocm)
    decision = decide(facts, ModelConfig("m", PRO), "0.25.0")
    assert {f.id: f.severity for f in decision.findings} == {"aiter-rocm-compiler": "fail"}
    assert "0.1.16" in decision.findings[0].fix and decision.verdict == "fail"


@pytest.mark.parametrize("aiter", ["0.1.15rc0", "0.1.15", "0.1.15.post3", "0.1.15.post3+gabc123"])
def test_every_015_tag_has_the_rms_guard_bug_and_016_has_the_fix(aiter):
    ids = {f.id for f in decide(machine("rocm", "gfx950", aiter), ModelConfig("m", PRO), "0.25.0").findings}
    assert "aiter-rocm-compiler" in ids
    ids = {f.id for f in decide(machine("rocm", "gfx950", "0.1.16"), ModelConfig("m", PRO), "0.25.0").findings}
    assert "aiter-rocm-compiler" not in ids


def test_aiter_fix_option_overrides_the_version():
    facts = machine("rocm", "gfx942", "0.1.16", fix="absent")
    assert "aiter-sqrsum-race" in {f.id for f in decide(facts, ModelConfig("m", PRO), "0.25.0").findings}
    facts = machine("rocm", "gfx942", "0.1.16", fix="unknown")
    decision = decide(facts, ModelConfig("m", PRO), "0.25.0")
    assert ({f.id for f in decision.findings}, decision.verdict) == ({"aiter-sqrsum-unknown"}, "degraded")


def test_sqrsum_race_does_not_matter_when_only_mhc_post_is_on_aiter():
    facts = machine("rocm", "gfx950", "0.1.13")  # 0.30 keeps only mhc_post on this aiter: no sqrsum kernel
    decision = decide(facts, ModelConfig("m", PRO), "0.30.0")
    assert paths(decision)[:2] == ("tilelang", "aiter")
    assert "aiter-sqrsum-race" not in {f.id for f in decision.findings}


def impostor(platform: str, arch: str) -> Facts:
    facts = machine(platform, arch)
    facts.aiter.present, facts.aiter.genuine, facts.aiter.version = True, False, "0.13.20191203"
    facts.aiter.distribution = "aiter"
    return facts


def test_impostor_aiter_is_selected_by_find_spec_and_fails():
    decision = decide(impostor("rocm", "gfx942"), ModelConfig("m", PRO), "0.25.0")
    assert paths(decision)[:2] == ("aiter", "aiter")
    assert {f.id: f.severity for f in decision.findings} == {"aiter-impostor": "fail"}


def test_impostor_fails_the_aiter_probes_of_030_but_mhc_post_still_calls_it():
    decision = decide(impostor("rocm", "gfx950"), ModelConfig("m", PRO), "0.30.0")
    assert paths(decision)[:3] == ("tilelang", "aiter", "tilelang")
    assert decision.verdict == "fail"


def test_impostor_on_cuda_is_only_information():
    decision = decide(impostor("cuda", "sm_90"), ModelConfig("m", PRO), "0.30.0")
    assert ({f.id: f.severity for f in decision.findings}, decision.verdict) == ({"aiter-impostor": "info"}, "ok")


def broken_tilelang(imports: bool | None) -> Facts:
    facts = machine("rocm", "gfx950")
    facts.tilelang.imports, facts.tilelang.import_error = imports, "OSError: libnvrtc.so.13: cannot open"
    return facts


def test_find_spec_release_selects_a_tilelang_that_does_not_import():
    decision = decide(broken_tilelang(False), ModelConfig("m", PRO), "0.28.0")
    assert paths(decision) == ("tilelang",) * 4
    assert "tilelang-import-broken" in {f.id for f in decision.findings}


def test_trial_import_release_ignores_a_broken_tilelang():
    decision = decide(broken_tilelang(False), ModelConfig("m", PRO), "0.27.0")
    assert paths(decision) == ("torch", "torch", "torch", "triton")
    assert {"tilelang-import-ignored", "torch-fallback"} <= {f.id for f in decision.findings}


def test_020_imports_tilelang_with_the_module_so_a_broken_one_stops_the_model():
    facts = machine("cuda", "sm_90")
    facts.tilelang.imports = False
    decision = decide(facts, ModelConfig("m", PRO), "0.20.1")
    assert {op.path for op in decision.ops.values()} == {"unavailable"}
    assert "tilelang-missing" in {f.id for f in decision.findings}


def test_untried_import_is_assumed_to_succeed_and_said_so():
    decision = decide(broken_tilelang(None), ModelConfig("m", PRO), "0.23.0")
    assert decision.ops["mhc_pre"].path == "tilelang"
    assert "assumed to import" in decision.ops["mhc_pre"].why[1].text


def test_missing_jit_compiler_fails_tilelang():
    facts = machine("cuda", "sm_90")
    facts.nvcc.found = False
    assert "tilelang-no-compiler" in {f.id for f in decide(facts, ModelConfig("m", PRO), "0.30.0").findings}
    facts.nvcc.found = None  # unknown: no finding by itself
    assert decide(facts, ModelConfig("m", PRO), "0.30.0").findings == []


def test_aiter_without_a_built_module_or_hipcc_warns():
    facts = machine("rocm", "gfx950", "0.1.16")
    facts.hipcc.found = False
    found = {f.id for f in decide(facts, ModelConfig("m", PRO), "0.25.0").findings}
    assert found == {"aiter-no-compiler", "tilelang-no-compiler"}  # hc_head's tilelang kernel needs hipcc too
    facts.aiter.module_mhc_so = "/root/.aiter/jit/module_mhc.so"
    assert {f.id for f in decide(facts, ModelConfig("m", PRO), "0.25.0").findings} == {"tilelang-no-compiler"}


def test_unknown_arch_fails_the_aiter_gate_without_a_finding():
    facts = machine("rocm", None, "0.1.16")
    decision = decide(facts, ModelConfig("m", PRO), "0.25.0")
    assert decision.ops["mhc_pre"].path == "tilelang"
    assert decision.findings == []  # 0.25's block-M prenorm GEMM is right under tilelang 0.1.12 (measured)
    arch_gate = next(g for g in decision.ops["mhc_pre"].why if g.gate == "on_mi3xx()")
    assert (arch_gate.observed, arch_gate.passed) == (None, False)


def test_every_gate_evaluated_is_in_the_trace_in_order():
    decision = decide(machine("rocm", "gfx942", "0.1.16"), ModelConfig("m", PRO), "0.24.0")
    gates = [(g.path, g.gate, g.passed) for g in decision.ops["mhc_pre"].why]
    assert gates == [
        ("dispatch", "platform", True),
        ("tilelang", "has_tilelang() [trial import]", True),
        ("tilelang", "HAS_TILELANG_MHC: not on_gfx942()", False),
        ("torch", "fallback", True),
    ]
