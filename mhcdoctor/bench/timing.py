"""The child side of bench: time one op at one token count, and check the output it timed against the oracle.

Runs in verify's child process (mhcdoctor.verify.worker names these functions as its per-case task), so a path
that crashes or hangs loses its own rows only. On a GPU each run is timed with device events
(torch.cuda.Event, which is HIP's on ROCm); on the CPU with time.perf_counter. On a CUDA GPU the op is also
captured in a CUDA graph and timed replaying it: vLLM serves decode under CUDA graphs (`cudagraph_mode`), where
the host's launch overhead, most of an op's eager time at 1 token, is gone.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import TypedDict, TypeVar, cast

from mhcdoctor.kernels import PathImpl
from mhcdoctor.verify import cases
from mhcdoctor.verify.worker import judge, worst_output

DEFAULT_WARMUP = 3
DEFAULT_REPEATS = 50
DEFAULT_BUDGET_S = 1.0  # measured seconds per case, at most (a slow path gets fewer runs, never under MIN_RUNS)
MIN_RUNS = 3
# calls captured back to back in one graph (option graph_calls): a replay's own launch is spread over them, as in
# vLLM's graph of a whole decode step
GRAPH_CALLS = 10
NORM_EPS = 1e-6  # DeepSeek-V4's attn_norm/ffn_norm variance_epsilon (rms_norm_eps)
# The timer's options (bench's `options`: warmup, repeats, budget_s, copy_bytes), as the child reads them from its
# request's JSON: untyped, each read as a number (`_option`).
Options = Mapping[str, object]
T = TypeVar("T")


class Timing(TypedDict):
    median_s: float
    min_s: float
    runs: int
    timer: str  # "cuda-events" or "perf_counter"


class _TimedResultBase(Timing):
    status: str
    max_abs_err: float | None
    max_rel_err: float | None
    worst_output: str
    rows_checked: int
    reason: str | None
    called: str  # the function timed (the op as the model calls it, where the path says)
    torch_piece: bool  # part of the op ran on torch (PathImpl.torch_pieces)


class TimedResult(_TimedResultBase, total=False):
    """One case timed (`time_case`); the parent reads it back as a bench.rows.TimedRow."""

    graph_median_s: float  # per call, replaying a CUDA graph of GRAPH_CALLS calls
    graph_min_s: float
    graph_runs: int
    graph_error: str  # why the op could not be captured in a CUDA graph


class CopyResult(Timing):
    """The device's copy bandwidth measured (`measure_copy`); read back as a bench.rows.TimedRow."""

    status: str
    copy_bytes: int
    tb_per_s: float


def _option(options: Options, key: str, default: float) -> float:
    value = options.get(key)
    return float(value) if isinstance(value, (int, float)) else default


def time_case(
    impl: PathImpl, op: str, tokens: int, p: cases.Params, device: str, seed: int = 0, *, options: Options
) -> TimedResult:
    """Warm up, time `repeats` runs (fewer when they would pass the budget), median; on CUDA also under a CUDA
    graph; then check one more call, on fresh copies of the inputs, against the oracle.

    The op is called as the path says its model calls it (`impl.as_model_calls`: with a norm weight where
    `impl.norm_ops` lists it, a form that may overwrite its residual where `impl.mutates` does)."""
    import torch

    inputs = cases.make_inputs(op, tokens, p, cases.case_seed(op, tokens, 0, seed), device)
    scalars: dict[str, object] = dict(cases.scalar_args(op, p))
    as_model = bool(_option(options, "as_model", 1.0))  # 0: the op as verify calls it (no norm weight, no reuse)
    call = impl.as_model_calls.get(op, impl.ops[op]) if as_model else impl.ops[op]
    kwargs: dict[str, object] = {}
    if as_model and op in impl.norm_ops:  # an RMSNorm weight near 1, as trained ones are, in the bf16 vLLM holds
        gen = torch.Generator(device=device)
        gen.manual_seed(cases.case_seed(op, tokens, 1, seed))
        weight = 1.0 + 0.25 * torch.randn(p.hidden, generator=gen, device=device)
        kwargs = {"norm_weight": weight.to(torch.bfloat16), "norm_eps": NORM_EPS}
    mutates = as_model and op in impl.mutates
    timed = {k: v.clone() for k, v in inputs.items()} if mutates else inputs
    args = (*timed.values(), *scalars.values())
    times, _ = _time(lambda: call(*args, **kwargs), device, options)
    graph = _time_graph(lambda: call(*args, **kwargs), device, options) if _graphs(device, options) else {}
    fresh = {k: v.clone() for k, v in inputs.items()} if mutates else inputs
    result = call(*fresh.values(), *scalars.values(), **kwargs)
    rows = cases.rows_to_check(tokens)
    # the oracle takes the norm weight as an array beside the scalars (mhcdoctor.oracle.mhc_pre's keywords)
    oracle_args = cast("dict[str, cases.Scalar]", {**scalars, **{k: _numpy(v) for k, v in kwargs.items()}})
    verdicts = judge(op, tokens, inputs, oracle_args, result, rows, torch.tensor(rows, dtype=torch.long, device=device))
    worst = worst_output(list(verdicts.values()))
    passed = all(v["passed"] for v in verdicts.values())
    return {
        "status": "pass" if passed else "fail",
        **_summary(times, device),
        **graph,  # type: ignore[typeddict-item]
        "max_abs_err": worst["max_abs_err"],
        "max_rel_err": worst["max_rel_err"],
        "worst_output": worst["name"],
        "rows_checked": len(rows),
        "reason": None if passed else "; ".join(v.get("reason", "") for v in verdicts.values() if not v["passed"]),
        "called": getattr(call, "__name__", op) + (" (norm_weight)" if kwargs else ""),
        "torch_piece": op in impl.torch_pieces,
    }


