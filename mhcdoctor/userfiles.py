"""Reading a file the user names (a config.json, a saved report): bounded, and every failure one readable line.

A user can point at anything: /dev/zero, a 10 GB log, a JSON nested a million deep. None of those may hang the
doctor or end in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_BYTES = 64 << 20  # far above any config or report mhcdoctor writes (a bundle's report is bounded to 4 MiB)


def read_user_text(path: Path, what: str, error: type[Exception], limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of `path`; `error(one line)` when it is missing, a folder, unreadable, binary or too big."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{what} {path} is larger than {limit >> 20} MiB; is it the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what} {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse_json(text: str) -> Any:
    """json.loads that also turns absurd nesting (RecursionError) into the ValueError callers already handle."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
