"""The typed rows and outcomes that verify's path children hand back, and their check where the JSON is read.

A path child writes its rows as JSON lines (mhcdoctor.verify.worker); the parent (mhcdoctor.verify.runner) reads
them back with json.loads, which types nothing. Each kind of row is a TypedDict, and a row read back is checked
against it by userfiles.mismatch, the one check of JSON that comes in (saved reports pass the same): what leaves the
runner is typed because it was checked, not because it was asserted. verify's rows are `CaseRow`; bench's
(mhcdoctor.bench.rows) are another kind checked the same way.
"""

from __future__ import annotations

from typing import TypedDict, TypeGuard

from mhcdoctor.documents.verify import OutputVerdict, ParamsDocument, RowStatus, ToleranceDocument
from mhcdoctor.documents.vocabulary import Op
from mhcdoctor.userfiles import mismatch


class CaseRowBase(TypedDict):
    """The members every row has, whatever the per-case task: the runner itself writes rows of only these (a case a
    child never finished), besides `reason` and `evidence`."""

    op: Op
    tokens: int
    status: RowStatus  # a row from a child with any other status is not a row (is_case_row)
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


def is_output_verdict(value: object) -> TypeGuard[OutputVerdict]:
    return mismatch(value, OutputVerdict, "output", complete=True) is None


def is_case_row(row: dict[str, object]) -> TypeGuard[CaseRow]:
    """Whether a row read back from a path child (or written by the runner) is a CaseRow: every member the type
    requires there, and each member of its type all the way down (its outputs and their tolerances too)."""
    return mismatch(row, CaseRow, "row", complete=True) is None


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
