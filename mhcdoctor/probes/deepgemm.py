"""DeepGEMM as vLLM's CUDA mhc_pre finds it, from files only: nothing is imported (importing it JIT-initialises CUDA).

vllm/utils/deep_gemm.py (`_import_deep_gemm`, 0.20–0.34) imports the standalone `deep_gemm` first and falls back to
the copy vLLM vendors as `vllm.third_party.deep_gemm` (DeepGEMM 2.5.0 in vLLM 0.20–0.26, 2.6.1 in 0.27–0.29, 2.8.0
in 0.30–0.32, 2.8.1 in 0.33–0.34, each read from the wheel). mhc_pre calls its `tf32_hc_prenorm_gemm`; a module
without it makes vLLM raise at the first call, so whether the copy found defines it is the fact that matters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mhcdoctor.probes.base import ProbeContext, ProbeResult, read_text
from mhcdoctor.probes.libraries import version_from_files
from mhcdoctor.probes.packages import distribution, find_package
from mhcdoctor.probes.torch_build import parse_assignments

NAME = "deepgemm"
PRENORM = "tf32_hc_prenorm_gemm"


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
    data: dict[str, Any] = {
        "present": True, "version": version, "location": str(found), "vendored": is_vendored,
        "has_prenorm_gemm": prenorm,
    }  # fmt: skip
    named = "named" if prenorm else "not named" if prenorm is False else "unread"
    kind = "vLLM's vendored copy" if is_vendored else "standalone deep_gemm (vLLM imports it first)"
    evidence = [f"{found}: {kind} {version or '(no version)'}; {PRENORM} {named} in its __init__.py"]
    if not is_vendored and vendored is not None:
        evidence.append(f"{vendored}: vLLM's vendored copy, shadowed by the standalone one")
    return ProbeResult(NAME, "ok", data, evidence, source)
