"""`mhcdoctor fleet` on Ray: one check per node, pinned to it, and with --verify one verify per GPU, all at once.

Each task is pinned with NodeAffinitySchedulingStrategy(soft=False), never left to the scheduler to spread, and
asks for no CPU (`num_cpus=0`), so a node busy serving still runs its check; a verify task asks for one GPU
(`num_gpus=1`), and Ray makes only that GPU visible to it. Tasks are never retried: a worker that dies is
reported, not hidden. The driver gives every node `timeout` seconds (plus GRACE for Ray to start the task and
send its result back), then cancels what is left (force: the worker is killed, and the check, a child of it started
by mhcdoctor's child runner, dies with it). A node that hangs, dies or has no mhcdoctor is a row with its status and
error.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mhcdoctor import childproc
from mhcdoctor.documents.check import SCHEMA as CHECK_SCHEMA
from mhcdoctor.documents.fleet import VerifyRun
from mhcdoctor.documents.verify import SCHEMA as VERIFY_SCHEMA
from mhcdoctor.documents.vocabulary import VERDICTS
from mhcdoctor.errors import InputError
from mhcdoctor.fleet import node_task
from mhcdoctor.fleet.summary import NodeResult, natural_key
from mhcdoctor.reportfile import validate_report
from mhcdoctor.text import cut
from mhcdoctor.userfiles import mismatch, parse_json

_LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # read once, when ray is imported
CONNECT_SECONDS = 5.0  # to reach the cluster's GCS before handing it to Ray
GRACE = 10.0  # seconds beyond --timeout for Ray to start a node's task and return its result
# Seconds a stopped fleet gives its tasks to kill their checks before their workers are killed. Only a node that does
# not answer should reach it: a forced cancel has Ray SIGKILL the worker's children, the check among them, so what
# the check started outlives it (measured here: a helper left running). The tasks took 0.4 s on an idle two-core
# machine and 3.5 s with eight busy loops beside it; 5 s was passed under the team's load and left a helper.
STOP_GRACE = 30.0
_STOP_POLL = 0.2  # seconds between looks at whether a stop signal came while waiting for the nodes
_ERROR_CHARS = 300

Progress = Callable[[str], None]


@dataclass
class NodeRun:
    """What came back from one node: the check's outcome and each GPU's verify, with the node's bundle."""

    result: NodeResult
    bundle: bytes | None = None
    # each GPU's verify as its row, made when its outcome arrives: the outcome (up to 16 MiB of output) is not kept
    verify_runs: list[VerifyRun] = field(default_factory=list)


def default_address() -> str:
    return os.environ.get("RAY_ADDRESS") or "auto"


def run_fleet(
    address: str,
    check_args: list[str],
    timeout: float,
    verify_args: list[str] | None,
    want_bundle: bool,
    progress: Progress,
    gpu_nodes_only: bool = False,
) -> list[NodeRun]:
    """Connect to the Ray cluster at `address`, check every alive node (and verify each GPU when `verify_args`).

    `gpu_nodes_only` leaves out nodes that offer Ray no GPU (a CPU-only head node, as KubeRay often runs)."""
    with _stdout_to_stderr():  # Ray prints to stdout (e.g. "(raylet) A worker died"); --json owns stdout
        return _run(address, check_args, timeout, verify_args, want_bundle, progress, gpu_nodes_only)


