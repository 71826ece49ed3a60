"""The parent side of verify: one child interpreter per (path, device), all at once, each under a timeout.

A child writes its events (progress, case started, row finished) to a file as it goes; the parent polls those
files, relays progress to stderr, and turns a hang, a crash or a dead import into rows with evidence: the case
in flight gets `timeout` or `error`, the cases never reached get `skip` with the reason.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mhcdoctor import childproc
from mhcdoctor.childproc import cut_evidence, signal_name
from mhcdoctor.kernels import REGISTRY
from mhcdoctor.probes.base import ProbeContext
from mhcdoctor.verify.cases import Params

Progress = Callable[[str], None]
_POLL_SECONDS = 0.05
_EVENTS_READ_BYTES = 1 << 20  # per poll: the worker writes short lines, but bound what is read


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
    events: list[dict[str, Any]] = field(default_factory=list)
    ended: str | None = None  # None while running; "exit", "timeout"
    seconds: float = 0.0


def unavailable(path: str, device: str, ctx: ProbeContext) -> dict[str, Any] | None:
    """Whether `path` can be started on `device` here: None to start it, else its outcome saying why not.

    The one place, for verify and bench alike, that a path is judged unable to run before a child starts (the path's
    own `health`, on the children's search path). What only its import shows, the child reports (`load` raises
    PathUnavailable); a run with no device at all is `unavailable_outcome` for every path."""
    reason = REGISTRY[path].health(device, ctx.search_path)
    return None if reason is None else unavailable_outcome(path, device, reason)


def unavailable_outcome(path: str, device: str, reason: str) -> dict[str, Any]:
    """The outcome of a (path, device) that was not started: no rows, and why."""
    return {
        "path": path,
        "device": device,
        "status": "unavailable",
        "version": None,
        "device_name": None,
        "reason": reason,
        "seconds": 0.0,
        "evidence": [],
        "rows": [],
    }


def run_jobs(
    requests: list[tuple[str, str]],
    ops: list[str],
    tokens: list[int],
    params: Params,
    ctx: ProbeContext,
    timeout: float,
    progress: Progress,
    seed: int = 0,
    task: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run every (path, device) child concurrently; return one outcome dict per job with its rows.

    `task` ({"task": "module:function", "task_options": {...}}) makes the children run that function per case
    instead of verify's check (bench times the ops this way)."""
    with childproc.temp_dir(prefix="mhcdoctor-verify-") as tmp:
        jobs: list[Job] = []
        try:
            for index, (path, device) in enumerate(requests):
                folder = tmp / f"job{index}"
                folder.mkdir()
                wanted = [op for op in ops if op in REGISTRY[path].ops]
                job = Job(path, device, wanted, tokens, folder / "events", folder)
                _start(job, params, ctx, str(tmp), seed, task)
                jobs.append(job)
            while any(job.ended is None for job in jobs):
                time.sleep(_POLL_SECONDS)
                for job in jobs:
                    if job.ended is None:
                        _poll(job, timeout, progress)
            return [_outcome(job, timeout) for job in jobs]
        finally:
            for job in jobs:
                if job.proc is not None:
                    job.proc.close()


def _start(job: Job, params: Params, ctx: ProbeContext, cwd: str, seed: int, task: dict[str, Any] | None) -> None:
    request: dict[str, Any] = {
        **(task or {}),
        "path": job.path,
        "device": job.device,
        "ops": job.ops,
        "tokens": job.tokens,
        "params": params.to_dict(),
        "seed": seed,
        "spawned_at": time.time(),  # the child reports how long its imports and compiles took
    }
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
            event = json.loads(line)
        except ValueError:
            continue
        job.events.append(event)
        if event.get("event") == "progress":
            progress(f"{job.path} on {job.device}: {event['text']}")


def _outcome(job: Job, timeout: float) -> dict[str, Any]:
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
    outcome: dict[str, Any] = {
        "path": job.path,
        "device": job.device,
        "status": "ran",
        "version": None,
        "device_name": None,
        "reason": None,
        "seconds": seconds,
        "evidence": evidence,
        "rows": [],
    }
    in_flight: tuple[str, int] | None = None
    finished = False
    for event in job.events:
        kind = event.get("event")
        if kind == "loaded":
            outcome["version"] = event.get("version")
            outcome["device_name"] = event.get("device_name")
            outcome["notes"] = event.get("notes") or []
            outcome["load_seconds"] = event.get("load_seconds")
        elif kind in ("unavailable", "spawn-failed"):
            outcome.update(status="unavailable" if kind == "unavailable" else "error", reason=event["reason"])
        elif kind == "start":
            in_flight = (event["op"], event["tokens"])
        elif kind == "row":
            row = {k: v for k, v in event.items() if k != "event"}
            outcome["rows"].append(row)
            in_flight = None
        elif kind == "done":
            finished = True
    if outcome["status"] == "unavailable" or finished:
        if not finished and outcome["status"] != "unavailable":
            outcome["status"] = "error"
        return outcome
    # The child did not finish: a timeout, a crash, or an error outside any case (an import, say).
    if job.ended == "timeout":
        why = f"did not finish within {timeout:g} s"
        status = "timeout"
    elif code is not None and code < 0:
        why = f"the child crashed ({signal_name(-code)})"
        status = "error"
    else:
        why = f"the child exited with code {code} before finishing"
        status = "error"
    if outcome["reason"] is None:
        outcome["reason"] = why
    outcome["status"] = status
    done = {(r["op"], r["tokens"]) for r in outcome["rows"]}
    for op in job.ops:
        for count in job.tokens:
            if (op, count) in done:
                continue
            if (op, count) == in_flight:
                outcome["rows"].append(
                    {
                        "op": op,
                        "tokens": count,
                        "status": status,
                        "reason": f"{why} while running this case",
                        "evidence": evidence,
                        "seconds": seconds,
                    }
                )
            else:
                outcome["rows"].append(
                    {
                        "op": op,
                        "tokens": count,
                        "status": "skip",
                        "reason": f"not reached: the {job.path} child {why}"
                        + (f" during {in_flight[0]} at {in_flight[1]} tokens" if in_flight else ""),
                        "evidence": evidence if in_flight is None else [],
                        "seconds": 0.0,
                    }
                )
    return outcome


def count_gpus(ctx: ProbeContext, timeout: float) -> tuple[int, str | None]:
    """How many GPUs torch sees, asked in a child (the parent never initialises a GPU)."""
    from mhcdoctor.probes.base import run_child

    outcome = run_child(
        "import torch\nreport(torch.cuda.device_count() if torch.cuda.is_available() else 0)",
        ctx,
        timeout=timeout,
        label="GPU count",
    )
    if outcome.status != "ok":
        return 0, outcome.error
    return int(outcome.result), None
