"""`mhcdoctor bench`: what each mHC path costs on this device, against the device's memory bandwidth.

`run_bench(...)` returns the bench/1 document. Like verify, nothing here imports torch or a GPU library: each path
runs in verify's child process (mhcdoctor.verify.runner) with mhcdoctor.bench.timing as the per-case task, one
path after another (never side by side, which would skew the times). The parent adds the byte model, the
bandwidth, the fraction of peak and the cost per decode step.

What a path is to the user (`ROLES`): vLLM's own kernels (`vllm:*`), a stand-in for them where vLLM is not
installed (DeepSeek's TileKernels, of which vLLM copied several kernels, vLLM #41255), the torch reference (what
vLLM falls back to), this project's own kernels (probes: they prove a library compiles and computes mHC here, and
are not what vLLM runs), or the user's. Probes run only when named and stay out of every cost comparison; a row
that runs a piece on torch (TileKernels 2.x without DeepGEMM) is said so and stays out of "best".
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from mhcdoctor import __version__
from mhcdoctor.bench.bytemodel import total_bytes
from mhcdoctor.bench.devices import known_peak
from mhcdoctor.bench.rows import TimedRow, is_timed_row
from mhcdoctor.clock import created_now
from mhcdoctor.documents.bench import SCHEMA, BenchDocument, BenchResult, FusedSlower, Peak, Step, StepCost
from mhcdoctor.documents.verify import PathOutcome
from mhcdoctor.documents.vocabulary import OPS, Op, Verdict
from mhcdoctor.errors import InputError
from mhcdoctor.kernels import REGISTRY, USER_PATH
from mhcdoctor.models import ModelConfig
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.progress import StderrProgress
from mhcdoctor.text import plural
from mhcdoctor.verify import check_fits, no_gpu_reason, resolve_devices, resolve_paths, user_kernels_context
from mhcdoctor.verify.cases import Params
from mhcdoctor.verify.runner import Progress, Ran, Task, run_jobs, unavailable

DECODE_TOKENS: tuple[int, ...] = (1, 8, 64, 256)
PREFILL_TOKENS: tuple[int, ...] = (4096, 16384)
DEFAULT_TIMEOUT = 600.0  # seconds for each path's child: JIT compiles and the torch path at 16384 tokens
SUBLAYERS = 2  # each DeepSeek-V4 layer wraps two sublayers (attention, then the MoE FFN) in mHC
# A path's role (module docstring); a path not named here is a stand-in.
PROBE, VLLM, STAND_IN, TORCH, USER = "probe", "vllm", "stand-in", "torch", "user"
_TIME = "mhcdoctor.bench.timing:time_case"
_COPY = "mhcdoctor.bench.timing:measure_copy"
_FALLBACK = "torch"  # a path without an op the step needs runs that op on vLLM's fallback


def step_plan(model: ModelConfig, fused: bool) -> dict[str, int] | None:
    """How many times one decode step runs each op: None when the model's layer count is unknown.

    Every sublayer takes mhc_pre before it and mhc_post after it; the model's final hc_head runs once. Where the
    fused op is used it replaces each post of one sublayer with the pre of the next: 1 pre, S-1 fused, 1 post.
    """
    if model.num_layers is None:
        return None
    sublayers = model.num_layers * SUBLAYERS
    if fused:
        return {"mhc_pre": 1, "mhc_fused_post_pre": sublayers - 1, "mhc_post": 1, "hc_head": 1}
    return {"mhc_pre": sublayers, "mhc_post": sublayers, "hc_head": 1}


def run_bench(
    model: ModelConfig,
    *,
    paths: list[str] | None = None,
    tokens: list[int] | None = None,
    device: str = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    ctx: ProbeContext | None = None,
    progress: Progress | None = None,
    selected: dict[str, str] | None = None,
    fused: bool | None = None,
    kernels: dict[str, str] | None = None,
    options: Mapping[str, object] | None = None,
) -> BenchDocument:
    """Time every (path, op, token count) on one device; the bench/1 document.

    `selected` maps each op to the path the rules pick (mhcdoctor.rules.decide) and `fused` says whether the model
    runs the fused post+pre op there; without them the step cost assumes no fused op and names no selected path.
    `options` go to the timer (warmup, repeats, budget_s, copy_bytes).
    """
    ctx = ctx or ProbeContext()
    printer = StderrProgress("mhcdoctor bench")
    say = progress or printer
    if model.hc_mult < 1 or model.hidden_size < 1:
        raise InputError("hidden size and hc_mult must be positive")
    counts = sorted(set(tokens or (*DECODE_TOKENS, *PREFILL_TOKENS)))
    if any(t < 1 for t in counts):
        raise InputError("--tokens must be positive integers")
    if device.strip().lower() == "all":
        raise InputError("bench times one device at a time: pass --device N, not all")
    devices = resolve_devices(device, ctx, min(timeout, 60.0))
    dev = devices[0]
    if tokens is None and dev == "cpu":
        # the torch path took 209 s for the four ops at 4096 tokens on a 2-core machine (hidden 7168): 16384 would
        # pass the 600 s timeout, so the CPU's defaults are the decode sizes
        counts = list(DECODE_TOKENS)
        say(f"on the CPU the defaults are the decode sizes {', '.join(map(str, counts))}; --tokens 4096 times prefill")
    check_fits(model, counts, devices, ctx)
    names = resolve_paths(paths, peers=True)
    if not paths:  # this project's own kernels are capability probes: timed only when named
        names = [n for n in names if not REGISTRY[n].probe]
    if kernels:
        names.append(USER_PATH)
        ctx = user_kernels_context(ctx, kernels)
    params = Params.from_model(model)
    task = Task(is_timed_row, _TIME, options or {})
    start = time.perf_counter()
    outcomes: list[Ran[TimedRow]] = []
    for name in names:
        skipped = unavailable(name, dev, ctx)
        if skipped is not None:
            outcomes.append(Ran(skipped))
            continue
        sizes = f"{plural(len(counts), 'token count')} at hidden {model.hidden_size}"
        say(f"timing {name} on {dev} ({sizes}; kernels JIT first)")
        outcomes += run_jobs([(name, dev)], list(OPS), counts, params, ctx, timeout, say, task)
    device_name = next((o.outcome["device_name"] for o in outcomes if o.outcome["device_name"]), None)
    # auto found no GPU in any path's child: nothing was timed anywhere, so no device and no timer is claimed
    no_gpu = no_gpu_reason([o.outcome for o in outcomes]) if device.strip().lower() in ("auto", "") else None
    peak = _peak(device_name, dev, params, ctx, timeout, say, options or {})
    printer.close()  # the status line a terminal showed ends before the results
    results = [_result(o.outcome, row, params, peak) for o in outcomes for row in o.rows]
    plan = step_plan(model, bool(fused))
    verdict, problems = _verdict(results, selected)
    if no_gpu and not results:
        problems = [f"nothing was timed: {no_gpu}; --device cpu times the paths on the CPU"]
    model_doc = model.to_dict()
    vllm = next((o.outcome["version"] for o in outcomes if o.outcome["path"].startswith("vllm:") and
                 o.outcome["status"] == "ran"), None)  # fmt: skip
    doc: BenchDocument = {
        "schema": SCHEMA,
        "mhcdoctor_version": __version__,
        "created": created_now(),
        "model": {**model_doc, "sublayers_per_layer": SUBLAYERS},
        "params": params.to_dict(),
        "tokens": counts,
        "device": None if no_gpu else dev,
        "device_name": device_name,
        "timer": None if no_gpu else "cuda-events" if dev.startswith("cuda") else "perf_counter",
        "peak": peak,
        "selected": selected,
        "fused_post_pre": fused,
        "vllm": vllm,
        "roles": {o.outcome["path"]: role(o.outcome["path"]) for o in outcomes},
        "paths": [o.outcome for o in outcomes],
        "results": results,
        "step": step_costs(results, plan, selected, [t for t in counts if t in DECODE_TOKENS]),
        "verdict": verdict,
        "problems": problems,
        "seconds": round(time.perf_counter() - start, 3),
    }
    if plan is None:
        doc["step"]["reason"] = "the model's layer count is unknown (give --model or a --config with num_hidden_layers)"
    return doc


def _peak(
    device_name: str | None,
    device: str,
    params: Params,
    ctx: ProbeContext,
    timeout: float,
    say: Progress,
    options: Mapping[str, object],
) -> Peak:
    """The peak bandwidth the fractions are against: the data sheet's for a known device, else a measured copy."""
    known = known_peak(device_name)
    if known is not None:
        return {"tb_per_s": known.tb_per_s, "how": "table", "device": known.device, "source": known.source}
    if device == "cpu":  # a copy there measured 0.001 TB/s against ops at 124-307% of it: caches, not memory
        return {"tb_per_s": None, "how": None, "device": device_name, "source": "not measured on the CPU"}
    if device_name is None:
        return {"tb_per_s": None, "how": None, "device": None, "source": "no path ran on the device"}
    say(f"{device_name} is not in the table of known devices: measuring a device-to-device copy")
    task = Task(is_timed_row, _COPY, options)
    ran = run_jobs([("torch", device)], ["mhc_post"], [1], params, ctx, timeout, say, task)[0]
    row = next((r for r in ran.rows if r["status"] == "pass"), None)
    if row is None or "copy_bytes" not in row or "tb_per_s" not in row:
        return {"tb_per_s": None, "how": None, "device": device_name, "source": "the copy did not run"}
    source = f"measured: median of {row.get('runs')} device-to-device copies of {row['copy_bytes'] // 2} bytes"
    return {"tb_per_s": row["tb_per_s"], "how": "measured", "device": device_name, "source": source}


