"""The decision object: what vLLM will run for each mHC op, every gate that led there, and what will go wrong.

`Decision` and its parts are dataclasses: the code builds them (rules.decide) and nothing reads them back.
`Decision.to_json_dict()` is the one place their JSON is made: the explain/1 document (`to_explain_document()`)
and each model's entry of check/1. That JSON is typed by TypedDicts (`DecisionDocument` and its parts), not by
these dataclasses, because it is also read back: from a user's saved report, after redaction, and the text and
Markdown views render it in that form, so what a user sees and what they paste are the same data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypedDict

from mhcdoctor.facts import Facts, JsonValue, rules_view
from mhcdoctor.models import ModelConfig

EXPLAIN_SCHEMA = "mhcdoctor.explain/1"

# xpu: vllm-xpu-kernels' ops (torch.ops._xpu_C); cpu: the ops of vLLM's CPU build (torch.ops._C.*_fused_cpu).
PathName = Literal["aiter", "tilelang", "triton", "torch", "xpu", "cpu", "unavailable"]
Severity = Literal["info", "warn", "fail"]
Verdict = Literal["ok", "degraded", "fail"]
# What a gate tests, where a finding must know it: "package": whether vLLM finds or imports the path's package
# (has_tilelang(), find_spec('aiter'), layers/mhc.py's `import tilelang`); "aiter-api": vLLM 0.30+'s probe of
# aiter's API (mhc_pre's norm arguments, mhc_fused_post_pre). None: any other test.
GateKind = Literal["package", "aiter-api"]

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
    observed: JsonValue
    passed: bool
    text: str
    kind: GateKind | None = None

    def to_json_dict(self) -> GateDocument:
        return {
            "path": self.path,
            "gate": self.gate,
            "observed": self.observed,
            "passed": self.passed,
            "text": self.text,
            "kind": self.kind,
        }


@dataclass
class OpDecision:
    path: PathName
    why: list[Gate] = field(default_factory=list)
    preferred: str | None = None  # the platform's preferred path for this op in this release (None: no vLLM path)

    def to_json_dict(self) -> OpDocument:
        return {"path": self.path, "why": [g.to_json_dict() for g in self.why], "preferred": self.preferred}


@dataclass
class Finding:
    id: str
    severity: Severity
    title: str
    detail: str
    fix: str
    refs: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)  # the ops it is about, so a renderer can mark their rows
    from_tokens: int | None = None  # it shows only from this many tokens in one call (None: at any count)

    def to_json_dict(self) -> FindingDocument:
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "detail": self.detail,
            "fix": self.fix,
            "refs": list(self.refs),
            "ops": list(self.ops),
            "from_tokens": self.from_tokens,
        }

    def scope(self) -> str:
        return token_scope(self.from_tokens)


def token_scope(tokens: int | None) -> str:
    """ "from 1024 tokens: prefill" (a call that large is a prompt being read); "" where any count shows it."""
    if tokens is None:
        return ""
    return f"from {tokens} tokens" + (": prefill" if tokens >= PREFILL_FROM else "")


# Token counts from here on are prefill in practice (decode batches stay well below).
PREFILL_FROM = 512


@dataclass
class VllmView:
    """What the decision made of vLLM: its version (the installed one or a what-if), its build, the platform it
    detects here and whether it can run a DeepSeek-V4 model at all (else the findings that stop it)."""

    version: str | None
    build: str | None
    platform: str | None
    runs_here: bool
    blocked_by: list[str]

    def to_json_dict(self) -> dict[str, JsonValue]:
        return {
            "version": self.version,
            "build": self.build,
            "platform": self.platform,
            "runs_here": self.runs_here,
            "blocked_by": self.blocked_by,
        }


class RuleSetRef(Protocol):
    """What a decision needs of its rule set (rules.releases.RuleSet, a layer above): its id."""

    @property
    def id(self) -> str: ...


@dataclass
class Decision:
    model: ModelConfig
    facts: Facts  # the facts decided from; explain/1 shows those the rules read (facts.rules_view)
    vllm: VllmView
    rules: str  # the rule set's id, e.g. "vllm-0.25-0.28" ("vllm-before-0.20" when none applies)
    rules_note: str | None  # e.g. "no vLLM installed: using the newest known rules"
    ops: dict[str, OpDecision]
    fused_post_pre: bool
    findings: list[Finding]
    verdict: Verdict
    sources: dict[str, str] = field(default_factory=dict)  # fact -> where it came from ("user:--arch")
    rule_set: RuleSetRef | None = field(default=None, repr=False, compare=False)  # not serialised

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]

    def to_json_dict(self) -> DecisionDocument:
        """One model's decision as check/1 carries it in `models` (explain/1 adds its schema in front)."""
        return {
            "model": {"name": self.model.name, "hidden_size": self.model.hidden_size, "hc_mult": self.model.hc_mult},
            "facts": rules_view(self.facts, self.vllm.to_json_dict()),
            "rules": self.rules,
            "rules_note": self.rules_note,
            "ops": {op: d.to_json_dict() for op, d in self.ops.items()},
            "fused_post_pre": self.fused_post_pre,
            "findings": [f.to_json_dict() for f in self.findings],
            "verdict": self.verdict,
            "sources": dict(self.sources),
        }

    def to_explain_document(self) -> ExplainDocument:
        """The explain/1 document."""
        return {"schema": EXPLAIN_SCHEMA, **self.to_json_dict()}


# --- the JSON of a decision (explain/1; check/1's `models` entries), as written and as read back ---------------------


class GateDocument(TypedDict):
    path: str
    gate: str
    observed: JsonValue
    passed: bool
    text: str
    kind: GateKind | None


class OpDocument(TypedDict):
    path: str
    why: list[GateDocument]
    preferred: str | None


class FindingDocument(TypedDict):
    id: str
    severity: str
    title: str
    detail: str
    fix: str
    refs: list[str]
    ops: list[str]
    from_tokens: int | None


class ModelDocument(TypedDict):
    name: str | None
    hidden_size: int
    hc_mult: int


class DecisionDocument(TypedDict):
    model: ModelDocument
    facts: dict[str, JsonValue]  # facts.rules_view: the facts the rules read, and what was made of vLLM
    rules: str
    rules_note: str | None
    ops: dict[str, OpDocument]
    fused_post_pre: bool
    findings: list[FindingDocument]
    verdict: str
    sources: dict[str, str]


class ExplainDocument(DecisionDocument):
    schema: str
