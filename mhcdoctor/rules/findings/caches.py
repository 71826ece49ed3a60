"""Findings about compiled-kernel caches: tilelang's kernel cache and aiter's JIT module."""

from __future__ import annotations

from mhcdoctor import known
from mhcdoctor.rules.findings.base import (
    AITER,
    FindingContext,
    FindingSpec,
)
from mhcdoctor.rules.releases import ISSUE, PR


def _cold_cache(ctx: FindingContext) -> bool:
    cache = ctx.facts.tilelang_cache
    return bool(ctx.ops_on("tilelang")) and cache is not None and cache.mhc_entries == 0


def _warmup_skipped(ctx: FindingContext) -> bool:
    return ctx.facts.platform == "cuda" and bool(known.within(ctx.vllm_version, known.NVIDIA_WARMUP_SKIPPED_RELEASES))


def aiter_jit_stale(ctx: FindingContext) -> str | None:
    """Why aiter's module_mhc.so does not fit the installed aiter, torch or GPU, if it does not."""
    jit = ctx.facts.aiter_jit
    if jit is None or not ctx.ops_on("aiter"):
        return None
    arch = (ctx.facts.arch or "").split(":", 1)[0]
    if jit.targets and arch.startswith("gfx") and arch not in jit.targets:
        return f"it holds code for {', '.join(jit.targets)}, not for this {arch}: the first mHC call fails"
    for name, installed in (("aiter", jit.aiter_mtime), ("torch", jit.torch_mtime)):
        if jit.mtime is not None and installed is not None and jit.mtime < installed:
            return (
                f"it was built before the installed {name} was installed, so it carries the older {name}'s kernels "
                "or ABI, and aiter loads it by name without rebuilding"
            )
    return None


CACHES: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="tilelang-cache-cold",
        severity=lambda c: "warn" if _warmup_skipped(c) else "info",
        title="tilelang's kernel cache holds none of vLLM's mHC kernels",
        summary="tilelang runs an op and $TILELANG_CACHE_DIR (default ~/.tilelang/cache) holds no mHC kernel for the "
        "installed tilelang. Warn on CUDA in vLLM 0.23–0.29, whose NVIDIA model skips the mHC warm-up (vLLM #51790): "
        "the kernels compile while serving.",
        when=_cold_cache,
        detail=lambda c: (
            f"{c.facts.tilelang_cache.path if c.facts.tilelang_cache else 'The cache'} holds "
            f"{c.facts.tilelang_cache.entries if c.facts.tilelang_cache else 0} tilelang kernels and none of vLLM's "
            f"mHC kernels, so {c.ops_text('tilelang')} compile on first use, {known.TILELANG_COMPILE_SECONDS} per "
            "kernel and token size (nvcc per rank; on GB10 its memory spike killed a worker). "
            + (
                f"vLLM {c.vllm_version}'s NVIDIA model skips the mHC warm-up (_find_first_mhc_layer wants hc_pre/"
                "hc_post, which its decoder layer lacks: vLLM #51790), so this happens while serving requests."
                if _warmup_skipped(c)
                else "vLLM's warm-up compiles them at start-up."
            )
        ),
        fix="Warm the cache once before serving, with the same tilelang and TILELANG_CACHE_DIR (e.g. a short "
        "vllm serve run with prompts of the lengths you serve), and keep the cache folder on persistent storage",
        refs=(ISSUE + "51790", PR + "52941", PR + "47807"),
        ops=lambda c: c.ops_on("tilelang") if _warmup_skipped(c) else [],
    ),
    FindingSpec(
        id="aiter-jit-stale",
        severity="fail",
        title="aiter's JIT-built module_mhc.so does not fit this aiter, torch or GPU",
        summary="aiter runs an op and the module_mhc.so it will load was built for other gfx targets, or before the "
        "installed aiter or torch: aiter keys it by module name only and loads it anyway.",
        when=lambda c: aiter_jit_stale(c) is not None,
        detail=lambda c: (
            f"{c.facts.aiter_jit.path if c.facts.aiter_jit else 'module_mhc.so'}: {aiter_jit_stale(c)}. aiter "
            "(aiter/jit/core.py) finds module_mhc.so by name in $AITER_JIT_DIR, aiter/jit/ or ~/.aiter/jit and never "
            "checks what built it."
        ),
        fix="rm -f \"$(python -c 'import aiter, os; print(os.path.dirname(aiter.__file__))')/jit/module_mhc.so\" "
        "~/.aiter/jit/module_mhc.so  # aiter rebuilds it at the next mHC call",
        fix_for=lambda c: (
            f"rm -f {c.facts.aiter_jit.path}  # aiter rebuilds it at the next mHC call"
            if c.facts.aiter_jit
            else "rm -f ~/.aiter/jit/module_mhc.so  # aiter rebuilds it at the next mHC call"
        ),
        refs=(AITER + "blob/main/aiter/jit/core.py",),
        ops=lambda c: c.ops_on("aiter"),
    ),
)
