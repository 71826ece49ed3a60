"""Strings from outside (a package's METADATA, a child's output, a report someone sent) made safe to show."""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 controls (ESC, CSI, OSC, BEL, CR, backspace, clear-screen) and undecodable bytes; tab and newline stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd]")


def visible(text: str) -> str:
    """`text` with every control character shown as `?`: nothing from outside reaches the terminal as a command."""
    return _CONTROL.sub("?", text)


def visible_strings(value: Any) -> Any:
    """A copy of a JSON-like value with `visible` applied to every string, keys included."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_strings(k): visible_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_strings(v) for v in value]
    return value
