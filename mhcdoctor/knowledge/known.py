"""Known-bad versions of the libraries inside the mHC paths, as data: probes, what-ifs and rules read them from here.

Each range was decided by the code or the metadata at each release, not by sorting version strings; each entry
names the source that proves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mhcdoctor.knowledge.evidence import Code, Evidence, Measured, Report
from mhcdoctor.knowledge.versions import Version, within


@dataclass(frozen=True)
class BadPair:
    """A tilelang release range that fails with an apache-tvm-ffi range, and what backs it."""

    tilelang: str  # specifier of the tilelang releases
    tvm_ffi: str  # specifier of the apache-tvm-ffi releases
    stage: Literal["import", "compile"]  # where it breaks: `import tilelang`, or compiling a kernel
    effect: str
    pin: str  # the pip line that fixes it
    refs: tuple[str, ...]
    evidence: tuple[Evidence, ...]

    @property
    def proven(self) -> bool:
        """Measured or read in the code (a report alone is not proof)."""
        return any(isinstance(e, Measured | Code) for e in self.evidence)


@dataclass(frozen=True)
class GoodPair:
    """A tilelang and apache-tvm-ffi pair measured to work: never called bad, whatever a range says."""

    tilelang: str
    tvm_ffi: str
    evidence: tuple[Evidence, ...]


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
# `import tilelang` under each pair on a CPU machine (knowledge engineer, 2026-12-04): each tilelang and
# apache-tvm-ffi wheel unpacked with its requirements into one folder, then PYTHONPATH=FOLDER python -c
# "import tilelang, tvm_ffi" with CPU torch 2.13.0 (Python 3.11).
_CPU_IMPORT = "PYTHONPATH=<tilelang + apache-tvm-ffi + z3-solver unpacked> python -c 'import tilelang, tvm_ffi'"
_CPU = "x86-64 CPU machine (Python 3.11, torch 2.13.0+cpu)"

TVM_FFI_BAD_PAIRS: tuple[BadPair, ...] = (
    # apache-tvm-ffi 0.1.12 registers AccessPath's __ffi_repr__ itself; the tvm inside tilelang 0.1.10–0.1.12
    # registers it again and the C++ error aborts the interpreter at `import tilelang` (SIGABRT). tile-ai/tvm #60,
    # shipped by tilelang #2795 in 0.1.13, stops the second registration. 0.1.12 pins apache-tvm-ffi<=0.1.11 (its
    # wheel's METADATA) and still aborts when 0.1.12 is installed over that pin.
    BadPair(
        tilelang=">=0.1.10,<0.1.13",
        tvm_ffi=">=0.1.12",
        stage="import",
        effect="`import tilelang` aborts (SIGABRT): TypeAttr `__ffi_repr__` is already registered",
        pin="pip install 'apache-tvm-ffi<0.1.12'",
        refs=(
            TILELANG + "issues/2367",
            TILELANG + "pull/2795",
            "https://github.com/kvcache-ai/ktransformers/issues/2045",
        ),
        evidence=(
            Measured(
                "scripts/gpu-vllm-kernels matrix with tilelang 0.1.12 and apache-tvm-ffi 0.1.12: importing vLLM "
                "0.27–0.34's kernels/mhc/tilelang (which imports tilelang)",
                "NVIDIA H200 (driver 580.159.04)",
                "2026-12-04",
                "every run aborts: terminate called after throwing tvm::ffi::Error, TypeAttr `__ffi_repr__` is "
                "already registered",
            ),
            Measured(
                "tests/real/test_real_packages.py: tilelang 0.1.11 with apache-tvm-ffi 0.1.15.post2 (what its "
                "Requires-Dist resolves to), mhcdoctor check's import child",
                "x86-64 CPU machine (the project's build machine)",
                "2026-12-04",
                "`import tilelang` aborts: __ffi_repr__ already registered",
            ),
            Measured(
                _CPU_IMPORT + " with tilelang 0.1.10 and apache-tvm-ffi 0.1.12",
                _CPU,
                "2026-12-04",
                "exit 134 (SIGABRT): TypeAttr `__ffi_repr__` is already registered for type index 130",
            ),
        ),
    ),
    # tilelang 0.1.9's bundled tvm registers its Python classes in a way apache-tvm-ffi 0.1.12+ refuses: `import
    # tilelang` raises (0.1.12: AttributeError "attribute '__dict__' of 'type' objects is not writable" in
    # tvm_ffi/registry.py; 0.1.13: ValueError "Type 'ffi.Tensor' already has a registered class"). 0.1.9's
    # Requires-Dist (>=0.1.2,~=0.1.0) lets pip pick them; vLLM 0.20–0.26 pin 0.1.9 or 0.1.10.
    BadPair(
        tilelang=">=0.1.9,<0.1.10",
        tvm_ffi=">=0.1.12",
        stage="import",
        effect="`import tilelang` fails: apache-tvm-ffi 0.1.12+ refuses the classes tilelang 0.1.9's bundled tvm "
        "registers (AttributeError: attribute '__dict__' of 'type' objects is not writable)",
        pin="pip install 'apache-tvm-ffi<0.1.12'",
        refs=(TILELANG + "issues/2367",),
        evidence=(
            Measured(
                _CPU_IMPORT + " with tilelang 0.1.9 and apache-tvm-ffi 0.1.12, 0.1.13 and 0.1.15.post2",
                _CPU,
                "2026-12-04",
                "exit 1: AttributeError: attribute '__dict__' of 'type' objects is not writable (0.1.12); "
                "ValueError: Type 'ffi.Tensor' already has a registered class (0.1.13, 0.1.15.post2); "
                "0.1.9, 0.1.10 and 0.1.11 import",
            ),
        ),
    ),
    # tilelang 0.1.8's derived_object (TVMDerivedObject without __slots__) breaks on apache-tvm-ffi 0.1.10's CObject:
    # AttributeError '_inst' when a kernel's pass uses a derived object (tile-ai/tvm #32). tilelang 0.1.9's bundled
    # tvm already has the fix; 0.1.10 requires apache-tvm-ffi>=0.1.10.
    BadPair(
        tilelang=">=0.1.8,<0.1.9",
        tvm_ffi=">=0.1.10",
        stage="compile",
        effect="tilelang's kernels fail to compile: AttributeError: '_NestedLoopCheckVisitor' object has no "
        "attribute '_inst'",
        pin="pip install 'apache-tvm-ffi<0.1.10'",
        refs=(
            TILELANG + "issues/2040",
            "https://github.com/tile-ai/tvm/pull/32",
            "https://github.com/state-spaces/mamba/pull/995",
        ),
        evidence=(
            Code(
                "tile-ai/tilelang",
                "v0.1.8 (PyPI wheel)",
                "tilelang/3rdparty/tvm/python/tvm/runtime/support.py",
                151,
                "class TVMDerivedObject(metadata['cls']) has no __slots__ and sets self._inst: apache-tvm-ffi 0.1.10's "
                "CObject has no __dict__ (tile-ai/tvm #32); the v0.1.9 wheel's copy declares __slots__ with _inst "
                "(line 160)",
            ),
            Report(TILELANG + "issues/2040", "reported with tilelang 0.1.8, apache-tvm-ffi 0.1.10, a mamba kernel"),
        ),
    ),
)

TVM_FFI_GOOD_PAIRS: tuple[GoodPair, ...] = (
    # vLLM 0.26.0's own pins (tilelang==0.1.9, apache-tvm-ffi==0.1.10).
    GoodPair(
        "==0.1.9",
        "==0.1.10",
        (
            Measured(
                "mhcdoctor verify --path tilelang and vLLM 0.26.0's kernel files (scripts/gpu-vllm-kernels) under "
                "tilelang 0.1.9 with apache-tvm-ffi 0.1.10",
                "NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130)",
                "2026-12-04",
                "imports, compiles and runs: mhcdoctor's tilelang kernels 9/9 pass and vLLM 0.26.0's kernels give the "
                "same results as with apache-tvm-ffi 0.1.9 (issue 30)",
            ),
            Measured(
                "scripts/gpu-measure (its stock step): PYTHONPATH=<tilelang 0.1.9 bundle with apache-tvm-ffi 0.1.10> "
                "python -c 'import tilelang, tvm_ffi', then mhcdoctor verify --path tilelang --json",
                "NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130)",
                "2026-12-05",
                "imports, compiles and runs: mhcdoctor's tilelang kernels 9/9 pass (verdict ok); vLLM 0.26.0's "
                "own kernel files ran under the same pair in the same run (docs/known-bugs.md: matrix and shape rows)",
            ),
            Measured(
                "PYTHONPATH=<tilelang 0.1.9 wheel, apache-tvm-ffi 0.1.10 cp311 wheel, z3, psutil unpacked>:. "
                "python bench/tilelang_lower.py (import tilelang, then tilelang.lower for sm_90 of mhcdoctor's prenorm "
                "GEMM, pre and post kernels: PreLowerSemanticCheck runs _NestedLoopCheckVisitor, the class of "
                "tile-ai/tvm #32's '_inst' error)",
                "no GPU: x86-64 CPU, Python 3.11.7, torch 2.13.0+cpu",
                "2026-12-04",
                "imports and lowers all three kernels to CUDA source, as with apache-tvm-ffi 0.1.9 and 0.1.11; 0.1.12: "
                "`import tilelang` raises AttributeError: attribute '__dict__' of 'type' objects is not writable",
            ),
            Measured(
                "VLLM_USE_DEEP_GEMM=0 PYTHONPATH=<vLLM X's kernel files (tests/bench/vllm_fixture.py)>:<tilelang, its "
                "pinned apache-tvm-ffi (cp311 wheel), z3, psutil unpacked>:. python bench/vllm_lower.py (0.20-0.21 "
                "with a no-op deep_gemm on the path): every tilelang kernel the release's wrappers call at 8, 200 and "
                "1024 tokens, hidden 7168, lowered for sm_90 under its pass configs",
                "no GPU: x86-64 CPU, Python 3.11.7, torch 2.13.0+cpu",
                "2026-12-04",
                "vLLM 0.26.0's own kernels under its pins (tilelang 0.1.9, apache-tvm-ffi 0.1.10): all 8 lower",
            ),
        ),
    ),
    # vLLM 0.20.0-0.25.1's pins (tilelang==0.1.9, apache-tvm-ffi==0.1.9).
    GoodPair(
        "==0.1.9",
        "==0.1.9",
        (
            Measured(
                "VLLM_USE_DEEP_GEMM=0 PYTHONPATH=<vLLM X's kernel files (tests/bench/vllm_fixture.py)>:<tilelang, its "
                "pinned apache-tvm-ffi (cp311 wheel), z3, psutil unpacked>:. python bench/vllm_lower.py (0.20-0.21 "
                "with a no-op deep_gemm on the path): every tilelang kernel the release's wrappers call at 8, 200 and "
                "1024 tokens, hidden 7168, lowered for sm_90 under its pass configs",
                "no GPU: x86-64 CPU, Python 3.11.7, torch 2.13.0+cpu",
                "2026-12-04",
                "every release's own kernels lower under tilelang 0.1.9 with apache-tvm-ffi 0.1.9: 0.20.0 4, 0.21.0 7, "
                "0.22.0-0.25.0 8 each (0.20 has no fused op and computes hc_head in torch), none failed",
            ),
            Measured(
                "scripts/gpu-measure (its stock step): PYTHONPATH=<tilelang 0.1.9 bundle with apache-tvm-ffi 0.1.9> "
                "python -c 'import tilelang, tvm_ffi', then mhcdoctor verify --path tilelang --json",
                "NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130)",
                "2026-12-05",
                "imports, compiles and runs: mhcdoctor's tilelang kernels 9/9 pass (verdict ok); vLLM 0.20.0-0.24.0's "
                "own kernel files ran under the same pair in the same run (docs/known-bugs.md: matrix and shape rows)",
            ),
        ),
    ),
    # vLLM 0.27.0-0.34.0's pins (tilelang==0.1.12, apache-tvm-ffi==0.1.11).
    GoodPair(
        "==0.1.12",
        "==0.1.11",
        (
            Measured(
                "VLLM_USE_DEEP_GEMM=0 PYTHONPATH=<vLLM X's kernel files (tests/bench/vllm_fixture.py)>:<tilelang, its "
                "pinned apache-tvm-ffi (cp311 wheel), z3, psutil unpacked>:. python bench/vllm_lower.py (0.20-0.21 "
                "with a no-op deep_gemm on the path): every tilelang kernel the release's wrappers call at 8, 200 and "
                "1024 tokens, hidden 7168, lowered for sm_90 under its pass configs",
                "no GPU: x86-64 CPU, Python 3.11.7, torch 2.13.0+cpu",
                "2026-12-04",
                "every release's own kernels lower under tilelang 0.1.12 with apache-tvm-ffi 0.1.11: 8 each for "
                "0.27.0-0.34.0, none failed",
            ),
            Measured(
                "scripts/gpu-measure (its stock step): PYTHONPATH=<tilelang 0.1.12 bundle with apache-tvm-ffi 0.1.11> "
                "python -c 'import tilelang, tvm_ffi', then mhcdoctor verify --path tilelang --json",
                "NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130)",
                "2026-12-05",
                "imports, compiles and runs: mhcdoctor's tilelang kernels 9/9 pass (verdict ok); vLLM 0.27.0-0.33.0's "
                "own kernel files ran under the same pair in the same run (docs/known-bugs.md: matrix and shape rows)",
            ),
        ),
    ),
)


def bad_tvm_ffi_pair(tilelang: str | None, tvm_ffi: str | None) -> BadPair | None:
    """The known-bad pair the installed tilelang and apache-tvm-ffi form, if any (none for a pair measured good)."""
    if any(within(tilelang, p.tilelang) and within(tvm_ffi, p.tvm_ffi) for p in TVM_FFI_GOOD_PAIRS):
        return None
    for pair in TVM_FFI_BAD_PAIRS:
        if within(tilelang, pair.tilelang) and within(tvm_ffi, pair.tvm_ffi):
            return pair
    return None


# DeepGEMM's JIT asserts nvcc >= 12.3 (csrc/jit/compiler.hpp: "NVCC version should be >= 12.3") and needs 12.9 for
# the arch-family suffix of sm_10x (its README: CUDA 12.9 or higher for SM100).
DEEPGEMM_NVCC_MIN = (12, 3)
DEEPGEMM_NVCC_MIN_SM100 = (12, 9)
# Measured on an H200 (vLLM 0.24.0's and 0.26.0's kernel files, 1024–16384 tokens, 2026-12-04; 0.22.0's and
# 0.23.0's too, 2026-12-05; with DeepGEMM on, as a stock sm_90 install runs, the block-M kernel is not taken): the
# tilelang that
# lowers the block-M prenorm GEMM's accumulator (bugs.PRENORM_BLOCK_M) wrong (0.1.9, the pin of vLLM 0.20–0.26: it
# sets the T.alloc_var to 0 once, at its declaration, so the block's second token starts from the first one's sum)
# and the ones measured right (0.1.12, which resets it inside the loop, and 0.1.15); 0.1.13 and 0.1.14 lie between
# two releases measured right.
BLOCK_M_WRONG_TILELANG = "<=0.1.9"
BLOCK_M_RIGHT_TILELANG = ">=0.1.12"
BLOCK_M_MEASURED_RELEASES = ("0.22.0", "0.23.0", "0.24.0", "0.26.0")


# vLLM 0.22.0's mhc_pre_big_fuse_with_norm_tilelang (the pre with the RMSNorm folded in, which 0.22's NVIDIA model
# always asks for: models/deepseek_v4/nvidia/model.py:977, :996, :1020) pipelines its first pass with num_stages=3
# (_tilelang_ops.py:312); 0.23.0 sets 2 (kernels/mhc/tilelang_kernels.py:312), the only change between the two files.
# Measured on an H200 (scripts/gpu-measure pins09, 2026-12-05: bench/vllm_kernels.py --check-only) under tilelang
# 0.1.9, vLLM 0.22's pin, hc_mult 4, DeepGEMM on and off: layer_input wrong at PRE_NORM_STAGES_MEASURED's hidden
# sizes, right at
# PRE_NORM_STAGES_RIGHT_HIDDEN at every size tried (1-16384 tokens); the others (2560, 5120, 6144) right at 1, 16 and
# 200 tokens, which is not every size (7168 is right at 80 tokens and wrong from 512).
PRE_NORM_STAGES_RIGHT_HIDDEN = (4096,)
PRE_NORM_STAGES_WRONG_TILELANG = "<=0.1.9"
# hidden -> the token counts measured wrong there
PRE_NORM_STAGES_MEASURED = {
    7168: "512, 1024, 4096 and 16384 tokens (right at 1, 7 and 80)",
    3072: "200 tokens (right at 1 and 16)",
    2048: "1, 16 and 200 tokens",
    1280: "200 tokens (right at 1 and 16)",
}


# vLLM releases whose fused post+pre runs the kernels measured slow under a tilelang newer than the pin:
# kernels/mhc/tilelang_kernels.py is the same file in 0.33.0 and 0.34.0 (0.32.0's lacks 0.33's single-pass split and
# sinkhorn NaN skip), and 0.34's tilelang.py only adds the residual-reusing wrapper. Measured on 0.34.0 only.
FUSED_POST_PRE_SLOW_RELEASES = ">=0.33.0,<0.35.0"
# mhc_fused_post_pre_tilelang_reuse_residual at 1 token, hidden 7168, replayed in a CUDA graph on an H200
# (2026-12-04): ms under tilelang 0.1.15 (mhcdoctor bench's graph ms; its post then pre took 0.0143) and under 0.1.12,
# vLLM 0.34's pin (scripts/gpu-vllm-kernels time: graph_median_s of 100 runs).
FUSED_POST_PRE_SLOW_MS = (0.0480, 0.0091)
FUSED_POST_PRE_SLOW_TILELANG = "0.1.15"


# Which tilelang releases can build ROCm (HIP) kernels at all, read from each PyPI wheel (pip download --no-deps
# tilelang==X, manylinux x86-64): the codegen registrations compiled into tilelang/lib/libtilelang.so (bounded regex
# scan of the library) and the Python side (tilelang/contrib/hipcc.py, utils/target.py's "hip" target), 2026-12-04.
# (releases, HIP backend in the wheel, what the wheel holds)
TILELANG_ROCM_AUDIT: tuple[tuple[str, str, str], ...] = (
    ("0.1.7.post3, 0.1.8, 0.1.9", "no",
     "libtilelang.so registers target.build.tilelang_cuda only: no target.build.tilelang_hip, no CodeGenTileLangHIP. "
     "The Python side knows the hip target (contrib/hipcc.py, utils/target.py), so a ROCm kernel gets as far as "
     "codegen and fails there ('Cannot find global function target.build.tilelang_hip', as vLLM 0.21.0's "
     "layers/mhc.py says of upstream wheels); ROCm needs a source build with ROCm enabled"),
    ("0.1.10, 0.1.11, 0.1.12, 0.1.13, 0.1.14, 0.1.15", "yes",
     "libtilelang.so registers target.build.tilelang_hip and target.build.tilelang_hip_without_compile "
     "(CodeGenTileLangHIP); contrib/hipcc.py compiles with the ROCm hipcc found on the machine. Built, not run: no "
     "AMD GPU here (tilelang-wrong-arch and tilelang-hip-allreduce-offset are what is known of its kernels there)"),
)  # fmt: skip

# ROCm/aiter's mHC code (csrc/kernels/mhc_kernels.cu, aiter/ops/mhc.py) between consecutive tags, from `git log A..B
# -- FILES` and the files' hashes at each tag.
AITER_AUDIT: tuple[tuple[str, str, str], ...] = (
    ("v0.1.11", "mhc_pre (gemm_sqrsum, big_fuse) arrives (#2136)", "feature; big_fuse barrier outside its loop "
     "(aiter-big-fuse-sync)"),
    ("v0.1.11 → v0.1.12", "mhc_post (#2479, which also turned the sqrsum store's lane guard into a bounds check); "
     "opus API (#2533)", "feature; sqrsum race (aiter-sqrsum-race), mhc_post "
     "LDS race (aiter-mhc-post-race)"),
    ("v0.1.12 → v0.1.13.post1", "no change (same mhc_kernels.cu and mhc.py)", "none"),
    ("v0.1.13.post1 → v0.1.14-rc0", "#3033 sqrsum race, #2978 big_fuse sync, #2963 mhc_post accuracy; #2915, #3044, "
     "#3059", "fixes (wrong results)"),
    ("v0.1.14-rc0 → v0.1.14.post1", "no change", "none"),
    ("v0.1.14.post1 → v0.1.15-rc0", "#3396 fused RMSNorm in mhc_pre; #3237 fp32 GEMM pipeline", "feature; RMS guard "
     "bug (aiter-rocm-compiler)"),
    ("v0.1.15-rc0 → v0.1.15.post3", "no change", "none"),
    ("v0.1.15.post3 → v0.1.16", "#3417 RMS guard fix; #3623 mhc_fused_post_pre; #3651 large M", "fix + feature"),
    ("v0.1.16 → v0.1.16.post6", "no change", "none"),
    ("v0.1.16.post6 → v0.1.17-rc0", "#3768 wave32, #3796 async waitcnt (gfx12xx), #3648/#3714 async_load offset, "
     "#3791 fused all-reduce + mhc_post", "feature; #3648's bug fixed by #3714 before any tag"),
    ("v0.1.17-rc0 → v0.1.17", "no change", "none"),
    ("v0.1.17 → v0.1.18", "#4115 gfx12xx tuning", "feature; same code as v0.1.19 (aiter-mhc-pre-invalid-config)"),
    ("v0.1.18 → v0.1.19.post2", "mhc.py: ruff only (#4403)", "none"),
    ("v0.1.19.post2 → v0.1.20.post1", "#4246 gfx1250 split-k, #4594 rocprim/hipcub clean-up", "refactor"),
    # git diff v0.1.20.post1 e4048607a5 (main, 2026-08-22): none of these files or headers changed
    ("v0.1.20.post1 → main (e4048607a5, 2026-08-22)", "mhc_kernels.cu, aiter/ops/mhc.py, mhc.h and every header "
     "mhc_kernels.cu includes unchanged; #4832 refactors fused_ar_mhc_post (#3791's all-reduce + mhc_post, its own "
     "module)", "none (mHC kernels)"),
)  # fmt: skip

# vLLM releases whose fused post+pre (0.21-0.29: the tilelang-fused-shape record's `affected`), at 16 tokens or
# fewer (decode), runs mhc_fused_tilelang with a fixed tile and
# split (0.21.0 layers/mhc.py:656-660, 0.26.0 kernels/mhc/tilelang.py:518-522: tile_n = 2 below 8 tokens else 3;
# n_splits = 8 below 8 tokens when hidden <= 4096, else 4) and 256 threads whose loops round down
# (0.26.0 tilelang_kernels.py:545-557: n_tiles = n_out // tile_n, h_iters = (hidden // split_k) // 256 threads):
# where the shape does not divide evenly the kernel skips the last mixes (comb_mix) or hidden columns, whose
# outputs stay torch.empty (non-finite). 0.30.0 picks tile and split that divide (tilelang_kernels.py
# mhc_fused_post_pre_split_config: "The kernel drops projection tiles and k-slices it cannot fill evenly").
FUSED_SMALL_FMA_THREADS = 256
# (first token, last token, tile_n, n_splits at hidden <= 4096, n_splits above)
FUSED_SMALL_FMA_BANDS: tuple[tuple[int, int, int, int, int], ...] = ((1, 7, 2, 8, 4), (8, 16, 3, 4, 4))


def fused_small_fma_lost(hidden: int, hc_mult: int, tokens: int) -> bool:
    """Whether 0.21-0.29's small-token fused kernel leaves part of the output out in a call of `tokens` tokens."""
    return any(g.startswith(f"{first}-{last} ") for first, last, *_ in FUSED_SMALL_FMA_BANDS
               if first <= tokens <= last for g in fused_small_fma_gaps(hidden, hc_mult))  # fmt: skip


