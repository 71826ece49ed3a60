"""vLLM's releases with DeepSeek-V4 mHC (0.20.0–0.34.0), one record each: what its wheel pins and vendors.

Pins are each wheel's Requires-Dist (vllm-X.dist-info/METADATA); the DeepGEMM version is
vllm/third_party/deep_gemm/__init__.py's __version__, read from each wheel (/work/cache/vllm-files/X/).
A version between releases (a dev build, a nightly, an rc, a local build) gets the newest release at or below it
within the known minor series; a version past the newest series gets none.
"""

from __future__ import annotations

from dataclasses import dataclass

from mhcdoctor.knowledge.versions import InvalidVersion, Version, release_key


@dataclass(frozen=True)
class VllmRelease:
    version: str
    tilelang: str  # Requires-Dist tilelang==
    tvm_ffi: str  # Requires-Dist apache-tvm-ffi==
    torch: str  # Requires-Dist torch==
    deepgemm: str  # the DeepGEMM vendored as vllm.third_party.deep_gemm
    # the archs of the smNN_tf32_hc_prenorm_gemm kernels its vendored _C library holds (see SM90_100 below)
    deepgemm_prenorm_archs: tuple[str, ...] | None = None


def _r(version: str, tilelang: str, tvm_ffi: str, torch: str, deepgemm: str, archs: tuple[str, ...]) -> VllmRelease:
    return VllmRelease(version, tilelang, tvm_ffi, torch, deepgemm, archs)


# The smNN_tf32_hc_prenorm_gemm symbols in each wheel's vllm/third_party/deep_gemm/_C*.so (_C_extension.abi3.so from
# 0.32), read with a bounded scan of the file (probes/deepgemm.py prenorm_archs does the same on the installed one):
# sm_120 in 0.25.0-0.26.0 and 0.28.0+, not in 0.20-0.24 nor in 0.27.0-0.27.1, whose DeepGEMM 2.6.1 build lacks it.
SM90_100 = ("sm_90", "sm_100")
SM90_100_120 = ("sm_90", "sm_100", "sm_120")


RELEASES: tuple[VllmRelease, ...] = (
    _r("0.20.0", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.20.1", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.20.2", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.21.0", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.22.0", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.22.1", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.23.0", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.24.0", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100),
    _r("0.25.0", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100_120),
    _r("0.25.1", "0.1.9", "0.1.9", "2.11.0", "2.5.0", SM90_100_120),
    _r("0.26.0", "0.1.9", "0.1.10", "2.11.0", "2.5.0", SM90_100_120),
    _r("0.27.0", "0.1.12", "0.1.11", "2.13.0", "2.6.1", SM90_100),
    _r("0.27.1", "0.1.12", "0.1.11", "2.13.0", "2.6.1", SM90_100),
    _r("0.28.0", "0.1.12", "0.1.11", "2.13.0", "2.6.1", SM90_100_120),
    _r("0.29.0", "0.1.12", "0.1.11", "2.13.0", "2.6.1", SM90_100_120),
    _r("0.30.0", "0.1.12", "0.1.11", "2.13.0", "2.8.0", SM90_100_120),
    _r("0.31.0", "0.1.12", "0.1.11", "2.13.0", "2.8.0", SM90_100_120),
    _r("0.32.0", "0.1.12", "0.1.11", "2.13.0", "2.8.0", SM90_100_120),
    _r("0.33.0", "0.1.12", "0.1.11", "2.14.0", "2.8.1", SM90_100_120),
    _r("0.34.0", "0.1.12", "0.1.11", "2.14.0", "2.8.1", SM90_100_120),
)

# vLLM releases with model_executor/warmup/deepseek_v4_mhc_warmup.py (its "Warming up DeepSeek V4 mHC TileLang
# kernels" line); 0.30.0 replaced it with the JIT warm-up registry (kernels/mhc/warmup.py). Read from each wheel.
MHC_WARMUP_MODULE_RELEASES = ">=0.24.0,<0.30.0"


def release_of(version: str | None) -> VllmRelease | None:
    """The release whose wheel a vLLM `version` stands for (see the module's docstring); None when unknown."""
    if not version:
        return None
    try:
        key = release_key(version)
    except InvalidVersion:
        return None
    newest = Version(RELEASES[-1].version)
    if key < Version(RELEASES[0].version) or key.release[:2] > newest.release[:2]:
        return None
    return [r for r in RELEASES if Version(r.version) <= key][-1]
