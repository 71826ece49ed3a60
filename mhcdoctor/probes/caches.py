"""The two kernel caches that bite, from files only: tilelang's (vLLM's mHC kernels compiled before) and aiter's
JIT-built module_mhc.so (built for which GPUs, and when, against the installed aiter and torch).

tilelang (tilelang/cache/kernel_cache.py, 0.1.11+): $TILELANG_CACHE_DIR (default ~/.tilelang/cache), one namespace
folder per tilelang version and machine (`0.1.12-x86_64`), `kernels/<key>/device_kernel.cu` per kernel; older
releases keep `<key>/` folders in the cache folder itself. A kernel is vLLM's mHC kernel when its device source names
one of vLLM's mHC kernel functions. aiter (aiter/jit/core.py) loads `module_mhc.so` by module name alone from
$AITER_JIT_DIR, aiter/jit/ or ~/.aiter/jit: whatever built it. Reading is bounded: at most MAX_ENTRIES kernel
folders, 256 KiB of each source, and SO_SCAN_LIMIT bytes of the .so.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
from pathlib import Path
from typing import Any

from mhcdoctor.probes.aiter import module_mhc_candidates
from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.files import open_regular
from mhcdoctor.probes.packages import distribution, find_package

TILELANG_NAME = "tilelang.cache"
AITER_NAME = "aiter.jit"
MAX_ENTRIES = 4000
SO_SCAN_LIMIT = 512 << 20
# vLLM's mHC kernel functions (kernels/mhc/tilelang_kernels.py, 0.22–0.34; layers/mhc.py in 0.20–0.21).
MHC_KERNELS = re.compile(rb"mhc_pre_big_fuse|mhc_post|mhc_fused|hc_prenorm_gemm|hc_head_fuse|mhc_pre_delayed")
# clang's offload bundle names each target: hipv4-amdgcn-amd-amdhsa--gfx942 (with :sramecc+:xnack- features).
OFFLOAD_TARGET = re.compile(rb"amdgcn-amd-amdhsa--(gfx[0-9a-f]{2,5})")


def tilelang_cache_dir(ctx: ProbeContext) -> Path | None:
    if ctx.env.get("TILELANG_CACHE_DIR"):
        return Path(ctx.env["TILELANG_CACHE_DIR"])
    return Path(ctx.env["HOME"]) / ".tilelang" / "cache" if ctx.env.get("HOME") else None


def _namespaces(root: Path, version: str | None) -> list[Path]:
    """This tilelang's namespace folders (`0.1.12-x86_64/kernels`), matched by name: the version is METADATA's text,
    never put into a path or a glob (a `Version: ../**/**/x` walked the whole disk)."""
    if not version:
        return []
    try:
        with os.scandir(root) as it:  # as many entries as kernel folders are counted, no more
            entries = list(itertools.islice(it, MAX_ENTRIES))
        names = sorted(e.name for e in entries if e.name.startswith(f"{version}-") and e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    return [root / name / "kernels" for name in names if (root / name / "kernels").is_dir()]


def _kernel_folders(root: Path, version: str | None) -> list[Path]:
    """The kernel folders of this tilelang: its namespace's kernels/ (0.1.11+), else the cache folder's own."""
    candidates = _namespaces(root, version)
    folders: list[Path] = []
    for parent in candidates or [root]:
        try:
            with os.scandir(parent) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                        folders.append(Path(entry.path))
                        if len(folders) >= MAX_ENTRIES:
                            return folders
        except OSError:
            continue
    return folders


def probe_tilelang(ctx: ProbeContext) -> ProbeResult:
    source = "files: $TILELANG_CACHE_DIR"
    root = tilelang_cache_dir(ctx)
    dist = distribution("tilelang", ctx.search_path)
    if find_package("tilelang", ctx.search_path) is None or root is None:
        return ProbeResult(TILELANG_NAME, "missing", {}, ["tilelang or a home folder not found"], source)
    data: dict[str, Any] = {"path": str(root), "exists": root.is_dir()}
    if not root.is_dir():
        data.update(entries=0, mhc_entries=0)
        return ProbeResult(TILELANG_NAME, "ok", data, [f"{root}: does not exist (a cold cache)"], source)
    folders = _kernel_folders(root, dist.version if dist else None)
    mhc = 0
    for folder in folders:
        text = read_text(folder / "device_kernel.cu", limit=256 << 10) or read_text(
            folder / "kernel.cu", limit=256 << 10
        )
        if text is not None and MHC_KERNELS.search(text.encode("utf-8", "replace")):
            mhc += 1
    data.update(entries=len(folders), mhc_entries=mhc)
    capped = " (stopped counting there)" if len(folders) >= MAX_ENTRIES else ""
    evidence = [f"{root}: {len(folders)} kernels{capped} for tilelang {dist.version if dist else '?'}, {mhc} of "
                "them vLLM's mHC kernels"]  # fmt: skip
    return ProbeResult(TILELANG_NAME, "ok", data, evidence, source)


def offload_targets(path: Path) -> list[str] | None:
    """The gfx targets named in a HIP module's offload bundle (bounded scan); None when it cannot be read."""
    found: set[str] = set()
    tail = b""
    try:
        with open_regular(path) as handle:
            read = 0
            while read < SO_SCAN_LIMIT:
                chunk = handle.read(1 << 20)
                if not chunk:
                    break
                read += len(chunk)
                found.update(m.decode() for m in OFFLOAD_TARGET.findall(tail + chunk))
                tail = chunk[-64:]
    except OSError:
        return None
    return sorted(found)


