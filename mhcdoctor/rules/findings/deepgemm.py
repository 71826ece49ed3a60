"""Findings about DeepGEMM's tf32_hc_prenorm_gemm, which vLLM's CUDA mhc_pre calls."""

from __future__ import annotations

from mhcdoctor.knowledge import bugs, known, versions, vllm_releases
from mhcdoctor.rules.dispatch import (
    deepgemm_arch,
    deepgemm_supported,
)
from mhcdoctor.rules.findings.base import (
    FindingContext,
    FindingSpec,
    Found,
    bug_spec,
    deepgemm_used,
)


def _prenorm_archs(ctx: FindingContext) -> tuple[list[str] | None, str]:
    """The archs the DeepGEMM vLLM finds has a tf32_hc_prenorm_gemm kernel for, and where that was told: its
    installed library (the probe read the smNN_ symbols), else the library the release's wheel vendors."""
    dg = ctx.facts.deepgemm
    if dg.prenorm_archs is not None:
        return dg.prenorm_archs, f"its library holds kernels for {', '.join(dg.prenorm_archs) or 'no arch'}"
    release = vllm_releases.release_of(ctx.release)
    if dg.vendored is False or release is None or release.deepgemm_prenorm_archs is None:
        return None, "its library was not read"
    archs = list(release.deepgemm_prenorm_archs)
    return archs, f"vLLM {release.version}'s wheel vendors kernels for {', '.join(archs)}"


def deepgemm_problem(ctx: FindingContext) -> str | None:
    """Why DeepGEMM's tf32_hc_prenorm_gemm cannot run where this release's CUDA mhc_pre calls it, if it cannot:
    0.20–0.21 and (first layer) 0.26+ call it with no fallback; 0.22+ wherever is_deep_gemm_supported() holds."""
    rs, f, dg = ctx.rules, ctx.facts, ctx.facts.deepgemm
    if rs is None or f.platform != "cuda" or "mhc_pre" not in ctx.ops_on("tilelang"):
        return None
    forced = rs.cuda_first_pre_deepgemm
    if not forced and deepgemm_supported(rs, f, ctx.release)[0] is not True:
        return None  # tilelang's own GEMM computes the prenorm mixes
    if deepgemm_arch(f, rs) is False:
        return f"DeepGEMM has no kernel for {f.arch} (it supports sm_90, sm_10x and, in vLLM 0.24+, sm_12x)"
    if (f.arch or "").startswith("sm_12") and dg.present is not False:
        archs, told = _prenorm_archs(ctx)
        if archs is None or "sm_120" not in archs:
            which = (
                f"vLLM {ctx.vllm_version}'s vendored DeepGEMM"
                if dg.vendored is not False
                else "the standalone deep_gemm"
            )
            return (
                f"{which} has no sm_12x tf32_hc_prenorm_gemm ({told}; DeepGEMM's hyperconnection.hpp: 'Unsupported "
                "architecture' otherwise, DeepGEMM #317; vLLM's vendored library holds one in 0.25.0-0.26.0 and from "
                "0.28.0, not in 0.27.x)"
            )
    if dg.present is False and f.vllm.present is True:  # a vLLM wheel vendors it: without vLLM, nothing to say
        return (
            "neither the standalone deep_gemm nor vLLM's vendored vllm.third_party.deep_gemm is installed, so "
            "vllm.utils.deep_gemm raises 'DeepGEMM backend is not available'"
        )
    nvcc = versions.public(f.nvcc.version)
    sm100 = (f.arch or "").startswith("sm_10")
    needed = known.DEEPGEMM_NVCC_MIN_SM100 if sm100 else known.DEEPGEMM_NVCC_MIN
    if nvcc is not None and nvcc.release[:2] < needed:
        # DeepGEMM csrc/jit/compiler.hpp asserts nvcc >= 12.3; sm_10x kernels need 12.9's arch-family suffix
        wanted = ".".join(map(str, needed)) + (" for sm_10x" if sm100 else "")
        return (
            f"its JIT needs nvcc {wanted} or newer and finds nvcc {f.nvcc.version} (DG_HOST_ASSERT aborts the engine)"
        )
    if dg.has_prenorm_gemm is False:
        which = "vLLM's vendored copy" if dg.vendored else f"the standalone deep_gemm {dg.version or ''}".rstrip()
        return (
            f"{which} has no tf32_hc_prenorm_gemm (it arrived in DeepGEMM 2.3.0; vLLM imports the standalone "
            "deep_gemm first, so an older one shadows the vendored copy that has it)"
        )
    return None