def _run(
    address: str,
    check_args: list[str],
    timeout: float,
    verify_args: list[str] | None,
    want_bundle: bool,
    progress: Progress,
    gpu_nodes_only: bool,
) -> list[NodeRun]:
    if _is_loopback(address):
        # Ray rewrites a loopback GCS address to the machine's primary IP (services.resolve_ip_for_localhost),
        # where no node of a loopback cluster listens, and hangs; with this variable off it keeps 127.0.0.1.
        os.environ[_LOOPBACK_SWITCH] = "0"
    _check_listening(address)
    ray = _import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    previous = _handlers()  # the doctor's: ray.init sets a SIGTERM handler of its own (sys.exit)
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # ConnectionError, or RuntimeError when no cluster is found at 'auto'
        _restore(previous)
        raise InputError(f"cannot connect to the Ray cluster at {address}: {_first_line(exc)}") from None
    refs: dict[Any, tuple[int, str]] = {}
    stopped: int | None = None
    _signalled.clear()
    for number in previous:
        signal.signal(number, _note_stop)
    try:
        ray.cloudpickle.register_pickle_by_value(node_task)  # nodes need not have mhcdoctor to run the task
        task = ray.remote(node_task.run_on_node)
        # The child runner goes with each task as source (its module state, a lock, does not pickle), put once.
        runner = ray.put(Path(childproc.__file__).read_text(encoding="utf-8"))
        alive = [n for n in ray.nodes() if n.get("Alive")]
        nodes = sorted(
            (n for n in alive if not gpu_nodes_only or _gpus(n) > 0),
            key=lambda n: (natural_key(str(n["NodeManagerAddress"])), n["NodeID"]),
        )
        if alive and not nodes:
            progress(f"none of the {len(alive)} node(s) offers Ray a GPU: nothing to check (--gpu-nodes-only)")
        elif len(nodes) < len(alive):
            progress(f"{len(alive) - len(nodes)} node(s) without a GPU left out (--gpu-nodes-only)")
        width = max(2, len(str(len(nodes) - 1)))
        runs = [NodeRun(NodeResult(f"node-{i:0{width}d}", "timeout", source=n["NodeID"])) for i, n in enumerate(nodes)]
        progress(f"{len(nodes)} node(s) at {address}; checking each, {timeout:g} s allowed per node")
        for i, n in enumerate(nodes):
            pin = NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
            ref = task.options(num_cpus=0, max_retries=0, scheduling_strategy=pin).remote(
                check_args, timeout, want_bundle, False, runner
            )
            refs[ref] = (i, "check")
            for _ in range(_gpus(n) if verify_args is not None else 0):
                vref = task.options(num_cpus=0, num_gpus=1, max_retries=0, scheduling_strategy=pin).remote(
                    verify_args, timeout, False, True, runner
                )
                refs[vref] = (i, "verify")
        _collect(ray, refs, runs, timeout + GRACE, progress)
        _check_stop()
        return runs
    except _Stopped as stop:
        stopped = stop.signum
        _stop_tasks(ray, list(refs))
        raise
    finally:
        ray.shutdown()
        _restore(previous)
        if stopped is not None:  # the doctor's own handler now stops it, as it stops every command
            signal.raise_signal(stopped)


class _Stopped(BaseException):
    """A stop signal while the fleet runs (BaseException: nothing on the way may swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _handlers() -> dict[int, Any]:
    """The stop signals' handlers now (none off the main thread, where they cannot be set): while the fleet runs,
    they are the driver's, not Ray's."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {number: signal.getsignal(number) for number in childproc.STOP_SIGNALS}


def _restore(handlers: dict[int, Any]) -> None:
    for number, handler in handlers.items():
        signal.signal(number, handler)


_signalled: list[int] = []  # the stop signal received while the fleet runs, read between waits (_check_stop)


def _note_stop(signum: int, frame: object) -> None:
    """Only noted: Ray runs this inside its own waits, which cannot unwind through an exception raised here."""
    for number in childproc.STOP_SIGNALS:  # once: the tasks are being stopped, which is bounded by STOP_GRACE
        signal.signal(number, signal.SIG_IGN)
    _signalled.append(signum)


def _check_stop() -> None:
    if _signalled:
        raise _Stopped(_signalled[0])


def _stop_tasks(ray: Any, refs: list[Any]) -> None:
    """Cancel every task: first as an interrupt, so each node's task kills its check and everything the check
    started (mhcdoctor.childproc, whose runner the task holds); after STOP_GRACE, by killing the worker."""
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=False)
    pending = refs
    with contextlib.suppress(Exception):
        _, pending = ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE)
    for ref in pending:
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)


def _gpus(node: dict[str, Any]) -> int:
    return int((node.get("Resources") or {}).get("GPU", 0))


