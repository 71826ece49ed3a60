"""What runs on each node of a Ray fleet: `python -m mhcdoctor ARGS` in the node's own Python, under a timeout.

Standard library only, and shipped to the workers by value (ray_runner registers this module with cloudpickle),
so a node without mhcdoctor still runs this and reports "not installed" instead of failing to unpickle a task.

Why a child process and not an in-process call: a hung probe (a sysfs read stuck in the driver, a GPU
initialisation that never returns) can only be killed if it is a process of its own; the child also runs the
node's own `python -m mhcdoctor`, so what is checked is what that node would run, not the driver's code.

The child is started by mhcdoctor's one child runner (mhcdoctor/childproc.py): in its own session, killed with
everything it started at the timeout, its output in capped files. It dies with the Ray worker (a parent-death
signal: SIGTERM, which the check, a doctor, answers by killing what it started), so a worker killed mid-run, or a
task cancelled, leaves nothing of the check running; the runner also makes the worker a child subreaper, so what
the check orphans is found and killed too. The runner travels with the task:
ray_runner sends childproc's source (`runner`), and the node loads it as a module of its own, so every node runs
the driver's runner whatever mhcdoctor it has, or none. Called without it (directly, in tests), this Python's own
mhcdoctor.childproc runs the check; a Python without mhcdoctor has nothing to run and is reported as such.
"""

from __future__ import annotations

from types import ModuleType
from typing import TypedDict

# The whole of the check's stdout comes back up to this (a check/1 report is far smaller); a larger one comes back
# as its last MAX_STDOUT bytes, marked `…`, and will not parse.
MAX_STDOUT = 16 << 20
MAX_BUNDLE = 16 << 20  # a node bundle is bounded to 4 MiB before compression
STDERR_TAIL = 4000


class NodeOutcome(TypedDict):
    """What a node's task returns over Ray, as JSON bytes: the `python -m mhcdoctor` run's exit, output and bundle.

    Plain bytes, never a Python object: Ray unpickles whatever a task returns, so a result that needed unpickling
    would let a node run code in the driver. The driver fetches the bytes without unpickling them and refuses
    anything else (ray_runner.fetch_outcome)."""

    python: str
    gpus: list[str]  # the GPU ids Ray gave the task (a verify task has one)
    bundle: str | None  # the node's bundle, base64
    timed_out: bool
    code: int | None  # None when nothing was started
    stdout: str
    stderr: str  # its last STDERR_TAIL characters
    seconds: float


def run_on_node(
    args: list[str], timeout: float, want_bundle: bool, gpu: bool = False, runner: str | None = None
) -> bytes:
    """Run `python -m mhcdoctor ARGS` (plus `--bundle` when `want_bundle`) here; its NodeOutcome as JSON bytes.

    `runner`: the source of mhcdoctor.childproc, as ray_runner sends it; None uses this Python's own."""
    import base64
    import json
    import os
    import signal
    import sys
    import time

    start = time.monotonic()
    gpus: list[str] = []
    if gpu:
        import ray

        gpus = [str(g) for g in ray.get_gpu_ids()]
    outcome: NodeOutcome = {
        "python": sys.executable,
        "gpus": gpus,
        "bundle": None,
        "timed_out": False,
        "code": None,
        "stdout": "",
        "stderr": "",
        "seconds": 0.0,
    }
    childproc = _runner(runner)
    if childproc is None:
        outcome["stderr"] = _no_runner()
    else:
        with childproc.temp_dir(prefix="mhcdoctor-fleet-") as folder:
            bundle_path = os.path.join(folder, "node.tar.gz")
            argv = [*args, "--bundle", bundle_path] if want_bundle else list(args)
            done = childproc.run(
                [sys.executable, "-m", "mhcdoctor", *argv],
                dict(os.environ),
                timeout,
                folder=folder,
                cwd=os.getcwd(),
                stdout_bytes=MAX_STDOUT,
                # the check is a doctor: told by SIGTERM that this worker died (Ray kills the workers of a stopped
                # fleet's tasks), it kills what it started; SIGKILL left its import's setsid helpers running
                death_signal=signal.SIGTERM,
            )
            if want_bundle and os.path.isfile(bundle_path) and os.path.getsize(bundle_path) <= MAX_BUNDLE:
                with open(bundle_path, "rb") as f:
                    outcome["bundle"] = base64.b64encode(f.read()).decode("ascii")
        stderr = str(done.stderr if done.error is None else done.error)
        outcome["code"] = done.returncode
        outcome["timed_out"] = done.status == "timeout"
        outcome["stdout"] = done.stdout
        outcome["stderr"] = stderr[-STDERR_TAIL:]
    outcome["seconds"] = round(time.monotonic() - start, 3)
    return json.dumps(outcome).encode("utf-8")


def _runner(source: str | None) -> ModuleType | None:
    """mhcdoctor.childproc: loaded from the source the driver sent, else this Python's own; None if neither."""
    import hashlib
    import sys

    if source is None:
        try:
            from mhcdoctor import childproc
        except ImportError:
            return None
        return childproc
    # One module per source and worker process (Ray reuses workers): its table of live children is shared by the
    # tasks of that worker, as the doctor's is by its threads.
    name = "_mhcdoctor_fleet_childproc_" + hashlib.sha256(source.encode()).hexdigest()[:16]
    module = sys.modules.get(name)
    if module is None:
        module = ModuleType(name)
        module.__file__ = "<mhcdoctor/childproc.py sent by the fleet's driver>"
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        try:
            exec(compile(source, module.__file__, "exec"), module.__dict__)
        except BaseException:
            del sys.modules[name]
            raise
    return module


def _no_runner() -> str:
    """Why nothing was started when no runner was sent and this Python cannot import its own."""
    import importlib.util
    import sys

    if importlib.util.find_spec("mhcdoctor") is None:
        return f"{sys.executable}: No module named mhcdoctor (so no check was started)"
    return f"{sys.executable}: mhcdoctor is installed, but mhcdoctor.childproc does not import (no check was started)"
