"""The verify/1 document (`verify --json`; check/1 carries it with --verify): every (path, op, token count, device)
run against the oracle. `run_verify` (mhcdoctor.verify) is the one place it is made.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from mhcdoctor.documents.explain import ModelDocument
from mhcdoctor.documents.vocabulary import NonNegative, NullWhen, Op, Positive, Verdict

SCHEMA = "mhcdoctor.verify/1"

# How one row came out against the oracle, in the order verify's summary counts them.
RowStatus = Literal["pass", "fail", "skip", "error", "timeout"]
ROW_STATUSES: tuple[RowStatus, ...] = ("pass", "fail", "skip", "error", "timeout")
# What happened to one (path, device) child.
OutcomeStatus = Literal["ran", "unavailable", "error", "timeout"]
OUTCOME_STATUSES: tuple[OutcomeStatus, ...] = ("ran", "unavailable", "error", "timeout")


class KnownBugRef(TypedDict):
    """A known bug (mhcdoctor.knowledge.bugs) whose op, token range, shape and versions a failing row matches."""

    id: str  # the finding id the bug raises (docs/known-bugs.md)
    title: str
    fix: str
    proof: Literal["measured", "code", "report"]  # the strongest evidence the record has


class _VerifyRowBase(TypedDict):
    """One (path, op, token count, device): how it ran and how far it was from the oracle."""

    path: str
    op: Op
    tokens: Positive
    hidden: int
    hc_mult: int
    device: str
    status: RowStatus
    max_abs_err: float | None
    max_rel_err: float | None
    tolerance: ToleranceDocument | None
    worst_output: str | None
    seconds: NonNegative
    kernel_seconds: NonNegative | None
    rows_checked: int | None
    reason: Annotated[str | None, NullWhen("status", "pass")]  # why it did not pass (a passing row has none)
    outputs: list[OutputVerdict]  # per output tensor, from the path's child
    evidence: list[str]
    selected: bool | None


class VerifyRow(_VerifyRowBase, total=False):
    """One (path, op, token count, device) against the oracle; a failing row that matches known bugs names them."""

    known_bugs: list[KnownBugRef]


class VerifyDocument(TypedDict):
    schema: str
    mhcdoctor_version: str
    created: str
    model: ModelDocument
    params: ParamsDocument
    tokens: list[Positive]
    stress: bool
    devices: list[str]
    selected: dict[str, str] | None
    paths: list[PathOutcome]  # each (path, device)'s outcome, as the runner reports it
    results: list[VerifyRow]
    summary: dict[str, int]
    problems: list[str]
    verdict: Verdict
    seconds: NonNegative


class ToleranceDocument(TypedDict):
    abs: float
    rel: float


class _Verdict(TypedDict):
    name: str
    tolerance: ToleranceDocument
    max_abs_err: float | None  # None when the shapes differ
    max_rel_err: float | None
    passed: bool


class OutputVerdict(_Verdict, total=False):
    """One output against the oracle (`compare`): a row's `outputs` in verify/1."""

    reason: str  # when it fails
    bad_rows: list[int]  # when values are over tolerance: the first 20 token rows that are
    pre_from: str  # the fused op's coefficients and layer_input: judged against the pre of which residual (oracle)


class ParamsDocument(TypedDict):
    """`Params.to_dict()`: the verify/1 and bench/1 documents' `params`, and what a path child is sent."""

    hidden: int
    hc_mult: int
    rms_eps: float
    hc_pre_eps: float
    hc_sinkhorn_eps: float
    hc_post_mult_value: float
    sinkhorn_repeat: int


class _PathOutcomeBase(TypedDict):
    path: str
    device: str
    status: OutcomeStatus
    version: str | None
    device_name: str | None
    reason: str | None
    seconds: NonNegative
    evidence: list[str]


class PathOutcome(_PathOutcomeBase, total=False):
    """What happened to one (path, device) child: verify/1's and bench/1's `paths` entries. Its rows are apart
    (`Ran.rows`)."""

    notes: list[str]  # when the path loaded: what its adapter said about it
    load_seconds: NonNegative | None