def _deepgemm_fix(problem: str) -> str:
    """The fix for the cause deepgemm_problem named."""
    if problem.startswith("DeepGEMM has no kernel"):
        return (
            "Run on sm_90/sm_100 (H100/H200/B200); this release calls DeepGEMM on every CUDA GPU "
            "(compare: mhcdoctor explain --vllm 0.25.1)"
        )
    if problem.startswith("neither"):
        return (
            "pip install --force-reinstall --no-deps \"vllm==$(pip show vllm | sed -n 's/^Version: //p')\"  "
            "# restores its vendored DeepGEMM"
        )
    if "sm_12x" in problem:
        return "pip install -U 'vllm>=0.28' (and pip uninstall -y deep_gemm)  # vendors a DeepGEMM with sm_12x kernels"
    if problem.startswith("its JIT needs nvcc"):
        return "Install CUDA 12.9 or newer and export CUDA_HOME to it (or: pip install 'nvidia-cuda-nvcc>=13')"
    return "pip uninstall -y deep_gemm  # vLLM then uses its vendored copy, which has tf32_hc_prenorm_gemm"


def _decide_prenorm_broken(c: FindingContext) -> Found | None:
    problem = deepgemm_problem(c)
    if problem is None:
        return None
    how = "with no tilelang fallback" if c.rules and c.rules.cuda_first_pre_deepgemm else "is_deep_gemm_supported()"
    detail = (
        f"vLLM {c.vllm_version or ''}'s mhc_pre calls DeepGEMM's tf32_hc_prenorm_gemm ({how}), but {problem}: "
        "the model fails at its first forward (the profile run at start-up)."
    )
    return Found(detail, ["mhc_pre"], fix=_deepgemm_fix(problem))  # deepgemm_problem holds only where mhc_pre runs


def _decide_b300_launch(c: FindingContext) -> Found | None:
    if c.facts.platform != "cuda" or not (c.facts.arch or "").startswith("sm_103"):
        return None
    if not versions.within(c.release, ">=0.23.0") or "mhc_pre" not in c.ops_on("tilelang"):
        return None
    if not (c.rules and c.rules.cuda_first_pre_deepgemm) and deepgemm_used(c) is False:
        return None
    detail = (
        f"vLLM {c.vllm_version} runs mhc_pre's prenorm GEMM on DeepGEMM here; on an 8x B300 node vLLM 0.23.0 "
        "crashed in the profile run when sm100_tf32_hc_prenorm_gemm launched (cudaErrorInvalidValue with CUDA 13, "
        "cudaErrorInvalidConfiguration with 12.9), while 0.20.1 served the same model (vLLM #46796, open; not "
        "confirmed for later releases)."
    )
    return Found(detail, ["mhc_pre"])


def _decide_prenorm_shape(c: FindingContext) -> Found | None:
    rs, hc = c.rules, c.model.hc_mult
    if rs is None or c.facts.platform != "cuda" or not known.deepgemm_prenorm_refuses(c.model.hidden_size, hc, 1):
        return None
    if deepgemm_problem(c) is not None:
        return None  # DeepGEMM cannot run here at all: deepgemm-prenorm-broken says why
    forced = rs.cuda_first_pre_deepgemm
    if not forced and deepgemm_used(c) is not True:
        return None  # tilelang's own GEMM computes the mixes (or it is not known that DeepGEMM does)
    ops = [op for op in c.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]
    if not ops:
        return None
    n = hc * (hc + 2)
    dg = c.facts.deepgemm.version
    measured = dg in known.DEEPGEMM_PRENORM_SHAPE_MEASURED
    detail = (
        f"vLLM {c.vllm_version or ''}'s {', '.join(ops)} compute the prenorm GEMM with DeepGEMM's "
        f"tf32_hc_prenorm_gemm, which takes at most {known.DEEPGEMM_PRENORM_MAX_N} mixes, a multiple of "
        f"{known.DEEPGEMM_PRENORM_N_MULTIPLE}; "
        f"hc_mult {hc} asks for {hc} x {hc + 2} = {n}. Measured on an H200 with DeepGEMM "
        f"{', '.join(known.DEEPGEMM_PRENORM_SHAPE_MEASURED)} (vLLM 0.20-0.26's vendored copy) at hc_mult 8: "
        "'Assertion error (sm90_tf32_hc_prenorm_gemm.hpp:81): n <= 32 and n % 8 == 0' "
        "at the first call, so the engine dies in its profile run."
    )
    if not measured:
        detail += f" DeepGEMM {dg or '(version unknown)'} was not measured."
    fix = "VLLM_USE_DEEP_GEMM=0  # vLLM's own tilelang prenorm GEMM then computes the mixes"
    if forced:
        detail += f" vLLM {c.vllm_version or ''} has no other prenorm GEMM for that call."
        fix = "Use hc_mult 2 or 4 (no setting avoids DeepGEMM here), or vLLM 0.22–0.25 with VLLM_USE_DEEP_GEMM=0"
    return Found(detail, ops, severity="fail" if measured else "warn", fix=fix)


PRENORM_BROKEN: tuple[FindingSpec, ...] = (
    bug_spec(bugs.DEEPGEMM_PRENORM_BROKEN, _decide_prenorm_broken),
    bug_spec(bugs.DEEPGEMM_PRENORM_SHAPE, _decide_prenorm_shape),
)


B300_LAUNCH: tuple[FindingSpec, ...] = (bug_spec(bugs.DEEPGEMM_B300_LAUNCH, _decide_b300_launch),)