def _numpy(value: object) -> object:
    """A tensor as the float32 array the oracle takes; anything else as it is."""
    import torch

    return value.float().cpu().numpy() if isinstance(value, torch.Tensor) else value


def _graphs(device: str, options: Options) -> bool:
    import torch

    return device.startswith("cuda") and torch.version.hip is None and bool(_option(options, "graph", 1.0))


def _time_graph(call: Callable[[], object], device: str, options: Options) -> dict[str, object]:
    """Per-call time of GRAPH_CALLS calls captured in one CUDA graph, median over replays; or why not."""
    import torch

    try:
        stream = torch.cuda.Stream(device)  # type: ignore[no-untyped-call]
        stream.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(stream):  # capture needs the kernels compiled and warm, off the default stream
            call()
        torch.cuda.current_stream(device).wait_stream(stream)
        calls = max(1, int(_option(options, "graph_calls", GRAPH_CALLS)))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                call()
        graph.replay()
        torch.cuda.synchronize(device)
    except Exception as exc:  # a kernel that syncs with the host, an allocation graphs forbid: eager time only
        torch.cuda.synchronize(device)
        return {"graph_error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    times, _ = _time(graph.replay, device, {**options, "warmup": 1})
    return {
        "graph_median_s": statistics.median(times) / calls,
        "graph_min_s": min(times) / calls,
        "graph_runs": len(times),
    }


def measure_copy(
    impl: PathImpl, op: str, tokens: int, p: cases.Params, device: str, seed: int = 0, *, options: Options
) -> CopyResult:
    """The device's memory bandwidth, measured: timed device-to-device copies of a buffer much larger than any
    cache (1 GiB on a GPU, 64 MiB on the CPU), reading and writing it. For a device not in the table of peaks."""
    import torch

    size = int(_option(options, "copy_bytes", 0) or (1 << 30 if device.startswith("cuda") else 1 << 26))
    src = torch.ones(size, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    times, _ = _time(lambda: dst.copy_(src), device, {**options, "warmup": 2, "repeats": 20})
    summary = _summary(times, device)
    return {"status": "pass", **summary, "copy_bytes": 2 * size, "tb_per_s": 2 * size / summary["median_s"] / 1e12}


def _time(call: Callable[[], T], device: str, options: Options) -> tuple[list[float], T]:
    """The times of the timed runs and the last run's result."""
    import torch

    gpu = device.startswith("cuda")

    def sync() -> None:
        if gpu:
            torch.cuda.synchronize(device)

    once = 0.0
    for _ in range(max(1, int(_option(options, "warmup", DEFAULT_WARMUP)))):  # the first call compiles (JIT)
        start = time.perf_counter()
        result = call()
        sync()
        once = time.perf_counter() - start
    budget = _option(options, "budget_s", DEFAULT_BUDGET_S)
    runs = max(MIN_RUNS, min(int(_option(options, "repeats", DEFAULT_REPEATS)), int(budget / max(once, 1e-9))))
    times = []
    for _ in range(runs):
        if gpu:
            begin = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            begin.record()
            result = call()
            end.record()
            end.synchronize()
            times.append(begin.elapsed_time(end) / 1000.0)
        else:
            start = time.perf_counter()
            result = call()
            times.append(time.perf_counter() - start)
    return times, result


def _summary(times: list[float], device: str) -> Timing:
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "runs": len(times),
        "timer": "cuda-events" if device.startswith("cuda") else "perf_counter",
    }
