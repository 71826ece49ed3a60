"""DeepGEMM as vLLM's CUDA mhc_pre finds it, from files only: nothing is imported (importing it JIT-initialises CUDA).

vllm/utils/deep_gemm.py (`_import_deep_gemm`, 0.20–0.34) imports the standalone `deep_gemm` first and falls back to
the copy vLLM vendors as `vllm.third_party.deep_gemm` (DeepGEMM 2.5.0 in vLLM 0.20–0.26, 2.6.1 in 0.27–0.29, 2.8.0
in 0.30–0.32, 2.8.1 in 0.33–0.34, each read from the wheel). mhc_pre calls its `tf32_hc_prenorm_gemm`; a module
without it makes vLLM raise at the first call, so whether the copy found defines it is the fact that matters.
Which archs it has a kernel for is read from its compiled library (`_C*.so`, `_C_extension.abi3.so` from vLLM 0.32):
the `smNN_tf32_hc_prenorm_gemm` symbols it holds, streamed in bounded chunks from regular files only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.files import open_regular
from mhcdoctor.probes.libraries import version_from_files
from mhcdoctor.probes.packages import distribution, find_package
from mhcdoctor.probes.torch_build import parse_assignments

NAME = "deepgemm"
PRENORM = "tf32_hc_prenorm_gemm"
# _C.cpython-312-x86_64-linux-gnu.so (vLLM 0.20-0.31), _C_extension.abi3.so (0.32+)
_LIBRARY = re.compile(r"_C(_extension)?\.[A-Za-z0-9_.-]*\.so")
_SYMBOL = re.compile(rb"sm(\d{2,3})_tf32_hc_prenorm_gemm")
LIBRARY_BYTES = 128 << 20  # all libraries together (vLLM 0.32's is 36 MB; 0.21-0.31 ship one per Python, 1.4 MB each)
LIBRARY_FILES = 8
_CHUNK = 1 << 20


def _scan(path: Path, budget: int) -> tuple[set[str], int] | None:
    """The archs named by prenorm symbols in one library file and the bytes read; None: not a readable regular file
    (open_regular: a FIFO planted under the name cannot hang the probe). A symbol split between chunks is kept
    by carrying the last bytes over."""
    archs: set[str] = set()
    carry, read = b"", 0
    try:
        with open_regular(path) as handle:
            while read < budget:
                block = handle.read(min(_CHUNK, budget - read))
                if not block:
                    break
                read += len(block)
                data = carry + block
                archs.update(f"sm_{m.group(1).decode()}" for m in _SYMBOL.finditer(data))
                carry = data[-32:]
    except OSError:
        return None
    return archs, read


def prenorm_archs(package: Path) -> tuple[list[str] | None, str]:
    """The archs deep_gemm's compiled library has a tf32_hc_prenorm_gemm kernel for (None: no library read), and
    what was read, for the evidence."""
    try:
        with os.scandir(package) as entries:  # a bounded listing: the first 256 entries
            names = sorted(e.name for _, e in zip(range(256), entries, strict=False) if _LIBRARY.fullmatch(e.name))
    except OSError:
        return None, f"{package}: not listed"
    archs: set[str] = set()
    read_any, budget, files = False, LIBRARY_BYTES, []
    for name in names[:LIBRARY_FILES]:
        scanned = _scan(package / name, budget)
        if scanned is None:
            continue
        found, size = scanned
        read_any, budget = True, budget - size
        archs |= found
        files.append(name)
        if budget <= 0:
            break
    if not read_any:
        return None, f"{package}: no readable _C library"
    ordered = sorted(archs, key=lambda a: int(a[3:]))
    return ordered, f"{', '.join(files)}: {PRENORM} kernels for {', '.join(ordered) or 'no arch'}"


def _read(package: Path) -> tuple[str | None, bool | None]:
    """(`__version__`, whether `__init__.py` names tf32_hc_prenorm_gemm) from a deep_gemm package folder."""
    text = read_text(package / "__init__.py", limit=1 << 20)
    if text is None:
        return None, None
    version = parse_assignments(text).get("__version__")
    return (version if isinstance(version, str) else version_from_files(package)), PRENORM in text


def probe(ctx: ProbeContext) -> ProbeResult:
    source = "files: deep_gemm, vllm/third_party/deep_gemm"
    standalone = find_package("deep_gemm", ctx.search_path)
    vllm = find_package("vllm", ctx.search_path)
    vendored = vllm / "third_party" / "deep_gemm" if vllm is not None and vllm.is_dir() else None
    if vendored is not None and not (vendored / "__init__.py").is_file():
        vendored = None
    found, is_vendored = (standalone, False) if standalone is not None else (vendored, True)
    if found is None:
        where = f"vLLM at {vllm} vendors none" if vllm else "vLLM is not found"
        evidence = [f"no deep_gemm on the search path; {where}"]
        error = "deep_gemm is not installed (neither standalone nor vendored by vLLM)"
        return ProbeResult(NAME, "missing", {"present": False}, evidence, source, error=error)
    version, prenorm = _read(found)
    dist = distribution("deep_gemm", ctx.search_path) if not is_vendored else None
    if dist is not None and dist.version:
        version = dist.version
    archs, read = prenorm_archs(found)
    data: dict[str, Any] = {
        "present": True, "version": version, "location": str(found), "vendored": is_vendored,
        "has_prenorm_gemm": prenorm, "prenorm_archs": archs,
    }  # fmt: skip
    named = "named" if prenorm else "not named" if prenorm is False else "unread"
    kind = "vLLM's vendored copy" if is_vendored else "standalone deep_gemm (vLLM imports it first)"
    evidence = [f"{found}: {kind} {version or '(no version)'}; {PRENORM} {named} in its __init__.py", read]
    if not is_vendored and vendored is not None:
        evidence.append(f"{vendored}: vLLM's vendored copy, shadowed by the standalone one")
    return ProbeResult(NAME, "ok", data, evidence, source)
