"""Findings about the vLLM release: DeepSeek-V4 support, the rules it gets, its import and its pins."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from mhcdoctor.facts import Facts
from mhcdoctor.rules.findings.base import (
    _VLLM_BUILDS,
    FindingContext,
    FindingSpec,
    _import_error,
    _named,
)
from mhcdoctor.rules.releases import NEWEST, PR

# The tilelang API vLLM's mHC kernels (kernels/mhc/tilelang_kernels.py, 0.25–0.34) call that older tilelang lacks:
# T.pdl_sync / T.pdl_trigger arrive in tilelang 0.1.8 (tilelang/language/pdl.py). tilelang.utils.target, gone in
# 0.1.12 (moved to tilelang.backend.target), is imported by DeepSeek's TileKernels, not by vLLM's kernels.
TILELANG_KERNEL_API_SINCE = Version("0.1.8")


NOT_INSTALLED = "not installed"


def _installed_version(facts: Facts, name: str) -> str | None:
    """The installed version of a library vLLM pins; NOT_INSTALLED when the probes found none (`pip install
    --no-deps vllm`); None when unknown."""
    if name == "amd-aiter":
        return facts.aiter.version if facts.aiter.genuine is not False else None
    package = {"torch": facts.torch, "tilelang": facts.tilelang, "triton": facts.triton}.get(name)
    if package is not None and package.present is False:
        return NOT_INSTALLED
    return package.version if package is not None else None


def pin_differences(facts: Facts) -> list[tuple[str, str, str]]:
    """(name, vLLM's specifier, installed version or NOT_INSTALLED) for each library vLLM's Requires-Dist pins that
    is missing or installed at a version the pin excludes."""
    out = []
    for name, spec in (facts.vllm_pins or {}).items():
        installed = _installed_version(facts, name)
        try:
            if installed == NOT_INSTALLED or (
                installed and not SpecifierSet(spec).contains(installed, prereleases=True)
            ):
                out.append((name, spec, installed))
        except (InvalidSpecifier, InvalidVersion):
            continue
    return out


def _torch_missing(ctx: FindingContext) -> bool:
    """vLLM requires torch and it is not installed: `import vllm` fails (seen without importing, e.g. by --fast)."""
    return any(name == "torch" and installed == NOT_INSTALLED for name, _, installed in pin_differences(ctx.facts))


def _kernel_api_gone(ctx: FindingContext) -> bool:
    """The installed tilelang predates an API vLLM's tilelang mHC kernels call, and an op runs on them."""
    version = next(
        (Version(v) for n, _, v in pin_differences(ctx.facts) if n == "tilelang" and v != NOT_INSTALLED), None
    )
    return version is not None and version < TILELANG_KERNEL_API_SINCE and bool(ctx.ops_on("tilelang"))


def _pin_text(ctx: FindingContext) -> str:
    parts = [f"{name} {installed} (vLLM pins {name}{spec})" for name, spec, installed in pin_differences(ctx.facts)]
    text = f"{_named('vLLM', ctx.facts.vllm.version)} was built and tested against other versions: " + "; ".join(parts)
    if _torch_missing(ctx):
        text += ". Without torch, `import vllm` fails: vLLM cannot start"
    if _kernel_api_gone(ctx):
        text += (
            f". tilelang before {TILELANG_KERNEL_API_SINCE} has no T.pdl_sync/T.pdl_trigger, which vLLM's tilelang "
            f"mHC kernels call: {ctx.ops_text('tilelang')} fail when they are compiled"
        )
    return text + "."


VLLM: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="vllm-no-dsv4",
        severity="fail",
        title="This vLLM has no DeepSeek-V4 support",
        summary="The installed (or `--vllm`) release is older than 0.20.0.",
        when=lambda c: c.rules_reason == "too-old",
        detail=lambda c: (
            f"vLLM {c.vllm_version} predates DeepSeek-V4 (first supported in 0.20.0); the model "
            "cannot be loaded at all."
        ),
        fix=f"pip install -U 'vllm>={NEWEST.first}'",
        refs=("https://github.com/vllm-project/vllm/releases/tag/v0.20.0",),
    ),
    FindingSpec(
        id="vllm-newer-than-rules",
        severity="info",
        title="vLLM is newer than the newest rules mhcdoctor knows",
        summary=f"The vLLM release is newer than {NEWEST.last}: the newest rule set is applied.",
        when=lambda c: c.rules_reason == "newer",
        detail=lambda c: (
            f"vLLM {c.vllm_version} is newer than {NEWEST.last}; the {NEWEST.id} rules are applied "
            "and may miss a change in its dispatch."
        ),
        fix="pip install -U mhcdoctor",
        refs=(PR + "52737",),
    ),
    FindingSpec(
        id="vllm-not-installed",
        severity="info",
        title="vLLM is not installed here",
        summary="No vLLM was found (or `--vllm none`): the newest rule set is applied.",
        when=lambda c: c.rules_reason == "no-vllm",
        detail=lambda c: (
            f"No vLLM was found, so this is what the newest known release ({NEWEST.first}–"
            f"{NEWEST.last}) would run; ask about another with --vllm VERSION."
        ),
        fix="Install the vLLM build for this machine (CUDA: pip install vllm; CPU, ROCm, XPU: their own builds); "
        "or ask about a release without it: mhcdoctor explain --vllm 0.25.1",
        # the same build no-gpu and vllm-build-mismatch name: PyPI's `vllm` is the CUDA build
        fix_for=lambda c: (
            f"Install {_VLLM_BUILDS.get(c.facts.platform, _VLLM_BUILDS['cuda'])}; or ask about a "
            "release without it: mhcdoctor explain --vllm 0.25.1"
        ),
        refs=(PR + "52737",),
    ),
    FindingSpec(
        id="vllm-not-importable",
        severity="fail",
        title="vLLM is installed but does not import",
        summary="`import vllm` fails in the environment checked (e.g. `pip install --no-deps vllm` without torch, "
        "or a vLLM built against another torch): vLLM runs nothing (full check and explain --deep).",
        when=lambda c: c.facts.vllm.present is True and c.facts.vllm.imports is False,
        detail=lambda c: (
            f"`import vllm` fails: {_import_error(c.facts.vllm.import_error)}. "
            f"{_named('vLLM', c.facts.vllm.version)} cannot start, so no mHC op runs; the paths shown are what it "
            "would run once it imports."
        ),
        fix="pip check  # names what vLLM lacks; reinstall it with its requirements: "
        "pip install \"vllm==$(pip show vllm | sed -n 's/^Version: //p')\"",
        refs=("https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",),
        ops=lambda c: c.used_ops(),
    ),
    FindingSpec(
        id="vllm-pin-mismatch",
        severity=lambda c: "fail" if _kernel_api_gone(c) or _torch_missing(c) else "warn",
        title="Libraries vLLM pins are missing or at other versions",
        summary="The installed vLLM's Requires-Dist pins torch, tilelang or triton to versions other than those "
        "installed, or they are not installed (`pip install --no-deps vllm`; read from its METADATA, no import); "
        "fail where torch is missing or the installed tilelang lacks an API vLLM's tilelang mHC kernels call.",
        when=lambda c: bool(pin_differences(c.facts)),
        detail=_pin_text,
        fix="pip install \"vllm==$(pip show vllm | sed -n 's/^Version: //p')\"  # reinstalls what it pins",
        refs=(
            "https://github.com/vllm-project/vllm/blob/main/requirements/cuda.txt",
            "https://github.com/tile-ai/tilelang",
        ),
        ops=lambda c: c.ops_on("tilelang") if _kernel_api_gone(c) else [],
    ),
    FindingSpec(
        id="rocm-dsv4-unusable",
        severity="fail",
        title="DeepSeek-V4 does not run on ROCm in this vLLM release",
        summary="vLLM 0.20–0.21 on ROCm: the mHC ops run CUDA-only code (DeepGEMM, tilelang PDL).",
        when=lambda c: c.facts.platform == "rocm" and c.rules is not None and c.rules.rocm_style != "custom-op",
        detail=lambda c: (
            "vLLM 0.20–0.21 treat ROCm as CUDA: the mHC pre kernels call DeepGEMM's "
            "tf32_hc_prenorm_gemm (no ROCm build) and the tilelang kernels ask for PDL, which ROCm lacks "
            "(vLLM #42876). Read from the code; the DeepGEMM failure is inferred, not run."
        ),
        fix="pip install -U 'vllm>=0.25' (ROCm gets aiter mHC from 0.25.0)",
        refs=("https://github.com/vllm-project/vllm/issues/42876", PR + "41946"),
    ),
)
