"""The explain/1 document (`explain --json`) and a decision as check/1 carries it in `models`.

`Decision.to_json_dict()` (mhcdoctor.decision) is the one place this JSON is made; it is typed here, not by the
dataclasses, because it is also read back: from a user's saved report, after redaction, and the text and Markdown
views render it in that form, so what a user sees and what they paste are the same data.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from mhcdoctor.documents.vocabulary import (
    FindingId,
    FixState,
    JsonValue,
    Op,
    PathName,
    Platform,
    Positive,
    Severity,
    Verdict,
)

SCHEMA = "mhcdoctor.explain/1"

# What a gate tests, where a finding must know it: "package": whether vLLM finds or imports the path's package
# (has_tilelang(), find_spec('aiter'), layers/mhc.py's `import tilelang`); "aiter-api": vLLM 0.30+'s probe of
# aiter's API (mhc_pre's norm arguments, mhc_fused_post_pre). None: any other test.
GateKind = Literal["package", "aiter-api"]


class _GateBase(TypedDict):
    path: str
    gate: str
    observed: JsonValue
    passed: bool
    text: str


class GateDocument(_GateBase, total=False):
    """One test vLLM makes on the way to a path; a report saved before gates had kinds lacks `kind`."""

    kind: GateKind | None


class _OpBase(TypedDict):
    path: PathName
    why: list[GateDocument]


class OpDocument(_OpBase, total=False):
    """The path vLLM takes for one op; a report saved before the preferred path was recorded lacks `preferred`."""

    preferred: PathName | None  # the platform's preferred path for this op in this release (None: no vLLM path)


class _FindingBase(TypedDict):
    id: FindingId
    severity: Severity
    title: str
    detail: str
    fix: str
    refs: list[str]


class FindingDocument(_FindingBase, total=False):
    """A finding; a report saved before its ops and token scope were recorded lacks them (readers use `.get`)."""

    ops: list[Op]  # the ops it is about, so a renderer can mark their rows
    from_tokens: int | None  # it shows only from this many tokens in one call (None: at any count)


class ModelDocument(TypedDict):
    name: str | None
    hidden_size: Positive
    hc_mult: Positive


class PackageView(TypedDict):
    """A package's facts the rules read (facts.rules_view), in the published order."""

    version: str | None
    present: bool | None
    imports: bool | None


class AiterView(TypedDict):
    version: str | None
    sqrsum_fix: FixState
    present: bool | None
    genuine: bool | None
    imports: bool | None
    mhc_pre_norm_args: bool | None
    has_fused_post_pre: bool | None
    has_seam_rmsnorm: bool | None
    has_mhc_ops: bool | None
    distribution: str | None
    fixes: dict[str, FixState]


class DeepGemmView(PackageView):
    vendored: bool | None
    has_prenorm_gemm: bool | None
    prenorm_archs: list[str] | None


class VllmViewDocument(TypedDict):
    """What the decision made of vLLM (decision.VllmView): its version, build, platform, whether it runs here."""

    version: str | None
    build: str | None
    platform: str | None
    runs_here: bool
    blocked_by: list[str]


class CompilersView(TypedDict):
    nvcc: bool | None
    hipcc: bool | None


class RulesFactsDocument(TypedDict):
    """explain/1's `facts`: the facts the rules read (facts.rules_view writes exactly these members)."""

    platform: Platform
    arch: str | None
    rocm_version: str | None
    aiter: AiterView
    tilelang: PackageView
    tvm_ffi: PackageView
    deepgemm: DeepGemmView
    vllm_env: dict[str, str] | None
    vllm: VllmViewDocument
    compilers: CompilersView


class DecisionDocument(TypedDict):
    model: ModelDocument
    facts: RulesFactsDocument  # facts.rules_view: the facts the rules read, and what was made of vLLM
    rules: str
    rules_note: str | None
    ops: dict[str, OpDocument]
    fused_post_pre: bool
    findings: list[FindingDocument]
    verdict: Verdict
    sources: dict[str, str]


class ExplainDocument(DecisionDocument):
    schema: str