def role(path: str) -> str:
    """What a path is to the user (the module docstring)."""
    if path == USER_PATH:
        return USER
    if path.startswith("vllm:"):
        return VLLM
    if path in REGISTRY and REGISTRY[path].probe:
        return PROBE
    return TORCH if path == _FALLBACK else STAND_IN


def _result(outcome: PathOutcome, row: TimedRow, p: Params, peak: Peak) -> BenchResult:
    passed = row["status"] == "pass"
    moved = total_bytes(row["op"], row["tokens"], p.hidden, p.hc_mult)
    median = row.get("median_s") if passed else None  # a wrong kernel has no time worth reporting
    graph = row.get("graph_median_s") if passed else None
    tb_per_s = moved / median / 1e12 if median else None
    return {
        "path": outcome["path"],
        "role": role(outcome["path"]),
        "op": row["op"],
        "tokens": row["tokens"],
        "status": row["status"],
        "called": row.get("called"),
        "torch_piece": bool(row.get("torch_piece", False)),
        "median_ms": None if median is None else median * 1e3,
        "graph_ms": None if graph is None else graph * 1e3,
        "graph_error": row.get("graph_error"),
        "min_ms": row["min_s"] * 1e3 if passed and "min_s" in row else None,
        "runs": row.get("runs"),
        "bytes": moved,
        "tb_per_s": tb_per_s,
        "fraction_of_peak": tb_per_s / peak["tb_per_s"] if tb_per_s and peak["tb_per_s"] else None,
        "max_abs_err": row.get("max_abs_err"),
        "max_rel_err": row.get("max_rel_err"),
        "reason": row.get("reason"),
    }


