"""Reading a file the user names (a config.json, a saved report): bounded, and every failure one readable line.

A user can point at anything: /dev/zero, a 10 GB log, a JSON nested a million deep. None of those may hang the
doctor or end in a traceback.
"""

from __future__ import annotations

import json
import os
import select
import stat
import sys
import time
from pathlib import Path

MAX_BYTES = 64 << 20  # far above any config or report mhcdoctor writes (a bundle's report is bounded to 4 MiB)
STREAM_SECONDS = 30.0  # a pipe, FIFO or stdin must deliver everything (to EOF) within this
FIRST_BYTE_SECONDS = 3.0  # ...and its first byte within this


def read_user_bytes(
    path: str | Path, what: str, error: type[Exception], limit: int = MAX_BYTES, seconds: float = STREAM_SECONDS
) -> bytes:
    """The bytes of `path` ("-" is stdin; a FIFO, /dev/stdin and <(process substitution) work too), at most `limit`
    of them and, from a pipe, within `seconds`; `error(one line)` for anything else."""
    if str(path) == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise error(f"{what} from stdin (-): stdin is a terminal; pipe the {what} in, e.g. `... < report.json`")
        return _read_fd(sys.stdin.fileno(), f"{what} from stdin", error, limit, seconds)
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"{what} {path} is a folder, not a file")
        return _read_fd(fd, f"{what} {path}", error, limit, seconds)
    finally:
        os.close(fd)


def _read_fd(fd: int, where: str, error: type[Exception], limit: int, seconds: float) -> bytes:
    """Read to EOF, `limit` bytes at most. From a pipe or FIFO: the first byte must come within FIRST_BYTE_SECONDS
    (a FIFO's writer may open it after us: until then it reads as empty) and EOF within `seconds`."""
    regular = stat.S_ISREG(os.fstat(fd).st_mode)
    start = time.monotonic()
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        except BlockingIOError:
            chunk = None
        except OSError as exc:
            raise error(f"cannot read {where}: {exc.strerror or exc}") from None
        if chunk:
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise error(f"{where} is larger than {limit >> 20} MiB; is it the right file?")
            continue
        if regular or (chunk == b"" and total):
            break  # EOF
        waited = time.monotonic() - start
        if not total and waited > FIRST_BYTE_SECONDS:
            raise error(f"{where} is empty (nothing was written to the pipe or FIFO within {FIRST_BYTE_SECONDS:.0f} s)")
        if waited > seconds:
            raise error(f"{where}: no end of input within {seconds:.0f} s (a pipe or FIFO still open?)")
        select.select([fd], [], [], 0.05)
    if not chunks:
        raise error(f"{where} is empty")
    return b"".join(chunks)


def read_user_text(path: str | Path, what: str, error: type[Exception], limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of `path`; `error(one line)` when it is missing, a folder, unreadable, binary or too big."""
    data = read_user_bytes(path, what, error, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what} {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse_json(text: str) -> object:
    """json.loads (untyped: callers check what they read) that also turns absurd nesting (RecursionError) into the
    ValueError callers already handle."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
