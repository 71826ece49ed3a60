"""`mhcdoctor verify`: run the mHC ops on every available path, on the GPU, and judge them against the oracle.

`run_verify(...)` returns the verify/1 document that `verify --json` prints, `check --verify` folds into its
report and `report --verify` carries. Nothing here imports torch or a GPU library: each (path, device) runs in
its own child interpreter (mhcdoctor.verify.worker) under a timeout.

The verify/1 document is a TypedDict (`VerifyDocument`): check/1 carries it, and a check read back from a user's
file holds it as JSON, so its typed form is its JSON; `run_verify` is the one place it is made. A path's entry
(`paths`) is the runner's outcome (`PathOutcome`); a row's `outputs` are the child's verdicts (`OutputVerdict`),
checked where the runner read them back.
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from mhcdoctor import __version__
from mhcdoctor.clock import created_now
from mhcdoctor.documents.verify import ROW_STATUSES, SCHEMA, PathOutcome, VerifyDocument, VerifyRow
from mhcdoctor.documents.vocabulary import OPS, Verdict, one_of
from mhcdoctor.errors import InputError
from mhcdoctor.kernels import REGISTRY, USER_FOLDER_ENV, USER_KERNELS_ENV, USER_PATH, ops_of
from mhcdoctor.models import ModelConfig
from mhcdoctor.probes import facts_from_probes, run_probes
from mhcdoctor.probes.base import read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.progress import StderrProgress
from mhcdoctor.text import plural
from mhcdoctor.verify.cases import DEFAULT_TOKENS, STRESS_TOKENS, Params, least_bytes
from mhcdoctor.verify.known_bugs import matching, platform_of
from mhcdoctor.verify.rows import CaseRow
from mhcdoctor.verify.runner import CHECK, Progress, Ran, count_gpus, run_jobs, unavailable, unavailable_outcome

# Seconds for each (path, device) child: a cold tilelang JIT plus the stress shapes fit well inside.
DEFAULT_TIMEOUT = 300.0
STATUSES = ROW_STATUSES
BAD = ("fail", "error", "timeout")


NO_GPU = "none"  # the device of the rows when torch sees no GPU and --device did not ask for the CPU
FIRST_GPU = "cuda:0"  # --device auto
# How a path child says it found no GPU (verify/worker.py `_device_problem`).
_NO_GPU_REASONS = ("no GPU visible to torch", "torch does not import")


# What a user without a GPU is told to do; `check --verify` and `report` take no --device, so they name the command.
CPU_HINT = "--device cpu runs the paths on the CPU"
CHECK_CPU_HINT = "`mhcdoctor verify --device cpu` runs the paths on the CPU"


def resolve_devices(device: str, ctx: ProbeContext, timeout: float, cpu_hint: str = CPU_HINT) -> list[str]:
    """--device: `auto` (the first GPU), `all`, `cpu`, `N` or `cuda:N` → the torch devices to run on. GPUs asked for
    by name (`all`, an index) that torch does not see, or cannot count, are a usage error (InputError), whether or
    not torch is installed; `auto` finds out in the path children."""
    value = device.strip().lower()
    if value == "cpu":
        return ["cpu"]
    index: int | None = None
    if value not in ("auto", "", "all"):
        text = value.split(":", 1)[1] if value.startswith(("cuda:", "hip:")) else value
        if not text.isdigit():
            raise InputError(f"--device must be auto, all, cpu, N or cuda:N, not {device!r}")
        index = int(text)
    if index is None and value != "all":
        # auto: the first GPU, found by the path children themselves. Counting first would start one more child that
        # imports torch (seconds) before any path runs; `_no_gpu_seen` turns "none seen" into no device afterwards.
        return [FIRST_GPU]
    count, error = count_gpus(ctx, timeout)
    if error is not None:  # a GPU asked for by name (or all of them) that cannot be counted: the same as none
        raise InputError(f"--device {device}: torch could not count the GPUs ({error}); {cpu_hint}")
    if index is not None:
        if index >= count:
            if count == 0:
                seen = f"torch sees no GPU here; {cpu_hint}"
            elif count == 1:
                seen = "torch sees 1 GPU (cuda:0)"
            else:
                seen = f"torch sees {count} GPUs (cuda:0 to cuda:{count - 1})"
            raise InputError(f"--device {device}: there is no such GPU; {seen}")
        return [f"cuda:{index}"]
    if not count:  # as for a GPU index torch does not see: the user named GPUs that are not here
        raise InputError(f"--device {device}: torch sees no GPU here; {cpu_hint}")
    return [f"cuda:{i}" for i in range(count)]


def check_fits(model: ModelConfig, counts: list[int], devices: list[str], ctx: ProbeContext) -> None:
    """InputError when the largest case cannot fit in the memory of the device it runs on (the CPU: MemAvailable;
    a GPU: its memory where a file probe read it), so that a size typo is one line, not a child allocating until the
    kernel kills it."""
    need = least_bytes(max(counts), model.hidden_size, model.hc_mult)
    for device in devices:
        have, where = _memory(device, ctx)
        if have is not None and need > have:
            raise InputError(
                f"{plural(max(counts), 'token')} at hidden {model.hidden_size}, hc_mult {model.hc_mult} need at least "
                f"{_size(need)} on {device}, which has {_size(have)} ({where}); give fewer --tokens or a smaller model"
            )


def _memory(device: str, ctx: ProbeContext) -> tuple[int | None, str]:
    if device == "cpu":
        text = read_text(ctx.path("/proc/meminfo")) or ""
        found = re.search(r"^MemAvailable:\s+(\d+) kB", text, re.MULTILINE)
        return (int(found.group(1)) * 1024 if found else None), "MemAvailable in /proc/meminfo"
    index = int(device.split(":", 1)[1]) if ":" in device and device.split(":", 1)[1].isdigit() else 0
    facts = facts_from_probes(run_probes(dataclasses.replace(ctx, fast=True)))
    memory = next((d.memory_bytes for d in facts.devices or [] if d.index == index), None)
    return memory, f"GPU {index}'s memory"


def _size(value: int) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def resolve_paths(paths: list[str] | None, peers: bool = False) -> list[str]:
    """--path names, or by default every path (those run on request only with `peers`)."""
    if not paths:
        return REGISTRY.default(peers)
    unknown = [p for p in paths if p not in REGISTRY.names()]
    if unknown:
        raise InputError(f"unknown path {unknown[0]!r}; paths: {', '.join(REGISTRY.names())}")
    return [p for p in REGISTRY.names() if p in paths]


def user_kernels_context(ctx: ProbeContext, kernels: dict[str, str]) -> ProbeContext:
    """The children's context for the `user` path: the specs and the working directory in its environment. The
    folder is not on the child's search path when it starts (a sitecustomize.py there would run first, in every
    child); the child appends it to sys.path just before it imports the user's module (kernels/user_path.py), so
    `--kernel mhc_post=mykernels:post` finds mykernels.py beside the user and no file there shadows a library."""
    folder = os.getcwd()
    for op, target in kernels.items():
        top = target.partition(":")[0].split(".")[0]
        # found, not imported: the user's code runs in the path's child, never in the doctor
        if importlib.machinery.PathFinder.find_spec(top, [*ctx.search_path, folder]) is None:
            raise InputError(f"--kernel {op}={target}: no module {top} in the working folder or on this Python's path")
    env = {**ctx.env, USER_KERNELS_ENV: json.dumps(kernels), USER_FOLDER_ENV: folder}
    return dataclasses.replace(ctx, env=env)


def run_verify(
    model: ModelConfig,
    *,
    paths: list[str] | None = None,
    tokens: list[int] | None = None,
    stress: bool = False,
    device: str = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    ctx: ProbeContext | None = None,
    progress: Progress | None = None,
    selected: dict[str, str] | Callable[[], dict[str, str] | None] | None = None,
    seed: int = 0,
    kernels: dict[str, str] | None = None,
    cpu_hint: str = CPU_HINT,
) -> VerifyDocument:
    """Verify every (path, op, token count, device); the verify/1 document.

    `kernels` ({op: "module:func"}, from `--kernel`) adds the path `user`: the user's own implementations, which
    count as selected (a failure is a fail). With kernels and no `paths`, only the user's path runs. `cpu_hint`: what a
    user without a GPU is told to run instead.

    `selected` maps an op to the path the rules pick for it (from `mhcdoctor.rules.decide`): a selected path that
    fails makes the verdict `fail`, another failing path `degraded`. Without it every failing path is a fail.
    It may be a function returning that map: it then runs on a thread while the paths run.
    """
    ctx = ctx or ProbeContext()
    printer = StderrProgress("mhcdoctor verify")
    say = progress or printer
    if model.hc_mult < 1 or model.hidden_size < 1:
        raise InputError("hidden size and hc_mult must be positive")
    counts = sorted(set(tokens or DEFAULT_TOKENS) | (set(STRESS_TOKENS) if stress else set()))
    if any(t < 1 for t in counts):
        raise InputError("--tokens must be positive integers")
    names = resolve_paths(paths) if paths or not kernels else []
    if kernels:
        names.append(USER_PATH)
        ctx = user_kernels_context(ctx, kernels)
    devices = resolve_devices(device, ctx, min(timeout, 60.0), cpu_hint)
    check_fits(model, counts, devices, ctx)
    params = Params.from_model(model)
    start = time.perf_counter()
    outcomes: list[Ran[CaseRow]] = []
    requests = []
    for name in names:
        for dev in devices:
            skipped = unavailable(name, dev, ctx)
            if skipped is None:
                requests.append((name, dev))
            else:
                outcomes.append(Ran(skipped))
    if not requests and device.strip().lower() in ("auto", ""):
        devices = []  # auto stands for the GPU a path child finds: no child started, so no device was used
    pool = ThreadPoolExecutor(max_workers=1)
    chosen = pool.submit(selected if callable(selected) else lambda: selected)
    if requests:
        say(
            f"running {', '.join(sorted({n for n, _ in requests}))} on {', '.join(devices)}"
            f"{' if torch sees a GPU' if devices == [FIRST_GPU] and device.strip().lower() in ('auto', '') else ''} "
            f"({plural(len(counts), 'token count')} at hidden {model.hidden_size})"
        )
        ran = run_jobs(requests, list(OPS), counts, params, ctx, timeout, say, CHECK, seed)
        printer.close()  # the status line a terminal showed ends before the results
        outcomes += ran
        if device.strip().lower() in ("auto", "") and _no_gpu_seen(ran):
            devices = []
            why = f"{ran[0].outcome['reason']}; {cpu_hint}"
            outcomes = [Ran(unavailable_outcome(name, NO_GPU, why)) for name in names]
    picked = chosen.result()
    pool.shutdown()
    order = {name: i for i, name in enumerate(names)}
    outcomes.sort(key=lambda o: (order[o.outcome["path"]], o.outcome["device"]))
    results = [_row(o, row, params, picked) for o in outcomes for row in _rows_of(o, counts, ctx.env)]
    verdict, problems = _verdict(results, picked)
    return {
        "schema": SCHEMA,
        "mhcdoctor_version": __version__,
        "created": created_now(),
        "model": {"name": model.name, "hidden_size": model.hidden_size, "hc_mult": model.hc_mult},
        "params": params.to_dict(),
        "tokens": counts,
        "stress": stress,
        "devices": devices,
        "selected": picked,
        "paths": [o.outcome for o in outcomes],
        "results": results,
        "summary": {s: sum(1 for r in results if r["status"] == s) for s in STATUSES},
        "problems": problems,
        "verdict": verdict,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _no_gpu_seen(ran: list[Ran[CaseRow]]) -> bool:
    """Whether every path child that started found no GPU (so nothing can run on a GPU here)."""
    return bool(ran) and all(
        o.outcome["status"] == "unavailable" and str(o.outcome["reason"]).startswith(_NO_GPU_REASONS) for o in ran
    )


def no_gpu_reason(outcomes: list[PathOutcome]) -> str | None:
    """Why nothing ran on a GPU, when no path ran and at least one path's child found no GPU (the others are not
    installed); else None."""
    if any(o["status"] != "unavailable" for o in outcomes):
        return None
    return next((str(o["reason"]) for o in outcomes if str(o["reason"]).startswith(_NO_GPU_REASONS)), None)


def _rows_of(ran: Ran[CaseRow], counts: list[int], env: Mapping[str, str]) -> list[CaseRow]:
    """A path's rows: those it ran, or for a path not started one skip row per op it runs."""
    outcome = ran.outcome
    if outcome["status"] != "unavailable":
        return ran.rows
    return [
        # a registered path's ops are among OPS (kernels.AdapterPath checks them when it is made)
        {"op": one_of(op, OPS), "tokens": t, "status": "skip", "reason": outcome["reason"], "seconds": 0.0}
        for op in ops_of(outcome["path"], env)
        for t in counts
    ]


