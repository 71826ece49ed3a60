"""Running a probe's risky part in a child interpreter and turning what came back into a ProbeResult.

The child code reports a dict. `{"error": "...", "traceback": "..."}` means the child caught a failure
(an exception while importing, say); `"missing": true` with it means the thing probed is simply not there
(no NVML library, no amdsmi shared library). Anything else is the data. A child that timed out, crashed or
exited without reporting becomes that status, with its stdout/stderr tail as evidence.
"""

from __future__ import annotations

from typing import Any

from mhcdoctor.documents.check import Status
from mhcdoctor.probes.base import ProbeResult, timed
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.python_child import ChildOutcome, run_child

# Prepended to every probe's child code: one way to describe a caught exception.
CHILD_HELPERS = """\
import traceback as _traceback
def failure(exc, **extra):
    text = f"{type(exc).__name__}: {exc}".strip()
    return {"error": text.splitlines()[0] if text else type(exc).__name__,
            "traceback": "".join(_traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:],
            **extra}
"""

_TRACEBACK_LINES = 10

FAST_SKIP = "not run in --fast mode (it imports a library or initialises the GPU)"


def skipped(name: str, source: str, why: str = FAST_SKIP) -> ProbeResult:
    return ProbeResult(name=name, status="skipped", source=source, error=why)


def run_probe_child(name: str, code: str, ctx: ProbeContext, source: str) -> ProbeResult:
    """Run `code` (which calls `report(dict)`) in a child; its dict becomes the result's data."""
    with timed() as elapsed:
        outcome = run_child(CHILD_HELPERS + code, ctx, label=source)
    return from_outcome(name, outcome, source, elapsed())


def from_outcome(name: str, outcome: ChildOutcome, source: str, seconds: float) -> ProbeResult:
    data: dict[str, Any] = dict(outcome.result) if isinstance(outcome.result, dict) else {}
    evidence = []
    trace = str(data.pop("traceback", None) or "").strip().splitlines()
    if trace:  # the end of a traceback names the failing file and the exception: that part is the evidence
        evidence.append("traceback (last lines):\n" + "\n".join(trace[-_TRACEBACK_LINES:]))
    evidence.extend(outcome.evidence())
    if outcome.status != "ok":
        error = outcome.error
        last = outcome.stderr.strip().splitlines()[-1:] if outcome.status == "error" else []
        if last:  # an exception the child code did not catch: its last line says what it was
            error = f"{error}: {last[0].strip()}"
        return ProbeResult(name, outcome.status, data, evidence, source, seconds, error)
    error = data.pop("error", None)
    if error is None:
        return ProbeResult(name, "ok", data, evidence, source, seconds)
    status: Status = "missing" if data.pop("missing", False) else "error"
    return ProbeResult(name, status, data, evidence, source, seconds, str(error))
