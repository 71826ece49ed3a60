"""The child side of verify: run one path's ops on one device and judge each result against the oracle.

`run_path` is the whole loop and is what tests call in-process with stand-in paths. `main` is the entry of the
child interpreter that the parent starts for each (path, device): it writes one JSON line per event to a file
(progress, the start of a case, a finished row), so whatever the child has finished survives a hang or a crash.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from mhcdoctor import oracle
from mhcdoctor.documents.verify import OutputVerdict, ToleranceDocument
from mhcdoctor.kernels import OpOutput, OpUnsupported, PathImpl
from mhcdoctor.verify import cases
from mhcdoctor.verify.rows import WorkerRequest, is_request
from mhcdoctor.verify.tolerance import compare

if TYPE_CHECKING:  # imported where the cases run
    from torch import Tensor

Row = dict[str, object]  # a row as the child writes it: JSON, read back and checked by the parent (verify.rows)
Emit = Callable[[Row], None]
# What runs one case in the child: (impl, op, tokens, params, device, seed) -> the row. verify's is check_case;
# a request may name another ("task": "module:function", called with options=request["task_options"]).
Case = Callable[[PathImpl, str, int, cases.Params, str, int], Mapping[str, object]]


class CheckResult(TypedDict):
    """verify's check of one case (`check_case`); the runner reads it back as a verify.rows.CaseRow."""

    status: str
    max_abs_err: float | None
    max_rel_err: float | None
    tolerance: ToleranceDocument
    worst_output: str
    kernel_seconds: float
    rows_checked: int
    outputs: list[OutputVerdict]
    reason: str | None


def _to_numpy(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().float().cpu().numpy())


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize(device)


def check_case(impl: PathImpl, op: str, tokens: int, p: cases.Params, device: str, seed: int = 0) -> CheckResult:
    """Run one op at one token count (twice, with fresh inputs, for small counts); the row verify reports."""
    import torch

    rows = cases.rows_to_check(tokens)
    row_index = torch.tensor(rows, dtype=torch.long, device=device)
    kernel_seconds = 0.0
    outputs: dict[str, OutputVerdict] = {}
    for round_ in range(cases.rounds_for(tokens)):
        inputs = cases.make_inputs(op, tokens, p, cases.case_seed(op, tokens, round_, seed), device)
        scalars = cases.scalar_args(op, p)
        _sync(device)
        start = time.perf_counter()
        result = impl.ops[op](*inputs.values(), *scalars.values())  # positional, in the reference's order
        _sync(device)
        kernel_seconds += time.perf_counter() - start
        for name, verdict in judge(op, tokens, inputs, scalars, result, rows, row_index).items():
            prior = outputs.get(name)
            if (
                prior is None
                or (prior["passed"] and not verdict["passed"])
                or (
                    prior["passed"] == verdict["passed"] and (verdict["max_abs_err"] or 0) > (prior["max_abs_err"] or 0)
                )
            ):
                outputs[name] = verdict
    worst = worst_output(list(outputs.values()))
    row: CheckResult = {
        "status": "pass" if all(o["passed"] for o in outputs.values()) else "fail",
        "max_abs_err": worst["max_abs_err"],
        "max_rel_err": worst["max_rel_err"],
        "tolerance": worst["tolerance"],
        "worst_output": worst["name"],
        "kernel_seconds": round(kernel_seconds, 6),
        "rows_checked": len(rows),
        "outputs": list(outputs.values()),
        "reason": None,
    }
    if row["status"] == "fail":
        row["reason"] = "; ".join(o.get("reason", "") for o in outputs.values() if not o["passed"])
    return row


def judge(
    op: str,
    tokens: int,
    inputs: dict[str, Tensor],
    scalars: dict[str, cases.Scalar],
    result: OpOutput,
    rows: list[int],
    row_index: Tensor,
) -> dict[str, OutputVerdict]:
    """An op's result against the oracle on the token rows `rows` (`row_index`: the same, as a tensor on the
    device): one verdict per output, by name."""
    names = cases.OUTPUTS[op]
    got = result if isinstance(result, tuple) else (result,)
    if len(got) != len(names):
        raise ValueError(f"{op} returned {len(got)} tensors, expected {len(names)} ({', '.join(names)})")
    every_row = len(rows) == tokens  # rows_to_check: all rows, in order, up to FULL_CHECK_TOKENS

    def checked_rows(t: Tensor) -> np.ndarray:
        return _to_numpy(t if every_row else t.index_select(0, row_index))

    picked = {k: checked_rows(v) if k in cases.TOKEN_INPUTS else _to_numpy(v) for k, v in inputs.items()}
    outs = {}
    for name, tensor in zip(names, got, strict=True):
        flat = tensor.reshape(tokens, *tensor.shape[-(tensor.dim() - 1) :]) if tensor.dim() > 1 else tensor
        outs[name] = checked_rows(flat)

    def against(**order: bool) -> dict[str, OutputVerdict]:
        expected = oracle.BY_OP[op](*picked.values(), **scalars, **order)
        return {name: compare(name, outs[name], expected[name], rows) for name in names}

    if op != "mhc_fused_post_pre":
        return against()
    # The fused op may compute its pre from the new residual before or after rounding it (oracle.mhc_fused_post_pre):
    # it passes if all its outputs fit one order; the verdicts say which (the rounded one's when neither fits).
    rounded, verdicts = True, against(pre_from_rounded=True)
    if not all(v["passed"] for v in verdicts.values()):
        other = against(pre_from_rounded=False)
        if all(v["passed"] for v in other.values()):
            rounded, verdicts = False, other
    for name in ("post_mix", "comb_mix", "layer_input"):
        verdicts[name]["pre_from"] = oracle.PRE_FROM[rounded]
    return verdicts


