"""Rules: what vLLM runs for DeepSeek-V4's mHC ops, given the facts and a model config. Pure, no I/O.

`decide(facts, model, vllm_version=None)` picks the rule set for the vLLM release (the installed one unless
given), runs the dispatch interpreter, evaluates the findings catalogue and sets the verdict.
`to_document(decision)` is the one serialiser of the explain/1 document, shared by explain, check and report.
"""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion

from mhcdoctor.decision import OPS, Decision, Gate, OpDecision, Verdict
from mhcdoctor.facts import Facts
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules.dispatch import Dispatch, dispatch, preferred_path
from mhcdoctor.rules.findings import FindingContext, evaluate
from mhcdoctor.rules.releases import NEWEST, RULE_SETS, RuleSet, is_newer_than_known, rules_for_vllm
from mhcdoctor.vllm_builds import build_from_version

SCHEMA = "mhcdoctor.explain/1"

__all__ = ["RULE_SETS", "SCHEMA", "decide", "preferred_path", "rules_for_vllm", "to_document"]


def decide(facts: Facts, model: ModelConfig, vllm_version: str | None = None) -> Decision:
    """The decision for one model on the machine the facts describe (vllm_version overrides facts.vllm.version)."""
    version = vllm_version if vllm_version is not None else facts.vllm.version
    rule_set, reason, note = _pick_rules(version, facts.vllm.present if vllm_version is None else True)
    result = dispatch(rule_set, facts, model, version) if rule_set is not None else None
    ctx = FindingContext(facts, model, rule_set, result, version, reason)
    findings = evaluate(ctx)
    ops = result.ops if result is not None else _no_support_ops(version)
    ops = {op: ops[op] for op in OPS}
    if rule_set is not None:
        for op, decision in ops.items():
            decision.preferred = preferred_path(rule_set, facts, op, result.platform if result else None)
    verdict = _verdict(findings, rule_set, facts, result, ctx.used_ops())
    return Decision(
        model={"name": model.name, "hidden_size": model.hidden_size, "hc_mult": model.hc_mult},
        facts=_facts_summary(facts, version, result, findings),
        rules=rule_set.id if rule_set is not None else "vllm-before-0.20",
        rules_note=note,
        ops=ops,
        fused_post_pre=result.fused_post_pre if result is not None else False,
        findings=findings,
        verdict=verdict,
        sources=dict(facts.sources),
    )


def to_document(decision: Decision) -> dict[str, Any]:
    """The explain/1 JSON document (check embeds it per model without "schema")."""
    return {"schema": SCHEMA, **decision.to_dict()}


def _pick_rules(version: str | None, installed: bool | None) -> tuple[RuleSet | None, str, str | None]:
    """The rule set, why it was picked (installed | no-vllm | unknown | newer | too-old) and a note for the user."""
    if version is None and installed:
        return NEWEST, "unknown", f"vLLM is installed but its version is unknown: using the newest rules ({NEWEST.id})"
    if version is None:
        return NEWEST, "no-vllm", f"no vLLM installed: using the newest known rules ({NEWEST.id})"
    try:
        rule_set = rules_for_vllm(version)
    except InvalidVersion:
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
    findings: list[Any], rule_set: RuleSet | None, facts: Facts, result: Dispatch | None, used: list[str]
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


def _vllm_summary(facts: Facts, version: str | None, result: Dispatch | None, findings: list[Any]) -> dict[str, Any]:
    """vLLM's version, its build, the platform it detects here and whether it can run a DeepSeek-V4 model at all."""
    build = facts.vllm.build if version == facts.vllm.version else build_from_version(version)[0]
    platform = result.platform if result is not None else None
    blocked = [f.id for f in findings if f.id in VLLM_CANNOT_RUN]
    return {"version": version, "build": build, "platform": platform, "runs_here": not blocked, "blocked_by": blocked}


def _facts_summary(
    facts: Facts, vllm_version: str | None, result: Dispatch | None, findings: list[Any]
) -> dict[str, Any]:
    """The facts the rules read, in the contract's shape plus the fields that decided a gate."""
    a, tl = facts.aiter, facts.tilelang
    return {
        "platform": facts.platform,
        "arch": facts.arch,
        "rocm_version": facts.rocm_version,
        "aiter": {
            "version": a.version,
            "sqrsum_fix": a.sqrsum_fix,
            "present": a.present,
            "genuine": a.genuine,
            "imports": a.imports,
            "mhc_pre_norm_args": a.mhc_pre_norm_args,
            "has_fused_post_pre": a.has_fused_post_pre,
            "has_mhc_ops": a.has_mhc_ops,
            "distribution": a.distribution,
        },
        "tilelang": {"version": tl.version, "present": tl.present, "imports": tl.imports},
        "vllm": _vllm_summary(facts, vllm_version, result, findings),
        "compilers": {"nvcc": facts.nvcc.found, "hipcc": facts.hipcc.found},
    }
