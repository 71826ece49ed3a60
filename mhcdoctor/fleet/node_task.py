"""What runs on each node of a Ray fleet: `python -m mhcdoctor ARGS` in the node's own Python, under a timeout.

Standard library only, and shipped to the workers by value (ray_runner registers this module with cloudpickle),
so a node without mhcdoctor still runs this and reports "not installed" instead of failing to unpickle a task.

Why a child process and not an in-process call: a hung probe (a sysfs read stuck in the driver, a GPU
initialisation that never returns) can only be killed if it is a process of its own; the child also runs the
node's own `python -m mhcdoctor`, so what is checked is what that node would run, not the driver's code.
The child is a small watchdog that leads its own process group: it dies with the Ray worker (PR_SET_PDEATHSIG)
and then kills its whole group, so a worker killed mid-run, or a task cancelled, leaves no check running.
"""

from __future__ import annotations

from typing import Any

MAX_STDOUT = 16 << 20  # a check/1 report is far smaller; anything larger is cut and will not parse
MAX_BUNDLE = 16 << 20  # a node bundle is bounded to 4 MiB before compression
STDERR_TAIL = 4000

# The watchdog: on the Ray worker's death it gets SIGTERM and kills its own process group (itself, the check
# and every child the check started), then runs `python -m mhcdoctor ARGS` and exits with its status.
WATCHDOG = r"""
import ctypes, os, signal, subprocess, sys
def _kill_group(*_):
    os.killpg(0, signal.SIGKILL)
signal.signal(signal.SIGTERM, _kill_group)
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):  # the worker died before the prctl took hold
    _kill_group()
sys.exit(subprocess.call([sys.executable, "-m", "mhcdoctor", *sys.argv[2:]], stdin=subprocess.DEVNULL))
"""


def run_on_node(args: list[str], timeout: float, want_bundle: bool, gpu: bool = False) -> dict[str, Any]:
    """Run `python -m mhcdoctor ARGS` (plus `--bundle` when `want_bundle`) here; its outcome as plain data."""
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    start = time.monotonic()
    folder = tempfile.mkdtemp(prefix="mhcdoctor-fleet-")
    out_path, err_path = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
    bundle_path = os.path.join(folder, "node.tar.gz")
    argv = [*args, "--bundle", bundle_path] if want_bundle else list(args)
    gpus: list[str] = []
    if gpu:
        import ray

        gpus = [str(g) for g in ray.get_gpu_ids()]
    timed_out = False
    try:
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-c", WATCHDOG, str(os.getpid()), *argv],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            try:  # the whole group: a hung check and whatever it started
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            code = proc.wait()
        with open(out_path, "rb") as f:
            stdout = f.read(MAX_STDOUT).decode("utf-8", errors="replace")
        with open(err_path, "rb") as f:
            f.seek(max(0, os.path.getsize(err_path) - STDERR_TAIL))
            stderr = f.read().decode("utf-8", errors="replace")
        bundle = None
        if want_bundle and os.path.isfile(bundle_path) and os.path.getsize(bundle_path) <= MAX_BUNDLE:
            with open(bundle_path, "rb") as f:
                bundle = f.read()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "code": code,
        "timed_out": timed_out,
        "stdout": stdout,
        "stderr": stderr,
        "bundle": bundle,
        "python": sys.executable,
        "gpus": gpus,
        "seconds": round(time.monotonic() - start, 3),
    }
