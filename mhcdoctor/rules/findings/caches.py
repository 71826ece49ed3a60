"""Findings about compiled-kernel caches: tilelang's kernel cache and aiter's JIT module."""

from __future__ import annotations

from mhcdoctor.knowledge import bugs, known, versions, vllm_releases
from mhcdoctor.rules.findings.base import (
    FindingContext,
    FindingSpec,
    Found,
    bug_spec,
)

_WARMUP_SKIPPED = {
    "cuda": (
        vllm_releases.NVIDIA_WARMUP_SKIPPED_RELEASES,
        "NVIDIA model skips the mHC warm-up (_find_first_mhc_layer wants hc_pre/hc_post, which its decoder layer "
        "lacks: vLLM #51790)",
    ),
    "rocm": (
        vllm_releases.AMD_WARMUP_SKIPPED_RELEASES,
        "AMD model registers none of its mHC kernels with the JIT warm-up (models/deepseek_v4/amd/*.py: only MTP's "
        "RMSNorm and the compressor)",
    ),
}


def _warmup_skipped_why(ctx: FindingContext) -> str | None:
    """Why this release's model leaves the mHC kernels out of the warm-up on this platform; None: it warms them."""
    releases, why = _WARMUP_SKIPPED.get(ctx.facts.platform, ("", ""))
    return why if releases and versions.within(ctx.release, releases) else None


def aiter_jit_stale(ctx: FindingContext) -> tuple[str, bool] | None:
    """Why aiter's module_mhc.so does not fit the installed aiter, torch or GPU, if it does not, and whether the
    reason is the GPU arch (which aiter v0.1.17+ notices itself)."""
    jit = ctx.facts.aiter_jit
    if jit is None or not ctx.ops_on("aiter"):
        return None
    arch = (ctx.facts.arch or "").split(":", 1)[0]
    if jit.targets and arch.startswith("gfx") and arch not in jit.targets:
        return f"it holds code for {', '.join(jit.targets)}, not for this {arch}", True
    for name, installed in (("aiter", jit.aiter_mtime), ("torch", jit.torch_mtime)):
        if jit.mtime is not None and installed is not None and jit.mtime < installed:
            # no tag up to v0.1.20.post1 (nor main at e404860) compares a .so's age: aiter/jit/core.py has no mtime
            return (
                f"it was built before the installed {name} was installed, so it carries the older {name}'s kernels "
                "or ABI, and aiter loads it by name without rebuilding"
            ), False
    return None


def _decide_cache_cold(c: FindingContext) -> Found | None:
    cache, ops = c.facts.tilelang_cache, c.ops_on("tilelang")
    if cache is None or not ops or cache.mhc_entries != 0:
        return None
    why = _warmup_skipped_why(c)
    skipped = why is not None
    detail = (
        f"{cache.path} holds {cache.entries} tilelang kernels and none of vLLM's mHC kernels, so {', '.join(ops)} "
        f"compile on first use, {known.TILELANG_COMPILE_SECONDS} per kernel and token size (nvcc per rank; on GB10 "
        "its memory spike killed a worker). "
    )
    if skipped:
        detail += f"vLLM {c.vllm_version}'s {why}, so this happens while serving requests."
    else:
        detail += "vLLM's warm-up compiles them at start-up."
    return Found(detail, ops if skipped else [], severity="warn" if skipped else "info")


def _decide_jit_stale(c: FindingContext) -> Found | None:
    stale, jit = aiter_jit_stale(c), c.facts.aiter_jit
    if stale is None or jit is None:
        return None
    why, arch = stale
    fix = f"rm -f {jit.path}  # aiter rebuilds it at the next mHC call"
    if arch and jit.arch_rebuild:  # aiter #3849: get_module raises ModuleNotFoundError, compile_ops builds it anew
        detail = (
            f"{jit.path}: {why}. The installed aiter/jit/core.py rebuilds it for this GPU at the first mHC call "
            "(get_module calls _needs_arch_rebuild, aiter #3849, v0.1.17+): one JIT build, then the ops run."
        )
        return Found(detail, [], fix=fix + " (or leave it: aiter does)", severity="info")
    if arch and jit.arch_rebuild is None:
        detail = (
            f"{jit.path}: {why}. Whether the installed aiter rebuilds it could not be read from aiter/jit/core.py: "
            "v0.1.17+ rebuilds it (aiter #3849), older releases load it by name and the first mHC call fails."
        )
        return Found(detail, c.ops_on("aiter"), fix=fix, severity="warn")
    if arch:
        detail = (
            f"{jit.path}: {why}: the first mHC call fails. The installed aiter/jit/core.py's get_module imports "
            "module_mhc.so by name without looking at its gfx targets, as v0.1.16.post6's (line 597) does."
        )
    else:
        detail = (
            f"{jit.path}: {why}. aiter (aiter/jit/core.py) finds module_mhc.so by name in $AITER_JIT_DIR, aiter/jit/ "
            "or ~/.aiter/jit and never checks which aiter or torch built it (no tag up to v0.1.20.post1 does)."
        )
    return Found(detail, c.ops_on("aiter"), fix=fix, severity="fail")


CACHES: tuple[FindingSpec, ...] = (
    bug_spec(bugs.CACHE_COLD, _decide_cache_cold),
    bug_spec(bugs.JIT_STALE, _decide_jit_stale),
)
