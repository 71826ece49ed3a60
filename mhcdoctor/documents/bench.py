"""The bench/1 document (`bench --json`): what each mHC path costs on this device, against its memory bandwidth."""

from __future__ import annotations

from typing import TypedDict

from mhcdoctor.documents.models import ModelConfigDocument
from mhcdoctor.documents.verify import ParamsDocument, PathOutcome

SCHEMA = "mhcdoctor.bench/1"


class BenchModel(ModelConfigDocument):
    sublayers_per_layer: int


class Peak(TypedDict):
    """The peak bandwidth the fractions are against, and where it comes from."""

    tb_per_s: float | None
    how: str | None  # "table", "measured", or None when unknown
    device: str | None
    source: str


class BenchResult(TypedDict):
    """One (path, op, token count) timed."""

    path: str
    op: str
    tokens: int
    status: str
    median_ms: float | None
    min_ms: float | None
    runs: int | None
    bytes: int
    tb_per_s: float | None
    fraction_of_peak: float | None
    max_abs_err: float | None
    max_rel_err: float | None
    reason: str | None


class _StepCostBase(TypedDict):
    ms: float
    ops: dict[str, str]  # op -> the path that runs it


class StepCost(_StepCostBase, total=False):
    """One decode step's cost on a choice of paths; against the best when there is one."""

    vs_best_ms: float
    times_best: float | None


class StepBatch(TypedDict):
    tokens: int
    paths: dict[str, StepCost]
    selected: StepCost | None
    best: StepCost | None


class Step(TypedDict):
    plan: dict[str, int] | None
    reason: str | None
    batches: list[StepBatch]


class Plot(TypedDict):
    file: str
    panels: dict[str, list[str]]  # op -> its lines' labels


class _BenchDocumentBase(TypedDict):
    schema: str
    mhcdoctor_version: str
    created: str
    model: BenchModel
    params: ParamsDocument
    tokens: list[int]
    device: str
    device_name: str | None
    timer: str
    peak: Peak
    selected: dict[str, str] | None
    fused_post_pre: bool | None
    paths: list[PathOutcome]
    results: list[BenchResult]
    step: Step
    verdict: str
    seconds: float


class BenchDocument(_BenchDocumentBase, total=False):
    """The bench/1 document (`bench --json`)."""

    plot: Plot  # with --plot: the figure drawn (mhcdoctor.bench.plot)
