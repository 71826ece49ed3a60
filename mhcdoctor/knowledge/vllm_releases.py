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


# The environment variables vLLM's DeepSeek-V4 mHC code reads, found in each release's layers/mhc.py,
# kernels/mhc/*.py, _tilelang_ops.py and utils/deep_gemm.py (0.20.0–0.34.0 read the same envs.* values; 0.34 adds the
# nvcc lookup), and those of the two kernel caches (tilelang/env.py, aiter/jit/core.py).
VLLM_ENV: tuple[str, ...] = (
    "VLLM_USE_DEEP_GEMM",  # vllm/envs.py (default "1"): is_deep_gemm_supported() is False when it is "0"
    "VLLM_USE_DEEP_GEMM_E8M0",  # utils/deep_gemm.py: DeepGEMM's scale format
    "VLLM_CACHE_ROOT",  # utils/deep_gemm.py: DeepGEMM's JIT cache is $VLLM_CACHE_ROOT/deep_gemm unless DG_JIT_CACHE_DIR
    "DG_JIT_CACHE_DIR",
    "DG_JIT_NVCC_COMPILER",  # 0.34 _deep_gemm_nvcc_path: the nvcc DeepGEMM's JIT runs (and its DJ_ misspelling)
    "DJ_JIT_NVCC_COMPILER",
    "CUDA_HOME",  # 0.34 _deep_gemm_nvcc_path, then CUDA_PATH, then `which nvcc`; tilelang's JIT looks there first too
    "CUDA_PATH",
    "TILELANG_CACHE_DIR",  # tilelang/env.py: the kernel cache (default ~/.tilelang/cache)
    "TILELANG_AUTO_CLEAR_CACHE",  # tilelang/env.py: clears the cache at start-up
    "AITER_JIT_DIR",  # aiter/jit/core.py: where module_mhc.so is built and loaded
)


# vLLM 0.34's is_deep_gemm_supported() turns DeepGEMM off below nvcc 12.9 ("DeepGEMM's JIT asserts nvcc >= 12.9 and
# aborts the engine otherwise", vllm/utils/deep_gemm.py); 0.30–0.33 do not check.
VLLM_NVCC_GATE = (12, 9)
VLLM_NVCC_GATE_RELEASES = ">=0.34.0"


def tilelang_pin(vllm: str | None) -> str | None:
    """The tilelang version vLLM `vllm`'s wheel pins, where known."""
    release = release_of(vllm)
    return release.tilelang if release is not None else None


