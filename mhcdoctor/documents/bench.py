"""The bench/1 document (`bench --json`): what each mHC path costs on this device, against its memory bandwidth."""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from mhcdoctor.documents.models import ModelConfigDocument
from mhcdoctor.documents.verify import ParamsDocument, PathOutcome, RowStatus
from mhcdoctor.documents.vocabulary import Count, Minimum, NonNegative, Op, Positive, Verdict

SCHEMA = "mhcdoctor.bench/1"


class BenchModel(ModelConfigDocument):
    sublayers_per_layer: Positive


class Peak(TypedDict):
    """The peak bandwidth the fractions are against, and where it comes from."""

    tb_per_s: Annotated[float, Minimum(0, exclusive=True)] | None
    how: Literal["table", "measured"] | None  # None when unknown
    device: str | None
    source: str


class BenchResult(TypedDict):
    """One (path, op, token count) timed. `median_ms` is the eager call; `graph_ms` the same call replayed in a
    CUDA graph (None where not captured: not CUDA, or `graph_error` says why)."""

    path: str
    role: str
    op: Op
    tokens: Positive
    status: RowStatus
    called: str | None
    torch_piece: bool  # part of this op ran on torch here (the row says so; never "best")
    median_ms: NonNegative | None
    graph_ms: float | None
    graph_error: str | None
    min_ms: NonNegative | None
    runs: Positive | None
    bytes: Count
    tb_per_s: NonNegative | None
    fraction_of_peak: NonNegative | None
    max_abs_err: float | None
    max_rel_err: float | None
    reason: str | None


class _StepCostBase(TypedDict):
    ms: NonNegative
    ms_per_token: float  # per output token: a decode step at batch B makes B tokens
    ops: dict[str, str]  # op -> the path that runs it
    timing: str  # "cuda-graph" where every op was captured, else "eager"


class StepCost(_StepCostBase, total=False):
    """One decode step's cost on a choice of paths; against the best when there is one."""

    vs_best_ms: float
    times_best: float | None


class FusedSlower(TypedDict):
    """A path whose fused post+pre op is slower than its own post then pre, at one batch size."""

    path: str
    fused_ms: float
    separate_ms: float
    per_step_ms: float  # what the fused op costs a decode step more than post + pre would


class StepBatch(TypedDict):
    tokens: Positive
    paths: dict[str, StepCost]
    selected: StepCost | None
    best: StepCost | None
    fused_slower: list[FusedSlower]


class Step(TypedDict):
    plan: dict[str, Positive] | None
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
    tokens: list[Positive]
    device: str | None  # None: nothing was timed on any device (no GPU seen, and none named)
    device_name: str | None
    timer: Literal["cuda-events", "perf_counter"] | None  # None with no device
    peak: Peak
    selected: dict[str, str] | None
    fused_post_pre: bool | None
    vllm: str | None  # the vLLM whose kernels were timed ("0.34.0"), None when vLLM is not installed
    roles: dict[str, str]  # path -> vllm, stand-in, torch, probe or user
    paths: list[PathOutcome]
    results: list[BenchResult]
    step: Step
    verdict: Verdict
    problems: list[str]  # why the verdict is not ok, one line each
    seconds: NonNegative


class BenchDocument(_BenchDocumentBase, total=False):
    """The bench/1 document (`bench --json`)."""

    plot: Plot  # with --plot: the figure drawn (mhcdoctor.bench.plot)
