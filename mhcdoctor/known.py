"""Known-bad versions of the libraries inside the mHC paths, as data: probes, what-ifs and rules read them from here.

Each range was decided by the code or the metadata at each release, not by sorting version strings; each entry
names the source that proves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


def version_of(text: str | None) -> Version | None:
    """A version without its local label (`0.1.15.post2+g1234` → 0.1.15.post2); None when it is not one."""
    if not text:
        return None
    try:
        return Version(Version(text.strip().lstrip("v")).public)
    except InvalidVersion:
        return None


def within(text: str | None, spec: str) -> bool | None:
    """Whether version `text` is in `spec` (pre-releases included); None when either is not readable."""
    version = version_of(text)
    if version is None:
        return None
    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return None


@dataclass(frozen=True)
class BadPair:
    """A tilelang release range that fails with an apache-tvm-ffi range."""

    tilelang: str  # specifier of the tilelang releases
    tvm_ffi: str  # specifier of the apache-tvm-ffi releases
    effect: str
    pin: str  # the pip line that fixes it
    refs: tuple[str, ...]


TILELANG = "https://github.com/tile-ai/tilelang/"
# tilelang's Requires-Dist on apache-tvm-ffi, read from each release's wheel METADATA (pip install --dry-run --report):
# 0.1.7.post3 `>=0.1.6,~=0.1.0`; 0.1.8, 0.1.9 `>=0.1.2,~=0.1.0`; 0.1.10, 0.1.11 `>=0.1.10,~=0.1.0` (no upper bound);
# 0.1.12 `>=0.1.10,<=0.1.11`; 0.1.13–0.1.15 `>=0.1.11,<0.1.13`.
TILELANG_TVM_FFI_REQUIRES: dict[str, str] = {
    "0.1.7.post3": ">=0.1.6,~=0.1.0",
    "0.1.8": ">=0.1.2,~=0.1.0",
    "0.1.9": ">=0.1.2,~=0.1.0",
    "0.1.10": ">=0.1.10,~=0.1.0",
    "0.1.11": ">=0.1.10,~=0.1.0",
    "0.1.12": ">=0.1.10,<=0.1.11",
    "0.1.13": ">=0.1.11,<0.1.13",
    "0.1.14": ">=0.1.11,<0.1.13",
    "0.1.15": ">=0.1.11,<0.1.13",
}
TVM_FFI_BAD_PAIRS: tuple[BadPair, ...] = (
    # apache-tvm-ffi 0.1.12 registers AccessPath's __ffi_repr__ itself; the tvm inside tilelang 0.1.10–0.1.11
    # registers it again and the C++ error aborts the interpreter at `import tilelang` (SIGABRT). tile-ai/tvm #60,
    # shipped by tilelang #2795 in 0.1.13, stops the second registration; 0.1.12 pins apache-tvm-ffi<=0.1.11.
    BadPair(
        tilelang=">=0.1.10,<0.1.12",
        tvm_ffi=">=0.1.12",
        effect="`import tilelang` aborts (SIGABRT): TypeAttr `__ffi_repr__` is already registered",
        pin="pip install 'apache-tvm-ffi<0.1.12'",
        refs=(
            TILELANG + "issues/2367",
            TILELANG + "pull/2795",
            "https://github.com/kvcache-ai/ktransformers/issues/2045",
        ),
    ),
    # tilelang 0.1.8–0.1.9's derived_object (TVMDerivedObject without __slots__) breaks on apache-tvm-ffi 0.1.10's
    # CObject: AttributeError '_inst' when a kernel compiles (tile-ai/tvm #32); tilelang 0.1.10 requires >=0.1.10.
    BadPair(
        tilelang=">=0.1.8,<0.1.10",
        tvm_ffi=">=0.1.10",
        effect="tilelang's kernels fail to compile: AttributeError: '_NestedLoopCheckVisitor' object has no "
        "attribute '_inst'",
        pin="pip install 'apache-tvm-ffi<0.1.10'",
        refs=(
            TILELANG + "issues/2040",
            "https://github.com/tile-ai/tvm/pull/32",
            "https://github.com/state-spaces/mamba/pull/995",
        ),
    ),
)


def bad_tvm_ffi_pair(tilelang: str | None, tvm_ffi: str | None) -> BadPair | None:
    """The known-bad pair the installed tilelang and apache-tvm-ffi form, if any."""
    for pair in TVM_FFI_BAD_PAIRS:
        if within(tilelang, pair.tilelang) and within(tvm_ffi, pair.tvm_ffi):
            return pair
    return None


# The environment variables vLLM's DeepSeek-V4 mHC code, its DeepGEMM wrapper and the two JIT caches read, from each
# release's vllm/envs.py, vllm/utils/deep_gemm.py, layers/mhc.py; tilelang/env.py; aiter/jit/core.py.
VLLM_ENV: tuple[str, ...] = (
    "VLLM_USE_DEEP_GEMM",  # vllm/envs.py (default "1"): is_deep_gemm_supported() is False when it is "0"
    "TILELANG_CACHE_DIR",  # tilelang/env.py: the kernel cache (default ~/.tilelang/cache)
    "TILELANG_AUTO_CLEAR_CACHE",  # tilelang/env.py: clears the cache at start-up
    "AITER_JIT_DIR",  # aiter/jit/core.py: where module_mhc.so is built and loaded
    "CUDA_HOME",  # DeepGEMM's and tilelang's JIT look for nvcc there first
)


# DeepGEMM's JIT asserts nvcc >= 12.9 (vllm/utils/deep_gemm.py 0.34, is_deep_gemm_supported, which says why it checks).
DEEPGEMM_NVCC_MIN = (12, 9)
# vLLM releases whose hc_prenorm_gemm_block_m_tilelang (prenorm GEMM from 1024 tokens without DeepGEMM) sums each
# token into a T.alloc_var(init=0.0) inside the unrolled token loop: kernels/mhc/tilelang_kernels.py (0.23–0.26) and
# _tilelang_ops.py (0.22), read from each wheel; 0.27.0 rewrote it with per-token T.alloc_local arrays.
BLOCK_M_ACCUMULATOR_RELEASES = ">=0.22.0,<0.27.0"
