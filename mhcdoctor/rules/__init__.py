"""Rules: what vLLM runs for DeepSeek-V4's mHC ops, given the facts and a model config. Pure, no I/O.

`decide(facts, model, vllm_version=None)` picks the rule set for the vLLM release (the installed one unless
given), runs the dispatch interpreter, evaluates the findings catalogue and sets the verdict.
`decision.to_explain_document()` (mhcdoctor.decision) is the explain/1 document; check embeds
`decision.to_json_dict()` per model. `pick_rules(facts)` picks the rule set alone, and
`tilelang_trial_import(facts, picked)` says from it whether the decision turns on importing tilelang (so explain
picks once, imports tilelang here first where it must, then decides with that pick).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from mhcdoctor.decision import Decision, Finding, Gate, OpDecision, VllmView
from mhcdoctor.documents.explain import SCHEMA as EXPLAIN_SCHEMA
from mhcdoctor.documents.vocabulary import OPS, Verdict
from mhcdoctor.facts import Facts
from mhcdoctor.knowledge import versions
from mhcdoctor.knowledge.vllm_builds import build_from_version
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules.dispatch import Dispatch, dispatch, preferred_path
from mhcdoctor.rules.findings import CATALOGUE, FindingContext, evaluate
from mhcdoctor.rules.releases import NEWEST, RULE_SETS, RuleSet, is_newer_than_known, rules_for_vllm

SCHEMA = EXPLAIN_SCHEMA

__all__ = [
    "RULE_SETS",
    "SCHEMA",
    "RulesPick",
    "decide",
    "pick_rules",
    "preferred_path",
    "rules_for_vllm",
    "tilelang_trial_import",
    "vocabulary",
]


@dataclass(frozen=True)
class RulesPick:
    """The rule set for the vLLM release decided for, why it applies and a note for the user."""

    rule_set: RuleSet | None  # None: the release predates DeepSeek-V4
    version: str | None  # the vLLM version decided for (None: not known)
    reason: str  # installed | no-vllm | unknown | newer | too-old
    note: str | None
    release: str | None = (
        None  # the release whose mHC code is installed, whose knowledge then applies (None: the version's)
    )


def pick_rules(facts: Facts, vllm_version: str | None = None) -> RulesPick:
    """The rule set for the installed vLLM (the facts') or for `vllm_version`, where given."""
    version = vllm_version if vllm_version is not None else facts.vllm.version
    code = facts.vllm.code if vllm_version is None else None  # a what-if release says nothing of these files
    if code is not None and code != "new" and versions.parse(code) is not None:
        return _pick_by_code(version, code, facts.vllm.code_evidence)
    rule_set, reason, note = _pick_rules(version, facts.vllm.present if vllm_version is None else True)
    if code == "new" and version is not None and rule_set is not None:
        new = f"vLLM {version}: {facts.vllm.code_evidence or 'new mHC code'}; rules {rule_set.id} by its version"
        note = f"{note}; {new}" if note else new
    return RulesPick(rule_set, version, reason, note)


def _pick_by_code(version: str | None, code: str, evidence: str | None) -> RulesPick:
    """The rules and knowledge of the release whose mHC files are installed, whatever the version label says."""
    rule_set = rules_for_vllm(code)
    key = _release_of(version)
    note = None
    if key != code:
        files = evidence or f"its mHC files are vLLM {code}'s"
        rules = rule_set.id if rule_set else "none"
        note = f"vLLM {version or '(version unknown)'}: {files}: the rules ({rules}) and known bugs of {code} apply"
    return RulesPick(rule_set, version, "installed", note, code)


def _release_of(version: str | None) -> str | None:
    """`0.26.1.dev3+gabc` → "0.26.1"; None when it is not a version."""
    try:
        return str(versions.release_key(version)) if version else None
    except versions.InvalidVersion:
        return None


def decide(
    facts: Facts, model: ModelConfig, vllm_version: str | None = None, *, rules: RulesPick | None = None
) -> Decision:
    """The decision for one model on the machine the facts describe (vllm_version overrides facts.vllm.version;
    `rules`, a pick already made for these facts, is used as it is)."""
    pick = rules if rules is not None else pick_rules(facts, vllm_version)
    rule_set, reason, note, version = pick.rule_set, pick.reason, pick.note, pick.version
    result = dispatch(rule_set, facts, model, version, pick.release) if rule_set is not None else None
    ctx = FindingContext(facts, model, rule_set, result, version, reason, pick.release)
    findings = evaluate(ctx)
    ops = result.ops if result is not None else _no_support_ops(version)
    ops = {op: ops[op] for op in OPS}
    if rule_set is not None:
        for op, decision in ops.items():
            decision.preferred = preferred_path(rule_set, facts, op, result.platform if result else None)
    verdict = _verdict(findings, rule_set, facts, result, ctx.used_ops())
    return Decision(
        model=model,
        facts=facts,
        vllm=_vllm_view(facts, version, result, findings),
        rules=rule_set.id if rule_set is not None else "vllm-before-0.20",
        rules_note=note,
        ops=ops,
        fused_post_pre=result.fused_post_pre if result is not None else False,
        findings=findings,
        verdict=verdict,
        sources=dict(facts.sources),
    )


def tilelang_trial_import(facts: Facts, rules: RulesPick) -> bool:
    """Whether the decision for these facts under `rules` turns on importing tilelang: the release's has_tilelang()
    is a trial import (0.23–0.27), the machine is ROCm, and tilelang is installed but its import was not tried."""
    return (
        rules.rule_set is not None
        and rules.rule_set.has_tilelang == "import"
        and facts.platform == "rocm"
        and facts.tilelang.present is True
        and facts.tilelang.imports is None
    )


def _pick_rules(version: str | None, installed: bool | None) -> tuple[RuleSet | None, str, str | None]:
    """The rule set, why it was picked (installed | no-vllm | unknown | newer | too-old) and a note for the user."""
    if version is None and installed:
        return NEWEST, "unknown", f"vLLM is installed but its version is unknown: using the newest rules ({NEWEST.id})"
    if version is None:
        return NEWEST, "no-vllm", f"no vLLM installed: using the newest known rules ({NEWEST.id})"
    try:
        rule_set = rules_for_vllm(version)
    except versions.InvalidVersion:
        return NEWEST, "unknown", f"vLLM version {version!r} is not a version: using the newest rules ({NEWEST.id})"
    if rule_set is None:
        return None, "too-old", f"vLLM {version} predates DeepSeek-V4 support (0.20.0)"
    if is_newer_than_known(version):
        return rule_set, "newer", f"vLLM {version} is newer than the newest known rules; applying {NEWEST.id}"
    return rule_set, "installed", None


def _no_support_ops(version: str | None) -> dict[str, OpDecision]:
    gate = Gate("dispatch", "vLLM has DeepSeek-V4", version, False, f"vLLM {version} has no DeepSeek-V4 model")
    return {op: OpDecision("unavailable", [gate]) for op in OPS}


def _verdict(
    findings: list[Finding], rule_set: RuleSet | None, facts: Facts, result: Dispatch | None, used: list[str]
) -> Verdict:
    severities = {f.severity for f in findings}
    if "fail" in severities or result is None or rule_set is None:
        return "fail"
    if any(result.ops[op].path == "unavailable" for op in used):
        return "fail"
    if "warn" in severities:
        return "degraded"
    if any(result.ops[op].path != preferred_path(rule_set, facts, op, result.platform) for op in used):
        return "degraded"
    return "ok"


# Findings that say vLLM itself cannot start a DeepSeek-V4 model here, whatever the mHC paths.
VLLM_CANNOT_RUN = (
    "no-gpu",
    "vllm-no-platform-model",
    "vllm-platform-conflict",
    "vllm-build-mismatch",
    "xpu-kernels-missing",
    "vllm-not-importable",
    "vllm-no-dsv4",
)


def _vllm_view(facts: Facts, version: str | None, result: Dispatch | None, findings: list[Finding]) -> VllmView:
    """vLLM's version, its build, the platform it detects here and whether it can run a DeepSeek-V4 model at all."""
    build = facts.vllm.build if version == facts.vllm.version else build_from_version(version)[0]
    platform = result.platform if result is not None else None
    blocked = [f.id for f in findings if f.id in VLLM_CANNOT_RUN]
    return VllmView(version, build, platform, not blocked, blocked)


@functools.cache
def vocabulary() -> frozenset[str]:
    """Every word of the doctor's own text (finding ids, titles, fixes; rule-set ids and summaries), lower case:
    redaction replaces a user or host name among them only where it stands as an identity, never inside this text."""
    text = " ".join(f"{spec.id} {spec.title} {spec.fix}" for spec in CATALOGUE)
    text += " " + " ".join(f"{rule_set.id} {rule_set.summary}" for rule_set in RULE_SETS)
    return frozenset(word.lower() for word in re.findall(r"[A-Za-z][A-Za-z0-9]*", text))
