"""The parent side of verify: one child interpreter per (path, device), all at once, each under a timeout.

A child writes its events (progress, case started, row finished) to a file as it goes; the parent polls those
files, relays progress to stderr, and turns a hang, a crash or a dead import into rows with evidence: the case
in flight gets `timeout` or `error`, the cases never reached get `skip` with the reason.

The events are JSON, untyped when read back: each is checked as it is read (`_read_events`, `_outcome`), a row
against its task's kind of row (`Task.is_row`), so what `run_jobs` returns is typed: a `PathOutcome` per job and
rows of the task's type. A row that is not of it is dropped like a line that is not JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, TypeGuard, TypeVar

from mhcdoctor import childproc
from mhcdoctor.childproc import cut_evidence, signal_name
from mhcdoctor.documents.verify import PathOutcome
from mhcdoctor.kernels import REGISTRY, ops_of
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.progress import Step
from mhcdoctor.text import plural, visible, visible_strings
from mhcdoctor.verify.cases import Params
from mhcdoctor.verify.rows import CaseRow, WorkerRequest, is_case_row

Progress = Callable[[str], None]
_POLL_SECONDS = 0.05
_EVENTS_READ_BYTES = 1 << 20  # per poll: the worker writes short lines, but bound what is read
R = TypeVar("R")
Event = dict[str, object]  # one JSON line of a child's events file


@dataclass(frozen=True)
class Task(Generic[R]):
    """What a path child runs per case and the kind of row it writes: verify's check (`CHECK`), or a function named
    "module:function" (bench's timer), called with `options`; `is_row` checks a row read back from the child."""

    is_row: Callable[[dict[str, object]], TypeGuard[R]]
    function: str | None = None
    options: Mapping[str, object] = field(default_factory=dict)


CHECK: Task[CaseRow] = Task(is_case_row)


@dataclass
class Ran(Generic[R]):
    """One (path, device): what happened to its child, and its rows (none when it did not start)."""

    outcome: PathOutcome
    rows: list[R] = field(default_factory=list)


@dataclass
class Job:
    path: str
    device: str
    ops: list[str]
    tokens: list[int]
    events_file: Path
    folder: Path  # the child's stdout and stderr files
    proc: childproc.Child | None = None
    started: float = 0.0
    offset: int = 0
    events: list[Event] = field(default_factory=list)
    ended: str | None = None  # None while running; "exit", "timeout"
    seconds: float = 0.0
    started_cases: int = 0  # "start" events read so far (progress)


def unavailable(path: str, device: str, ctx: ProbeContext) -> PathOutcome | None:
    """Whether `path` can be started on `device` here: None to start it, else its outcome saying why not.

    The one place, for verify and bench alike, that a path is judged unable to run before a child starts (the path's
    own `health`, on the children's search path). What only its import shows, the child reports (`load` raises
    PathUnavailable); a run with no device at all is `unavailable_outcome` for every path."""
    reason = REGISTRY[path].health(device, ctx.search_path)
    return None if reason is None else unavailable_outcome(path, device, reason)


def unavailable_outcome(path: str, device: str, reason: str) -> PathOutcome:
    """The outcome of a (path, device) that was not started, and why."""
    return {
        "path": path,
        "device": device,
        "status": "unavailable",
        "version": None,
        "device_name": None,
        "reason": reason,
        "seconds": 0.0,
        "evidence": [],
    }


def run_jobs(
    requests: list[tuple[str, str]],
    ops: list[str],
    tokens: list[int],
    params: Params,
    ctx: ProbeContext,
    timeout: float,
    progress: Progress,
    task: Task[R],
    seed: int = 0,
) -> list[Ran[R]]:
    """Run every (path, device) child concurrently; return one outcome per job with its rows.

    `task` is what the children run per case: verify's check (`CHECK`), or another function (bench times the ops
    this way)."""
    with childproc.temp_dir(prefix="mhcdoctor-verify-") as tmp:
        jobs: list[Job] = []
        try:
            for index, (path, device) in enumerate(requests):
                folder = tmp / f"job{index}"
                folder.mkdir()
                wanted = [op for op in ops if op in ops_of(path, ctx.env)]
                job = Job(path, device, wanted, tokens, folder / "events", folder)
                _start(job, params, ctx, str(tmp), seed, task)
                jobs.append(job)
            while any(job.ended is None for job in jobs):
                time.sleep(_POLL_SECONDS)
                for job in jobs:
                    if job.ended is None:
                        _poll(job, timeout, progress)
            return [_outcome(job, timeout, task) for job in jobs]
        finally:
            for job in jobs:
                if job.proc is not None:
                    job.proc.close()


def _start(job: Job, params: Params, ctx: ProbeContext, cwd: str, seed: int, task: Task[R]) -> None:
    request: WorkerRequest = {
        "path": job.path,
        "device": job.device,
        "ops": job.ops,
        "tokens": job.tokens,
        "params": params.to_dict(),
        "seed": seed,
        "spawned_at": time.time(),
    }
    if task.function:
        request["task"] = task.function
        request["task_options"] = dict(task.options)
    env = ctx.child_env()
    job.events_file.touch()
    job.started = time.perf_counter()
    argv = [ctx.python, "-m", "mhcdoctor.verify.worker", str(job.events_file), json.dumps(request)]
    try:
        job.proc = childproc.Child(argv, env, job.folder, cwd=cwd)
    except OSError as exc:
        job.events.append({"event": "spawn-failed", "reason": f"could not start {ctx.python}: {exc}"})
        job.ended = "exit"


def _poll(job: Job, timeout: float, progress: Progress) -> None:
    _read_events(job, progress)
    assert job.proc is not None
    if job.proc.poll() is not None:
        job.proc.close()  # helpers it left running die now, not when every job is done
        _read_events(job, progress)
        job.ended = "exit"
        job.seconds = time.perf_counter() - job.started
    elif time.perf_counter() - job.started > timeout:
        job.proc.kill()
        _read_events(job, progress)
        job.ended = "timeout"
        job.seconds = time.perf_counter() - job.started


def _read_events(job: Job, progress: Progress) -> None:
    with open(job.events_file, "rb") as f:
        f.seek(job.offset)
        chunk = f.read(_EVENTS_READ_BYTES)
    if b"\n" not in chunk:
        return
    complete = chunk[: chunk.rindex(b"\n") + 1]  # a line still being written waits for the next poll
    job.offset += len(complete)
    for line in complete.decode("utf-8", errors="replace").splitlines():
        try:
            event: object = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        event = visible_strings(event)  # the child's words (a kernel's error, a JIT's coloured output): no escapes
        job.events.append(event)
        if event.get("event") == "progress":
            progress(f"{job.path} on {job.device}: {event.get('text')}")
        elif event.get("event") == "start":  # each case as it begins: long CPU runs are never silent
            job.started_cases += 1
            total = len(job.ops) * len(job.tokens)
            tokens = event.get("tokens")
            size = plural(tokens, "token") if isinstance(tokens, int) else "?"
            text = f"{job.path} on {job.device}: {event.get('op')} at {size} ({job.started_cases} of {total})"
            progress(Step(text, job.started_cases - 1, total))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _outcome(job: Job, timeout: float, task: Task[R]) -> Ran[R]:
    """What happened to one child: its status, version, rows, and evidence for anything that went wrong."""
    seconds = round(job.seconds, 3)
    code = job.proc.returncode if job.proc is not None else None
    stdout, stderr = job.proc.output() if job.proc is not None else ("", "")
    evidence = []
    if code is not None and code < 0 and job.ended != "timeout":
        evidence.append(f"child killed by signal {signal_name(-code)}")
    elif code not in (0, None) and job.ended != "timeout":
        evidence.append(f"child exited with code {code}")
    if stdout.strip():
        evidence.append("stdout: " + cut_evidence(stdout))
    if stderr.strip():
        evidence.append("stderr: " + cut_evidence(stderr))
    outcome: PathOutcome = {
        "path": job.path,
        "device": job.device,
        "status": "ran",
        "version": None,
        "device_name": None,
        "reason": None,
        "seconds": seconds,
        "evidence": evidence,
    }
    rows: list[R] = []
    done: set[tuple[object, object]] = set()
    in_flight: tuple[str, int] | None = None
    finished = False
    for event in job.events:
        kind = event.get("event")
        if kind == "loaded":
            notes = event.get("notes")
            load_seconds = event.get("load_seconds")
            outcome["version"] = _text(event.get("version"))
            outcome["device_name"] = _text(event.get("device_name"))
            outcome["notes"] = [str(note) for note in notes] if isinstance(notes, list) else []
            outcome["load_seconds"] = load_seconds if isinstance(load_seconds, (int, float)) else None
        elif kind in ("unavailable", "spawn-failed"):
            outcome["status"] = "unavailable" if kind == "unavailable" else "error"
            outcome["reason"] = _text(event.get("reason"))
        elif kind == "start":
            op, count = event.get("op"), event.get("tokens")
            if isinstance(op, str) and isinstance(count, int):
                in_flight = (op, count)
        elif kind == "row":
            row = {k: v for k, v in event.items() if k != "event"}
            if task.is_row(row):
                rows.append(row)
                done.add((event.get("op"), event.get("tokens")))
            in_flight = None
        elif kind == "done":
            finished = True
    if outcome["status"] == "unavailable" or finished:
        if not finished and outcome["status"] != "unavailable":
            outcome["status"] = "error"
        return Ran(outcome, rows)
    # The child did not finish: a timeout, a crash, or an error outside any case (an import, say).
    status: Literal["timeout", "error"]  # the outcome's, and the row's of the case in flight
    if job.ended == "timeout":
        why = f"did not finish within {timeout:g} s"
        status = "timeout"
    elif code is not None and code < 0:
        why = f"crashed ({signal_name(-code)})"
        status = "error"
    else:
        last = _last_error(stderr)  # e.g. "ModuleNotFoundError: No module named 'numpy'": what the user must fix
        why = f"exited with code {code} before finishing" + (f": {last}" if last else "")
        status = "error"
    if outcome["reason"] is None:
        outcome["reason"] = f"the child {why}"
    outcome["status"] = status
    for op in job.ops:
        for count in job.tokens:
            if (op, count) in done:
                continue
            stub: dict[str, object]
            if (op, count) == in_flight:
                stub = {
                    "op": op,
                    "tokens": count,
                    "status": status,
                    "reason": f"the child {why} while running this case",
                    "evidence": evidence,
                    "seconds": seconds,
                }
            else:
                stub = {
                    "op": op,
                    "tokens": count,
                    "status": "skip",
                    "reason": f"not reached: the {job.path} child {why}"
                    + (f" during {in_flight[0]} at {plural(in_flight[1], 'token')}" if in_flight else ""),
                    "evidence": evidence if in_flight is None else [],
                    "seconds": 0.0,
                }
            if task.is_row(stub):  # every task's rows have a stub's members (verify.rows.CaseRowBase)
                rows.append(stub)
    return Ran(outcome, rows)


def _last_error(stderr: str) -> str | None:
    """The exception a Python child died of: the last line of its traceback (`ModuleNotFoundError: No module ...`)."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    if not lines or not any(line.startswith("Traceback (most recent call last)") for line in lines):
        return None
    return visible(lines[-1])[:300]


def count_gpus(ctx: ProbeContext, timeout: float) -> tuple[int, str | None]:
    """How many GPUs torch sees, asked in a child (the parent never initialises a GPU)."""
    from mhcdoctor.probes.python_child import run_child

    outcome = run_child(
        "import torch\nreport(torch.cuda.device_count() if torch.cuda.is_available() else 0)",
        ctx,
        timeout=timeout,
        label="GPU count",
    )
    if outcome.status != "ok":
        return 0, outcome.error
    count = outcome.result
    if not isinstance(count, int):
        return 0, f"the GPU count child reported {str(count)[:80]!r}, not a number"
    return count, None