# The audit of vLLM's mHC code between consecutive releases: (pair, lines changed in kernels/mhc/*, layers/mhc.py,
# _tilelang_ops.py and utils/deep_gemm.py as `diff` counts them between the two wheels, what changed, kind).
VLLM_AUDIT: tuple[tuple[str, int, str, str], ...] = (
    ("0.20.0 → 0.20.1", 134, "hc_head moves from torch to a tilelang kernel", "feature"),
    ("0.20.1 → 0.20.2", 0, "no change to the mHC files", "none"),
    ("0.20.2 → 0.21.0", 450, "ROCm: mhc_pre/mhc_post/hc_head branch to inline torch; the fused post+pre op stays on "
     "tilelang with PDL (vLLM #42876: tilelang-pdl-unsupported)", "feature (crash on ROCm remains)"),
    ("0.21.0 → 0.22.0", 3293, "kernels move to _tilelang_ops.py and kernels/mhc/; CustomOp dispatch; ENABLE_PDL "
     "only on CUDA (#43679); block-M prenorm GEMM from 1024 tokens (tilelang-prenorm-block-m)", "refactor + fix (PDL)"),
    ("0.22.0 → 0.22.1", 0, "no change to the mHC files", "none"),
    ("0.22.1 → 0.23.0", 1773, "_tilelang_ops.py becomes kernels/mhc/tilelang_kernels.py, its one change "
     "mhc_pre_big_fuse_with_norm's first pass pipelined in 2 stages, not 3 (:312; 0.22's measured wrong on the H200: "
     "tilelang-pre-norm-stages); has_tilelang() imports; the NVIDIA decoder layer loses hc_pre/hc_post, so the mHC "
     "warm-up skips it (vLLM #51790: tilelang-cache-cold)", "refactor + fix (wrong results; slow start-up)"),
    ("0.23.0 → 0.24.0", 295, "HAS_TILELANG_MHC: no tilelang mHC on gfx942 (#45931 for #45698, tilelang-wrong-arch)",
     "fix (wrong results)"),
    ("0.24.0 → 0.25.0", 56, "aiter mhc_pre/mhc_post on MI3xx (#43950)", "feature"),
    ("0.25.0 → 0.25.1", 0, "no change to the mHC files", "none"),
    ("0.25.1 → 0.26.0", 271, "mhc_pre_broadcast_tilelang: the first layer's pre calls DeepGEMM with no tilelang "
     "fallback (deepgemm-prenorm-broken)", "feature (crash where DeepGEMM cannot run)"),
    ("0.26.0 → 0.27.0", 39, "block-M prenorm GEMM: per-token T.alloc_local accumulators instead of one "
     "T.alloc_var(init=0.0) in the unrolled token loop (tilelang-prenorm-block-m)", "fix (wrong results "
     "from 1024 tokens under tilelang 0.1.9: measured)"),
    ("0.27.0 → 0.27.1", 0, "no change to the mHC files", "none"),
    ("0.27.1 → 0.28.0", 125, "tilelang_jit wrapper (vllm/tilelang_utils.py) replaces the per-kernel tilelang.jit",
     "refactor"),
    ("0.28.0 → 0.29.0", 132, "aiter fused post+pre and RMSNorm folded into aiter's mhc_pre, unprobed (#52737, "
     "aiter-api-too-old)", "feature (crash with aiter < 0.1.16)"),
    ("0.29.0 → 0.30.0", 2752, "aiter API probed; CPU ops (cpu.py); JIT warm-up registry (warmup.py; the NVIDIA "
     "model registers its kernels); prenorm GEMM chosen per call (use_tilelang_fallback)", "feature + fix (aiter API, "
     "warm-up)"),
    # 0.30-0.34 read line by line (every changed line of the files above, of tilelang_utils/, warmup/ and of the
    # mHC calls in models/deepseek_v4/); file:line in the newer wheel of the pair unless said.
    ("0.30.0 → 0.31.0", 342, "tilelang_kernels.py:29-42: on ROCm mhc_pre_big_fuse_with_norm's mixes run on threads "
     "64-95 and the collapse with its RMSNorm on 0-63, as TileLang's HIP AllReduce ignores a group offset "
     "(tilelang-hip-allreduce-offset); :325-330 split_mode, passed other than 'fused' only by DeepSeek-V4.1 "
     "(deepseek_v41/nvidia/ops/mhc.py:179-187); tilelang_utils/__init__.py:64-111: ROCm's deferred tilelang.jit also "
     "decorates on attribute access, for the compile-only JIT warm-up (the ROCm V4 model registers no mHC warm-up in "
     "0.30-0.34); utils/deep_gemm.py:115 reorders is_deep_gemm_supported()'s `and` (same result), the rest is "
     "sparse-MQA and bf16_mega_gate wrappers; aiter.py, cpu.py, torch.py, tilelang.py: docstrings. Dispatch, the "
     "prenorm GEMM's shape assert (:1236) and the log lines unchanged", "fix (wrong results on ROCm)"),
    ("0.31.0 → 0.32.0", 141, "layers/mhc.py:62-76, :402-432: MHCPreDelayedOp (DeepSeek-V4.1 only) on gfx950 with "
     "aiter found folds its RMSNorm into aiter's Triton mhc_fused_post_pre_delayed_rmsnorm (aiter.py:210-281), "
     "imported at the call with no probe (_aiter_ops.py:4518): no ROCm/aiter tag up to v0.1.20.post1 has that module, "
     "so ModuleNotFoundError at the first forward (model-v41-approximate says it); __init__.py:16 exports it; "
     "utils/deep_gemm.py:33-36 paged-MQA page sizes (not mHC). The V4 ops' dispatch, kernels, shapes and log lines "
     "unchanged", "feature (DeepSeek-V4.1 on gfx950: crash with a tagged aiter)"),
    ("0.32.0 → 0.33.0", 190, "tilelang_kernels.py:65-98: the fused post+pre takes a single-pass config (tile 2, 16 "
     "splits, 256 threads) at 4 tokens or fewer, hidden 4096, on sm_100+ only (sm_90 unchanged); it divides the "
     "shape; :427-440 mhc_pre_big_fuse_with_norm skips the Sinkhorn repeats of a NaN row (CUDA-graph padding, NaN "
     "already: speed); :1733-1743 the fused kernel's warm-up picks a token count that selects the key's config "
     "(0.32.0:1709 `1 if tile_n == 2 else 16` warmed another config where hc_mult*(hc_mult+2) is odd, e.g. hc_mult "
     "3, so it compiled while serving); tilelang.py:9-20 drops the unused _torch_hc_prenorm_gemm; "
     "warmup/jit_warmup.py:1109-1145 compiles Triton kernels in parallel, tilelang's still one by one (its 'JIT "
     "kernel warmup (N compile keys)' line the same); utils/deep_gemm.py: MQA-logits MX scales, per-family "
     "auto-disable (not mHC). Dispatch and log lines unchanged",
     "perf + fix (warm-up)"),
    ("0.33.0 → 0.34.0", 398, "utils/deep_gemm.py:118-177: is_deep_gemm_supported() is False without nvcc (CUDA_HOME, "
     "CUDA_PATH, PATH, /usr/local/cuda) or below nvcc 12.9, logging \"DeepGEMM kernels are disabled: …\" "
     "(vllmlog DEEPGEMM_DISABLED): the prenorm GEMM goes to tilelang, the first layer's broadcast pre still calls "
     "DeepGEMM (tilelang.py:750); tilelang.py:801-1056: the NVIDIA model's layers after the first "
     "(nvidia/model.py:731, :1014) call mhc_fused_post_pre_tilelang_reuse_residual, whose unfused path writes "
     "mhc_post in place, exact by the code (mhc_post_tilelang reads each hidden block before writing it, T.Serial, "
     "tilelang_kernels.py:850); triton.py:152-320: a post+collapse+RMSNorm for DeepSeek-V4.1 on ROCm, hc_mult 4 "
     "(deepseek_v41/amd/mhc.py:110); __init__.py explicit imports; cpu.py imports vllm._cpu_ops",
     "fix (crash with old nvcc)"),
)  # fmt: skip


