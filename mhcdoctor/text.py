"""Strings from outside (a package's METADATA, a child's output, a report someone sent) made safe to show."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar, overload

_V = TypeVar("_V")
# C0 and C1 controls (ESC, CSI, OSC, BEL, CR, backspace, clear-screen) and undecodable bytes; tab and newline stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd]")


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`1 token`, `7 tokens`: a number and its noun, plural when the number is not one."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def visible(text: str) -> str:
    """`text` with every control character shown as `?`: nothing from outside reaches the terminal as a command."""
    return _CONTROL.sub("?", text)


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