def _installed_mtime(ctx: ProbeContext, name: str) -> float | None:
    dist = distribution(name, ctx.search_path)
    try:
        return (dist.path / "METADATA").stat().st_mtime if dist is not None else None
    except OSError:
        return None


def arch_rebuild(core: str | None) -> bool | None:
    """Whether aiter/jit/core.py's get_module rebuilds a module whose .so lacks the running arch: it calls
    _needs_arch_rebuild (aiter #3849; v0.1.17 aiter/jit/core.py:651-654), where v0.1.16.post6's (line 597) imports it
    by name alone. None: the file could not be read or holds no get_module."""
    try:
        tree = ast.parse(core) if core is not None else None
    except (SyntaxError, ValueError):
        return None
    get_module = next(
        (n for n in (tree.body if tree else []) if isinstance(n, ast.FunctionDef) and n.name == "get_module"), None
    )
    if get_module is None:
        return None
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_needs_arch_rebuild"
        for n in ast.walk(get_module)
    )


def probe_aiter_jit(ctx: ProbeContext) -> ProbeResult:
    source = "files: module_mhc.so"
    package = find_package("aiter", ctx.search_path)
    if package is None:
        return ProbeResult(AITER_NAME, "missing", {}, ["aiter is not installed"], source)
    so = next((p for p in module_mhc_candidates(package, ctx.env) if p.is_file()), None)
    if so is None:
        return ProbeResult(AITER_NAME, "missing", {}, ["no module_mhc.so built yet"], source)
    targets = offload_targets(so)
    try:
        mtime: float | None = so.stat().st_mtime
    except OSError:
        mtime = None
    rebuild = arch_rebuild(read_text(package / "jit" / "core.py", limit=1 << 20))
    data = {
        "path": str(so), "targets": targets, "mtime": mtime, "aiter_mtime": _installed_mtime(ctx, "amd-aiter"),
        "torch_mtime": _installed_mtime(ctx, "torch"), "arch_rebuild": rebuild,
    }  # fmt: skip
    evidence = [f"{so}: offload targets {', '.join(targets or []) or 'none found'}"]
    rebuilds = {True: "rebuilds", False: "loads by name", None: "could not be read on"}[rebuild]
    evidence.append(f"{package / 'jit' / 'core.py'}: get_module {rebuilds} a module_mhc.so without the running arch")
    return ProbeResult(AITER_NAME, "ok", data, evidence, source)
