"""What every probe returns: its result type, its statuses, and the helpers that keep a probe from raising.

Probes touch the machine and nothing else, and never raise: a failure is a value (`status`, the exception
text, how long it took). Where a probe looks is its ProbeContext (probes/context.py); its risky part runs in a
child interpreter (probes/python_child.py, through probes/probe_child.py), so a hang is `timeout` and a segfault
is `crash`, never a dead doctor.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from mhcdoctor.childproc import EVIDENCE_CHARS
from mhcdoctor.documents.check import ProbeDocument, Status
from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.vocabulary import JsonValue
from mhcdoctor.probes.files import read_text as read_text  # every probe reads a file through probes/files.py
from mhcdoctor.text import cut, visible, visible_strings


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
        return as_document(self, ProbeDocument)


# A line of evidence: an output tail already cut to EVIDENCE_CHARS, plus its label ("stdout: ", "traceback ...").
_LINE_CHARS = EVIDENCE_CHARS + 100


def printable(text: str, limit: int = _LINE_CHARS) -> str:
    """`text` safe to print and paste: control characters (ESC included) and undecodable bytes become `?`.

    Longer than `limit`, its head is kept: this bounds a line, it does not choose evidence (childproc's
    `cut_evidence` keeps an output's tail).
    """
    return cut(visible(str(text)), limit)


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