def worst_output(outputs: list[OutputVerdict]) -> OutputVerdict:
    """The failing output if any, else the one closest to its tolerance."""
    failing = [o for o in outputs if not o["passed"]]
    if failing:
        return failing[0]

    def used(o: OutputVerdict) -> float:
        tol = o["tolerance"]["abs"] or o["tolerance"]["rel"]
        err = o["max_abs_err"] if o["tolerance"]["abs"] else o["max_rel_err"]
        return float(err or 0.0) / float(tol)

    return max(outputs, key=used)


def run_path(
    impl: PathImpl,
    ops: list[str],
    tokens: list[int],
    p: cases.Params,
    device: str,
    seed: int = 0,
    case: Case = check_case,
) -> Iterator[Row]:
    """Yield one row per (op, tokens): an exception in one case is that row's error, and the loop goes on."""
    for op in ops:
        if op not in impl.ops:
            continue
        for count in tokens:
            start = time.perf_counter()
            row: Row
            try:
                row = dict(case(impl, op, count, p, device, seed))
            except OpUnsupported as exc:
                row = {"status": "skip", "reason": str(exc)}
            except Exception as exc:  # a kernel error is a result with its evidence, not a dead doctor
                row = {
                    "status": "error",
                    "reason": f"{type(exc).__name__}: {_first_line(str(exc))}",
                    "evidence": traceback.format_exc(limit=6).strip().splitlines()[-12:],
                }
            row.update(op=op, tokens=count, seconds=round(time.perf_counter() - start, 4))
            yield row


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def main(argv: list[str]) -> int:
    """Child entry: argv = [events_file, request_json]."""
    events_path, request = argv[0], json.loads(argv[1])
    if not is_request(request):
        raise ValueError(f"not a path child's request: {argv[1][:200]!r}")
    with open(events_path, "a", encoding="utf-8") as events:

        def emit(event: Row) -> None:
            events.write(json.dumps(event, default=str) + "\n")
            events.flush()

        return _serve(request, emit)


def _serve(request: WorkerRequest, emit: Emit) -> int:
    from mhcdoctor.kernels import REGISTRY, PathUnavailable

    path, device = request["path"], request["device"]
    p = cases.Params(**request["params"])
    reason = _device_problem(device)
    impl = None
    if reason is None:
        try:
            impl = REGISTRY[path].load(device, lambda text: emit({"event": "progress", "text": text}))
        except PathUnavailable as exc:
            reason = str(exc)
    if impl is None or reason is not None:
        emit({"event": "unavailable", "reason": reason})
        return 0
    emit(
        {
            "event": "loaded",
            "version": impl.version,
            "notes": impl.notes,
            "device_name": _device_name(device),
            "load_seconds": round(time.time() - request["spawned_at"], 3),
        }
    )
    case = _case_function(request)
    for op in request["ops"]:
        if op not in impl.ops:
            continue
        for count in request["tokens"]:
            emit({"event": "start", "op": op, "tokens": count})
            for row in run_path(impl, [op], [count], p, device, request["seed"], case):
                emit({"event": "row", **row})
    emit({"event": "done"})
    return 0


def _case_function(request: WorkerRequest) -> Case:
    task = request.get("task")
    if not task:
        return check_case
    module, _, name = str(task).partition(":")
    return functools.partial(getattr(importlib.import_module(module), name), options=request.get("task_options") or {})


def _device_name(device: str) -> str:
    import torch

    return "CPU" if device == "cpu" else torch.cuda.get_device_name(device)


def _device_problem(device: str) -> str | None:
    try:
        import torch
    except ImportError as exc:
        return f"torch does not import: {exc}"
    if device == "cpu":
        return None
    if not torch.cuda.is_available():
        return "no GPU visible to torch (torch.cuda.is_available() is False)"
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if index >= torch.cuda.device_count():
        return f"{device} does not exist: torch sees {torch.cuda.device_count()} GPU(s)"
    torch.cuda.set_device(index)
    torch.ones(8, 8, device=device) @ torch.ones(8, 8, device=device)  # cuBLAS starts here, not in the first case
    return None


def _exit_now(code: int) -> None:
    """Leave without the interpreter's teardown: with torch, a GPU context and a JIT loaded it takes a few tenths of a
    second that verify would wait for, and every result is already in the events file."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit_now(main(sys.argv[1:]))
