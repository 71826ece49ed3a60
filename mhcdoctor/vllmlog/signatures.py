"""Known fatal texts in a vLLM log, each mapped to the finding that explains it: the setup errors here, and each known
bug's own text from its record (knowledge/bugs.py `log`).

A signature matches one line (the error's own text), and where the text alone is ambiguous, also the frames of the
traceback the same process printed just before it (`invalid configuration argument` is aiter #4633 only when
aiter/ops/mhc.py is on the stack).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from mhcdoctor.knowledge.bugs import BUGS


class _Line(Protocol):
    text: str


@dataclass(frozen=True)
class Signature:
    finding: str
    text: re.Pattern[str]
    frames: re.Pattern[str] | None = None  # also needed on the stack (the line itself counts as part of it)

    def matches(self, line: str, frames: Iterable[_Line]) -> bool:
        if self.text.search(line) is None:
            return False
        if self.frames is None:
            return True
        return self.frames.search(line) is not None or any(self.frames.search(f.text) for f in frames)


_OWN: tuple[Signature, ...] = (
    # vLLM layers/mhc.py (0.20–0.21), _tilelang_ops.py (0.22), kernels/mhc/tilelang_kernels.py (0.23–0.27),
    # tilelang_utils/__init__.py (0.28+): ImportError "tilelang is required for mhc but is not installed. ..."
    Signature("tilelang-missing", re.compile(r"tilelang is required for mhc but is not installed")),
    # An aiter without its mHC ops (PyPI's amd-aiter 0.1.7.post2.dev18 has aiter/ops but no ops/mhc.py): vLLM 0.25+
    # selects it by find_spec("aiter") and the call imports aiter.ops.mhc.
    Signature(
        "aiter-no-mhc",
        re.compile(r"No module named '?aiter\.ops\.mhc'?|cannot import name '(?:mhc_\w+)' from 'aiter"),
    ),
    # No aiter.ops at all: the package named aiter is not AMD's (PyPI's unrelated async-iterator `aiter`).
    Signature("aiter-impostor", re.compile(r"No module named '?aiter\.ops'?(?![.\w])")),
)

# The setup errors above, then every known bug's own error text (knowledge/bugs.py), in the records' order.
FATAL_SIGNATURES: tuple[Signature, ...] = _OWN + tuple(
    Signature(bug.id, re.compile(bug.log.text), re.compile(bug.log.frames) if bug.log.frames else None)
    for bug in BUGS
    if bug.log is not None
)