def _row(ran: Ran[CaseRow], row: CaseRow, p: Params, selected: dict[str, str] | None) -> VerifyRow:
    outcome = ran.outcome
    backend = outcome["path"].split(":")[-1]
    chosen = True if outcome["path"] == USER_PATH else None if selected is None else selected.get(row["op"]) == backend
    result: VerifyRow = {
        "path": outcome["path"],
        "op": row["op"],
        "tokens": row["tokens"],
        "hidden": p.hidden,
        "hc_mult": p.hc_mult,
        "device": outcome["device"],
        "status": row["status"],
        "max_abs_err": row.get("max_abs_err"),
        "max_rel_err": row.get("max_rel_err"),
        "tolerance": row.get("tolerance"),
        "worst_output": row.get("worst_output"),
        "seconds": row.get("seconds", 0.0),
        "kernel_seconds": row.get("kernel_seconds"),
        "rows_checked": row.get("rows_checked"),
        "reason": row.get("reason"),
        "outputs": row.get("outputs", []),
        "evidence": row.get("evidence", []),
        "selected": chosen,
    }
    if row["status"] in BAD:
        where = platform_of(outcome.get("device_name"))
        named = matching(
            outcome["path"], outcome["version"], row["op"], row["tokens"], p.hidden, p.hc_mult, row["status"], where
        )
        if named:
            result["known_bugs"] = named
    return result


def _verdict(results: list[VerifyRow], selected: dict[str, str] | None) -> tuple[Verdict, list[str]]:
    problems = []
    verdict: Verdict = "ok"
    for r in results:
        if r["status"] not in BAD:
            continue
        line = f"{r['path']} {r['op']} at {plural(r['tokens'], 'token')} on {r['device']}: {r['status']}: {r['reason']}"
        line += "".join(f" (known bug {b['id']}: {b['fix']})" for b in r.get("known_bugs", []))
        if selected is None or r["selected"]:
            verdict = "fail"
            problems.append(line)
        else:
            problems.append(line + " (a path the rules do not select)")
            verdict = "degraded" if verdict == "ok" else verdict
    if not any(r["status"] == "pass" for r in results):
        verdict = "fail"
        problems.append("no path ran and passed: nothing was verified on this machine")
    return verdict, problems
