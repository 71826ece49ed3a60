"""The child side of bench: time one op at one token count, and check the output it timed against the oracle.

Runs in verify's child process (mhcdoctor.verify.worker names these functions as its per-case task), so a path
that crashes or hangs loses its own rows only. On a GPU each run is timed with device events
(torch.cuda.Event, which is HIP's on ROCm); on the CPU with time.perf_counter.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import TypedDict, TypeVar

from mhcdoctor.kernels import PathImpl
from mhcdoctor.verify import cases
from mhcdoctor.verify.worker import judge, worst_output

DEFAULT_WARMUP = 3
DEFAULT_REPEATS = 50
DEFAULT_BUDGET_S = 1.0  # measured seconds per case, at most (a slow path gets fewer runs, never under MIN_RUNS)
MIN_RUNS = 3
# The timer's options (bench's `options`: warmup, repeats, budget_s, copy_bytes), as the child reads them from its
# request's JSON: untyped, each read as a number (`_option`).
Options = Mapping[str, object]
T = TypeVar("T")


class Timing(TypedDict):
    median_s: float
    min_s: float
    runs: int
    timer: str  # "cuda-events" or "perf_counter"


class TimedResult(Timing):
    """One case timed (`time_case`); the parent reads it back as a bench.rows.TimedRow."""

    status: str
    max_abs_err: float | None
    max_rel_err: float | None
    worst_output: str
    rows_checked: int
    reason: str | None


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
    """Warm up, time `repeats` runs (fewer when they would pass the budget), median; spot-check the last output."""
    import torch

    inputs = cases.make_inputs(op, tokens, p, cases.case_seed(op, tokens, 0, seed), device)
    scalars = cases.scalar_args(op, p)
    args = (*inputs.values(), *scalars.values())
    times, result = _time(lambda: impl.ops[op](*args), device, options)
    rows = cases.rows_to_check(tokens)
    verdicts = judge(op, tokens, inputs, scalars, result, rows, torch.tensor(rows, dtype=torch.long, device=device))
    worst = worst_output(list(verdicts.values()))
    passed = all(v["passed"] for v in verdicts.values())
    return {
        "status": "pass" if passed else "fail",
        **_summary(times, device),
        "max_abs_err": worst["max_abs_err"],
        "max_rel_err": worst["max_rel_err"],
        "worst_output": worst["name"],
        "rows_checked": len(rows),
        "reason": None if passed else "; ".join(v.get("reason", "") for v in verdicts.values() if not v["passed"]),
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
