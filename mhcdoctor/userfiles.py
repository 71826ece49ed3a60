"""Reading a file the user names (a config.json, a saved report): bounded, and every failure one readable line.

A user can point at anything: /dev/zero, a 10 GB log, a JSON nested a million deep. None of those may hang the
doctor or end in a traceback.
"""

from __future__ import annotations

import errno
import json
import math
import os
import select
import stat
import sys
import time
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

MAX_BYTES = 64 << 20  # far above any config or report mhcdoctor writes (a bundle's report is bounded to 4 MiB)
STREAM_SECONDS = 30.0  # a pipe, FIFO or stdin must deliver everything (to EOF) within this
FIRST_BYTE_SECONDS = 3.0  # ...and its first byte within this
# JSON values in one document: a full check/1 report holds a few thousand; 12 MiB of `{},` (4 million) took
# `explain --from` minutes and gigabytes to parse and check.
MAX_VALUES = 200_000


def stdin_unreadable(what: str, example: str) -> str:
    """Why `-` cannot be read as `what`: stdin is closed (`<&-`) or a terminal (nothing piped in)."""
    state = "closed" if sys.stdin is None else "a terminal"
    return f"{what} from stdin (-): stdin is {state}; pipe the {what} in, e.g. `... < {example}`"


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
            raise error(stdin_unreadable(what, "report.json"))
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
    mode = os.fstat(fd).st_mode
    regular = stat.S_ISREG(mode)
    waits = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)  # only these may get a writer later; /dev/null is done now
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
        if regular or (chunk == b"" and (total or not waits)):
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
    text = text.removeprefix("\ufeff")  # a byte order mark, as Notepad and PowerShell write UTF-8: not content
    values = text.count(",") + text.count("[") + text.count("{")
    if values > max_values:
        raise TooManyValues(f"holds up to {values} JSON values (a report has a few thousand; at most {max_values})")
    try:
        document = json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if text.count("[") + text.count("{") > MAX_DEPTH:  # only then can it nest deeper
        _check_depth(document)
    return document


# How deep a document may nest: a report nests about 10 deep, and every walk after parsing (the type check, the
# redaction, the views) recurses a few frames per level, so 600 deep ran out of Python's stack in the middle of one.
MAX_DEPTH = 64
# Integers a document may hold: 64-bit (bytes of memory, pids, counts); a longer one is no fact, and one written where
# a float belongs (a 400-digit mtime) overflowed float() in every reader.
_INT_DIGITS = 19


