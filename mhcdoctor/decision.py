"""The decision object: what vLLM will run for each mHC op, every gate that led there, and what will go wrong.

Renderers (text, JSON, Markdown) are views of this one object, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# xpu: vllm-xpu-kernels' ops (torch.ops._xpu_C); cpu: the ops of vLLM's CPU build (torch.ops._C.*_fused_cpu).
PathName = Literal["aiter", "tilelang", "triton", "torch", "xpu", "cpu", "unavailable"]
Severity = Literal["info", "warn", "fail"]
Verdict = Literal["ok", "degraded", "fail"]

# The four mHC ops, in the order every view lists them (the one list: renderers, verify, bench and fleet use it).
OPS: tuple[str, ...] = ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")
OP_SHORT: dict[str, str] = {"mhc_pre": "pre", "mhc_post": "post", "mhc_fused_post_pre": "fused", "hc_head": "head"}
# Least to most severe: the one ranking of severities and the one of verdicts.
SEVERITIES: tuple[Severity, ...] = ("info", "warn", "fail")
VERDICTS: tuple[Verdict, ...] = ("ok", "degraded", "fail")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
VERDICT_RANK: dict[str, int] = {v: i for i, v in enumerate(VERDICTS)}
VERDICT_EXIT: dict[str, int] = {"ok": 0, "degraded": 1, "fail": 3}


def worst_verdict(verdicts: Iterable[str]) -> str:
    """The worst of `verdicts` ("ok" when there are none; a verdict not known ranks as "ok")."""
    return max(verdicts, key=lambda v: VERDICT_RANK.get(v, 0), default="ok")


def severity_rank(severity: str) -> int:
    """A severity's rank, least severe 0 (a severity not known ranks as info)."""
    return SEVERITY_RANK.get(severity, 0)


@dataclass
class Gate:
    """One test vLLM makes on the way to a path: what was observed, whether it passed, and why in a sentence."""

    path: str
    gate: str
    observed: Any
    passed: bool
    text: str


@dataclass
class OpDecision:
    path: PathName
    why: list[Gate] = field(default_factory=list)
    preferred: str | None = None  # the platform's preferred path for this op in this release (None: no vLLM path)


@dataclass
class Finding:
    id: str
    severity: Severity
    title: str
    detail: str
    fix: str
    refs: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)  # the ops it is about, so a renderer can mark their rows


@dataclass
class Decision:
    model: dict[str, Any]  # {"name", "hidden_size", "hc_mult"}
    facts: dict[str, Any]  # the facts the rules read, as in the contract's explain JSON
    rules: str  # the rule set's id, e.g. "vllm-0.25-0.28"
    rules_note: str | None  # e.g. "no vLLM installed: using the newest known rules"
    ops: dict[str, OpDecision]
    fused_post_pre: bool
    findings: list[Finding]
    verdict: Verdict
    sources: dict[str, str] = field(default_factory=dict)  # fact -> where it came from ("user:--arch")

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
