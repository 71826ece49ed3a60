"""bench's rows: what the timer (mhcdoctor.bench.timing) writes per case in a path child, and its check where the
parent reads it back (mhcdoctor.verify.runner, `Task.is_row`), like verify's own rows (mhcdoctor.verify.rows)."""

from __future__ import annotations

from typing import TypeGuard

from mhcdoctor.userfiles import mismatch
from mhcdoctor.verify.rows import CaseRowBase


class TimedRow(CaseRowBase, total=False):
    """One (op, token count) timed (`time_case`), or the device's copy (`measure_copy`); or a case that did not run
    (skip, error, timeout), with only the members every row has."""

    reason: str | None
    evidence: list[str]
    median_s: float
    min_s: float
    runs: int
    timer: str
    max_abs_err: float | None
    max_rel_err: float | None
    worst_output: str | None
    rows_checked: int
    called: str  # the function timed
    torch_piece: bool
    graph_median_s: float  # per call under a CUDA graph
    graph_min_s: float
    graph_runs: int
    graph_error: str
    copy_bytes: int  # measure_copy: the bytes read and written by one copy
    tb_per_s: float  # measure_copy: the bandwidth of the median copy


def is_timed_row(row: dict[str, object]) -> TypeGuard[TimedRow]:
    """Whether a row read back from a bench child (or written by the runner) is a TimedRow."""
    return mismatch(row, TimedRow, "row", complete=True) is None
