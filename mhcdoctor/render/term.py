"""Terminal styling: colour only on a terminal and never with NO_COLOR set (non-empty); symbols that survive any
encoding."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

_COLOURS = {"green": "32", "yellow": "33", "red": "31", "dim": "2", "bold": "1", "cyan": "36"}

# Severity / status marks: ✓ fine, ! warning, ✗ failure, · nothing to say.
_MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "info": "·"}
_ASCII_MARKS = {"ok": "+", "warn": "!", "fail": "x", "info": "-"}
_MARK_COLOUR = {"ok": "green", "warn": "yellow", "fail": "red", "info": "dim"}


@dataclass(frozen=True)
class Style:
    colour: bool = False
    unicode: bool = True

    @classmethod
    def for_stream(cls, stream: IO[str]) -> Style:
        """Colour only when `stream` is a terminal, NO_COLOR is unset or empty and TERM is not dumb.

        https://no-color.org: "when present and not an empty string" NO_COLOR turns colour off.
        """
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        colour = tty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            "✓✗·—…".encode(encoding)
            unicode = True
        except (LookupError, UnicodeEncodeError):
            unicode = False
        return cls(colour=colour, unicode=unicode)

    def paint(self, text: str, colour: str) -> str:
        if not self.colour or colour not in _COLOURS:
            return text
        return f"\033[{_COLOURS[colour]}m{text}\033[0m"

    def mark(self, level: str) -> str:
        return self.level((_MARKS if self.unicode else _ASCII_MARKS).get(level, "?"), level)

    def level(self, text: str, level: str) -> str:
        """`text` in the colour of a mark level (ok green, warn yellow, fail red, info dim)."""
        return self.paint(text, _MARK_COLOUR.get(level, "dim"))

    def bold(self, text: str) -> str:
        return self.paint(text, "bold")

    def dim(self, text: str) -> str:
        return self.paint(text, "dim")

    def dash(self) -> str:
        return "—" if self.unicode else "-"


VERDICT_LEVEL = {"ok": "ok", "degraded": "warn", "fail": "fail"}
SEVERITY_LEVEL = {"info": "info", "warn": "warn", "fail": "fail"}