def _collect(ray: Any, refs: dict[Any, tuple[int, str]], runs: list[NodeRun], limit: float, progress: Progress) -> None:
    deadline = time.monotonic() + limit
    pending = list(refs)
    while pending:
        _check_stop()
        left = deadline - time.monotonic()
        if left <= 0:
            break
        done, pending = ray.wait(pending, num_returns=1, timeout=min(left, _STOP_POLL))
        for ref in done:
            index, kind = refs[ref]
            run = runs[index]
            outcome = fetch_outcome(ray, ref)
            if kind == "check":
                _record_check(run, outcome)
                progress(f"{run.result.name}: {run.result.status} ({run.result.verdict})")
            else:
                run.verify_runs.append(_verify_row(outcome))
    for ref in pending:  # past the deadline: the worker is killed, the check dies with it (parent-death signal)
        ray.cancel(ref, force=True)
        index, kind = refs[ref]
        run = runs[index]
        if kind == "check":
            run.result.status, run.result.seconds = "timeout", round(limit, 3)
            run.result.error = f"no result within {limit:g} s; the task was cancelled"
        else:
            run.verify_runs.append(
                _verify_row({"lost": f"no verify result within {limit:g} s; the task was cancelled"})
            )
    for run in runs:
        run.result.verify = run.verify_runs


