"""One record per known bug inside the mHC paths: the one place its facts live.

A record holds what a user reads (the finding's id, severity, title, summary, fix and references), what the bug
breaks and where (effect, ops, platforms, archs, shapes, token range), which code carries it (first bad and first
good release or commit, the fix), how a machine tells it (content of the installed files, the installed code,
the version alone, or a measurement), the text a vLLM log shows for it, and its evidence. The findings catalogue
(rules/findings/), docs/known-bugs.md (docsgen) and the log reader (vllmlog) read these records; a record with no
hand-written decision in rules/findings/ gets the generic one there, so a new bug is one record and one test.

Evidence rule (tests/knowledge/test_bug_evidence.py): a fail for wrong results or a crash needs `Measured` or
`Code` evidence; a bug backed only by a `Report` is at most a warning, and its text says what is not known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mhcdoctor.documents.vocabulary import Severity
from mhcdoctor.knowledge import aiter_code, known
from mhcdoctor.knowledge.aiter_code import CodeFix
from mhcdoctor.knowledge.evidence import H200, Code, Evidence, Measured, Report

Effect = Literal["wrong results", "crash", "slow", "slow start-up"]
# How a machine tells whether its install carries the bug: the content of the installed source (a signature of
# the fix), the installed code (which release's kernel files it holds), the version label alone, or only a
# measurement on the GPU (verify).
ToldBy = Literal["content", "installed code", "version", "measured"]
Library = Literal["amd-aiter", "tilelang", "apache-tvm-ffi", "vllm", "deep_gemm", "kernel cache"]
PathName = Literal["aiter", "tilelang", "triton", "torch", "any"]

AITER = "https://github.com/ROCm/aiter/"
TILELANG = "https://github.com/tile-ai/tilelang/"
VLLM_PR = "https://github.com/vllm-project/vllm/pull/"
VLLM_ISSUE = "https://github.com/vllm-project/vllm/issues/"
AITER_BUILD = (
    "pip uninstall -y aiter amd-aiter && git clone --recursive https://github.com/ROCm/aiter && "
    "cd aiter && pip install --no-build-isolation ."
)


@dataclass(frozen=True)
class LogSignature:
    """The error a vLLM log shows for the bug: a regular expression over the error's line, and where the text alone
    is ambiguous one over the traceback's frames (the line itself counts as part of them). A bug of one op names
    that op as the failing one (`ops`)."""

    keyword: str  # a literal of the line the log reader finds fast before it tries `text` (vllmlog/formats.KEYWORDS)
    text: str
    # a traceback's end as a log shows it (the frames `frames` needs, then the error line), from the sources cited:
    # the log reader must map it to this bug, alone and under every other signature's frames (tests/log)
    sample: tuple[str, ...]
    frames: str | None = None
    unless: str | None = None  # on the stack, the failure is another one than the bug's
    fallback: bool = False  # `text` is any error under `frames`: tried after every signature that names its error


@dataclass(frozen=True)
class KnownBug:
    """A known bug inside an mHC path, with the finding it raises."""

    id: str  # the finding id it raises
    severity: Severity | None  # the finding's severity; None: it gives one per case (at most `worst`)
    title: str
    summary: str  # one line for the docs: when it fires
    fix: str
    refs: tuple[str, ...]
    effect: Effect
    library: Library  # whose code carries it
    path: PathName  # the mHC path whose ops run that code
    ops: tuple[str, ...]  # the ops whose kernels carry it
    told_by: ToldBy
    evidence: tuple[Evidence, ...]
    platforms: tuple[str, ...] = ()  # () every platform
    archs: tuple[str, ...] = ()  # () every arch
    hidden: tuple[int, ...] | None = None  # hidden sizes that trigger it; None: any
    hc_mult: tuple[int, ...] | None = None  # None: any
    tokens: tuple[int, int | None] = (1, None)  # calls of this many tokens show it (first, last; None: no limit)
    affected: str | None = None  # specifier of the `library` versions that carry it (what the version tells)
    vllm: str | None = None  # specifier of the vLLM releases whose code makes the call that fails (library not vLLM)
    models: tuple[str, ...] = ()  # () every DeepSeek-V4 model; else the only models whose vLLM code makes that call
    first_bad: str | None = None  # first release or tag whose code has it
    last_bad: str | None = None  # last release or tag whose code has it; None: not fixed in any release yet
    first_good: str | None = None  # first release or tag with the fix
    fixed_by: str | None = None  # the PR that fixes it
    commit: str | None = None  # the fix's commit
    content: CodeFix | None = None  # how the installed source tells it: the fix's content signature (aiter_code)
    log: tuple[LogSignature, ...] = ()  # the fatal lines the log reader maps to it, in this order (fallbacks last)
    log_severity: Severity | None = None  # its severity in a log (a failure the log shows happened); None: no log
    worst: Severity = "fail"  # the most severe it gives (with severity None)
    explanation: str = ""  # what it does, as a finding's detail says it

    @property
    def proof(self) -> Literal["measured", "code", "report"]:
        """The strongest evidence it has."""
        kinds = {type(e) for e in self.evidence}
        return "measured" if Measured in kinds else "code" if Code in kinds else "report"

    def fits(self, hidden: int, hc_mult: int) -> bool:
        """Whether a model of this hidden size and hc_mult is among those that trigger it."""
        return (self.hidden is None or hidden in self.hidden) and (self.hc_mult is None or hc_mult in self.hc_mult)


# --- aiter ---------------------------------------------------------------------------------------------------------

SQRSUM_RACE = KnownBug(
    id="aiter-sqrsum-race",
    severity="fail",
    title="aiter's mhc_pre_gemm_sqrsum race corrupts rows past 16 tokens",
    summary="The aiter path runs mhc_pre and the installed aiter lacks the race fix (aiter #3033).",
    fix="Build aiter v0.1.14 or later from source (PyPI's amd-aiter is stale): " + AITER_BUILD,
    refs=(AITER + "pull/3033", AITER + "commit/b639cb63bcac4672dce33a731fad042a65cb3649", VLLM_PR + "43950"),
    effect="wrong results",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_pre",),
    told_by="content",
    evidence=(
        Code(
            "ROCm/aiter",
            "v0.1.13.post1",
            "csrc/kernels/mhc_kernels.cu",
            None,
            "mhc_pre_gemm_sqrsum_kernel stores row sums under `if ((warp_id * mfma_m + lane_id < m_oob))`: lanes "
            "16–63 write other warps' rows; #3033 adds `lane_id < mfma_m &&`",
        ),
    ),
    platforms=("rocm",),
    hc_mult=(4,),
    tokens=(17, None),  # lanes 16–63 store into other rows: one call of more than 16 tokens
    affected=">=0.1.12,<0.1.14rc0",
    first_bad="0.1.12",
    last_bad="0.1.13.post1",
    first_good="0.1.14rc0",
    fixed_by="3033",
    commit="b639cb63bc",
    content=aiter_code.SQRSUM,
)

BIG_FUSE_SYNC = KnownBug(
    id="aiter-big-fuse-sync",
    severity="fail",
    title="aiter before 0.1.14: mhc_pre_big_fuse reads an LDS tile before every wave finished writing it",
    summary="aiter runs mhc_pre and its installed mhc_kernels.cu has the barrier before the loop (the code of "
    "0.1.11–0.1.13.post1; aiter #2978, fixed in 0.1.14-rc0); the version decides only where no source is installed.",
    fix="Build aiter v0.1.14 or later from source (PyPI's amd-aiter is stale): " + AITER_BUILD,
    refs=(AITER + "pull/2978", AITER + "commit/a85874151dc9a9e607598b8b73f83c6fab954a6b"),
    effect="wrong results",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_pre",),
    told_by="content",
    evidence=(
        Code(
            "ROCm/aiter",
            "v0.1.13.post1",
            "csrc/kernels/mhc_kernels.cu",
            None,
            "mhc_pre_big_fuse's double-buffered residual loop has its barrier before the loop, not in it; #2978 "
            "(a858741) moves it in",
        ),
    ),
    platforms=("rocm",),
    affected=">=0.1.11,<0.1.14rc0",
    first_bad="0.1.11",
    last_bad="0.1.13.post1",
    first_good="0.1.14rc0",
    fixed_by="2978",
    commit="a85874151d",
    explanation="mhc_pre_big_fuse's double-buffered residual loop has its barrier before the loop instead of in it, "
    "so a wave can read a tile another wave is still loading: wrong layer inputs where the loop runs more than "
    "once (hidden sizes above one residual block). Fixed by aiter #2978 (a858741) in 0.1.14-rc0.",
    content=aiter_code.BIG_FUSE_SYNC,
)

POST_RACE = KnownBug(
    id="aiter-mhc-post-race",
    severity="fail",
    title="aiter before 0.1.14: mhc_post prefetches into LDS without a barrier (wrong results)",
    summary="aiter runs mhc_post and its installed mhc_kernels.cu prefetches without the barrier (the code of "
    "0.1.12–0.1.13.post1; aiter #2963, fixed in 0.1.14-rc0); the version decides only where no source is installed.",
    fix="Build aiter v0.1.14 or later from source (PyPI's amd-aiter is stale): " + AITER_BUILD,
    refs=(AITER + "pull/2963", AITER + "commit/9141aa9301b960daea99fa9303f39aa28b426284"),
    effect="wrong results",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_post",),
    told_by="content",
    evidence=(
        Code(
            "ROCm/aiter",
            "v0.1.13.post1",
            "csrc/kernels/mhc_kernels.cu",
            None,
            "mhc_post loads the next residual tile into the LDS buffer other waves may still read, no barrier between; "
            "#2963 (9141aa9, 'Fix mhc_post accuracy') adds it",
        ),
    ),
    platforms=("rocm",),
    affected=">=0.1.12,<0.1.14rc0",
    first_bad="0.1.12",
    last_bad="0.1.13.post1",
    first_good="0.1.14rc0",
    fixed_by="2963",
    commit="9141aa9301",
    explanation="mhc_post loads the next residual tile into the LDS buffer other waves may still read, with no "
    "barrier between (aiter #2963: 'Fix mhc_post accuracy'); its outputs are wrong. Fixed in 0.1.14-rc0 (9141aa9).",
    content=aiter_code.POST_RACE,
)

BIG_FUSE_RMS = KnownBug(
    id="aiter-rocm-compiler",  # the contract's id; issue 23: wrong results are fail, on any ROCm
    severity="fail",
    title="aiter 0.1.15.x: mhc_pre's RMS reduction reads unset lanes (wrong results; aiter #3417)",
    summary="aiter runs mhc_pre and its installed mhc_kernels.cu has #3396's RMS reduction without the fix #3417 (the "
    "code of 0.1.15rc0–0.1.15.post3; fixed in 0.1.16); the version decides only where no source is installed.",
    fix="Build aiter 0.1.16 or later: " + AITER_BUILD,
    refs=(AITER + "pull/3417", AITER + "commit/1be6aee67b7cf9e0e90daccc700f763043a99f5d", AITER + "pull/3396"),
    effect="wrong results",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_pre",),
    told_by="content",
    evidence=(
        Code(
            "ROCm/aiter",
            "v0.1.15.post3",
            "csrc/kernels/mhc_kernels.cu",
            None,
            "#3396 reduces the RMS partial sums only in lanes inside a guard and the cross-lane reduction reads the "
            "lanes outside it; #3417 (1be6aee) zeroes them. Every 0.1.15 tag has the same file without it",
        ),
        Report(AITER + "pull/3417", "GSM8K 1.29% was measured upstream with ROCm 7.2.3's compiler only"),
    ),
    platforms=("rocm",),
    affected=">=0.1.15rc0,<0.1.16",
    first_bad="0.1.15rc0",
    last_bad="0.1.15.post3",
    first_good="0.1.16",
    fixed_by="3417",
    commit="1be6aee67b",
    explanation="mhc_pre_big_fuse (and its fused-RMSNorm twin) reduce the RMS partial sums across lanes that the "
    "guard added by aiter #3396 left unset, so the RMS factor is wrong at every token count (GSM8K 1.29% measured "
    "with ROCm 7.2.3's compiler; the code is wrong under any compiler). Fixed by #3417 (1be6aee) in 0.1.16.",
    content=aiter_code.BIG_FUSE_RMS,
)

INVALID_CONFIG = KnownBug(
    id="aiter-mhc-pre-invalid-config",
    severity="warn",
    title="aiter's mhc_pre fails with 'invalid configuration argument' on MI300X",
    summary="aiter runs mhc_pre on gfx942 with the mHC code aiter #4633 was reported on (#4115's, in 0.1.18 and "
    "later; told by the installed mhc_kernels.cu, else the version): the profile run dies with 'CUDA error: invalid "
    "configuration argument' (aiter #4633, open; its cause is not known).",
    fix="Workaround from aiter #4633: set HAS_AITER_MHC = False in vllm/model_executor/layers/mhc.py (vLLM then "
    "runs mhc_pre on torch on gfx942); or try aiter v0.1.17, the last mHC code before #4115 (not confirmed to "
    "avoid it): pip uninstall -y aiter amd-aiter && git clone --recursive -b v0.1.17 "
    "https://github.com/ROCm/aiter && cd aiter && pip install --no-build-isolation .",
    refs=(AITER + "issues/4633", AITER + "pull/4115"),
    effect="crash",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_pre",),
    told_by="content",
    evidence=(
        # scripts/aiter-mhc-exec (aiter_exec_table.json): what the reported code's launches were checked for
        Report(
            AITER + "issues/4633",
            "the cause is not known (no fix, no failing shape named), nor whether every MI300X or other archs hit "
            "it. Ruled out in the code: aiter/ops/mhc.py of v0.1.18-v0.1.19.post2 (the code reported, main at the "
            "report included), executed on the CPU as vLLM calls it for gfx942 with 304 and 80 CUs at hidden 2560-7168 "
            "and 1-65536 tokens, passes mhc_pre_gemm_sqrsum split-K 1-112, and each of the 733 launches per CU count "
            "that mhc_kernels.cu's launchers compute from its calls is within HIP's limits (block at most 320 "
            "threads, grid.y 14, grid.z 112, LDS 32 KiB, no zero dim); 0 tokens raise ZeroDivisionError in Python "
            "before any launch, and vLLM returns before aiter for 0 tokens. What is left is outside the source: a "
            "module_mhc.so built from other code, the runtime (ROCm 7.1.1)",
        ),
    ),
    platforms=("rocm",),
    archs=("gfx942",),
    affected=">=0.1.18",
    first_bad="0.1.18",  # v0.1.18 ships the same mhc_kernels.cu and aiter/ops/mhc.py as v0.1.19 (#4115)
    # aiter #4633: aiter/ops/mhc.py mhc_pre: "torch.AcceleratorError: CUDA error: invalid configuration argument".
    log=(
        LogSignature(
            "invalid configuration",
            r"invalid configuration argument",
            (
                '  File ".../aiter/ops/mhc.py", line 350, in mhc_pre',
                "torch.AcceleratorError: CUDA error: invalid configuration argument",
            ),
            frames=r"aiter/ops/mhc\.py|mhc_pre_aiter|aiter\.ops\.mhc",
        ),
    ),
    log_severity="fail",
    explanation="on MI300X (gfx942) every tensor-parallel worker crashed in the profile run at start-up with 'CUDA "
    "error: invalid configuration argument' in aiter/ops/mhc.py mhc_pre (aiter #4633, reported on v0.1.19 and "
    "main, ROCm 7.1.1; v0.1.18 ships the same mHC code). Not fixed in any release yet.",
    content=aiter_code.INVALID_CONFIG,
)

DEEPGEMM_PRENORM_SHAPE = KnownBug(
    id="deepgemm-prenorm-shape",
    severity=None,
    title="DeepGEMM's tf32_hc_prenorm_gemm refuses an hc_mult other than 2 or 4",
    summary="vLLM computes mhc_pre's prenorm GEMM with DeepGEMM (CUDA, is_deep_gemm_supported(); 0.20–0.21 always) and "
    "the model's hc_mult*(hc_mult+2) mixes are over 32 or not a multiple of 8 (every hc_mult but 2 and 4): "
    "DeepGEMM's host assert stops the first call. Measured on an H200 with the DeepGEMM 2.5.0 vLLM 0.20–0.26 vendor "
    "(fail); warn for other DeepGEMM versions (not measured); the official configs use hc_mult 4.",
    fix="VLLM_USE_DEEP_GEMM=0  # vLLM 0.22–0.25: their tilelang prenorm GEMM takes the shape; 0.20–0.21 and 0.26+'s "
    "first-layer pre call DeepGEMM only: use hc_mult 2 or 4 there",
    refs=(
        "https://github.com/deepseek-ai/DeepGEMM",
        "https://github.com/vllm-project/vllm/blob/v0.26.0/vllm/model_executor/kernels/mhc/tilelang.py",
    ),
    effect="crash",
    library="deep_gemm",
    path="tilelang",
    ops=("mhc_pre", "mhc_fused_post_pre"),
    told_by="version",
    evidence=(
        Measured(
            "scripts/gpu-measure pins09 (bench/vllm_kernels.py --check-only): vLLM 0.20.0's and 0.21.0's kernel "
            "files with the DeepGEMM their wheels vendor (2.5.0) at hidden 4096, hc_mult 2, 4 and 8, 1, 16 and 200 "
            "tokens",
            H200,
            "2026-12-05",
            "hc_mult 8 (80 mixes): mhc_pre at every token count and the fused post+pre at 200 tokens raise "
            "RuntimeError: Assertion error (.../jit_kernels/impls/sm90_tf32_hc_prenorm_gemm.hpp:81): n <= 32 and "
            "n % 8 == 0; hc_mult 2 and 4 run",
        ),
    ),
    platforms=("cuda",),
    hc_mult=None,
    log=(
        LogSignature(
            "n <= 32 and n % 8 == 0",
            r"tf32_hc_prenorm_gemm\.hpp:\d+\): n <= 32 and n % 8 == 0",
            (
                "RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/../jit_kernels/impls/"
                "sm90_tf32_hc_prenorm_gemm.hpp:81): n <= 32 and n % 8 == 0",  # the H200 run, 2026-12-05
            ),
        ),
    ),
    log_severity="fail",
)

API_TOO_OLD = KnownBug(
    id="aiter-api-too-old",
    severity="fail",
    title="aiter is too old for what this vLLM release calls",
    summary="vLLM 0.29 calls aiter's mhc_pre with norm_weight/norm_eps (aiter 0.1.15+) and "
    "mhc_fused_post_pre (0.1.16+) without probing for them.",
    fix="Build aiter 0.1.16 or later: " + AITER_BUILD + "  (or pip install 'vllm>=0.30', which falls back)",
    refs=(VLLM_PR + "52737", AITER),
    effect="crash",
    library="vllm",
    path="aiter",
    ops=("mhc_pre", "mhc_fused_post_pre"),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.29.0",
            "vllm/model_executor/kernels/mhc/aiter.py",
            49,
            "rocm_aiter_ops.mhc_pre(..., norm_weight, norm_eps) positionally, unprobed: an aiter before 0.1.15 "
            "raises TypeError",
        ),
    ),
    platforms=("rocm",),
    affected="==0.29.*",
    first_bad="0.29.0",
    first_good="0.30.0",
    fixed_by="52737",
)

# vLLM 0.30-0.34's mhc_pre_delayed (DeepSeek-V4.1's seams) imports get_mhc_fused_post_pre_config first of four names,
# so an aiter before v0.1.16 fails on that name; v0.1.16-v0.1.17 import and then refuse the sixth/twelfth argument.
_DELAYED_FRAME = r'_aiter_ops\.py"?, line \d+, in mhc_pre_delayed\b|in mhc_pre_delayed_aiter\b'
_DELAYED_FRAMES = (
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/kernels/mhc/aiter.py", line 159, in '
    "mhc_pre_delayed_aiter",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/_aiter_ops.py", line 4990, in mhc_pre_delayed',
)
DELAYED_API_TOO_OLD = KnownBug(
    id="aiter-delayed-api-too-old",
    severity="fail",
    title="vLLM 0.30–0.34 serves DeepSeek-V4.1 through an aiter GEMM API the installed aiter lacks (before 0.1.18)",
    summary="DeepSeek-V4.1 on ROCm with vLLM 0.30–0.34 and mhc_pre on aiter: the model's delayed pre calls aiter's "
    "mhc_pre_gemm_sqrsum / mhc_fused_post_pre_gemm_sqrsum with is_fn_pack_bf16 (aiter #4115, v0.1.18) and imports "
    "helpers of v0.1.16; the installed aiter/ops/mhc.py (else the version) lacks them, so the first forward (the "
    "profile run) raises and vLLM does not start.",
    fix="Build aiter v0.1.18 or later: pip uninstall -y aiter amd-aiter && git clone --recursive -b v0.1.18 "
    "https://github.com/ROCm/aiter && cd aiter && pip install --no-build-isolation .",
    refs=(AITER + "pull/4115", AITER + "commit/773ef5e8af08fa3ffe7318f045d80de0861d9622", VLLM_PR + "56503"),
    effect="crash",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_pre",),
    told_by="content",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.30.0",
            "vllm/_aiter_ops.py",
            3821,
            "rocm_aiter_ops.mhc_pre_delayed imports get_mhc_fused_post_pre_config, get_mhc_pre_splitk, "
            "mhc_fused_post_pre_gemm_sqrsum and mhc_pre_gemm_sqrsum from aiter.ops.mhc (:3741-3746) and calls "
            "mhc_pre_gemm_sqrsum(gemm_out, sqrsum, projected, fn, tile_k, 0) (:3821) or "
            "mhc_fused_post_pre_gemm_sqrsum(..., tile_m, tile_n, tile_k, 0) (:3804): a sixth / twelfth argument, "
            "is_fn_pack_bf16 (the same in 0.31.0 :4142, 0.32.0 :4470, 0.33.0 :4938)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.34.0",
            "vllm/_aiter_ops.py",
            4990,
            "the same imports (:4910) and calls (:4973, :4990) in mhc_pre_delayed (:4865)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.30.0",
            "vllm/model_executor/layers/mhc.py",
            419,
            "MHCPreDelayedOp.forward_hip calls torch.ops.vllm.mhc_pre_delayed_aiter when x is None, norm_weight is "
            "None and _aiter_mhc_supported (HAS_AITER_MHC, hidden % 256 == 0, hc_mult == 4; :398); "
            "vllm/models/deepseek_v41/amd/model.py:353 calls it so at every layer's FFN seam, the first layer's "
            "included (0.34.0 layers/mhc.py:463 and :442; model.py:470 passes norm_weight only where "
            "HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM, gfx950 from 0.32.0, layers/mhc.py:74)",
        ),
        Code(
            "ROCm/aiter",
            "v0.1.17",
            "aiter/ops/mhc.py",
            17,
            "mhc_pre_gemm_sqrsum(out, sqrsum, x, fn, tile_k=128): five arguments, as its pybind definition "
            "(csrc/include/rocm_ops.hpp:2274-2281, MHC_PYBIND), and mhc_fused_post_pre_gemm_sqrsum eleven (:401); "
            "v0.1.18 (aiter #4115, 773ef5e) adds is_fn_pack_bf16: int = 0 to both (:23, :421)",
        ),
        Measured(
            "python -m pytest -q -n 0 tests/real/test_vllm_delayed.py: the real vLLM 0.30.0 and 0.34.0 wheels call "
            "MHCPreDelayedOp as models/deepseek_v41/amd/model.py does after the first layer (hidden 4096, 1/20/200 "
            "tokens, post folded in or not) on a stand-in ROCm MI300X, with each tag's real aiter/ops/mhc.py and "
            "jit/utils/torch_guard.py (compile_ops and the pybind module stand-ins that check arguments only)",
            "x86-64 CPU machine (the project's build machine)",
            "2026-12-05",
            "v0.1.15: ImportError, cannot import name 'get_mhc_fused_post_pre_config', in _aiter_ops.py "
            "mhc_pre_delayed; v0.1.17: RuntimeError 'aiter::mhc_pre_gemm_sqrsum() expected at most 5 argument(s) but "
            "received 6' (mhc_fused_post_pre_gemm_sqrsum 11/12 below 128 tokens) from aiter's torch_guard wrapper; "
            "v0.1.18: past the GEMM, into vLLM's Triton tail (kernels/mhc/triton.py, not runnable on a CPU)",
        ),
        Code(
            "ROCm/aiter",
            "v0.1.15",
            "aiter/ops/mhc.py",
            65,
            "get_mhc_pre_splitk is the only one of the helpers; get_mhc_fused_post_pre_config and "
            "mhc_fused_post_pre_gemm_sqrsum arrive in v0.1.16 (v0.1.11-v0.1.14 have none of them)",
        ),
    ),
    platforms=("rocm",),
    hc_mult=(4,),
    affected="<0.1.18",
    # 0.30.0 brings models/deepseek_v41 and mhc_pre_delayed; 0.35 is not read, so it is not judged
    vllm=">=0.30.0,<0.35.0",
    models=("DeepSeek-V4.1",),
    first_bad="0.1.11",
    last_bad="0.1.17",
    first_good="0.1.18",
    fixed_by="4115",
    commit="773ef5e8af",
    content=aiter_code.DELAYED_API,
    log=(
        # what vLLM's real code raises (tests/real/test_vllm_delayed.py, vLLM 0.30.0/0.34.0 with aiter v0.1.17's
        # aiter/ops/mhc.py and jit/utils/torch_guard.py): compile_ops registers each op as torch.ops.aiter.NAME with
        # its Python signature's schema (aiter/jit/core.py:1676 and torch_guard.py:288 at v0.1.17), and torch's
        # dispatcher refuses the extra argument before pybind11 is reached
        LogSignature(
            "argument(s) but received",
            r"aiter::mhc_(?:fused_post_)?pre_gemm_sqrsum\(\) expected at most \d+ argument\(s\) but received \d+",
            (
                *_DELAYED_FRAMES,
                '  File "/usr/local/lib/python3.12/dist-packages/aiter/jit/utils/torch_guard.py", line 288, in '
                "wrapper_custom",
                '  File "/usr/local/lib/python3.12/dist-packages/torch/_ops.py", line 1279, in __call__',
                "RuntimeError: aiter::mhc_pre_gemm_sqrsum() expected at most 5 argument(s) but received 6 argument(s). "
                "Declaration: aiter::mhc_pre_gemm_sqrsum(Tensor(a0!) out, Tensor(a1!) sqrsum, Tensor(a2!) x, "
                "Tensor(a3!) fn, SymInt tile_k=128) -> ()",
            ),
            frames=_DELAYED_FRAME,
        ),
        # the two below are reached only where compile_ops's op is not registered with torch (torch_guard.py returns
        # the bare wrapper without torch): pybind11's refusal of a sixth argument (MHC_PYBIND at v0.1.17):
        # "mhc_pre_gemm_sqrsum(): incompatible function arguments. The following argument types are supported: ..."
        LogSignature(
            "incompatible function arguments",
            r"incompatible function arguments",
            (
                *_DELAYED_FRAMES,
                "TypeError: mhc_pre_gemm_sqrsum(): incompatible function arguments. The following "
                "argument types are supported:",
            ),
            frames=_DELAYED_FRAME,
        ),
        # and aiter's Python wrappers' check against the five-argument signature: "too many positional
        # arguments" (what scripts/aiter-mhc-exec recorded at v0.1.16-v0.1.17) or inspect.getcallargs's "takes ...
        # but 6 were given" (compile_ops, aiter/jit/core.py:1644 at v0.1.17)
        LogSignature(
            "positional argument",
            r"too many positional arguments|positional arguments? but \d+ (?:was|were) given",
            (*_DELAYED_FRAMES, "TypeError: too many positional arguments"),
            frames=_DELAYED_FRAME,
        ),
        # before v0.1.16 the first of the four names vLLM imports is missing (Python raises on the first)
        LogSignature(
            "cannot import name 'get_mhc",
            r"cannot import name '(?:get_mhc_fused_post_pre_config|get_mhc_pre_splitk|mhc_fused_post_pre_gemm_sqrsum|"
            r"mhc_pre_gemm_sqrsum)' from 'aiter",
            (
                *_DELAYED_FRAMES[:1],
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/_aiter_ops.py", line 4910, in mhc_pre_delayed',
                "ImportError: cannot import name 'get_mhc_fused_post_pre_config' from 'aiter.ops.mhc' "
                "(/usr/local/lib/python3.12/dist-packages/aiter/ops/mhc.py)",
            ),
            frames=_DELAYED_FRAME,
        ),
    ),
    log_severity="fail",
    explanation="vLLM's DeepSeek-V4.1 model runs every seam but the first attention one through "
    "rocm_aiter_ops.mhc_pre_delayed, which imports get_mhc_fused_post_pre_config and mhc_fused_post_pre_gemm_sqrsum "
    "(aiter v0.1.16+) and passes is_fn_pack_bf16 to mhc_pre_gemm_sqrsum / mhc_fused_post_pre_gemm_sqrsum (aiter "
    "#4115, v0.1.18+): an older aiter raises ImportError (before v0.1.16) or, v0.1.16–v0.1.17, torch's RuntimeError "
    "'aiter::mhc_pre_gemm_sqrsum() expected at most 5 argument(s) but received 6' (aiter registers the op with its "
    "five-argument schema) at the first forward, vLLM's profile run, so the server does not start.",
)

# vLLM 0.32-0.34 import aiter's Triton seam kernel at the call, in rocm_aiter_ops.mhc_fused_post_pre_delayed_rms_norm
_SEAM_FRAME = (
    r'_aiter_ops\.py"?, line \d+, in mhc_fused_post_pre_delayed_rms_norm\b'
    r"|in mhc_fused_post_pre_delayed_rms_norm_aiter\b"
)
SEAM_RMSNORM_MISSING = KnownBug(
    id="aiter-seam-rmsnorm-missing",
    severity="fail",
    title="vLLM 0.32–0.34 serves DeepSeek-V4.1 on gfx950 through an aiter Triton module the installed aiter lacks",
    summary="DeepSeek-V4.1 on ROCm gfx950 with vLLM 0.32–0.34 and aiter found: every delayed seam that folds its "
    "RMSNorm imports aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm at the call, with no probe; the "
    "installed aiter (else the version: every tag up to v0.1.20.post1) has no such file, so the first forward (the "
    "profile run) raises ModuleNotFoundError and vLLM does not start.",
    fix="Install an aiter whose aiter/ops/triton/fusions/ has mhc_fused_post_pre_delayed_rmsnorm.py (no ROCm/aiter "
    "tag up to v0.1.20.post1 has it), or serve V4.1 with vLLM 0.31, which never imports it (with aiter v0.1.18+): "
    "pip install 'vllm==0.31.*'",
    refs=(VLLM_PR + "56503",),
    effect="crash",
    library="amd-aiter",
    path="aiter",
    ops=("mhc_pre",),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.32.0",
            "vllm/model_executor/layers/mhc.py",
            62,
            "HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM (:74-76) is HAS_AITER_MHC and on_gfx950() (:62-68), no "
            "probe of aiter's module; MHCPreDelayedOp.forward_hip's first branch (:406-415: x is None, norm_weight "
            "given, _aiter_mhc_supported: hidden % 256 == 0, hc_mult == 4, :79-91) calls "
            "torch.ops.vllm.mhc_fused_post_pre_delayed_rms_norm_aiter (the same lines in 0.33.0 and 0.34.0)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.34.0",
            "vllm/models/deepseek_v41/amd/model.py",
            301,
            "fuse_seam_norm = HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM, and the seams pass "
            "norm_weight=self.attn_norm.weight / self.ffn_norm.weight where it is set (:403-450, :484; 0.32.0 :259 "
            "and :406, 0.33.0 :282 and :449)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.34.0",
            "vllm/_aiter_ops.py",
            5038,
            "rocm_aiter_ops.mhc_fused_post_pre_delayed_rms_norm (:5014) imports "
            "aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm at the call (0.32.0 :4494/:4518, 0.33.0 "
            ":4962/:4986), reached from kernels/mhc/aiter.py:232",
        ),
        Code(
            "ROCm/aiter",
            "v0.1.20.post1",
            "aiter/ops/triton/fusions/__init__.py",
            1,
            "aiter/ops/triton/fusions/ holds no mhc_fused_post_pre_delayed_rmsnorm.py at any tag up to v0.1.20.post1 "
            "nor on main at e4048607a5 (2026-08-22): git log --all -- that path is empty",
        ),
        Measured(
            "python -m pytest -q -n 0 tests/real/test_vllm_delayed.py -k gfx950: the real vLLM 0.32.0 and 0.34.0 "
            "wheels call MHCPreDelayedOp as models/deepseek_v41/amd/model.py does on gfx950 (norm_weight given, x "
            "None; hidden 4096, 1/20/200 tokens, post folded in or not) on a stand-in ROCm MI355X, with aiter "
            "v0.1.18's real aiter/ops/mhc.py and aiter/ops/triton/fusions/ as v0.1.20 lists it (empty stand-ins)",
            "x86-64 CPU machine (the project's build machine)",
            "2026-12-05",
            "HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM is True; every call raises ModuleNotFoundError: No module "
            "named 'aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm' in _aiter_ops.py "
            "mhc_fused_post_pre_delayed_rms_norm, called from kernels/mhc/aiter.py "
            "mhc_fused_post_pre_delayed_rms_norm_aiter; mhcdoctor log names this finding from that output",
        ),
    ),
    platforms=("rocm",),
    archs=("gfx950",),
    hc_mult=(4,),
    affected="<=0.1.20.post1",
    # 0.32.0 brings HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM; 0.35 is not read, so it is not judged
    vllm=">=0.32.0,<0.35.0",
    models=("DeepSeek-V4.1",),
    first_bad="0.1.11",
    log=(
        LogSignature(
            "mhc_fused_post_pre_delayed_rmsnorm",
            r"No module named '?aiter\.ops\.triton\.fusions\.mhc_fused_post_pre_delayed_rmsnorm'?",
            (
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/kernels/mhc/aiter.py", line 232, '
                "in mhc_fused_post_pre_delayed_rms_norm_aiter",
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/_aiter_ops.py", line 5038, in '
                "mhc_fused_post_pre_delayed_rms_norm",
                "ModuleNotFoundError: No module named 'aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm'",
            ),
            frames=_SEAM_FRAME,
        ),
    ),
    log_severity="fail",
    explanation="on gfx950, vLLM 0.32–0.34's DeepSeek-V4.1 model folds each seam's RMSNorm into aiter's Triton "
    "kernel: MHCPreDelayedOp calls rocm_aiter_ops.mhc_fused_post_pre_delayed_rms_norm, which imports "
    "aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm at the first call with no probe (layers/mhc.py:62-76, "
    "_aiter_ops.py:4518 in 0.32.0); without that module the first forward, vLLM's profile run, raises "
    "ModuleNotFoundError and the server does not start.",
)

JIT_STALE = KnownBug(
    id="aiter-jit-stale",
    severity=None,  # fail where aiter loads it by name; info where the installed aiter rebuilds it for this arch
    title="aiter's JIT-built module_mhc.so does not fit this aiter, torch or GPU",
    summary="aiter runs an op and the module_mhc.so it will load was built for other gfx targets (and the installed "
    "aiter, before v0.1.17, does not rebuild it), or before the installed aiter or torch: aiter keys it by module "
    "name only and loads it anyway.",
    fix="rm -f \"$(python -c 'import aiter, os; print(os.path.dirname(aiter.__file__))')/jit/module_mhc.so\" "
    "~/.aiter/jit/module_mhc.so  # aiter rebuilds it at the next mHC call",
    refs=(AITER + "blob/main/aiter/jit/core.py", AITER + "pull/3849"),
    effect="crash",
    library="kernel cache",
    path="aiter",
    ops=("mhc_pre", "mhc_post", "mhc_fused_post_pre"),
    told_by="content",  # probes/caches.arch_rebuild reads the installed aiter/jit/core.py
    evidence=(
        Code(
            "ROCm/aiter",
            "v0.1.16.post6",
            "aiter/jit/core.py",
            597,
            "get_module(md_name) calls get_module_custom_op, which imports module_mhc by name: no check of the gfx "
            "targets, aiter or torch it was built for (the same from v0.1.10, line 506)",
        ),
        Code(
            "ROCm/aiter",
            "v0.1.17",
            "aiter/jit/core.py",
            651,
            "get_module raises ModuleNotFoundError when _needs_arch_rebuild (line 629) finds the .so's offload "
            "targets lack the running arch, and compile_ops rebuilds it (aiter #3849, 575bed7; so in v0.1.18–"
            "v0.1.20.post1): the arch is checked, the aiter and torch that built it still are not",
        ),
    ),
    platforms=("rocm",),
    log_severity="warn",  # the log shows aiter v0.1.17+ noticing the wrong arch and rebuilding (vllmlog/formats.py)
)

# --- tilelang ------------------------------------------------------------------------------------------------------

WRONG_ARCH = KnownBug(
    id="tilelang-wrong-arch",
    severity="fail",
    title="tilelang mHC kernels are selected on gfx942, where they compute wrong results",
    summary="A tilelang mHC kernel runs on gfx942 (releases before 0.24 do not exclude it).",
    fix="pip install -U 'vllm>=0.25'  # or remove tilelang: pip uninstall -y tilelang",
    refs=("https://github.com/vllm-project/vllm/issues/45698", VLLM_PR + "45931"),
    effect="wrong results",
    library="vllm",
    path="tilelang",
    ops=("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.24.0",
            "vllm/model_executor/layers/mhc.py",
            21,
            "'TileLang MHC currently produces incorrect results on gfx942': HAS_TILELANG_MHC is False there",
        ),
    ),
    platforms=("rocm",),
    archs=("gfx942",),
    affected="<0.24.0",
    first_good="0.24.0",
    fixed_by="45931",
)

PDL_UNSUPPORTED = KnownBug(
    id="tilelang-pdl-unsupported",
    severity="fail",
    title="vLLM's tilelang mHC kernels ask for PDL, which ROCm lacks",
    summary="vLLM 0.20–0.21 on ROCm sends an op to its tilelang kernels, which call T.pdl_sync/T.pdl_trigger "
    "unconditionally: tilelang raises 'PDL is not supported' when it compiles them (vLLM #42876).",
    fix="pip install -U 'vllm>=0.25'  # ROCm runs aiter or tilelang without PDL from 0.22",
    refs=(VLLM_ISSUE + "42876", VLLM_PR + "43679"),
    effect="crash",
    library="vllm",
    path="tilelang",
    ops=("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.21.0",
            "vllm/model_executor/layers/mhc.py",
            82,
            "T.pdl_sync() / T.pdl_trigger() in the tilelang kernels on every platform; #43679 (0.22) makes PDL "
            "CUDA-only",
        ),
        Report(VLLM_ISSUE + "42876", "seen on MI350X with vllm-openai-rocm:v0.21.0; other ROCm GPUs not reported"),
    ),
    platforms=("rocm",),
    affected="<0.22.0",
    first_good="0.22.0",
    fixed_by="43679",
    # tilelang's TVM lowering: "Check failed: (!mutator.has_trigger_launch_ && !mutator.has_grid_sync_) is false: PDL
    # is not supported" (vLLM #42876: mhc_post_tilelang on MI350X, vllm-openai-rocm:v0.21.0).
    log=(
        LogSignature(
            "PDL is not",
            r"PDL is not supported",
            (  # vLLM #42876
                "RuntimeError: Worker failed with error 'Check failed: (!mutator.has_trigger_launch_ && "
                "!mutator.has_grid_sync_) is false: PDL is not supported'",
            ),
        ),
    ),
    log_severity="fail",
)

TVM_FFI_MISMATCH = KnownBug(
    id="tilelang-tvm-ffi-mismatch",
    severity=None,
    title="tilelang and apache-tvm-ffi are a known-bad pair",
    summary="The installed tilelang and apache-tvm-ffi (read from their metadata, also with --fast) form a "
    "pair proven to break: tilelang 0.1.10–0.1.12 with apache-tvm-ffi 0.1.12+ aborts at import and 0.1.9 with "
    "0.1.12+ fails to import (measured); 0.1.8 with 0.1.10+ fails to compile kernels (read in its code). Fail where "
    "vLLM imports tilelang; none where full check's child imported that tilelang. vLLM 0.26.0's own pins (0.1.9 "
    "with 0.1.10) were measured good.",
    fix="pip install 'apache-tvm-ffi<0.1.12'",
    refs=(
        TILELANG + "issues/2367",
        TILELANG + "pull/2795",
        TILELANG + "issues/2040",
        "https://github.com/kvcache-ai/ktransformers/issues/2045",
        VLLM_PR + "45169",
    ),
    effect="crash",
    library="apache-tvm-ffi",
    path="tilelang",
    ops=("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"),
    told_by="version",
    evidence=tuple(e for pair in known.TVM_FFI_BAD_PAIRS for e in pair.evidence),  # each pair's own decides
    log=(
        # A C++ tvm::ffi::Error that nothing caught aborts the process (tilelang #2367, vLLM #45169, sglang #34858
        # print "terminate called after throwing an instance of 'tvm::ffi::Error'").
        LogSignature(
            "tvm::ffi::Error",
            r"throwing an instance of '?tvm::ffi::Error",
            ("terminate called after throwing an instance of 'tvm::ffi::Error'",),  # vLLM #45169
        ),
        # apache-tvm-ffi newer than tilelang's bundled TVM: "TypeAttr `__ffi_repr__` is already registered"
        # (tvm::ffi::Error), sglang #34858, ktransformers #2045.
        LogSignature(
            "already registered",
            r"already registered",
            ("what(): TypeAttr `__ffi_repr__` is already registered for type index 130",),  # sglang #34858
            frames=r"__ffi_|tvm[_:.]|tvm_ffi|TVMFFI|tilelang",
        ),
    ),
    log_severity="fail",
)

PRENORM_BLOCK_M = KnownBug(
    id="tilelang-prenorm-block-m",
    severity=None,
    title="vLLM 0.22–0.26's block-M prenorm GEMM (1024+ tokens) is wrong under tilelang 0.1.9",
    summary="vLLM 0.22–0.26 runs mhc_pre's prenorm GEMM on tilelang (no DeepGEMM: ROCm, or CUDA where "
    "is_deep_gemm_supported() is False); from 1024 tokens its hc_prenorm_gemm_block_m_tilelang reduces into a "
    "T.alloc_var that tilelang 0.1.9 (vLLM's pin) lowers wrong: measured wrong on an H200 (fail); warn for "
    "tilelang 0.1.10–0.1.11 or off CUDA (not measured); measured right under tilelang 0.1.12 and 0.1.15.",
    fix="pip install -U 'vllm>=0.27'  # or tilelang>=0.1.12 (measured right with 0.26's kernel, outside "
    "vLLM's pin); mhcdoctor verify --stress checks 1024+ tokens",
    refs=(VLLM_PR + "43905",),
    effect="wrong results",
    library="vllm",
    path="tilelang",
    ops=("mhc_pre", "mhc_fused_post_pre"),
    told_by="installed code",
    evidence=(
        Measured(
            "scripts/gpu-vllm-kernels matrix (bench/vllm_kernels.py --check-only): vLLM 0.24.0, 0.26.0, 0.27.0, "
            "0.28.0, 0.30.0, 0.31.0, 0.33.0 and 0.34.0's kernel files from each wheel, called as the DeepSeek-V4 "
            "model calls them (DeepGEMM off), against the float64 oracle; hidden 4096 and 7168; 1, 7, 80, 512, 1024, "
            "4096 and 16384 tokens; each release under its pinned tilelang (0.1.9 or 0.1.12) and under 0.1.15; then "
            "0.26.0 alone under 0.1.12 at 1, 7, 80, 512, 1024, 1025, 4096 and 16384 tokens",
            H200,
            "2026-12-04",
            "0.24.0 and 0.26.0 under tilelang 0.1.9: mhc_pre and the fused post+pre wrong at 1024, 4096 and 16384 "
            "tokens at both hidden sizes (post_mix off by up to 1.58, about half of comb_mix wrong); right under "
            "0.1.15, and 0.26.0 right under 0.1.12 (64 of 64 cases, 1025 tokens included). The block-M kernel is "
            "the same text in 0.22.0–0.26.0. 0.27.0+ right at those sizes under 0.1.12 and 0.1.15. So: fail with "
            "tilelang <= 0.1.9, warn for 0.1.10–0.1.11 (not measured), nothing from 0.1.12",
        ),
        Measured(
            "scripts/gpu-measure pins09 (bench/vllm_kernels.py --check-only): vLLM 0.20.0-0.23.0's and 0.26.0's "
            "kernel files at 1, 7, 80, 512, 1024, 4096 and 16384 tokens, hidden 7168 and 4096, under tilelang 0.1.9 "
            "(0.26.0 with its apache-tvm-ffi 0.1.10), with VLLM_USE_DEEP_GEMM=0 and with the DeepGEMM each wheel "
            "vendors (2.5.0)",
            H200,
            "2026-12-05",
            "DeepGEMM off: 0.22.0, 0.23.0 and 0.26.0's mhc_pre and fused post+pre wrong from 1024 tokens at both "
            "hidden sizes (post_mix off by up to 1.58), as 0.24.0's; DeepGEMM on, as a stock sm_90 install runs: the "
            "block-M kernel is not taken and 0.23.0 and 0.26.0 are right at every size (0.22.0 wrong from 512 tokens "
            "at 7168 for another cause: tilelang-pre-norm-stages); 0.20.0 and 0.21.0, which have no tilelang GEMM, "
            "right at every size",
        ),
        Code(
            "vllm-project/vllm",
            "v0.26.0",
            "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
            787,
            "hc_prenorm_gemm_block_m_tilelang sums each token into one T.alloc_var(T.float32, init=0.0) inside the "
            "unrolled token loop; 0.27.0 uses per-token T.alloc_local arrays",
        ),
    ),
    tokens=(1024, None),  # kernels/mhc/tilelang.py: x.shape[0] >= 1024 takes the block-M GEMM
    # the function is the same text in _tilelang_ops.py (0.22) and kernels/mhc/tilelang_kernels.py (0.23–0.26),
    # read from each wheel; 0.27.0 rewrote it with per-token T.alloc_local arrays
    affected=">=0.22.0,<0.27.0",
    first_bad="0.22.0",
    last_bad="0.26.0",
    first_good="0.27.0",
)

PRE_NORM_STAGES = KnownBug(
    id="tilelang-pre-norm-stages",
    severity=None,
    title="vLLM 0.22.0's mhc_pre with the RMSNorm folded in writes a wrong layer input",
    summary="vLLM 0.22.0 on CUDA runs mhc_pre (and the fused post+pre's pre) as mhc_pre_big_fuse_with_norm_tilelang, "
    "whose first pass is pipelined in 3 stages (0.23.0: 2): measured wrong on an H200 under tilelang 0.1.9 (vLLM's "
    "pin), with DeepGEMM on or off, at hidden 7168 from 512 tokens and at hidden 1280, 2048 and 3072 (fail); right "
    "at hidden 4096; warn for other hidden sizes or tilelang versions (not measured).",
    fix="pip install -U 'vllm>=0.23'  # 0.23.0 pipelines that loop in 2 stages",
    refs=(
        "https://github.com/vllm-project/vllm/blob/v0.22.0/vllm/_tilelang_ops.py",
        "https://github.com/vllm-project/vllm/blob/v0.23.0/vllm/model_executor/kernels/mhc/tilelang_kernels.py",
    ),
    effect="wrong results",
    library="vllm",
    path="tilelang",
    ops=("mhc_pre", "mhc_fused_post_pre"),
    told_by="installed code",
    evidence=(
        Measured(
            "scripts/gpu-measure pins09 (bench/vllm_kernels.py --check-only): vLLM 0.20.0-0.23.0's and 0.26.0's "
            "kernel files, called as the DeepSeek-V4 model calls them (with norm_weight), against the float64 "
            "oracle, under tilelang 0.1.9; 1, 7, 80, 512, 1024, 4096 and 16384 tokens at hidden 7168 and 4096, with "
            "the DeepGEMM vLLM 0.20.0's wheel vendors and without; 1, 16 and 200 tokens at hidden 1280, 2048, 2560, "
            "3072, 5120 and 6144 (DeepGEMM off)",
            H200,
            "2026-12-05",
            "0.22.0 alone: mhc_pre's and the fused op's layer_input wrong (max abs error 5-7) at hidden 7168 from 512 "
            "tokens with DeepGEMM on and off, at 2048 (1, 16, 200 tokens), 1280 and 3072 (200 tokens); right at "
            "hidden 4096 up to 512 tokens (and with DeepGEMM up to 16384), 2560, 5120 and 6144. 0.23.0, whose file "
            "differs only in that loop's num_stages, right at hidden 7168 at every size with DeepGEMM",
        ),
        Code(
            "vllm-project/vllm",
            "v0.22.0",
            "vllm/_tilelang_ops.py",
            312,
            "mhc_pre_big_fuse_with_norm_tilelang: `for i0_h in T.Pipelined(hidden_size // hidden_block, "
            "num_stages=3)` stages the residual into shared memory for the first pass; 0.23.0's "
            "kernels/mhc/tilelang_kernels.py:312 has num_stages=2, the only difference between the files",
        ),
    ),
    platforms=("cuda",),
    affected=">=0.22.0,<0.23.0",
    first_bad="0.22.0",
    last_bad="0.22.0",
    first_good="0.23.0",
)

HIP_ALLREDUCE_OFFSET = KnownBug(
    id="tilelang-hip-allreduce-offset",
    severity="fail",
    title="vLLM 0.29–0.30's tilelang mhc_pre with a folded RMSNorm reduces on threads TileLang's HIP AllReduce "
    "gets wrong",
    summary="vLLM 0.29–0.30 on a 64-wide-wavefront ROCm GPU (gfx9) folds the RMSNorm into tilelang's mhc_pre where "
    "aiter does not serve; the norm's sum runs on threads 32.. and TileLang's HIP AllReduce ignores that offset "
    "(vLLM 0.31.0 moved it to threads 0..63 on ROCm).",
    fix="pip install -U 'vllm>=0.31'",
    refs=("https://github.com/vllm-project/vllm/blob/v0.31.0/vllm/model_executor/kernels/mhc/tilelang_kernels.py",),
    effect="wrong results",
    library="vllm",
    path="tilelang",
    ops=("mhc_pre", "mhc_fused_post_pre"),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.31.0",
            "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
            26,
            "'TileLang's HIP AllReduce shuffle phase ignores a nonzero reduction-group offset, so the 64-thread "
            "RMSNorm reduction must be wave64-aligned and use threads 0..63' (_MIX_ON_TRAILING_THREADS on ROCm)",
        ),
    ),
    platforms=("rocm",),
    archs=("gfx9",),
    # the AMD model folds the norm into tilelang's pre from 0.29; 0.31.0 moves the reduction to threads 0..63
    affected=">=0.29.0,<0.31.0",
    first_bad="0.29.0",
    last_bad="0.30.0",
    first_good="0.31.0",
)

FUSED_POST_PRE_SLOW = KnownBug(
    id="tilelang-fused-post-pre-slow",
    severity="warn",
    title="vLLM 0.33–0.34's fused post+pre is 5x slower per decode call under a tilelang newer than its pin",
    summary="vLLM 0.33–0.34 on CUDA runs the fused post+pre on tilelang, and the installed tilelang is newer than "
    "the 0.1.12 it pins: measured on an H200, 0.0480 ms per 1-token call under 0.1.15 against 0.0091 ms under "
    "0.1.12 (slow, not wrong).",
    fix="pip install 'tilelang==0.1.12'  # the tilelang vLLM 0.33–0.34 pin",
    refs=("https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/model_executor/kernels/mhc/tilelang.py",),
    effect="slow",
    library="tilelang",
    path="tilelang",
    ops=("mhc_fused_post_pre",),
    told_by="version",
    evidence=(
        Measured(
            "vLLM 0.34.0's kernel files, mhc_fused_post_pre_tilelang_reuse_residual, hidden 7168, 1 token, replayed "
            "in a CUDA graph: mhcdoctor bench --model deepseek-v4-pro under tilelang 0.1.15; scripts/gpu-vllm-kernels "
            "time (bench/vllm_kernels.py) under 0.1.12, vLLM 0.34's pin",
            H200,
            "2026-12-04",
            "0.0480 ms per call under tilelang 0.1.15 against 0.0091 ms under 0.1.12: slow, not wrong (0.33.0 has "
            "the same kernel file; not timed)",
        ),
    ),
    platforms=("cuda",),
    tokens=(1, 1),
    worst="warn",
)

FUSED_SHAPE = KnownBug(
    id="tilelang-fused-shape",
    severity="fail",
    title="vLLM 0.21–0.29's fused post+pre skips part of a shape (hidden, hc_mult) the official configs do not use",
    summary="vLLM 0.21–0.29 runs the fused post+pre on tilelang, and the model's hidden size or hc_mult does not "
    "divide the fixed tile and split of its small-token kernel (hidden not a multiple of 1024, or of 2048 up to "
    "4096; hc_mult*(hc_mult+2) not a multiple of 2 and 3): part of the output is never written, from the code "
    "(kernels/mhc/tilelang.py, tilelang_kernels.py) and measured on an H200 at exactly the cases it gives (hidden "
    "1280, 2560, 3072; hc_mult 2 and 8); the official configs (hidden 4096, 5120, 7168, hc_mult 4) divide.",
    fix="pip install -U 'vllm>=0.30'  # picks a tile and split that divide the shape",
    refs=(
        "https://github.com/vllm-project/vllm/blob/v0.26.0/vllm/model_executor/kernels/mhc/tilelang.py",
        "https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/model_executor/kernels/mhc/tilelang_kernels.py",
    ),
    effect="wrong results",
    library="vllm",
    path="tilelang",
    ops=("mhc_fused_post_pre",),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.26.0",
            "vllm/model_executor/kernels/mhc/tilelang.py",
            518,
            "use_small_fma = num_tokens <= 16; tile_n = 2 if num_tokens < 8 else 3; n_splits = 8 if (num_tokens < 8 "
            "and hidden_size <= 4096) else 4 (0.21.0 layers/mhc.py:656-660 the same)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.26.0",
            "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
            545,
            "mhc_fused_tilelang: h_per_split = h // split_k, n_tiles = n_out // tile_n, h_iters = h_per_split // the "
            "256 threads: the remainder of hidden and of the hc_mult*(hc_mult+2) mixes is never computed or stored",
        ),
        Code(
            "vllm-project/vllm",
            "v0.30.0",
            "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
            50,
            "mhc_fused_post_pre_split_config lowers tile_n and n_splits until they divide the shape: the fix",
        ),
        Code(
            "vllm-project/vllm",
            "v0.34.0",
            "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
            79,
            "the fix holds through 0.34 (0.31.0-0.32.0 :67, 0.33.0 :79): the launcher takes its config from it "
            "(:1780) and the op falls back to post + GEMM where it gives none (tilelang.py:886); 0.33's single-pass "
            "config (:91-98) is taken only at hidden 16 x 256 with tile 2 dividing the mixes",
        ),
        Measured(
            "scripts/gpu-measure pins09 and pins12 (bench/vllm_kernels.py --check-only, VLLM_USE_DEEP_GEMM=0): the "
            "fused post+pre of vLLM 0.21.0, 0.22.0, 0.24.0 (the same kernel as 0.23.0 and 0.25.x), 0.26.0, 0.27.0, "
            "0.28.0 (= 0.29.0), 0.30.0, 0.31.0 (= 0.32.0) and 0.33.0's kernel files at hidden 1280, 2048, 2560, "
            "3072, 5120 and 6144 (hc_mult 4) and hc_mult 2 and 8 (hidden 4096), 1, 16 and 200 tokens, under each "
            "release's pinned tilelang (0.1.9; 0.1.12 from 0.27)",
            H200,
            "2026-12-05",
            "0.21.0-0.28.0 wrong exactly where knowledge.known.fused_small_fma_gaps says: hidden 1280 and 2560 at 1 "
            "and 16 tokens and 3072 at 1 token (residual_out non-finite, up to 3.4e38), hc_mult 2 and 8 at 16 tokens "
            "(post_mix off by 0.0016-0.0023); right at hidden 2048, 5120 and 6144 and at 200 tokens. 0.30.0 and "
            "0.31.0 right at every shape; 0.33.0 right at hidden 1280 and 2048 (its other shapes did not run)",
        ),
    ),
    tokens=(1, 16),
    affected=">=0.21.0,<0.30.0",
    first_bad="0.21.0",
    last_bad="0.29.0",
    first_good="0.30.0",
)

GEMM_SHAPE = KnownBug(
    id="tilelang-gemm-shape",
    severity="fail",
    title="vLLM 0.22–0.34's tilelang prenorm GEMM asserts on a shape (hidden, hc_mult) the official configs do not use",
    summary="vLLM 0.22–0.34 computes mhc_pre's prenorm GEMM with its own tilelang kernel where DeepGEMM is not used "
    "(ROCm, CUDA archs without it, VLLM_USE_DEEP_GEMM=0, 0.34 with no nvcc 12.9+), and hc_mult * hidden is not a "
    "multiple of that kernel's 512 threads: its launcher's assert fails at the first mhc_pre call (the engine dies at "
    "start-up or on the first request), from the code (0.22–0.29 kernels/mhc/tilelang.py, 0.30–0.34 "
    "tilelang_kernels.py).",
    fix="Serve where DeepGEMM computes the GEMM (sm_90 or sm_100 with VLLM_USE_DEEP_GEMM=1), or use a hidden size "
    "with hc_mult * hidden a multiple of 512: no vLLM release up to 0.34 lifts the assert",
    refs=(
        "https://github.com/vllm-project/vllm/blob/v0.26.0/vllm/model_executor/kernels/mhc/tilelang.py",
        "https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/model_executor/kernels/mhc/tilelang_kernels.py",
    ),
    effect="crash",
    library="vllm",
    path="tilelang",
    ops=("mhc_pre", "mhc_fused_post_pre"),
    told_by="installed code",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.26.0",
            "vllm/model_executor/kernels/mhc/tilelang.py",
            41,
            "_tilelang_hc_prenorm_gemm asserts (x.shape[1] // n_splits) % 512 threads == 0, with x.shape[1] = "
            "hc_mult * hidden (the same line in 0.22.0-0.29.0's wrapper)",
        ),
        # the assert moved into the kernel's launcher, not away: 0.30.0:1215, 0.31.0-0.32.0:1236, 0.33.0-0.34.0:1261
        Code(
            "vllm-project/vllm",
            "v0.34.0",
            "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
            1261,
            "HcPrenormGemmTileLangKernel.__call__ asserts that each split of x.shape[1] is a multiple of its threads "
            "before dispatch, with 512 threads and n_splits 1 as tilelang.py's _hc_prenorm_gemm_outputs calls it "
            "(the same assert at 0.30.0 tilelang_kernels.py:1215, 0.31.0-0.32.0 :1236, 0.33.0 :1261)",
        ),
    ),
    affected=">=0.22.0,<0.35.0",  # 0.34.0 is the newest release read: a newer one is not judged on a guess
    first_bad="0.22.0",
    last_bad="0.34.0",
)

CACHE_COLD = KnownBug(
    id="tilelang-cache-cold",
    severity=None,
    title="tilelang's kernel cache holds none of vLLM's mHC kernels",
    summary="tilelang runs an op and $TILELANG_CACHE_DIR (default ~/.tilelang/cache) holds no mHC kernel for the "
    "installed tilelang. Warn on CUDA in vLLM 0.23–0.29, whose NVIDIA model skips the mHC warm-up (vLLM #51790), "
    "and on ROCm in 0.30–0.34, whose AMD model registers no mHC kernel with the JIT warm-up: the kernels compile "
    "while serving.",
    fix="Warm the cache once before serving, with the same tilelang and TILELANG_CACHE_DIR (e.g. a short "
    "vllm serve run with prompts of the lengths you serve), and keep the cache folder on persistent storage",
    refs=(VLLM_ISSUE + "51790", VLLM_PR + "52941", VLLM_PR + "47807"),
    effect="slow start-up",
    library="kernel cache",
    path="tilelang",
    ops=("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"),
    told_by="content",
    evidence=(
        Code(
            "vllm-project/vllm",
            "v0.24.0",
            "vllm/model_executor/warmup/deepseek_v4_mhc_warmup.py",
            82,
            "_find_first_mhc_layer wants hc_pre/hc_post on the decoder layer, which the NVIDIA model no longer "
            "defines from 0.23.0 (vLLM #51790)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.34.0",
            "vllm/models/deepseek_v4/amd/rocm.py",
            1869,
            "the AMD model's only register_warmup calls are the compressor's (rocm.py:1869) and MTP's RMSNorm "
            "(mtp.py:126-127): none of its mHC kernels, from 0.30.0 (the NVIDIA model registers its own, "
            "nvidia/model.py:1213-1257 in 0.30.0)",
        ),
    ),
    worst="warn",
    log_severity="info",  # compiles at start-up; while serving is the log reader's own mhc-jit-while-serving
)

# --- DeepGEMM ------------------------------------------------------------------------------------------------------

DEEPGEMM_PRENORM_BROKEN = KnownBug(
    id="deepgemm-prenorm-broken",
    severity="fail",
    title="DeepGEMM's tf32_hc_prenorm_gemm cannot run where vLLM calls it",
    summary="CUDA releases whose mhc_pre calls DeepGEMM's tf32_hc_prenorm_gemm with no tilelang fallback "
    "(0.20–0.21 always, 0.26+ the first layer's pre), on an arch DeepGEMM lacks (sm_90, sm_10x, sm_12x from "
    "0.24), or with no deep_gemm (standalone or vLLM's vendored copy), or one without tf32_hc_prenorm_gemm.",
    fix="Run on sm_90/sm_100 (H100/H200/B200); where deep_gemm is the cause: pip uninstall -y deep_gemm  "
    "# vLLM then uses its vendored copy, which has tf32_hc_prenorm_gemm",
    refs=(VLLM_PR + "43905", "https://github.com/deepseek-ai/DeepGEMM/issues/317", VLLM_ISSUE + "52732"),
    effect="crash",
    library="deep_gemm",
    path="tilelang",
    ops=("mhc_pre",),
    told_by="installed code",
    evidence=(
        Code(
            "deepseek-ai/DeepGEMM",
            "main",
            "csrc/apis/hyperconnection.hpp",
            None,
            "tf32_hc_prenorm_gemm dispatches arch 9 and 10 only, 'Unsupported architecture' otherwise (DeepGEMM #317)",
        ),
        Code(
            "vllm-project/vllm",
            "v0.26.0",
            "vllm/model_executor/kernels/mhc/tilelang.py",
            134,
            "mhc_pre_broadcast_tilelang imports and calls tf32_hc_prenorm_gemm with no tilelang fallback",
        ),
    ),
    platforms=("cuda",),
    log=(
        # tf32_hc_prenorm_gemm on an arch it has no kernel for: csrc/apis/hyperconnection.hpp:56 "Unsupported
        # architecture" (DeepGEMM #317; vLLM #40778 on L20, #41027 on A100, #43477 on SM120), whatever the stack shows.
        LogSignature(
            "hyperconnection.hpp",
            r"hyperconnection\.hpp(?::\d+)?\)?:? ?Unsupported architecture",
            (  # vLLM #40778
                "RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/hyperconnection.hpp:56): "
                "Unsupported architecture",
            ),
        ),
        # vLLM's DeepGEMM prenorm GEMM (utils/deep_gemm.py tf32_hc_prenorm_gemm) failing where it is called, unless
        # it is a fork's Triton stand-in (vLLM #41834's sm12x_deep_gemm_fallbacks.py calls
        # tf32_hc_prenorm_gemm_triton): its failure is not DeepGEMM's. Any error text, so a fallback.
        LogSignature(
            "tf32_hc_prenorm_gemm",
            r"(?:Error|error|failed|Assertion)",
            (  # vLLM 0.26.0 vllm/utils/deep_gemm.py:635; the error line of vLLM #40778 (H100)
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/utils/deep_gemm.py", line 635, in '
                "tf32_hc_prenorm_gemm",
                "torch.AcceleratorError: CUDA error: invalid argument",
            ),
            frames=r"tf32_hc_prenorm_gemm",
            unless=r"tf32_hc_prenorm_gemm_triton|_tf32_hc_prenorm_gemm_kernel\[",
            fallback=True,
        ),
    ),
    log_severity="fail",
)

DEEPGEMM_B300_LAUNCH = KnownBug(
    id="deepgemm-prenorm-b300-launch",
    severity="warn",
    title="DeepGEMM's sm100 tf32_hc_prenorm_gemm fails to launch on B300 (sm_103)",
    summary="vLLM 0.23+ on a B300 (sm_103) computes mhc_pre's prenorm GEMM with DeepGEMM, whose "
    "sm100_tf32_hc_prenorm_gemm launch failed there at start-up (vLLM #46796, open: invalid argument on CUDA 13, "
    "invalid configuration on 12.9).",
    fix="If it fails at start-up: VLLM_USE_DEEP_GEMM=0 on vLLM 0.22–0.25 (tilelang's GEMM; 0.26+ still call "
    "DeepGEMM in the first layer), or vLLM 0.20.1 as reported in vLLM #46796",
    refs=(VLLM_ISSUE + "46796",),
    effect="crash",
    library="deep_gemm",
    path="tilelang",
    ops=("mhc_pre",),
    told_by="version",
    evidence=(
        Report(
            VLLM_ISSUE + "46796",
            "one report, open: which DeepGEMM builds, drivers and CUDA versions fail, and whether every B300 does, "
            "is not known",
        ),
    ),
    platforms=("cuda",),
    archs=("sm_103",),
    affected=">=0.23.0",
)

# The known-bugs page lists them in this order; the log reader tries their `log` signatures in it too, every
# fallback after the rest (vllmlog/signatures.py).
BUGS: tuple[KnownBug, ...] = (
    SQRSUM_RACE,
    BIG_FUSE_SYNC,
    POST_RACE,
    BIG_FUSE_RMS,
    INVALID_CONFIG,
    DELAYED_API_TOO_OLD,
    SEAM_RMSNORM_MISSING,
    WRONG_ARCH,
    PDL_UNSUPPORTED,
    TVM_FFI_MISMATCH,
    PRENORM_BLOCK_M,
    PRE_NORM_STAGES,
    HIP_ALLREDUCE_OFFSET,
    DEEPGEMM_PRENORM_BROKEN,
    DEEPGEMM_PRENORM_SHAPE,
    API_TOO_OLD,
    CACHE_COLD,
    JIT_STALE,
    DEEPGEMM_B300_LAUNCH,
    FUSED_POST_PRE_SLOW,
    FUSED_SHAPE,
    GEMM_SHAPE,
)
BY_ID: dict[str, KnownBug] = {bug.id: bug for bug in BUGS}
