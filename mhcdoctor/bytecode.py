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
`~/.cache/mhcdoctor/pycache`. Code from it is executed, so it is used only if it is a real folder (not a link)
owned by this user and writable by nobody else; otherwise children write no bytecode at all, as before. A user's
own PYTHONPYCACHEPREFIX stands, and `MHCDOCTOR_BYTECODE_CACHE=0` turns the cache off. Removing the folder is always
safe.

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


def usable_folder(folder: Path) -> str | None:
    """Make `folder` (private to this user) if it is missing; None if it can hold bytecode safely, else why not."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as exc:
        return f"cannot make {folder}: {exc.strerror or exc}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder (a link or a file)"
    if info.st_uid != os.getuid():
        return f"{folder} belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{folder} is writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


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
    if (
        out.get(SWITCH_VARIABLE, "").strip().lower() in _OFF
        or folder is None
        or not bytecode_missing(search_path)
        or usable_folder(folder) is not None
    ):
        out["PYTHONDONTWRITEBYTECODE"] = "1"
        return out
    out["PYTHONPYCACHEPREFIX"] = str(folder)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out