def fetch_outcome(ray: Any, ref: Any) -> Mapping[str, object]:
    """A finished task's NodeOutcome, read from its JSON bytes and checked; or {"lost": why} when the task left none,
    {"refused": why} when what came back is not one.

    Never `ray.get`: Ray unpickles what a task returns (and the exception a failed task raised), so a node whose
    Python runs hostile code (a sitecustomize.py) could run code in the driver. The object's buffer and metadata are
    read as they are: only Ray's RAW type (plain bytes) is taken, and parsed as JSON; a failure is named by its
    error type, never unpickled."""
    try:
        buffer, metadata = _raw_object(ray, ref)
    except Exception as exc:  # the object is gone (its node died): Ray says so by raising
        return {"lost": f"{type(exc).__name__}: {_first_line(exc)}"}
    kind = metadata.split(b",")[0]
    if kind.isdigit():
        return {"lost": f"the task failed ({_error_type(int(kind))})"}
    size = 0 if buffer is None else len(buffer)
    if kind != b"RAW":
        shown = kind.decode("ascii", "replace")[:40]
        return {
            "refused": f"the node returned a {shown} object, not JSON bytes (not unpickled: it could run code here)"
        }
    if size > _MAX_OUTCOME_BYTES:  # looked at before it is copied out of Ray's object store
        return {"refused": f"the node returned {size} bytes (at most {_MAX_OUTCOME_BYTES} expected)"}
    data: bytes = b"" if buffer is None else buffer.to_pybytes()
    try:
        outcome = parse_json(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError too
        return {"refused": f"the node's outcome is not JSON: {cut(str(exc), 200)}"}
    wrong = mismatch(outcome, node_task.NodeOutcome, "outcome", complete=True)
    if wrong is not None or not isinstance(outcome, dict):
        return {"refused": f"the node's outcome is malformed: {cut(str(wrong), 200)}"}
    return outcome


# A node's stdout and its bundle, base64, with room for the JSON around them.
_MAX_OUTCOME_BYTES = node_task.MAX_STDOUT * 6 + node_task.MAX_BUNDLE * 2 + (1 << 20)


def _raw_object(ray: Any, ref: Any) -> tuple[Any, bytes]:
    """The object's buffer (Ray's Buffer: len() and to_pybytes(); None when empty) and Ray's metadata for it, without
    deserialising it (Ray's own core worker call, the step before ray.get's: ray/_private/worker.py,
    Worker.get_objects)."""
    worker = ray._private.worker.global_worker
    try:
        found = worker.core_worker.get_objects([ref], 30_000)
    except TypeError:  # older Rays also take the current task's id (and return (data, metadata) pairs)
        found = worker.core_worker.get_objects([ref], worker.current_task_id, 30_000)
    return found[0][0], bytes(found[0][1] or b"")


def _error_type(number: int) -> str:
    """Ray's name for an error type (WORKER_DIED, TASK_EXECUTION_EXCEPTION ...), from its protobuf enum."""
    try:
        enum: Any = importlib.import_module("ray.core.generated.common_pb2").ErrorType
        return str(enum.Name(number))
    except Exception:  # an unknown number
        return f"error type {number}"


def _record_check(run: NodeRun, outcome: Mapping[str, object]) -> None:
    node = run.result
    seconds = outcome.get("seconds")
    node.seconds = seconds if isinstance(seconds, (int, float)) else None
    if "lost" in outcome:
        node.status, node.error = "lost", f"the node's Ray worker died or the node left: {outcome['lost']}"
        return
    if "refused" in outcome:
        node.status, node.error = "error", str(outcome["refused"])
        return
    if outcome["timed_out"]:
        node.status, node.error = "timeout", f"the check did not finish in {node.seconds:g} s and was killed"
        return
    stderr = str(outcome.get("stderr") or "")
    if outcome["code"] != 0 and "No module named mhcdoctor" in stderr:
        node.status, node.error = (
            "not-installed",
            f"mhcdoctor is not installed in this node's Python ({outcome['python']})",
        )
        return
    report, why = _parse(str(outcome.get("stdout") or ""), CHECK_SCHEMA)
    if report is None:
        node.status, node.error = "error", f"exit {outcome['code']}: {why or _last_line(stderr)}"
        return
    try:  # the same checks as a report merge reads from a file
        node.report = validate_report(report, f"from {node.name}")
    except InputError as exc:
        node.status, node.error = "error", str(exc)
        return
    node.status = "checked"
    bundle = outcome.get("bundle")
    try:
        run.bundle = base64.b64decode(bundle, validate=True) if isinstance(bundle, str) else None
    except ValueError:
        run.bundle = None


# The most "path op" names one GPU's row lists as not passing (verify runs at most a few paths times four ops).
MAX_NOT_PASS = 32


def _verify_row(outcome: Mapping[str, object]) -> VerifyRun:
    """One GPU's verify as a row: its verdict, or why there is none (which counts as fail)."""
    gpus = outcome.get("gpus")
    gpu = ",".join(str(g) for g in gpus) if isinstance(gpus, list) and gpus else None
    if "lost" in outcome:
        return {"gpu": gpu, "verdict": "fail", "status": "lost", "error": str(outcome["lost"])}
    if "refused" in outcome:
        return {"gpu": gpu, "verdict": "fail", "status": "error", "error": str(outcome["refused"])}
    if outcome["timed_out"]:
        return {"gpu": gpu, "verdict": "fail", "status": "timeout", "error": "verify did not finish and was killed"}
    doc, why = _parse(str(outcome.get("stdout") or ""), VERIFY_SCHEMA)
    if doc is None:
        error = f"exit {outcome['code']}: {why or _last_line(str(outcome.get('stderr') or ''))}"
        return {"gpu": gpu, "verdict": "fail", "status": "error", "error": error}
    results = doc.get("results")
    rows = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
    failed = sorted({f"{r.get('path')} {r.get('op')}" for r in rows if r.get("status") != "pass"})
    if len(failed) > MAX_NOT_PASS:  # a real verify has a few paths times four ops; a node may send any number
        failed = [*failed[:MAX_NOT_PASS], f"... and {len(failed) - MAX_NOT_PASS} more"]
    verdict = doc.get("verdict")
    verdict = verdict if isinstance(verdict, str) and verdict in VERDICTS else "fail"
    return {"gpu": gpu, "verdict": verdict, "status": "checked", "error": None, "not_pass": failed}


def _parse(text: str, schema: str) -> tuple[dict[str, object] | None, str]:
    """The `schema` document the node printed, or None and why when its output is JSON no reader takes (a number no
    float holds, nesting past userfiles.MAX_DEPTH); the reason is empty when the output is no such document at all."""
    try:
        doc: object = parse_json(text)
    except ValueError as exc:
        return None, f"its output is not valid JSON: {cut(str(exc), 200)}" if text.lstrip().startswith("{") else ""
    return (doc, "") if isinstance(doc, dict) and doc.get("schema") == schema else (None, "")


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send whatever is written to stdout, by Python or by Ray's threads and C++ core, to stderr for a while."""
    sys.stdout.flush()
    saved_fd, saved_stream = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = saved_stream


def _check_listening(address: str) -> None:
    """Fail in seconds, not minutes, when nothing listens at an explicit HOST:PORT (ray.init would retry for long)."""
    if "://" in address or ":" not in address:  # 'auto', or a ray:// client address: left to Ray
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS):
            pass
    except ValueError:
        raise InputError(f"--address {address} is not HOST:PORT") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"no Ray cluster at {address}: {reason} (start one with `ray start --head`)") from None


def _is_loopback(address: str) -> bool:
    host = address.split("://")[-1].rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("`mhcdoctor fleet` needs Ray: pip install 'mhcdoctor[fleet]'") from None
    return ray


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return cut(text[0] if text else type(exc).__name__, _ERROR_CHARS)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return cut(lines[-1] if lines else "no output", _ERROR_CHARS)
