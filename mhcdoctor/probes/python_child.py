"""Running Python code in a fresh interpreter (the context's) that reports one JSON result: the generic child that
probes (probes/probe_child.py) and verify's and bench's path children (verify/runner.py) are built on. The process
itself (its group, bounded output, timeout, nothing left running) is mhcdoctor.childproc's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mhcdoctor import childproc
from mhcdoctor.childproc import cut_evidence, signal_name
from mhcdoctor.documents.check import Status
from mhcdoctor.probes.context import ProbeContext


@dataclass
class ChildOutcome:
    status: Status  # ok (exit 0 and a result written), error, timeout, crash
    result: object  # what the child passed to `report(...)` (JSON, untyped: checked where it is read), or None
    stdout: str  # the tail of what it printed (childproc.OUTPUT_TAIL_BYTES at most), cut to evidence later
    stderr: str
    returncode: int | None
    seconds: float
    error: str | None = None

    def evidence(self) -> list[str]:
        lines = []
        if self.returncode is not None and self.returncode < 0:
            lines.append(f"child killed by signal {signal_name(-self.returncode)}")
        elif self.returncode not in (0, None):
            lines.append(f"child exited with code {self.returncode}")
        if self.stdout.strip():
            lines.append("stdout: " + cut_evidence(self.stdout))
        if self.stderr.strip():
            lines.append("stderr: " + cut_evidence(self.stderr))
        return lines


# The child's preamble: `report(obj)` writes the result to a file named on the command line, so whatever the
# probed library prints on stdout (amdsmi does) cannot corrupt it.
_PREAMBLE = """\
import json as _json, sys as _sys
_OUT = _sys.argv.pop(1)
def report(obj):
    # Atomic, and callable more than once: a partial result survives if a later step hangs and is killed.
    with open(_OUT + ".tmp", "w") as _f:
        _json.dump(obj, _f, default=str)
    __import__("os").replace(_OUT + ".tmp", _OUT)
"""


def run_child(code: str, ctx: ProbeContext, timeout: float | None = None, label: str = "child") -> ChildOutcome:
    """Run `code` in a fresh interpreter (ctx.python), which calls `report(obj)` with its JSON-able result.

    The child gets ctx.search_path on PYTHONPATH and runs under mhcdoctor.childproc: its own process group, output
    to files read back as bounded tails, and everything it started killed when it ends or times out, so a
    library that forks helpers (aiter runs rocminfo) can neither keep the doctor waiting nor outlive it.
    """
    limit = ctx.timeout if timeout is None else timeout
    env = ctx.child_env()
    with childproc.temp_dir() as tmp:
        out_file = tmp / "result.json"
        done = childproc.run([ctx.python, "-c", _PREAMBLE + code, str(out_file)], env, limit, folder=tmp)
        if done.status == "error":
            return ChildOutcome("error", None, "", "", None, 0.0, done.error)
        try:
            result = _read_result(out_file)
        except ValueError as exc:
            if done.status == "timeout":
                result = None
            else:
                return ChildOutcome(
                    "error", None, done.stdout, done.stderr, done.returncode, done.seconds, f"bad result: {exc}"
                )
    out, err, seconds, code_ = done.stdout, done.stderr, done.seconds, done.returncode
    if done.status == "timeout":  # `result` is what it reported before the step that hung
        return ChildOutcome("timeout", result, out, err, None, seconds, f"{label} did not finish within {limit:g} s")
    assert code_ is not None
    if code_ < 0:
        return ChildOutcome("crash", result, out, err, code_, seconds, f"{label} crashed ({signal_name(-code_)})")
    if code_ != 0:
        return ChildOutcome("error", result, out, err, code_, seconds, f"{label} exited with code {code_}")
    if result is None:
        return ChildOutcome("error", None, out, err, code_, seconds, f"{label} reported nothing")
    return ChildOutcome("ok", result, out, err, code_, seconds)


def _read_result(path: Path) -> object:
    """What the child last reported, or None if it reported nothing; ValueError if it is not JSON or too long."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(childproc.RESULT_BYTES + 1)
    except OSError:
        return None
    if len(text) > childproc.RESULT_BYTES:
        raise ValueError(f"the result is longer than {childproc.RESULT_BYTES} bytes")
    return json.loads(text)