def step_costs(
    results: list[BenchResult],
    plan: dict[str, int] | None,
    selected: dict[str, str] | None,
    batches: list[int],
) -> Step:
    """Per decode batch size: each path's cost of one decode step (ops it lacks run on torch), the rules'
    selected paths, and the best path per op here; and each against the best. Decode runs under CUDA graphs in
    vLLM, so an op's graph time is used where it was captured. Probes and the user's kernels are left out; a row
    with a torch piece is never "best"."""
    step: Step = {"plan": plan, "reason": None, "batches": []}
    if plan is None:
        return step
    compared = [r for r in results if r["role"] not in (PROBE, USER)]
    times: dict[tuple[str, str, int], tuple[float, bool]] = {
        (r["path"], r["op"], r["tokens"]): (r["graph_ms"], True)
        if r["graph_ms"] is not None
        else (r["median_ms"], False)
        for r in compared
        if r["median_ms"] is not None
    }
    # a case its child never reached (it crashed first) ran, and failed: torch's figures never stand in for it
    ran = {(r["path"], r["op"], r["tokens"]) for r in compared if r["status"] != "skip" or _unfinished(r)}
    candidates = {(r["path"], r["op"], r["tokens"]) for r in compared if not r["torch_piece"]}
    paths = list(dict.fromkeys(r["path"] for r in compared))
    for batch in batches:
        per_path: dict[str, StepCost] = {}
        for path in paths:
            # an op the path has, run wrong or failed, leaves the path without a cost; one it lacks runs on torch
            ops = {op: path if (path, op, batch) in ran else _FALLBACK for op in plan}
            cost = _cost(ops, plan, times, batch)
            if cost is not None:
                per_path[path] = cost
        best_ops = {op: _fastest([p for p in paths if (p, op, batch) in candidates], op, batch, times) for op in plan}
        best = _cost(best_ops, plan, times, batch)
        chosen = None
        if selected:
            picked = {op: _bench_path(selected.get(op, ""), op, batch, ran) for op in plan}
            chosen = _cost(picked, plan, times, batch)  # vLLM's op that ran wrong leaves no cost: no stand-in
        for cost in [*per_path.values(), chosen]:
            if cost is not None and best is not None:
                cost["vs_best_ms"] = cost["ms"] - best["ms"]
                cost["times_best"] = cost["ms"] / best["ms"] if best["ms"] else None
        step["batches"].append(
            {
                "tokens": batch,
                "paths": per_path,
                "selected": chosen,
                "best": best,
                "fused_slower": _fused_slower(paths, plan, times, batch),
            }
        )
    return step