def _bounded_int(literal: str) -> int:
    if len(literal.lstrip("-")) > _INT_DIGITS:
        raise ValueError(f"a number of {len(literal)} digits (at most {_INT_DIGITS})")
    return int(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 reads as inf, which no JSON writer can write back
        raise ValueError(f"a number too large for a float ({literal[:20]}...)")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _check_depth(document: object) -> None:
    """ValueError when `document` nests deeper than MAX_DEPTH (walked with a list, not recursion)."""
    stack: list[tuple[object, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise ValueError(f"nested more than {MAX_DEPTH} deep (a report nests about 10)")
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))


def mismatch(
    value: object,
    hint: object,
    where: str,
    namespace: Mapping[str, object] | None = None,
    *,
    complete: bool | tuple[object, ...] = False,
) -> str | None:
    """Where a JSON value someone sent first differs from the type `hint` names (a TypedDict, a list or dict of
    them, a union, Literal, str, int, float, bool, None), as "where.member: expected ...", or None where it fits.

    By default a TypedDict member that is absent is accepted: reports written by older releases lack newer members,
    and their readers look members up with `.get`. With `complete`, every member a TypedDict requires must be there
    (what mhcdoctor itself just wrote, such as a path child's request); with a tuple of TypedDicts, only theirs. A
    member that is present must be of its
    type, all the way down. `namespace` resolves names a TypedDict's module imports only for type checking."""
    try:
        wrong = _checker(hint, dict(namespace or {}), complete)(value)
    except RecursionError:
        return f"{where}: nested too deeply"
    return None if wrong is None else where + wrong


# A check of one JSON value against one type: None where it fits, else where inside it it first does not and why
# (".member[2]: expected str, not list"), relative to the value. Built once per type (typing's introspection on
# every value cost most of the time a report took to read).
_Check = Callable[[object], "str | None"]
_CHECKS: dict[tuple[object, tuple[str, ...], bool | tuple[object, ...]], _Check] = {}
_HINTS: dict[tuple[object, tuple[str, ...]], dict[str, object]] = {}


def _hints(typed: object, namespace: dict[str, object]) -> dict[str, object]:
    """typing.get_type_hints of a TypedDict, once per type: it evaluates every annotation on each call."""
    key = (typed, tuple(sorted(namespace)))
    if key not in _HINTS:
        _HINTS[key] = typing.get_type_hints(typed, localns=namespace)
    return _HINTS[key]


def _checker(hint: object, namespace: dict[str, object], complete: bool | tuple[object, ...]) -> _Check:
    key = (hint, tuple(sorted(namespace)), complete)
    if key not in _CHECKS:
        _CHECKS[key] = lambda value: _CHECKS[key](value)  # a type that refers to itself finds its check when run
        _CHECKS[key] = _build(hint, namespace, complete)
    return _CHECKS[key]


def _build(hint: object, namespace: dict[str, object], complete: bool | tuple[object, ...]) -> _Check:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any or hint is object or isinstance(hint, typing.ForwardRef):
        return lambda value: None  # a forward reference is the recursive JsonValue: anything json.loads returns is one
    if typing.is_typeddict(hint):
        return _typed_dict(hint, namespace, complete)
    if origin in (typing.Union, types.UnionType):
        options = [_checker(arg, namespace, complete) for arg in args]

        def union(value: object) -> str | None:
            first = None
            for option in options:
                wrong = option(value)
                if wrong is None:
                    return None
                first = first or wrong
            return first

        return union
    if origin is typing.Literal:
        expected = f": expected one of {args}"
        return lambda value: None if any(value == a and type(value) is type(a) for a in args) else expected
    if origin in (list, Sequence):
        item = _checker(args[0], namespace, complete)

        def items(value: object) -> str | None:
            if not isinstance(value, list):
                return f": expected a list, not {_json_kind(value)}"
            for i, v in enumerate(value):
                wrong = item(v)
                if wrong is not None:
                    return f"[{i}]{wrong}"
            return None

        return items
    if origin in (dict, Mapping):
        member = _checker(args[1], namespace, complete)

        def members(value: object) -> str | None:
            if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                return f": expected an object, not {_json_kind(value)}"
            for k, v in value.items():
                wrong = member(v)
                if wrong is not None:
                    return f".{k}{wrong}"
            return None

        return members
    if hint is None or hint is type(None):
        return lambda value: None if value is None else ": expected null"
    if hint in (float, int, str, bool):
        kinds: tuple[type, ...] = (int, float) if hint is float else (hint,)
        name = "a number" if hint is float else getattr(hint, "__name__", str(hint))

        def leaf(value: object) -> str | None:
            if isinstance(value, kinds) and (hint is bool or not isinstance(value, bool)):
                return None
            return f": expected {name}, not {_json_kind(value)}"

        return leaf

    def untaught(value: object) -> str | None:
        raise TypeError(f"no JSON check for {hint!r}")  # a type this checker was not taught: a programming error

    return untaught


def _json_kind(value: object) -> str:
    """The JSON name of what was sent where something else was expected (a dict is an object, None is null)."""
    names = {dict: "object", list: "list", str: "str", bool: "bool", int: "int", float: "float", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _typed_dict(hint: object, namespace: dict[str, object], complete: bool | tuple[object, ...]) -> _Check:
    whole = complete is True or isinstance(complete, tuple) and hint in complete
    required = sorted(getattr(hint, "__required_keys__", frozenset())) if whole else []
    fields: list[tuple[str, _Check]] = []

    def check(value: object) -> str | None:
        if not isinstance(value, dict):
            return f": expected an object, not {_json_kind(value)}"
        missing = [key for key in required if key not in value]
        if missing:
            return f": no {missing[0]}"
        if not fields:  # built on first use: a member's type may be this TypedDict itself
            fields.extend(
                (key, _checker(member, namespace, complete)) for key, member in _hints(hint, namespace).items()
            )
        for key, member_check in fields:
            if key in value:
                wrong = member_check(value[key])
                if wrong is not None:
                    return f".{key}{wrong}"
        return None

    return check


def fill_absent(
    value: object, hint: object, namespace: Mapping[str, object] | None = None, max_values: int = MAX_VALUES
) -> object:
    """`value`, checked by `mismatch` against `hint`, with every TypedDict member it lacks filled in, at every level:
    None where the member's type admits it, else its empty value ([] for a list, {} for an object, "" for a string,
    0 for a number, False for a bool, a TypedDict's own members filled likewise); a member with no empty value (a
    Literal) stays absent, so `mismatch(..., complete=True)` names it. Present members are kept as they are.

    What is filled in counts against `max_values` (TooManyValues past it): a report of many empty objects (60,000
    `{}` models) would otherwise grow a hundredfold here, past the bound parse_json holds."""
    return _fill(value, hint, dict(namespace or {}), [max_values])


def _fill(value: object, hint: object, namespace: dict[str, object], budget: list[int]) -> object:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if typing.is_typeddict(hint) and isinstance(value, dict):
        filled = dict(value)
        for key, member in _hints(hint, namespace).items():
            if key in filled:
                filled[key] = _fill(filled[key], member, namespace, budget)
            elif (empty := _empty(member, namespace)) is not _NO_EMPTY:
                budget[0] -= _values(empty)
                if budget[0] < 0:
                    raise TooManyValues("would hold too many values once the members it lacks are filled in")
                filled[key] = empty
        return filled
    if origin in (typing.Union, types.UnionType):
        for arg in args:  # the option the value fits, as mismatch found it
            if _checker(arg, namespace, False)(value) is None:
                return _fill(value, arg, namespace, budget)
        return value
    if origin in (list, Sequence) and isinstance(value, list):
        return [_fill(item, args[0], namespace, budget) for item in value]
    if origin in (dict, Mapping) and isinstance(value, dict):
        return {key: _fill(item, args[1], namespace, budget) for key, item in value.items()}
    return value


def _values(value: object) -> int:
    """How many JSON values `value` holds (itself included)."""
    if isinstance(value, dict):
        return 1 + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


_NO_EMPTY = object()
_EMPTY: dict[object, object] = {str: "", int: 0, float: 0.0, bool: False}


def _empty(hint: object, namespace: dict[str, object]) -> object:
    """The value an absent member of type `hint` reads as (fill_absent), or _NO_EMPTY where it has none."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args or hint is None or hint is type(None):
        return None
    if origin in (list, Sequence):
        return []
    if origin in (dict, Mapping):
        return {}
    if typing.is_typeddict(hint):
        return _fill({}, hint, namespace, [MAX_VALUES])
    return _EMPTY.get(hint, _NO_EMPTY)
