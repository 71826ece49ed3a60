"""What every probe shares: its result type, its context, and a child interpreter to run risky work in.

Probes touch the machine and nothing else, and never raise: a failure is a value (`status`, the exception
text, how long it took). Importing torch, aiter, tilelang or amdsmi, and initialising a GPU, happens only in a
child interpreter under a timeout, so a hang is `timeout` and a segfault is `crash`, never a dead doctor.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from mhcdoctor import bytecode, childproc
from mhcdoctor.childproc import EVIDENCE_CHARS, cut_evidence, signal_name
from mhcdoctor.facts import JsonValue
from mhcdoctor.text import cut, visible, visible_strings

Status = Literal["ok", "missing", "error", "timeout", "crash", "skipped"]
STATUSES: tuple[str, ...] = ("ok", "missing", "error", "timeout", "crash", "skipped")


@dataclass
class ProbeResult:
    name: str  # "gpu.kfd", "aiter", "tilelang.import"
    status: Status
    data: Mapping[str, JsonValue] = field(default_factory=dict)  # the facts found, serialisable
    evidence: list[str] = field(default_factory=list)  # what was read or run, and what it said
    source: str = ""  # where the facts came from: "sysfs", "metadata", "child: import tilelang"
    seconds: float = 0.0
    error: str | None = None  # one line: why not ok

    def __post_init__(self) -> None:
        # Evidence is read from files and programs that may be broken or hostile: no terminal escapes, no binary.
        self.evidence = [printable(line) for line in self.evidence]
        if self.error is not None:
            self.error = printable(self.error)
        self.data = visible_strings(self.data)  # versions and paths read from METADATA may hold ESC too

    def to_dict(self) -> ProbeDocument:
        return {
            "name": self.name,
            "status": self.status,
            "data": asdict(self)["data"],
            "evidence": list(self.evidence),
            "source": self.source,
            "seconds": self.seconds,
            "error": self.error,
        }


class ProbeDocument(TypedDict):
    """A probe's result as JSON (check/1's `probes`); `data` is what the probe found, as the probe wrote it."""

    name: str
    status: str
    data: dict[str, JsonValue]
    evidence: list[str]
    source: str
    seconds: float
    error: str | None


# A line of evidence: an output tail already cut to EVIDENCE_CHARS, plus its label ("stdout: ", "traceback ...").
_LINE_CHARS = EVIDENCE_CHARS + 100


def printable(text: str, limit: int = _LINE_CHARS) -> str:
    """`text` safe to print and paste: control characters (ESC included) and undecodable bytes become `?`.

    Longer than `limit`, its head is kept: this bounds a line, it does not choose evidence (childproc's
    `cut_evidence` keeps an output's tail).
    """
    return cut(visible(str(text)), limit)


@dataclass
class ProbeContext:
    """Where the probes look. Tests point it at fake trees and fake installs in temporary folders."""

    root: Path = Path("/")  # prefix for /sys, /proc, /opt/rocm, /usr/local/cuda
    python: str = sys.executable  # the interpreter children run in
    search_path: list[str] = field(default_factory=lambda: list(sys.path))  # where packages are looked up
    timeout: float = 20.0  # seconds for each child
    fast: bool = False  # no imports, no GPU initialisation
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def path(self, absolute: str) -> Path:
        """`/sys/class/kfd` under this context's root."""
        return self.root / absolute.lstrip("/")

    def which(self, program: str) -> str | None:
        for folder in self.env.get("PATH", "").split(os.pathsep):
            if not folder:
                continue
            candidate = Path(folder) / program
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        return None

    def child_env(self) -> dict[str, str]:
        """The environment of a Python child started with this context: its search path on PYTHONPATH, the Python
        stack printed on a segfault (evidence), and bytecode kept in mhcdoctor's own cache (mhcdoctor.bytecode)."""
        env = bytecode.child_env(self.env, self.search_path)
        env["PYTHONPATH"] = os.pathsep.join(p for p in self.search_path if p)
        env["PYTHONFAULTHANDLER"] = "1"
        return env


@contextmanager
def timed() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    yield lambda: round(time.perf_counter() - start, 4)


def guarded(name: str, fn: Callable[[], ProbeResult]) -> ProbeResult:
    """Run a probe function; any exception it lets out becomes an `error` result instead of a crash."""
    start = time.perf_counter()
    try:
        result = fn()
    except Exception as exc:  # a probe bug must not kill the doctor: report it as what it is
        return ProbeResult(
            name=name,
            status="error",
            error=f"probe failed: {type(exc).__name__}: {exc}",
            seconds=round(time.perf_counter() - start, 4),
        )
    if not result.seconds:
        result.seconds = round(time.perf_counter() - start, 4)
    return result


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


def read_text(path: Path, limit: int = 1 << 20) -> str | None:
    """A small file's text, or None when it can't be read (missing, permission, a directory)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return None
