"""Findings about tilelang: the package, its compiler, apache-tvm-ffi, and known bugs in vLLM's tilelang kernels."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mhcdoctor.documents.vocabulary import Severity
from mhcdoctor.knowledge import bugs, known, versions, vllm_releases
from mhcdoctor.knowledge.evidence import Report
from mhcdoctor.rules.dispatch import (
    arch_has,
)
from mhcdoctor.rules.findings.base import (
    FindingContext,
    FindingSpec,
    Found,
    _import_error,
    _named,
    bug_spec,
    deepgemm_used,
)
from mhcdoctor.rules.releases import PR


def _tilelang_unusable(ctx: FindingContext) -> bool:
    tl = ctx.facts.tilelang
    return tl.present is False or (tl.present is True and tl.imports is False)


def _tilelang_missing(ctx: FindingContext) -> bool:
    return ctx.dispatch is not None and ctx.dispatch.tilelang_required and _tilelang_unusable(ctx)


def _tilelang_selected_broken(ctx: FindingContext) -> bool:
    """find_spec finds tilelang, vLLM selects it, but it cannot be imported (ROCm; CUDA is tilelang-missing)."""
    return (
        not _tilelang_missing(ctx)
        and bool(ctx.ops_on("tilelang"))
        and ctx.facts.tilelang.present is True
        and ctx.facts.tilelang.imports is False
    )


def _tilelang_ignored_broken(ctx: FindingContext) -> bool:
    return (
        ctx.rules is not None
        and ctx.rules.has_tilelang == "import"
        and ctx.facts.platform == "rocm"
        and ctx.facts.tilelang.present is True
        and ctx.facts.tilelang.imports is False
        and not _tilelang_missing(ctx)
    )


def _compiler_missing(ctx: FindingContext) -> bool:
    if not ctx.ops_on("tilelang"):
        return False
    compiler = ctx.facts.nvcc if ctx.facts.platform == "cuda" else ctx.facts.hipcc
    return compiler.found is False


def _tvm_ffi_pair(ctx: FindingContext) -> known.BadPair | None:
    tl, ffi = ctx.facts.tilelang, ctx.facts.tvm_ffi
    if tl.present is False or ffi.present is False:
        return None
    pair = known.bad_tvm_ffi_pair(tl.version, ffi.version)
    observed = not ctx.facts.sources.get("tilelang.imports", "").startswith("user:")  # a what-if only assumes
    if pair is not None and pair.stage == "import" and tl.imports is True and observed:
        return None  # observed beats inferred: full check's child imported this very tilelang
    return pair


def _tilelang_loaded(ctx: FindingContext) -> bool:
    """vLLM imports tilelang here: an op runs on it, CUDA (every release imports it), or a trial-import release."""
    rs = ctx.rules
    return (
        bool(ctx.ops_on("tilelang"))
        or ctx.facts.platform == "cuda"
        or (rs is not None and rs.has_tilelang == "import" and ctx.facts.platform == "rocm")
    )


def _tvm_ffi_text(ctx: FindingContext, pair: known.BadPair) -> str:
    tl, ffi = ctx.facts.tilelang.version, ctx.facts.tvm_ffi.version
    requires = known.TILELANG_TVM_FFI_REQUIRES.get(str(versions.public(tl)))
    text = f"tilelang {tl} with apache-tvm-ffi {ffi}: {pair.effect}"
    if requires is not None and versions.within(ffi, requires):
        text += f" (tilelang {tl} requires apache-tvm-ffi{requires}, which lets pip pick {ffi})"
    elif requires is not None:
        text += f" (tilelang {tl} requires apache-tvm-ffi{requires}: {ffi} was installed over that pin)"
    where = ctx.ops_text("tilelang") if ctx.ops_on("tilelang") else "vLLM's tilelang import"
    text += f". Hit by {where}."
    if not pair.proven:
        reports = " ".join(e.url for e in pair.evidence if isinstance(e, Report))
        text += f" Only reported ({reports}), neither measured nor read in code for this pair."
    return text


def _pdl_on_rocm(ctx: FindingContext) -> bool:
    """vLLM 0.20–0.21 on ROCm: the tilelang mHC kernels call T.pdl_sync/T.pdl_trigger unconditionally."""
    rs = ctx.rules
    return (
        ctx.facts.platform == "rocm"
        and rs is not None
        and rs.rocm_style != "custom-op"
        and bool(ctx.ops_on("tilelang"))
    )


def _hip_allreduce_ops(ctx: FindingContext) -> list[str]:
    """0.29–0.30 on a wave64 ROCm GPU (gfx9: CDNA): the AMD model folds the RMSNorm into tilelang's pre when aiter does
    not serve it (`fuse_mhc_rmsnorm = HAS_TILELANG_MHC and self.use_fused_mhc`), and that kernel's norm reduction runs
    on threads 32.. of the block."""
    if ctx.facts.platform != "rocm" or not versions.within(ctx.release, bugs.HIP_ALLREDUCE_OFFSET.affected or ""):
        return []
    if not (ctx.facts.arch or "").startswith("gfx9") or ctx.dispatch is None or not ctx.dispatch.fused_post_pre:
        return []
    return [op for op in ctx.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]


def _block_m_ops(ctx: FindingContext) -> list[str]:
    """The pre ops that take 0.22–0.26's block-M tilelang prenorm GEMM from 1024 tokens (kernels/mhc/tilelang.py:
    `n_splits == 1 and use_default_config and x.shape[0] >= 1024`, taken where DeepGEMM is not used)."""
    version = versions.public(ctx.release)
    if version is None or not versions.within(str(version), bugs.PRENORM_BLOCK_M.affected or ""):
        return []
    if ctx.facts.platform == "cuda" and deepgemm_used(ctx) in (True, None):
        return []  # DeepGEMM computes the prenorm GEMM (or it is not known that it does not)
    if versions.within(ctx.facts.tilelang.version, known.BLOCK_M_RIGHT_TILELANG):
        return []  # measured right under this tilelang
    return [op for op in ctx.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]


def _block_m_measured_wrong(ctx: FindingContext) -> bool:
    """The installed tilelang is one measured to lower the block-M accumulator wrong, on CUDA where it was measured."""
    return ctx.facts.platform == "cuda" and bool(
        versions.within(ctx.facts.tilelang.version, known.BLOCK_M_WRONG_TILELANG)
    )


def _block_m_text(ctx: FindingContext, ops: list[str], measured_wrong: bool) -> str:
    tl = ctx.facts.tilelang.version
    head = (
        f"vLLM {ctx.vllm_version}'s {', '.join(ops)} compute the prenorm GEMM with tilelang; from 1024 "
        "tokens (prefill) hc_prenorm_gemm_block_m_tilelang sums each token into one T.alloc_var(T.float32, init=0.0) "
        "inside the unrolled loop over the block's 2 tokens (vLLM 0.27.0 made them per-token T.alloc_local arrays). "
    )
    measured = (
        f"Measured on an H200 (vLLM {', '.join(known.BLOCK_M_MEASURED_RELEASES)}'s kernel files, 2026-12-04 and -05): "
        "under tilelang 0.1.9 mhc_pre and the fused post+pre are wrong at 1024, 4096 and 16384 tokens (post_mix off "
        "by up to 1.58, about half of comb_mix wrong); under 0.1.12 and 0.1.15 they are right."
    )
    if measured_wrong:
        return head + f"tilelang {tl} lowers it wrong: prefill gets wrong mixes. " + measured
    where = "this platform" if ctx.facts.platform != "cuda" else f"tilelang {tl or '(version unknown)'}"
    return head + f"Not measured with {where}. " + measured


def _and(items: Iterable[int]) -> str:
    """1, 2 and 3."""
    words = [str(i) for i in items]
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def _pre_norm_stages_ops(ctx: FindingContext) -> list[str]:
    """The pre ops vLLM 0.22.0 runs as mhc_pre_big_fuse_with_norm_tilelang: on CUDA its NVIDIA model always folds the
    RMSNorm in (models/deepseek_v4/nvidia/model.py:977, :996, :1020); ROCm's model does not."""
    if ctx.facts.platform != "cuda" or not versions.within(ctx.release, bugs.PRE_NORM_STAGES.affected or ""):
        return []
    if ctx.model.hidden_size in known.PRE_NORM_STAGES_RIGHT_HIDDEN and ctx.model.hc_mult == 4:
        return []  # measured right at every size tried
    return [op for op in ctx.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]


