"""vLLM's distribution (the `vllm` probe) and which build it is: CUDA, ROCm, CPU or XPU, from files only.

vLLM's setup.py appends the target to the version of every build but PyPI's CUDA one: `+cpu`, `+xpu`,
`+rocm<ver>`, `+cu<ver>`. vLLM itself asks its version for "cpu" to pick its CPU platform
(vllm/platforms/__init__.py, cpu_platform_plugin). Without a label, the extension modules in the package say it:
`_rocm_C` (ROCm), `vllm_flash_attn`/`_flashmla_C` (CUDA); a package with no extension module at all (a source tree,
a stand-in) has no established build.
"""

from __future__ import annotations

from pathlib import Path

from mhcdoctor.knowledge import vllm_code
from mhcdoctor.knowledge.vllm_builds import build_from_version
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.files import read_bytes
from mhcdoctor.probes.libraries import VLLM, probe_metadata

NAME = "vllm"

# Extension modules that only one build ships (the PyPI 0.34.0 wheel: vllm_flash_attn/_vllm_fa3_C.abi3.so).
_MARKERS = (("_rocm_C", "rocm"), ("vllm_flash_attn", "cuda"), ("_flashmla_C", "cuda"))


def build_from_files(package: Path) -> tuple[str | None, str]:
    """The build the package's extension modules say, with the evidence."""
    try:
        names = sorted(p.name for p in package.iterdir())
        shared = [n for n in names if n.endswith(".so")]
    except OSError as exc:
        return None, f"{package}: {exc}"
    for marker, build in _MARKERS:
        if any(n.startswith(marker) for n in names):
            return build, f"{package}: {marker}* ships only in the {build.upper() if build != 'rocm' else 'ROCm'} build"
    if "_C.abi3.so" in shared or any(n.startswith("_C.") for n in shared):
        return None, f"{package}: _C only; no module that names the build"
    return None, f"{package}: no compiled extension module (a source tree or a stand-in)"


def probe(ctx: ProbeContext) -> ProbeResult:
    result = probe_metadata(VLLM, ctx)
    if result.status != "ok":
        return result
    version = result.data.get("version")
    build, evidence = build_from_version(version if isinstance(version, str) else None)
    if build is None:
        build, evidence = build_from_files(Path(str(result.data["location"])))
        if build is None and version:
            evidence += f"; version {version} has no local label"
    result.data = {**result.data, "build": build, "build_evidence": evidence}
    result.evidence.append(f"build: {build or 'not established'} ({evidence})")
    files = fingerprint(Path(str(result.data["location"])))
    if files:  # the release whose mHC code this is, told by its files (a dev build's version says little)
        found = vllm_code.match(files, version if isinstance(version, str) else None)
        result.data.update(code=found.release or "new", code_evidence=found.text())
        result.evidence.append(f"mHC code: {found.text()} ({len(files)} files)")
    return result


def fingerprint(package: Path) -> dict[str, str]:
    """{path under the package: digest} of the mHC files (vllm_code.MHC_FILES) an installed vllm package holds, read
    as every probe reads a file; unreadable ones, and any over vllm_code.MAX_FILE_BYTES, left out."""
    out: dict[str, str] = {}
    for pattern in vllm_code.MHC_FILES:
        for path in sorted(package.glob(pattern)):
            data = read_bytes(path, vllm_code.MAX_FILE_BYTES + 1)
            if data is not None and len(data) <= vllm_code.MAX_FILE_BYTES:
                out[path.relative_to(package).as_posix()] = vllm_code.digest(data)
    return out