def fused_small_fma_gaps(hidden: int, hc_mult: int) -> list[str]:
    """What 0.21-0.29's small-token fused kernel leaves out at this shape, one line per token band; [] where every
    band divides evenly (DeepSeek-V4's hidden 4096, 5120 and 7168 with hc_mult 4 do)."""
    gaps: list[str] = []
    n_out = hc_mult * (hc_mult + 2)
    for first, last, tile_n, split_small, split_big in FUSED_SMALL_FMA_BANDS:
        split = split_small if hidden <= 4096 else split_big
        per_split = hidden // split
        covered = (per_split // FUSED_SMALL_FMA_THREADS) * FUSED_SMALL_FMA_THREADS
        lost = []
        if covered != per_split or per_split * split != hidden:
            lost.append(f"{hidden - covered * split} of {hidden} hidden columns (split {split} x 256 threads)")
        if n_out % tile_n:
            lost.append(f"{n_out % tile_n} of {n_out} mixes, the last of comb_mix (tile {tile_n})")
        if lost:
            gaps.append(f"{first}-{last} tokens: " + " and ".join(lost))
    return gaps


# vLLM releases whose own tilelang prenorm GEMM (0.22-0.34: the tilelang-gemm-shape record's `affected`; taken
# where DeepGEMM is not: ROCm, CUDA archs without it, VLLM_USE_DEEP_GEMM=0, 0.34 without nvcc 12.9+) asserts that
# each split of hc_mult * hidden is a multiple of its 512 threads, n_splits 1: 0.22-0.29 in kernels/mhc/tilelang.py's
# wrapper (0.26.0 :41), 0.30+ in HcPrenormGemmTileLangKernel.__call__, before its dispatch picks 1024 threads.
TILELANG_GEMM_THREADS = 512
# (first release, the assert's place in that release's wheel), read from each wheel (/work/cache/vllm-files/X/)
_TILELANG_GEMM_ASSERT: tuple[tuple[str, str], ...] = (
    ("0.22.0", "kernels/mhc/tilelang.py:41"),
    ("0.30.0", "kernels/mhc/tilelang_kernels.py:1215"),
    ("0.31.0", "kernels/mhc/tilelang_kernels.py:1236"),
    ("0.33.0", "kernels/mhc/tilelang_kernels.py:1261"),
)


def tilelang_gemm_asserts(hidden: int, hc_mult: int, tokens: int) -> bool:
    """Whether 0.22-0.34's tilelang prenorm GEMM assert fails at this shape (any token count)."""
    return (hc_mult * hidden) % TILELANG_GEMM_THREADS != 0


def tilelang_gemm_assert_line(release: str) -> str:
    """Where vLLM `release`'s tilelang prenorm GEMM asserts its shape (file:line in that release's wheel)."""
    key = Version(release)
    return [where for first, where in _TILELANG_GEMM_ASSERT if Version(first) <= key][-1]


# DeepGEMM's tf32_hc_prenorm_gemm takes at most 32 output columns, a multiple of 8: vLLM asks for hc_mult*(hc_mult+2)
# (the pre, post and comb mixes), so hc_mult 2 (8) and 4 (24) pass and every other hc_mult stops at DeepGEMM's host
# assert. Measured on an H200 (scripts/gpu-measure pins09, 2026-12-05) with the DeepGEMM 2.5.0 vLLM 0.20-0.26 vendor:
# "RuntimeError: Assertion error (.../jit_kernels/impls/sm90_tf32_hc_prenorm_gemm.hpp:81): n <= 32 and n % 8 == 0"
# at hc_mult 8, every token count.
DEEPGEMM_PRENORM_MAX_N = 32
DEEPGEMM_PRENORM_N_MULTIPLE = 8
DEEPGEMM_PRENORM_SHAPE_MEASURED = ("2.5.0",)


def deepgemm_prenorm_refuses(hidden: int, hc_mult: int, tokens: int) -> bool:
    """Whether DeepGEMM's tf32_hc_prenorm_gemm asserts on this shape's hc_mult*(hc_mult+2) mixes (any token count)."""
    n = hc_mult * (hc_mult + 2)
    return n > DEEPGEMM_PRENORM_MAX_N or n % DEEPGEMM_PRENORM_N_MULTIPLE != 0


# DeepGEMM's tf32_hc_prenorm_gemm arrives in 2.3.0 (deepseek-ai/DeepGEMM #280, 0f5f266: deep_gemm/__init__.py).
DEEPGEMM_PRENORM_SINCE = Version("2.3.0")


# What compiling one of vLLM's mHC tilelang kernels for one token size costs (vLLM #52941: "~6 second latency spikes
# on every new token count"; #47807: mhc_pre_big_fuse_with_norm_tilelang "about 10s+").
TILELANG_COMPILE_SECONDS = "6–10 s"

# Token counts where a known bug or a kernel variant starts, each with its source: verify's default and --stress sizes
# cover every one (tests/verify/test_stress_sizes.py holds them together).
TOKEN_TRIGGERS: tuple[tuple[int, str], ...] = (
    (17, "aiter's sqrsum race (#3033) corrupts rows past 16"),
    (128, "tilelang's prenorm GEMM leaves its small-tile variant (vLLM 0.22–0.34: num_tokens < 128)"),
    (
        1024,
        "tilelang's block-M prenorm GEMM, 2 tokens per block (vLLM 0.22–0.34: num_tokens >= 1024; 0.22–0.26's "
        "measured wrong under tilelang 0.1.9)",
    ),
)


# Bugs read from the code whose effect depends on the compiler that builds the kernel: what the GPU machine should
# run to decide them (release, kernel from that release's wheel, token counts, compilers), and the finding each settles.
AWAITING_MEASUREMENT: tuple[tuple[str, str], ...] = (
    (
        "tilelang-hip-allreduce-offset",
        "vLLM 0.30.0's mhc_pre_big_fuse_with_norm_tilelang on a wave64 ROCm GPU (gfx950 or gfx90a), hidden 4096 and "
        "7168, 1, 80 and 1024 tokens, under each tilelang that vLLM 0.29–0.30 accept, against 0.31.0's kernel; needs "
        "an AMD GPU (the H200 cannot show it: a CUDA warp is 32 threads).",
    ),
    (
        "tilelang-pre-norm-stages",
        "scripts/gpu-measure list on the H200 with the jobs `stages 0.22.0 tl-0.1.12 none 7168 4 80,200,256,512` and "
        "`stages 0.22.0 tl-0.1.9 none 5120 4 512,1024` (one line each in $MEASURE_DIR/jobs.txt): whether vLLM "
        "0.22.0's three-stage pre is right under tilelang 0.1.12 (then a newer tilelang is no longer a warning), and "
        "whether hidden 5120 and 6144, right at 1-200 tokens, go wrong from 512 as 7168 does.",
    ),
    (
        "deepgemm-prenorm-shape",
        "scripts/gpu-measure list on the H200 with `shape 0.34.0 tl-0.1.12 0.34.0 4096 8 1,16,200` (DeepGEMM 2.8.1, "
        "vLLM 0.34's vendored copy, as dg-0.34.0.tar.xz) and the same for 0.27.0 (2.6.1): whether the DeepGEMM "
        "vLLM 0.27-0.34 vendor keep 2.5.0's assert (n <= 32, n % 8 == 0) at hc_mult 8.",
    ),
    (
        "tilelang-gemm-shape",
        "vLLM 0.30.0, 0.31.0 (= 0.32), 0.33.0 and 0.34.0's kernel files (tests/bench/vllm_fixture.py) on the H200 with "
        "VLLM_USE_DEEP_GEMM=0: `mhcdoctor verify --path vllm:tilelang --hidden 2000 --tokens 7,64` should end in "
        "AssertionError (tilelang_kernels.py:1215, :1236, :1261); then with DeepGEMM on, whether its "
        "tf32_hc_prenorm_gemm takes 4 x 2000 columns at all (the code read here does not say).",
    ),
    (
        "tilelang-fused-shape",
        "vLLM 0.33.0's single-pass fused config (tile 2, 16 splits, 256 threads: tilelang_kernels.py:65-98) runs on "
        "sm_100+ only, at 1-4 tokens and hidden 4096: it needs a B200/GB200 machine (none is lent); on the H200, "
        "0.34.0's reuse_residual fused post+pre (in place above 32 tokens) against 0.33.0's at 33, 200 and 1024 "
        "tokens, hidden 4096 and 7168, bit for bit.",
    ),
    (
        "aiter-mhc-pre-invalid-config",
        "on an MI300X (gfx942, 304 CUs) with aiter v0.1.19 built with GPU_ARCHS=gfx942 and HIP_LAUNCH_BLOCKING=1: "
        "aiter.ops.mhc.mhc_pre as vLLM calls it (scripts/aiter_exec_child.py's call forms) at hidden 4096 and 7168, "
        "1-16384 tokens, with and without norm_weight, then hipGetLastError after each compiled op: the launches the "
        "code gives were computed valid (scripts/aiter-mhc-exec), so a failing call names what the source cannot "
        "(the module_mhc.so built, the runtime); needs an AMD GPU.",
    ),
)
