"""The typed rows and outcomes that verify's path children hand back, and their check where the JSON is read.

A path child writes its rows as JSON lines (mhcdoctor.verify.worker); the parent (mhcdoctor.verify.runner) reads
them back with json.loads, which types nothing. Each kind of row says here which members it has and of which JSON
types (`RowSpec`), and `fits` checks a row read back against it: what leaves the runner is typed because it was
checked, not because it was asserted. verify's rows are `CaseRow`; bench's (mhcdoctor.bench.rows) are another
kind checked the same way.
"""

from __future__ import annotations

from typing import TypedDict, TypeGuard

from mhcdoctor.userfiles import mismatch
from mhcdoctor.verify.cases import ParamsDocument
from mhcdoctor.verify.tolerance import OutputVerdict, ToleranceDocument

# A member's JSON types (type(None) where it may be null) and whether every row has it.
RowSpec = dict[str, tuple[tuple[type, ...], bool]]
NUMBER = (int, float)  # a JSON number that Python's json reads as int when it has no fraction
_NONE = type(None)


def fits(obj: dict[str, object], spec: RowSpec) -> bool:
    """Whether `obj` has every member `spec` requires and each member `spec` names has one of its types; lists of
    strings (evidence) are checked to their items by the callers that have them."""
    for key, (kinds, required) in spec.items():
        if key not in obj:
            if required:
                return False
            continue
        value = obj[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            return False
    return True


def strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# The members every row has, whatever the per-case task: the runner itself writes rows of only these (a case a
# child never finished), besides `reason` and `evidence`.
BASE_SPEC: RowSpec = {
    "op": ((str,), True),
    "tokens": ((int,), True),
    "status": ((str,), True),
    "seconds": (NUMBER, True),
    "reason": ((str, _NONE), False),
    "evidence": ((list,), False),
}


class CaseRowBase(TypedDict):
    """The members every row has, whatever the per-case task (`BASE_SPEC`)."""

    op: str
    tokens: int
    status: str
    seconds: float


class CaseRow(CaseRowBase, total=False):
    """One (op, token count) of verify's check, as the path child wrote it (worker.check_case, or a skip or an error)
    or as the runner wrote it for a case the child never finished."""

    reason: str | None
    evidence: list[str]
    max_abs_err: float | None
    max_rel_err: float | None
    tolerance: ToleranceDocument | None
    worst_output: str | None
    kernel_seconds: float | None
    rows_checked: int | None
    outputs: list[OutputVerdict]


_TOLERANCE_SPEC: RowSpec = {"abs": (NUMBER, True), "rel": (NUMBER, True)}
_VERDICT_SPEC: RowSpec = {
    "name": ((str,), True),
    "tolerance": ((dict,), True),
    "max_abs_err": ((*NUMBER, _NONE), True),
    "max_rel_err": ((*NUMBER, _NONE), True),
    "passed": ((bool,), True),
    "reason": ((str,), False),
    "bad_rows": ((list,), False),
    "pre_from": ((str,), False),
}
CASE_SPEC: RowSpec = {
    **BASE_SPEC,
    "max_abs_err": ((*NUMBER, _NONE), False),
    "max_rel_err": ((*NUMBER, _NONE), False),
    "tolerance": ((dict, _NONE), False),
    "worst_output": ((str, _NONE), False),
    "kernel_seconds": ((*NUMBER, _NONE), False),
    "rows_checked": ((int, _NONE), False),
    "outputs": ((list,), False),
}


def is_tolerance(value: object) -> TypeGuard[ToleranceDocument]:
    return isinstance(value, dict) and fits(value, _TOLERANCE_SPEC)


def is_output_verdict(value: object) -> TypeGuard[OutputVerdict]:
    return (
        isinstance(value, dict)
        and fits(value, _VERDICT_SPEC)
        and is_tolerance(value["tolerance"])
        and all(isinstance(r, int) for r in value.get("bad_rows", []))
    )


def is_case_row(row: dict[str, object]) -> TypeGuard[CaseRow]:
    """Whether a row read back from a path child (or written by the runner) is a CaseRow."""
    tolerance = row.get("tolerance")
    outputs = row.get("outputs", [])
    return (
        fits(row, CASE_SPEC)
        and strings(row.get("evidence", []))
        and (tolerance is None or is_tolerance(tolerance))
        and isinstance(outputs, list)
        and all(is_output_verdict(o) for o in outputs)
    )


class _PathOutcomeBase(TypedDict):
    path: str
    device: str
    status: str  # "ran", "unavailable", "error" or "timeout"
    version: str | None
    device_name: str | None
    reason: str | None
    seconds: float
    evidence: list[str]


class PathOutcome(_PathOutcomeBase, total=False):
    """What happened to one (path, device) child: verify/1's and bench/1's `paths` entries. Its rows are apart
    (`Ran.rows`)."""

    notes: list[str]  # when the path loaded: what its adapter said about it
    load_seconds: float | None


class _RequestBase(TypedDict):
    path: str
    device: str
    ops: list[str]
    tokens: list[int]
    params: ParamsDocument
    seed: int
    spawned_at: float  # time.time() at the spawn: the child reports how long its imports and compiles took


class WorkerRequest(_RequestBase, total=False):
    """What the parent (mhcdoctor.verify.runner) asks of a path child, sent as JSON on its command line."""

    task: str  # "module:function" run per case instead of verify's check (bench's timer)
    task_options: dict[str, object]


def is_request(value: object) -> TypeGuard[WorkerRequest]:
    """Whether a path child's command line holds a complete request, each member of its type (params included)."""
    return mismatch(value, WorkerRequest, "request", complete=True) is None
