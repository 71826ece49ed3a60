"""A log from a stranger, read as blocks of whole lines in bounded memory: a file, gzip, or stdin ("-").

Memory is one block (BLOCK bytes) plus one over-long line's head (MAX_LINE); time is linear in the input. What is
not a text log (another compression, UTF-16, a binary file) is one InputError line; a gzip stream cut short is read
up to where it ends and said so.
"""

from __future__ import annotations

import gzip
import io
import os
import select
import stat
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from mhcdoctor.errors import InputError
from mhcdoctor.userfiles import stdin_unreadable

BLOCK = 1 << 20
MAX_LINE = 64 << 10  # a longer line keeps its head (MAX_LINE bytes); the rest is skipped to the next newline
_SAMPLE = 64 << 10
FIFO_WAIT = 5.0  # seconds a FIFO may go without a writer before that is said (--follow waits for one)
POLL = 0.5  # seconds between looks at a followed file that has not grown
# Magic numbers of formats a user may hand in instead of a text log, with the command that reads them.
_OTHER_FORMATS: tuple[tuple[bytes, str], ...] = (
    (b"\x28\xb5\x2f\xfd", "zstd-compressed; read it with: zstd -dc FILE | mhcdoctor log -"),
    (b"\xfd7zXZ\x00", "xz-compressed; read it with: xz -dc FILE | mhcdoctor log -"),
    (b"BZh", "bzip2-compressed; read it with: bzip2 -dc FILE | mhcdoctor log -"),
    (b"PK\x03\x04", "a zip archive; unzip it and give the log inside"),
    (
        b"\xff\xfe",
        "UTF-16 text (PowerShell's `>` writes it); convert it: iconv -f utf-16 -t utf-8 FILE | mhcdoctor log -",
    ),
    (b"\xfe\xff", "UTF-16 text; convert it: iconv -f utf-16 -t utf-8 FILE | mhcdoctor log -"),
)
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))


@dataclass
class Source:
    """What was read: shown in the report's header, so a reader knows how much of the log it speaks for."""

    label: str
    gzip: bool = False
    bytes_read: int = 0  # after decompression
    lines: int = 0
    long_lines: int = 0  # lines longer than MAX_LINE, read as their head
    ended_early: str | None = None  # why reading stopped before the end (a gzip stream cut short, Ctrl-C)
    head: bytes = b""  # the input's first bytes, to say what it is when it is no log
    regular: bool = False  # a regular file: --follow waits at its end for more


def open_log(path: str, wait: float | None = FIFO_WAIT) -> tuple[BinaryIO, Source]:
    """The raw byte stream of `path` ("-": stdin) and its Source; InputError for what cannot be opened. A FIFO with
    no writer is waited on `wait` seconds at most (None: as long as it takes), never for ever."""
    if path == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError(stdin_unreadable("log", "vllm.log"))
        return sys.stdin.buffer, Source("stdin")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, writer or not
    except FileNotFoundError:
        raise InputError(f"log not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"log {path} is a folder, not a file") from None
    except OSError as exc:
        raise InputError(f"cannot read log {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise InputError(f"log {path} is a folder, not a file")
    if stat.S_ISFIFO(mode) and not select.select([fd], [], [], wait)[0]:
        os.close(fd)
        raise InputError(
            f"log {path} is a FIFO that no process wrote to in {wait:g} s: start its writer first, or pipe the log "
            "in (WRITER | mhcdoctor log -); --follow waits for it"
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), Source(path, regular=stat.S_ISREG(mode))


def blocks(raw: BinaryIO, source: Source, follow: bool = False) -> Iterator[bytes]:
    """Blocks of whole lines (each ends with a newline), in order, as soon as they are read (a live pipe's lines
    come as they are written); `source` counts bytes, lines and long lines. `follow`: a regular file is read on at
    its end, as it grows, until the reader is interrupted."""
    first = _read(raw, _SAMPLE, source)
    while 0 < len(first) < 2:  # enough to tell gzip's magic from a first line written one byte at a time
        more = _read(raw, _SAMPLE, source)
        if not more:
            break
        first += more
    stream: BinaryIO = raw
    head = first
    if first[:2] == b"\x1f\x8b":
        source.gzip = True
        stream = gzip.GzipFile(fileobj=_Replay(first, raw), mode="rb")  # type: ignore[assignment]
        head = _read(stream, _SAMPLE, source)
    _check_text(head, source.label)
    source.bytes_read = len(head)
    source.head = head[:512]
    carry, skipping, pending = b"", False, head
    while pending or (follow and source.regular and not source.gzip):
        if not pending:  # a followed file at its end: wait for it to grow
            time.sleep(POLL)
            pending = _more(stream, source)
            if not pending and os.fstat(stream.fileno()).st_size < stream.tell():
                stream.seek(0)  # emptied under us (logrotate's copytruncate): read on from its start, as tail -F does
                carry, skipping = b"", False
            continue
        if skipping:
            newline = pending.find(b"\n")
            if newline < 0:
                pending = _more(stream, source)
                continue
            pending, skipping = pending[newline + 1 :], False
        buf = carry + pending
        last = buf.rfind(b"\n")
        carry = buf[last + 1 :]
        if last >= 0:
            source.lines += buf.count(b"\n", 0, last + 1)
            yield buf[: last + 1]
        if len(carry) > MAX_LINE:
            source.lines += 1
            source.long_lines += 1
            yield carry[:MAX_LINE] + b"\n"
            carry, skipping = b"", True
        pending = _more(stream, source)
    if carry:
        source.lines += 1
        yield carry + b"\n"


def _more(stream: BinaryIO, source: Source) -> bytes:
    if source.ended_early:
        return b""
    data = _read(stream, BLOCK, source)
    source.bytes_read += len(data)
    return data


def _read(stream: BinaryIO, size: int, source: Source) -> bytes:
    """Up to `size` bytes (fewer only at the end); a gzip stream cut short or corrupt ends the input, said so."""
    try:
        # read1: what is there now, so a live pipe's lines are read as they come and a gzip stream cut short
        # still gives all it holds
        reader = getattr(stream, "read1", stream.read)
        data = reader(size)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        where = f"after {source.bytes_read:,} bytes" if source.bytes_read else "at its start"
        if not source.bytes_read and not isinstance(exc, EOFError):
            raise InputError(f"log {source.label}: not a readable gzip stream ({exc})") from None
        source.ended_early = f"the gzip stream ends early or is corrupt {where} ({exc}); read up to there"
        return b""
    except OSError as exc:
        raise InputError(f"cannot read log {source.label}: {exc.strerror or exc}") from None
    return data or b""


def _check_text(head: bytes, label: str) -> None:
    """One clear line for input that is not a text log: another format, or binary data."""
    for magic, what in _OTHER_FORMATS:
        if head.startswith(magic):
            raise InputError(f"log {label} is {what}")
    if not head:
        return
    junk = len(head) - len(head.translate(None, _CONTROL))
    if junk * 10 > len(head):  # a text log, even one with stray bytes, is far below 10% control characters
        raise InputError(
            f"log {label} is not text: {junk:,} of its first {len(head):,} bytes are control characters "
            "(a binary file? give the vLLM server log, plain or gzip)"
        )


class _Replay(io.RawIOBase):
    """The bytes already read from a stream, then the rest of it: gzip reads from the start without seeking."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = getattr(self._rest, "read1", self._rest.read)(len(buffer))
        buffer[: len(data)] = data
        return len(data)