def _decide_pre_norm_stages(c: FindingContext) -> Found | None:
    ops = _pre_norm_stages_ops(c)
    if not ops:
        return None
    hidden, tl = c.model.hidden_size, c.facts.tilelang.version
    wrong_here = known.PRE_NORM_STAGES_MEASURED.get(hidden) if c.model.hc_mult == 4 else None
    measured_tilelang = bool(versions.within(tl, known.PRE_NORM_STAGES_WRONG_TILELANG))
    detail = (
        f"vLLM {c.release}'s {', '.join(ops)} run mhc_pre_big_fuse_with_norm_tilelang (the RMSNorm folded in), whose "
        "first pass is pipelined in 3 stages (_tilelang_ops.py:312; vLLM 0.23.0 uses 2, its only change to the file). "
        "Measured on an H200 under tilelang 0.1.9, vLLM 0.22's pin (2026-12-05), DeepGEMM on or off: the layer input "
        f"is wrong at hidden {_and(sorted(known.PRE_NORM_STAGES_MEASURED))}, right at hidden "
        f"{_and(known.PRE_NORM_STAGES_RIGHT_HIDDEN)} (hc_mult 4). "
    )
    if wrong_here is not None and measured_tilelang:
        detail += f"At hidden {hidden} it was measured wrong at {wrong_here}: the layers get wrong inputs."
        return Found(detail, ops, severity="fail")
    if wrong_here is None:
        detail += f"Hidden {hidden}, hc_mult {c.model.hc_mult} was not measured at every token count."
    else:
        detail += f"tilelang {tl or '(version unknown)'} was not measured."
    return Found(detail, ops, severity="warn")