def vendored_deepgemm(vllm: str | None) -> str | None:
    """The DeepGEMM version vLLM `vllm`'s wheel vendors, where known."""
    release = release_of(vllm)
    return release.deepgemm if release is not None else None


# vLLM releases whose NVIDIA DeepSeek-V4 model skips the mHC JIT warm-up: warmup/deepseek_v4_mhc_warmup.py's
# _find_first_mhc_layer wants hc_pre/hc_post on DeepseekV4DecoderLayer, which models/deepseek_v4/nvidia/model.py
# no longer defines from 0.23.0 (vLLM #51790); from 0.30.0 the NVIDIA model registers its tilelang kernels with the
# JIT warm-up itself (register_warmup, when kernel_config.enable_jit_warmup). Read from each wheel.
NVIDIA_WARMUP_SKIPPED_RELEASES = ">=0.23.0,<0.30.0"

# vLLM releases whose AMD DeepSeek-V4 model leaves its mHC tilelang kernels out of the warm-up: 0.24-0.29's
# deepseek_v4_mhc_warmup finds its DeepseekV4DecoderLayer's hc_pre/hc_post (0.29.0 amd/model.py:404, :432); from
# 0.30.0 only the NVIDIA model registers mHC kernels with the JIT warm-up, and models/deepseek_v4/amd/*.py call
# register_warmup for MTP's RMSNorm (mtp.py) and the compressor (0.33+ rocm.py) alone (read in 0.30.0-0.34.0).
AMD_WARMUP_SKIPPED_RELEASES = ">=0.30.0,<0.35.0"
