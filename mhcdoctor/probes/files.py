"""Reading a file that an environment put there: the one way every probe opens a file.

Files under site-packages, caches and home folders are hostile input. A FIFO named `device_kernel.cu` blocks a plain
`open()` for ever, and a link to a device (`/dev/zero`, a tty) never ends or has side effects on open. So a file is
read only when it is a regular file: stat before opening (a device is never opened), open with O_NONBLOCK and
O_NOCTTY (a FIFO swapped in after the stat cannot block the open), fstat the open file (what was opened is what was
checked), and read at most `limit` bytes.

    read_text(path, limit)   -> str | None     (decoded as UTF-8, undecodable bytes replaced)
    read_bytes(path, limit)  -> bytes | None
    with open_regular(path) as handle: ...     (a binary file object; OSError when not a regular file)
    is_regular(path)         -> bool | None    (stat only, nothing opened; None when the stat fails otherwise)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """The path names a FIFO, socket, device or folder: never read."""


@contextmanager
def open_regular(path: Path | str) -> Iterator[BinaryIO]:
    """A binary handle on `path` when it is a regular file (links followed); OSError otherwise, nothing blocks."""
    if not stat.S_ISREG(os.stat(path).st_mode):  # a device is refused before it is opened: opening one can act
        raise NotRegularFile(f"{path}: not a regular file")
    fd = os.open(path, _FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO between the stat and the open
            raise NotRegularFile(f"{path}: not a regular file")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def is_regular(path: Path | str) -> bool | None:
    """Whether `path` is a regular file (links followed), by stat alone; False where nothing is there."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):  # unreadable folder, a loop of links, a NUL byte
        return None


def read_bytes(path: Path | str, limit: int = 1 << 20) -> bytes | None:
    """At most `limit` bytes of a regular file, or None when it is missing, unreadable or not a regular file."""
    try:
        with open_regular(path) as handle:
            return handle.read(limit)
    except (OSError, ValueError):  # ValueError: a path with a NUL byte, from metadata
        return None


def read_text(path: Path | str, limit: int = 1 << 20) -> str | None:
    """At most `limit` bytes of a regular file as text (undecodable bytes replaced), or None as read_bytes."""
    data = read_bytes(path, limit)
    return None if data is None else data.decode("utf-8", errors="replace")