def _fused_slow_tilelang(ctx: FindingContext) -> str | None:
    """The installed tilelang, where it is newer than the pin of a vLLM whose CUDA fused post+pre was measured slow."""
    if ctx.facts.platform != "cuda" or "mhc_fused_post_pre" not in ctx.ops_on("tilelang"):
        return None
    pin, tl = vllm_releases.tilelang_pin(ctx.release), ctx.facts.tilelang.version
    if pin is None or not versions.within(ctx.release, known.FUSED_POST_PRE_SLOW_RELEASES):
        return None
    return tl if versions.within(tl, f">{pin}") else None


def _fused_slow_text(ctx: FindingContext, tilelang: str) -> str:
    slow, fast = known.FUSED_POST_PRE_SLOW_MS
    pin = vllm_releases.tilelang_pin(ctx.release)
    text = (
        f"vLLM {ctx.vllm_version}'s fused post+pre (mhc_fused_post_pre_tilelang, the same tilelang kernels in 0.33 "
        f"and 0.34) runs under tilelang {tilelang}, newer than the {pin} vLLM pins. Measured on an "
        f"H200 only (vLLM 0.34.0's kernel files, hidden 7168, 1 token, CUDA graph, 2026-12-04): {slow:.4f} ms per "
        f"call under tilelang {known.FUSED_POST_PRE_SLOW_TILELANG} against {fast:.4f} ms under {pin}"
    )
    if ctx.model.num_layers:
        calls = 2 * ctx.model.num_layers - 1  # nvidia/model.py: one before attention (not in layer 0), one before FFN
        text += f"; {ctx.model.name or 'this model'} calls it {calls} times per decode step: about "
        text += f"{(slow - fast) * calls:.1f} ms more per step"
    return text + ". Results are right; only the time differs. Other GPUs and tilelang versions are not measured."


def _decide_missing(c: FindingContext) -> Found | None:
    if not _tilelang_missing(c):
        return None
    tl = c.facts.tilelang
    state = (
        "not installed." if tl.present is False else f"installed but fails to import: {_import_error(tl.import_error)}."
    )
    detail = "vLLM's DeepSeek-V4 mHC ops on this platform have no path but tilelang, and tilelang is " + state
    if tl.present is False:
        return Found(detail, c.used_ops())
    lacking = re.search(r"No module named '([A-Za-z0-9_]+)", tl.import_error or "")
    if lacking and lacking.group(1) == "tvm_ffi":  # the tvm_ffi tilelang imports is apache-tvm-ffi's
        fix = "pip install apache-tvm-ffi  # tilelang is installed; the tvm_ffi module it imports is not"
    else:
        fix = "python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang"
    return Found(detail, c.used_ops(), fix=fix)


def _decide_import_broken(c: FindingContext) -> Found | None:
    if not _tilelang_selected_broken(c):
        return None
    ops = c.ops_on("tilelang")
    detail = (
        f"has_tilelang() only asks find_spec, so {_named('vLLM', c.vllm_version)} sends {', '.join(ops)} to "
        f"tilelang, whose import fails: {c.facts.tilelang.import_error or 'see the tilelang.import probe'}."
    )
    return Found(detail, ops)


def _decide_import_ignored(c: FindingContext) -> Found | None:
    if not _tilelang_ignored_broken(c):
        return None
    return Found(
        "has_tilelang() imports tilelang in this release; the import fails "
        f"({c.facts.tilelang.import_error or 'see the tilelang.import probe'}), so the mHC ops fall back."
    )


