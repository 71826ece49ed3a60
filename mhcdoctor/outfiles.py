"""Writing a file the user names (`--bundle`, `--plot`): whole or not at all, and only ever a regular file.

The bytes go to a fresh temporary file beside the target (created with O_EXCL, so never through a link), are synced,
and only then renamed over the target. So a full disk, a size limit or a signal leaves the target as it was (or
absent), never cut short, and the temporary file is removed. What is at the target already must be a regular file
(and `replace` must be given): a symbolic link is refused rather than written through, a FIFO rather than blocked on,
a device or a folder rather than clobbered. Without `replace` the rename cannot overwrite a file that appears
meanwhile (a hard link is made instead of renaming, which fails if the name exists).

This module is a low layer: it imports nothing from mhcdoctor but its errors.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from mhcdoctor.errors import InputError


def check_target(path: str | Path, what: str, replace: bool) -> None:
    """InputError unless `path` can be written: absent, or a regular file when `replace`. Never opens it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise InputError(f"cannot write {what} {path}: the folder {folder} does not exist") from None
        _check_bundle_name(path, what)
        return
    except OSError as exc:
        raise InputError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    kind = _kind(info.st_mode)
    if kind != "a regular file":
        raise InputError(f"cannot write {what} {path}: it is {kind}; refusing to replace anything but a regular file")
    _check_bundle_name(path, what)
    if not replace:
        raise InputError(f"cannot write {what} {path}: it exists (give --force to replace it)")


def _check_bundle_name(path: str | Path, what: str) -> None:
    """A bundle is a gzip-compressed tar: `--bundle x.zip` would write one under a name that says otherwise."""
    name = os.path.basename(str(path))
    if what == "bundle" and not name.endswith((".tar.gz", ".tgz")):
        stem = name.split(".", 1)[0] or "mhcdoctor-report"
        raise InputError(
            f"--bundle {path}: a bundle is a gzip-compressed tar; give a name ending in .tar.gz, e.g. {stem}.tar.gz"
        )


def write_file(path: str | Path, data: bytes, what: str, replace: bool) -> None:
    """Write `data` to `path` through a temporary file beside it and a rename; InputError, with the target left as it
    was, where that cannot be done (see the module's docstring)."""
    check_target(path, what, replace)
    target = os.path.abspath(path)
    folder, name = os.path.split(target)
    temp = os.path.join(folder, f".{name[:200]}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise InputError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    try:
        try:
            with contextlib.suppress(OSError):  # a file replaced keeps its mode (one kept private stays so)
                os.fchmod(fd, stat.S_IMODE(os.lstat(target).st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _move(temp, target, replace)
    except FileExistsError:
        raise InputError(f"cannot write {what} {path}: it exists (give --force to replace it)") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(f"cannot write {what} {path}: {reason}; nothing was written") from None
    finally:
        with contextlib.suppress(OSError):  # gone already once renamed
            os.unlink(temp)


def _move(temp: str, target: str, replace: bool) -> None:
    if replace:
        # rename replaces the name itself: a link put there since the check is replaced, never followed
        os.rename(temp, target)
        return
    try:
        os.link(temp, target)  # fails with EEXIST whatever appeared at the name meanwhile
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        # a file system without hard links (vfat, some FUSE): checked again just before, so the window is small
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "it exists") from None
        os.rename(temp, target)


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
