"""Strings from outside (a package's METADATA, a child's output, a report someone sent) made safe to show, and cut.

One sanitiser (`visible`) and one way to cut (`cut`) for every view: a probe's evidence, a report read back, a
fleet summary, diff and explain all show the same character the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, TypeVar, overload

_V = TypeVar("_V")
# Shown as `?`: C0 and C1 controls (ESC, CSI, OSC, BEL, CR, backspace, clear-screen); bidi controls, which reorder
# what follows (U+202E makes `0.1.12‮31.1.0` read as another version; Trojan Source, CVE-2021-42574: U+061C,
# U+200E/F, U+202A-202E, U+2066-2069); line and paragraph separators (U+2028/9, a line break to some terminals);
# U+FFFD (an undecodable byte) and lone surrogates (a file name that is not UTF-8, as os.fsdecode gives it, which
# no UTF-8 stream can write). Tab and newline stay, unless the text must be one line.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffd\ud800-\udfff]"
)
_ONE_LINE = str.maketrans("\t\n", "??")
MARK = "…"  # where `cut` took characters out


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`1 token`, `7 tokens`: a number and its noun, plural when the number is not one."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def visible(text: str, *, one_line: bool = False) -> str:
    """`text` with every control character shown as `?`: nothing from outside reaches the terminal as a command, and
    nothing reorders what a reader sees. `one_line`: tab and newline too."""
    shown = _CONTROL.sub("?", text)
    return shown.translate(_ONE_LINE) if one_line else shown


def cut(text: str, limit: int, keep: Literal["head", "tail", "middle"] = "head") -> str:
    """`text` in `limit` characters at most: its head, its tail (where a traceback says what went wrong) or both
    ends, with MARK where the rest was."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(MARK))
    if keep == "head":
        return text[:room] + MARK
    if keep == "tail":
        return MARK + text[len(text) - room :]
    tail = room // 2
    return text[: room - tail] + MARK + text[len(text) - tail :]


@overload
def visible_strings(value: str) -> str: ...
@overload
def visible_strings(value: Mapping[str, _V]) -> dict[str, _V]: ...
@overload
def visible_strings(value: object) -> object: ...
def visible_strings(value: object) -> object:
    """A copy of a JSON-like value with `visible` applied to every string, keys included; a tuple becomes a list, as
    JSON has it. A JSON object stays an object of the same JSON values (only their strings change)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {visible_strings(k): visible_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_strings(v) for v in value]
    return value