def _decide_wrong_arch(c: FindingContext) -> Found | None:
    ops = c.ops_on("tilelang")
    if c.facts.platform != "rocm" or not ops or arch_has(c.facts, "gfx942") is not True:
        return None
    detail = (
        f"On gfx942 the tilelang mHC path produces incorrect output (vLLM #45698); this release "
        f"still sends {', '.join(ops)} there. vLLM 0.24 stopped doing so (#45931)."
    )
    return Found(detail, ops)


def _decide_no_compiler(c: FindingContext) -> Found | None:
    if not _compiler_missing(c):
        return None
    ops = c.ops_on("tilelang")
    detail = (
        f"tilelang compiles {', '.join(ops)} at first call with "
        f"{'nvcc' if c.facts.platform == 'cuda' else 'hipcc'}, which was not found (PATH, CUDA_HOME/ROCM_PATH, "
        "/usr/local/cuda, /opt/rocm)."
    )
    return Found(detail, ops)


def _decide_hip_allreduce_offset(c: FindingContext) -> Found | None:
    ops = _hip_allreduce_ops(c)
    if not ops:
        return None
    detail = (
        f"vLLM {c.vllm_version} runs {', '.join(ops)} on tilelang with the RMSNorm folded in "
        f"(mhc_pre_big_fuse_with_norm_tilelang); on {c.facts.arch} a wavefront is 64 threads and the norm's sum "
        "runs on threads 32 and up, an offset TileLang's HIP AllReduce ignores, so the normalised layer input is "
        "wrong. vLLM 0.31.0 runs that reduction on threads 0..63 on ROCm. Read from the code (vLLM's own comment "
        "in 0.31.0); depends on the tilelang that compiles it, not measured here."
    )
    return Found(detail, ops)


def _decide_prenorm_block_m(c: FindingContext) -> Found | None:
    ops = _block_m_ops(c)
    if not ops:
        return None
    wrong = _block_m_measured_wrong(c)
    return Found(_block_m_text(c, ops, wrong), ops, severity="fail" if wrong else "warn")


def _decide_fused_shape(c: FindingContext) -> Found | None:
    version = versions.public(c.release)
    if "mhc_fused_post_pre" not in c.ops_on("tilelang") or not versions.within(
        str(version) if version else None, bugs.FUSED_SHAPE.affected or ""
    ):
        return None
    gaps = known.fused_small_fma_gaps(c.model.hidden_size, c.model.hc_mult)
    if not gaps:
        return None
    detail = (
        f"vLLM {c.release}'s fused post+pre at 16 tokens or fewer (every decode step of a small batch) runs "
        f"mhc_fused_tilelang with a fixed tile and split whose loops round down; at hidden {c.model.hidden_size}, "
        f"hc_mult {c.model.hc_mult} it leaves out " + "; ".join(gaps) + ". What it leaves out stays torch.empty: "
        "the residual and mixes come out wrong or non-finite (0.26.0 kernels/mhc/tilelang.py:518-522, "
        "tilelang_kernels.py:545-557). Measured on an H200 (2026-12-05): 0.21–0.28's kernel files are wrong at "
        "exactly the shapes and token counts this rule gives. vLLM 0.30.0 picks a tile and split that divide the shape."
    )
    return Found(detail, ["mhc_fused_post_pre"])


def _decide_gemm_shape(c: FindingContext) -> Found | None:
    version = versions.public(c.release)
    if not versions.within(str(version) if version else None, bugs.GEMM_SHAPE.affected or ""):
        return None
    width = c.model.hc_mult * c.model.hidden_size
    ops = [op for op in c.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]
    if (
        not ops
        or not known.tilelang_gemm_asserts(c.model.hidden_size, c.model.hc_mult, 1)
        or deepgemm_used(c) is not False
    ):
        return None  # the shape divides, or DeepGEMM computes the GEMM (or it is not known that it does not)
    detail = (
        f"vLLM {c.release} computes {', '.join(ops)}'s prenorm GEMM with its own tilelang kernel here, whose launcher "
        f"asserts (hc_mult * hidden) % 512 == 0 ({known.tilelang_gemm_assert_line(str(version))}); hc_mult "
        f"{c.model.hc_mult} x hidden "
        f"{c.model.hidden_size} = {width} leaves {width % known.TILELANG_GEMM_THREADS}: AssertionError at the first "
        "call, so the engine dies at start-up or on its first request."
    )
    return Found(detail, ops)


