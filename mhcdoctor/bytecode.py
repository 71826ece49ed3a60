"""Where the doctor's Python children keep their bytecode: in a cache of mhcdoctor's own, never in the probed install.

Each probe and verify child is a fresh interpreter that imports torch (over 2,000 modules) and perhaps tilelang,
triton or vLLM. Container images often ship those packages without `.pyc` files and set PYTHONDONTWRITEBYTECODE=1
(the H200 machine's image does both), so every child compiled all of torch from source: `import torch` took 3.4 s
there instead of 1.25 s, more than half of a warm `verify`. Where the torch the children will import has no
bytecode beside its source, children get PYTHONPYCACHEPREFIX (Python 3.8+): Python then reads and writes the
bytecode of every module in a mirror tree under that folder, not beside the sources, so the probed site-packages
stays as it was, while the next child finds the compiled modules. Python checks each cached file against its
source's size and modification time, so an upgraded package is recompiled, never run stale. Where torch has its
bytecode (a pip install compiles it), the prefix would only duplicate it, and children run as before: bytecode
read where it is, none written.

The folder is `$MHCDOCTOR_CACHE_DIR/pycache`, else `$XDG_CACHE_HOME/mhcdoctor/pycache`, else
`~/.cache/mhcdoctor/pycache`. Code from it is executed, so it is used only if nobody but this user (or root) can
change it or any folder above it, all the way up to `/`: each is owned by this user or by root and writable by no
one else (a sticky folder such as /tmp aside, where others cannot move what is ours). Root's cache must therefore sit
in folders only root can change: `sudo -E mhcdoctor check`, whose HOME is another user's, gets no cache, since that
user could swap the folders under it for ones holding their own `.pyc` files and have root run them. The check
walks the path one folder at a time, making missing ones (mode 0700) only under folders already found safe, and
follows a link only where it sits in such a folder; children get the path it found, with no link left in it. It runs
for each child, just before that child starts (`child_env`); since no one else can change those folders, what it
found holds while the child runs. Where the check fails, children write no bytecode at all, as before. A user's own
PYTHONPYCACHEPREFIX stands, and `MHCDOCTOR_BYTECODE_CACHE=0` turns the cache off. Removing the folder is always safe.

This module is a low layer: it imports nothing from mhcdoctor.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from importlib.machinery import PathFinder
from pathlib import Path

CACHE_DIR_VARIABLE = "MHCDOCTOR_CACHE_DIR"
SWITCH_VARIABLE = "MHCDOCTOR_BYTECODE_CACHE"
_OFF = ("0", "off", "no", "false")


def cache_folder(env: Mapping[str, str]) -> Path | None:
    """The bytecode folder the environment `env` names, or None where it names none (no home, say)."""
    if env.get(CACHE_DIR_VARIABLE):
        return Path(env[CACHE_DIR_VARIABLE]) / "pycache"
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "mhcdoctor" / "pycache"
    if env.get("HOME"):
        return Path(env["HOME"]) / ".cache" / "mhcdoctor" / "pycache"
    return None


class UnsafeFolder(Exception):
    """The cache folder, or a folder above it, could be changed by another user (the message says which)."""


def usable_folder(folder: Path) -> str | None:
    """Make `folder` (private to this user) if it is missing; None if it can hold bytecode safely, else why not."""
    try:
        private_folder(folder)
    except UnsafeFolder as exc:
        return str(exc)
    return None


_MAX_LINKS = 40  # as the kernel's own limit on links followed in one path


def private_folder(folder: Path) -> Path:
    """`folder` with no link left in it, made (mode 0700) where missing, once every folder from `/` down to it is
    found safe: owned by this user or root, writable by no one else, and `folder` itself this user's own. Raises
    UnsafeFolder otherwise. A folder is made only in one already found safe, so nothing is made where others write."""
    me = os.geteuid()
    todo = list(Path(os.path.abspath(folder)).parts[1:])
    real = "/"
    _check_folder(real, os.lstat(real), me)
    links = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            real = os.path.dirname(real)
            continue
        here = os.path.join(real, part)
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            try:
                os.mkdir(here, 0o700)
                info = os.lstat(here)
            except OSError as exc:
                raise UnsafeFolder(f"cannot make {here}: {exc.strerror or exc}") from None
        except OSError as exc:
            raise UnsafeFolder(f"cannot read {here}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(info.st_mode):  # set by the owner of a folder found safe: follow it, and check its target
            links += 1
            if links > _MAX_LINKS:
                raise UnsafeFolder(f"{folder}: too many links")
            target = os.readlink(here)
            if os.path.isabs(target):
                real = "/"
            todo = [*Path(target).parts[1 if os.path.isabs(target) else 0 :], *todo]
            continue
        _check_folder(here, info, me)
        real = here
    info = os.lstat(real)
    if info.st_uid != me:
        raise UnsafeFolder(f"{real} belongs to another user (uid {info.st_uid})")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):  # sticky or not: others could add files to it
        raise UnsafeFolder(f"{real} is writable by others (mode {stat.S_IMODE(info.st_mode):o})")
    return Path(real)


def _check_folder(path: str, info: os.stat_result, me: int) -> None:
    """UnsafeFolder unless `path` is a folder that only `me` or root can change (sticky folders: see above)."""
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"{path} is not a folder")
    if info.st_uid not in (me, 0):
        raise UnsafeFolder(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        raise UnsafeFolder(f"{path} is writable by others (mode {stat.S_IMODE(info.st_mode):o})")


def bytecode_missing(search_path: Sequence[str]) -> bool:
    """Whether the torch found on `search_path` has no bytecode beside its source (no `__pycache__/__init__.*.pyc`
    for any interpreter). Looked up on disk, never imported; False where there is no torch to import."""
    spec = PathFinder.find_spec("torch", [p for p in search_path if p])
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    source = Path(spec.origin)
    return not any((source.parent / "__pycache__").glob(f"{source.stem}.*.pyc"))


def child_env(env: Mapping[str, str], search_path: Sequence[str]) -> dict[str, str]:
    """`env` with the bytecode settings of a Python child that looks for packages on `search_path`: the cache of
    mhcdoctor's own where torch there has no bytecode and the cache can be used, else no bytecode written
    (PYTHONDONTWRITEBYTECODE=1), so that nothing lands in the probed install."""
    out = dict(env)
    if out.get("PYTHONPYCACHEPREFIX"):  # the user's own cache: their PYTHONDONTWRITEBYTECODE says whether to write
        return out
    folder = cache_folder(out)
    real = None
    if (
        out.get(SWITCH_VARIABLE, "").strip().lower() not in _OFF
        and folder is not None
        and bytecode_missing(search_path)
    ):
        try:
            real = private_folder(folder)
        except (UnsafeFolder, OSError):
            real = None
    if real is None:
        out["PYTHONDONTWRITEBYTECODE"] = "1"
        return out
    out["PYTHONPYCACHEPREFIX"] = str(real)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out
