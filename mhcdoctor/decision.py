"""The decision object: what vLLM will run for each mHC op, every gate that led there, and what will go wrong.

`Decision` and its parts are dataclasses: the code builds them (rules.decide) and nothing reads them back.
`Decision.to_json_dict()` is the one place their JSON is made: the explain/1 document (`to_explain_document()`)
and each model's entry of check/1. That JSON is typed by TypedDicts (documents.explain.DecisionDocument and its
parts), not by these dataclasses, because it is also read back: from a user's saved report, after redaction, and
the text and Markdown views render it in that form, so what a user sees and what they paste are the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mhcdoctor.documents.check import VLLM_PLATFORMS, VllmPlatformDocument
from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.explain import SCHEMA as EXPLAIN_SCHEMA
from mhcdoctor.documents.explain import (
    DecisionDocument,
    ExplainDocument,
    FindingDocument,
    GateDocument,
    GateKind,
    OpDocument,
)
from mhcdoctor.documents.vocabulary import JsonValue, PathName, Severity, Verdict, one_of, token_scope
from mhcdoctor.facts import Facts, rules_view
from mhcdoctor.models import ModelConfig


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
        return as_document(self, GateDocument)


@dataclass
class OpDecision:
    path: PathName
    why: list[Gate] = field(default_factory=list)
    preferred: PathName | None = None  # the platform's preferred path for this op in this release (None: no vLLM path)

    def to_json_dict(self) -> OpDocument:
        return as_document(self, OpDocument)


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
        return as_document(self, FindingDocument)

    def scope(self) -> str:
        return token_scope(self.from_tokens)


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
        return as_document(self, dict)

    def platform_document(self) -> VllmPlatformDocument:
        """check/1's `vllm_platform`: the same for every model, so the report carries it once."""
        platform = None if self.platform is None else one_of(self.platform, VLLM_PLATFORMS)
        return {"platform": platform, "runs_here": self.runs_here, "blocked_by": list(self.blocked_by)}


@dataclass
class Decision:
    model: ModelConfig
    facts: Facts  # the facts decided from; explain/1 shows those the rules read (facts.rules_view)
    vllm: VllmView
    rules: str  # the rule set's id, e.g. "vllm-0.30-0.34" ("vllm-before-0.20" when none applies)
    rules_note: str | None  # e.g. "no vLLM installed: using the newest known rules"
    ops: dict[str, OpDecision]
    fused_post_pre: bool
    findings: list[Finding]
    verdict: Verdict
    sources: dict[str, str] = field(default_factory=dict)  # fact -> where it came from ("user:--arch")

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