_Times = dict[tuple[str, str, int], tuple[float, bool]]  # (path, op, tokens) -> (ms, under a CUDA graph)
# A fused op is reported slower only beyond run-to-run noise: on the H200, vLLM 0.34's fused op and its own post
# then pre differ by 0.5% at 64 tokens (both run the unfused kernels there), by 3.4x at 1 token with tilelang 0.1.15
FUSED_SLOWER_MARGIN = 1.1


def _fused_slower(paths: list[str], plan: dict[str, int], times: _Times, batch: int) -> list[FusedSlower]:
    """Each path whose fused post+pre takes longer than its own post then pre at this batch size (beyond noise)."""
    found: list[FusedSlower] = []
    # where the model runs the fused op: S-1 of them; in a plan without it, the S-1 it would run (S pre)
    count = plan.get("mhc_fused_post_pre", plan.get("mhc_pre", 1) - 1)
    for path in paths:
        keys = [(path, op, batch) for op in ("mhc_fused_post_pre", "mhc_post", "mhc_pre")]
        if not count or any(k not in times for k in keys):
            continue
        fused, post, pre = (times[k][0] for k in keys)
        if fused > FUSED_SLOWER_MARGIN * (post + pre):
            found.append(
                {
                    "path": path,
                    "fused_ms": fused,
                    "separate_ms": post + pre,
                    "per_step_ms": count * (fused - post - pre),
                }
            )
    return found


def _fastest(paths: list[str], op: str, batch: int, times: _Times) -> str:
    timed = [p for p in paths if (p, op, batch) in times]
    return min(timed, key=lambda p: times[(p, op, batch)][0]) if timed else ""


# Where vLLM's own kernels were not timed, what stands in for the library the rules pick (never a probe).
_STAND_INS = {"tilelang": "tilekernels", "aiter": "aiter", "torch": "torch"}


def _bench_path(backend: str, op: str, batch: int, ran: set[tuple[str, Op, int]]) -> str:
    """The path that stands for the rules' choice: vLLM's own kernels when they ran, else a stand-in."""
    vllm = f"vllm:{backend}"
    return vllm if (vllm, op, batch) in ran else _STAND_INS.get(backend, "")


def _cost(ops: dict[str, str], plan: dict[str, int], times: _Times, batch: int) -> StepCost | None:
    if any((path, op, batch) not in times for op, path in ops.items()):
        return None
    ms = sum(plan[op] * times[(path, op, batch)][0] for op, path in ops.items())
    graph = all(times[(path, op, batch)][1] for op, path in ops.items())
    return {"ms": ms, "ms_per_token": ms / batch, "ops": ops, "timing": "cuda-graph" if graph else "eager"}


def _verdict(results: list[BenchResult], selected: dict[str, str] | None) -> tuple[Verdict, list[str]]:
    """As verify judges wrong numbers: fail when a path the rules select (vLLM's op or this project's), or the
    user's --kernel, computes wrong (every path counts as selected when the selection is not known) or when nothing
    was timed; degraded when another path computes wrong or a path did not finish; else ok. With the reasons."""
    if not any(r["status"] == "pass" for r in results):
        return "fail", ["nothing was timed: no path ran and computed right"]
    wrong = [f"{r['path']} computes {r['op']} wrong at {plural(r['tokens'], 'token')}" for r in results
             if r["status"] == "fail"]  # fmt: skip
    unfinished = [f"{r['path']} {r['op']} at {plural(r['tokens'], 'token')}: {r['reason'] or r['status']}"
                  for r in results if r["status"] in ("error", "timeout") or _unfinished(r)]  # fmt: skip
    problems = wrong + unfinished
    for r in results:
        chosen = selected.get(r["op"]) if selected is not None else None
        is_selected = selected is None or r["path"] in (USER_PATH, chosen, f"vllm:{chosen}")
        # a selected kernel that crashes (vLLM's SIGABRT on the H200) stops the model as surely as a wrong one
        if is_selected and (r["status"] in ("fail", "error", "timeout") or _unfinished(r)):
            return "fail", problems
    return ("degraded" if problems else "ok"), problems


def _unfinished(r: BenchResult) -> bool:
    """A case the path's child never reached because the child crashed, hung or exited first (verify.runner's
    `not reached: the PATH child ...` rows)."""
    return r["status"] == "skip" and str(r["reason"] or "").startswith("not reached: the ")