def _decide_fused_post_pre_slow(c: FindingContext) -> Found | None:
    tilelang = _fused_slow_tilelang(c)
    if tilelang is None:
        return None
    fix = f"pip install 'tilelang=={vllm_releases.tilelang_pin(c.release)}'  # vLLM {c.release}'s pin"
    return Found(_fused_slow_text(c, tilelang), ["mhc_fused_post_pre"], fix=fix)


def _decide_tvm_ffi_mismatch(c: FindingContext) -> Found | None:
    pair = _tvm_ffi_pair(c)
    if pair is None:
        return None
    fix = pair.pin
    if "__ffi_repr__" in pair.effect:
        fix += "  # or a tilelang that registers it once (0.1.13+, tilelang #2795): pip install -U tilelang"
    ops = c.ops_on("tilelang")
    severity: Severity = "fail" if _tilelang_loaded(c) and pair.proven else "warn"  # a report alone never fails
    return Found(_tvm_ffi_text(c, pair), ops, fix=fix, severity=severity)


def _decide_pdl_unsupported(c: FindingContext) -> Found | None:
    if not _pdl_on_rocm(c):
        return None
    ops = c.ops_on("tilelang")
    detail = (
        f"vLLM {c.vllm_version or ''} runs {', '.join(ops)} on its tilelang kernels, which use "
        "programmatic dependent launch (a CUDA sm_90 feature); on ROCm tilelang refuses to compile them "
        "('PDL is not supported') and the server fails at start-up. vLLM #43679 (0.22) made PDL CUDA-only."
    )
    return Found(detail, ops)


SETUP: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="tilelang-missing",
        severity="fail",
        title="tilelang is required and cannot be imported",
        summary="The rules require tilelang (CUDA; ROCm in 0.20–0.21) and it is not installed or fails to import.",
        decide=_decide_missing,
        fix="pip install tilelang  # vLLM pins 0.1.12 from 0.27 (0.1.9 before)",
        refs=(PR + "43905", "https://github.com/tile-ai/tilelang"),
    ),
    FindingSpec(
        id="tilelang-import-broken",
        severity="fail",
        title="tilelang is selected but does not import",
        summary="A find_spec-only release (0.20–0.22, 0.28+) selects tilelang that fails to import.",
        decide=_decide_import_broken,
        fix="python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang",
        refs=(PR + "51159", "https://github.com/vllm-project/vllm/issues/51162"),
    ),
    FindingSpec(
        id="tilelang-import-ignored",
        severity="warn",
        title="tilelang is installed but fails to import, so vLLM ignores it",
        summary="A trial-import release (0.23–0.27) counts a broken tilelang as absent and falls back.",
        decide=_decide_import_ignored,
        fix="python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang",
        refs=(PR + "44035",),
    ),
    bug_spec(bugs.WRONG_ARCH, _decide_wrong_arch),
    FindingSpec(
        id="tilelang-no-compiler",
        severity="fail",
        title="tilelang is selected but no compiler is found for its JIT",
        summary="A tilelang kernel runs and nvcc (CUDA) or hipcc (ROCm) is not found.",
        decide=_decide_no_compiler,
        # tilelang/env.py: "only nvidia-cuda-nvcc>=13.0 works"; the -cu12 wheel installs ptxas, not nvcc
        fix="CUDA: pip install 'nvidia-cuda-nvcc>=13' (or install the CUDA toolkit and set CUDA_HOME); "
        "ROCm: install ROCm's HIP SDK (hipcc) and export ROCM_PATH=/opt/rocm",
        refs=("https://github.com/tile-ai/tilelang",),
    ),
)


HIP_ALLREDUCE_OFFSET: tuple[FindingSpec, ...] = (bug_spec(bugs.HIP_ALLREDUCE_OFFSET, _decide_hip_allreduce_offset),)


PRENORM: tuple[FindingSpec, ...] = (
    bug_spec(bugs.PRENORM_BLOCK_M, _decide_prenorm_block_m),
    bug_spec(bugs.PRE_NORM_STAGES, _decide_pre_norm_stages),
    bug_spec(bugs.FUSED_SHAPE, _decide_fused_shape),
    bug_spec(bugs.GEMM_SHAPE, _decide_gemm_shape),
    bug_spec(bugs.FUSED_POST_PRE_SLOW, _decide_fused_post_pre_slow),
)


LIBRARY: tuple[FindingSpec, ...] = (
    bug_spec(bugs.TVM_FFI_MISMATCH, _decide_tvm_ffi_mismatch),
    bug_spec(bugs.PDL_UNSUPPORTED, _decide_pdl_unsupported),
)
