"""The decision object: what vLLM will run for each mHC op, every gate that led there, and what will go wrong.

Renderers (text, JSON, Markdown) are views of this one object, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# xpu: vllm-xpu-kernels' ops (torch.ops._xpu_C); cpu: the ops of vLLM's CPU build (torch.ops._C.*_fused_cpu).
Path_ = Literal["aiter", "tilelang", "triton", "torch", "xpu", "cpu", "unavailable"]
Severity = Literal["info", "warn", "fail"]
Verdict = Literal["ok", "degraded", "fail"]
# What a gate tests, where a finding must know it: "package": whether vLLM finds or imports the path's package
# (has_tilelang(), find_spec('aiter'), layers/mhc.py's `import tilelang`); "aiter-api": vLLM 0.30+'s probe of
# aiter's API (mhc_pre's norm arguments, mhc_fused_post_pre). None: any other test.
GateKind = Literal["package", "aiter-api"]

OPS: tuple[str, ...] = ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")
VERDICT_EXIT = {"ok": 0, "degraded": 1, "fail": 3}
SEVERITY_RANK = {"info": 0, "warn": 1, "fail": 2}


@dataclass
class Gate:
    """One test vLLM makes on the way to a path: what was observed, whether it passed, and why in a sentence."""

    path: str
    gate: str
    observed: Any
    passed: bool
    text: str
    kind: GateKind | None = None


@dataclass
class OpDecision:
    path: Path_
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
