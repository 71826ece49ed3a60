"""Reading a file the user names (a config.json, a saved report): bounded, and every failure one readable line.

A user can point at anything: /dev/zero, a 10 GB log, a JSON nested a million deep. None of those may hang the
doctor or end in a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import select
import stat
import sys
import time
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path

MAX_BYTES = 64 << 20  # far above any config or report mhcdoctor writes (a bundle's report is bounded to 4 MiB)
STREAM_SECONDS = 30.0  # a pipe, FIFO or stdin must deliver everything (to EOF) within this
FIRST_BYTE_SECONDS = 3.0  # ...and its first byte within this
# JSON values in one document: a full check/1 report holds a few thousand; 12 MiB of `{},` (4 million) took
# `explain --from` minutes and gigabytes to parse and check.
MAX_VALUES = 200_000


def read_user_bytes(
    path: str | Path,
    what: str,
    error: type[Exception],
    limit: int = MAX_BYTES,
    seconds: float = STREAM_SECONDS,
    *,
    regular_only: bool = False,
) -> bytes:
    """The bytes of `path` ("-" is stdin; a FIFO, /dev/stdin and <(process substitution) work too), at most `limit`
    of them and, from a pipe, within `seconds`; `error(one line)` for anything else.

    `regular_only` (a file found in a folder, not one the user named): the file itself must be a regular file, opened
    without following a symbolic link (O_NOFOLLOW, checked on the open descriptor, so no swap between look and open)."""
    if str(path) == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise error(f"{what} from stdin (-): stdin is a terminal; pipe the {what} in, e.g. `... < report.json`")
        return _read_fd(sys.stdin.fileno(), f"{what} from stdin", error, limit, seconds)
    flags = os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if regular_only else 0)
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of waiting for a writer.
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        if regular_only and exc.errno == errno.ELOOP:
            raise error(f"{what} {path} is a symbolic link; links in a folder are not followed") from None
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{what} {path} is a folder, not a file")
        if regular_only and not stat.S_ISREG(info.st_mode):
            raise error(f"{what} {path} is {_kind(info.st_mode)}, not a regular file; refusing it")
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:  # a sparse 1.5 GB file is refused unread
            raise error(f"{what} {path} is larger than {limit >> 20} MiB; is it the right file?")
        return _read_fd(fd, f"{what} {path}", error, limit, seconds)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


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


class TooManyValues(ValueError):
    """JSON holding more values than any document mhcdoctor writes: refused before it is parsed."""


def parse_json(text: str, max_values: int = MAX_VALUES) -> object:
    """json.loads (untyped: callers check what they read) that also turns absurd nesting (RecursionError) into the
    ValueError callers already handle, and refuses more than `max_values` values (TooManyValues) before parsing.

    Every JSON value but the first starts after a `[`, `{` or `,`, so counting those (in C, at memory speed) bounds
    the values from above: parsing and every walk after it (the type check, the redaction) stay bounded."""
    values = text.count(",") + text.count("[") + text.count("{")
    if values > max_values:
        raise TooManyValues(f"holds up to {values} JSON values (a report has a few thousand; at most {max_values})")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def mismatch(
    value: object,
    hint: object,
    where: str,
    namespace: Mapping[str, object] | None = None,
    *,
    complete: bool = False,
) -> str | None:
    """Where a JSON value someone sent first differs from the type `hint` names (a TypedDict, a list or dict of
    them, a union, Literal, str, int, float, bool, None), as "where.member: expected ...", or None where it fits.

    By default a TypedDict member that is absent is accepted: reports written by older releases lack newer members,
    and their readers look members up with `.get`. With `complete`, every member a TypedDict requires must be there
    (what mhcdoctor itself just wrote, such as a path child's request). A member that is present must be of its
    type, all the way down. `namespace` resolves names a TypedDict's module imports only for type checking."""
    try:
        return _mismatch(value, hint, where, dict(namespace or {}), complete)
    except RecursionError:
        return f"{where}: nested too deeply"


_HINTS: dict[tuple[object, tuple[str, ...]], dict[str, object]] = {}


def _hints(typed: object, namespace: dict[str, object]) -> dict[str, object]:
    """typing.get_type_hints of a TypedDict, once per type: it evaluates every annotation on each call, which cost
    tens of microseconds for each of a report's objects."""
    key = (typed, tuple(sorted(namespace)))
    if key not in _HINTS:
        _HINTS[key] = typing.get_type_hints(typed, localns=namespace)
    return _HINTS[key]


def _mismatch(value: object, hint: object, where: str, namespace: dict[str, object], complete: bool) -> str | None:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any or hint is object or isinstance(hint, typing.ForwardRef):
        return None  # a forward reference is the recursive JsonValue: anything json.loads returns is one
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return f"{where}: expected an object"
        hints = _hints(hint, namespace)
        missing = sorted(getattr(hint, "__required_keys__", frozenset()) - value.keys()) if complete else []
        if missing:
            return f"{where}: no {missing[0]}"
        for key, member in hints.items():
            if key in value:
                found = _mismatch(value[key], member, f"{where}.{key}", namespace, complete)
                if found:
                    return found
        return None
    if origin in (typing.Union, types.UnionType):
        misses = [_mismatch(value, arg, where, namespace, complete) for arg in args]
        return None if None in misses else misses[0]
    if origin is typing.Literal:
        return None if any(value == a and type(value) is type(a) for a in args) else f"{where}: expected one of {args}"
    if origin in (list, Sequence):
        if not isinstance(value, list):
            return f"{where}: expected a list"
        return next(
            (m for i, v in enumerate(value) if (m := _mismatch(v, args[0], f"{where}[{i}]", namespace, complete))), None
        )
    if origin in (dict, Mapping):
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            return f"{where}: expected an object"
        return next(
            (m for k, v in value.items() if (m := _mismatch(v, args[1], f"{where}.{k}", namespace, complete))), None
        )
    if hint is None or hint is type(None):
        return None if value is None else f"{where}: expected null"
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint in (str, bool):
        ok = isinstance(value, hint)
    else:
        raise TypeError(f"no JSON check for {hint!r}")  # a type this checker was not taught: a programming error
    return None if ok else f"{where}: expected {getattr(hint, '__name__', hint)}, not {type(value).__name__}"
