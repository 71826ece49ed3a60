"""A fail needs proof (issue 30 §3): every known-bug record states its evidence, and a report alone never fails."""

from __future__ import annotations

import pytest

from mhcdoctor.facts import Facts, PackageFacts
from mhcdoctor.knowledge import known
from mhcdoctor.knowledge.bugs import BUGS, KnownBug
from mhcdoctor.knowledge.evidence import Code, Measured, Report
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules import decide
from mhcdoctor.rules.findings import CATALOGUE
from mhcdoctor.whatif import WhatIf, build_facts


def _can_fail(bug: KnownBug) -> bool:
    return (bug.severity or bug.worst) == "fail"


@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_each_record_states_its_evidence_in_full(bug):
    assert bug.evidence, f"{bug.id}: no evidence"
    for e in bug.evidence:
        if isinstance(e, Measured):
            assert e.command and e.machine and e.date and e.result, f"{bug.id}: a measurement without its command"
        elif isinstance(e, Code):
            assert e.repo.count("/") == 1 and e.tag and e.file and e.shows, f"{bug.id}: code without repo/tag/file"
        else:
            assert e.url.startswith("https://") and e.not_known, f"{bug.id}: a report must say what is not known"


@pytest.mark.parametrize("bug", [b for b in BUGS if b.effect in ("wrong results", "crash") and _can_fail(b)],
                         ids=lambda b: b.id)  # fmt: skip
def test_a_fail_for_wrong_results_or_a_crash_is_backed_by_a_measurement_or_the_code(bug):
    assert bug.proof in ("measured", "code"), f"{bug.id} fails on a report alone: {bug.evidence}"


@pytest.mark.parametrize("bug", [b for b in BUGS if b.proof == "report"], ids=lambda b: b.id)
def test_a_bug_only_reported_is_at_most_a_warning(bug):
    assert not _can_fail(bug), f"{bug.id} is backed by a report only and may fail"
    spec = next(s for s in CATALOGUE if s.id == bug.id)
    assert spec.severity != "fail"


def test_every_bad_tilelang_tvm_ffi_pair_that_fails_is_proven_and_the_measured_good_pair_is_none():
    assert all(pair.evidence for pair in known.TVM_FFI_BAD_PAIRS)
    for good in known.TVM_FFI_GOOD_PAIRS:
        tilelang, ffi = good.tilelang.lstrip("="), good.tvm_ffi.lstrip("=")
        assert known.bad_tvm_ffi_pair(tilelang, ffi) is None


def test_a_report_only_tvm_ffi_pair_is_a_warning_that_says_it_was_only_reported(monkeypatch):
    reported = known.BadPair(
        ">=0.1.11,<0.1.12", "==0.1.11", "compile", "kernels fail to compile", "pip install 'apache-tvm-ffi<0.1.11'",
        (), (Report("https://github.com/tile-ai/tilelang/issues/1", "not reproduced"),),
    )  # fmt: skip
    monkeypatch.setattr(known, "TVM_FFI_BAD_PAIRS", (reported,))  # a pair no measurement calls good
    facts = build_facts(WhatIf("cuda", "sm_90", None, None, "0.1.11", None, None), base=Facts)
    facts.tvm_ffi = PackageFacts(present=True, version="0.1.11")
    finding = next(f for f in decide(facts, ModelConfig("m", 7168), "0.34.0").findings if f.id.endswith("mismatch"))
    assert finding.severity == "warn"
    assert "Only reported (https://github.com/tile-ai/tilelang/issues/1)" in finding.detail


def test_a_hand_decided_bug_backed_by_a_report_says_what_is_not_known():
    facts = build_facts(WhatIf("rocm", "gfx942", "0.1.19", "present", "none", None, None), base=Facts)
    finding = next(f for f in decide(facts, ModelConfig("m", 7168), "0.30.0").findings if f.id.endswith("config"))
    assert finding.severity == "warn"
    assert (
        "Only reported (https://github.com/ROCm/aiter/issues/4633), neither measured nor read in code: the cause is "
        "not known (no fix, no failing shape named), nor whether every MI300X or other archs hit it." in finding.detail
    )
