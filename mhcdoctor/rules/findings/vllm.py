"""Findings about the vLLM release: DeepSeek-V4 support, the rules it gets, its import and its pins."""

from __future__ import annotations

from mhcdoctor.facts import Facts
from mhcdoctor.knowledge import versions
from mhcdoctor.rules.findings.base import (
    _VLLM_BUILDS,
    FindingContext,
    FindingSpec,
    Found,
    _import_error,
    _named,
)
from mhcdoctor.rules.releases import NEWEST, PR

# The tilelang API vLLM's mHC kernels (kernels/mhc/tilelang_kernels.py, 0.25–0.34) call that older tilelang lacks:
# T.pdl_sync / T.pdl_trigger arrive in tilelang 0.1.8 (tilelang/language/pdl.py). tilelang.utils.target, gone in
# 0.1.12 (moved to tilelang.backend.target), is imported by DeepSeek's TileKernels, not by vLLM's kernels.
TILELANG_KERNEL_API_SINCE = versions.Version("0.1.8")


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
        if installed == NOT_INSTALLED or (installed and versions.within(installed, spec) is False):
            out.append((name, spec, installed))
    return out


def _torch_missing(differences: list[tuple[str, str, str]]) -> bool:
    """vLLM requires torch and it is not installed: `import vllm` fails (seen without importing, e.g. by --fast)."""
    return any(name == "torch" and installed == NOT_INSTALLED for name, _, installed in differences)


def _kernel_api_gone(ctx: FindingContext, differences: list[tuple[str, str, str]]) -> list[str]:
    """The tilelang ops, where the installed tilelang predates an API vLLM's tilelang mHC kernels call."""
    version = next((versions.parse(v) for n, _, v in differences if n == "tilelang" and v != NOT_INSTALLED), None)
    return ctx.ops_on("tilelang") if version is not None and version < TILELANG_KERNEL_API_SINCE else []


def _decide_pin_mismatch(ctx: FindingContext) -> Found | None:
    differences = pin_differences(ctx.facts)
    if not differences:
        return None
    parts = [f"{name} {installed} (vLLM pins {name}{spec})" for name, spec, installed in differences]
    text = f"{_named('vLLM', ctx.facts.vllm.version)} was built and tested against other versions: " + "; ".join(parts)
    torch_missing, api_gone = _torch_missing(differences), _kernel_api_gone(ctx, differences)
    if torch_missing:
        text += ". Without torch, `import vllm` fails: vLLM cannot start"
    if api_gone:
        text += (
            f". tilelang before {TILELANG_KERNEL_API_SINCE} has no T.pdl_sync/T.pdl_trigger, which vLLM's tilelang "
            f"mHC kernels call: {', '.join(api_gone)} fail when they are compiled"
        )
    return Found(text + ".", api_gone, severity="fail" if api_gone or torch_missing else "warn")


def _decide_no_dsv4(c: FindingContext) -> Found | None:
    if c.rules_reason != "too-old":
        return None
    return Found(
        f"vLLM {c.vllm_version} predates DeepSeek-V4 (first supported in 0.20.0); the model cannot be loaded at all."
    )


def _decide_newer_than_rules(c: FindingContext) -> Found | None:
    if c.rules_reason != "newer":
        return None
    return Found(
        f"vLLM {c.vllm_version} is newer than {NEWEST.last}; the {NEWEST.id} rules are applied "
        "and may miss a change in its dispatch."
    )


def _decide_not_installed(c: FindingContext) -> Found | None:
    if c.rules_reason != "no-vllm":
        return None
    detail = (
        f"No vLLM was found, so this is what the newest known release ({NEWEST.first}–"
        f"{NEWEST.last}) would run; ask about another with --vllm VERSION."
    )
    # the same build no-gpu and vllm-build-mismatch name: PyPI's `vllm` is the CUDA build
    build = _VLLM_BUILDS.get(c.facts.platform, _VLLM_BUILDS["cuda"])
    return Found(detail, fix=f"Install {build}; or ask about a release without it: mhcdoctor explain --vllm 0.25.1")


def _decide_not_importable(c: FindingContext) -> Found | None:
    if c.facts.vllm.present is not True or c.facts.vllm.imports is not False:
        return None
    detail = (
        f"`import vllm` fails: {_import_error(c.facts.vllm.import_error)}. "
        f"{_named('vLLM', c.facts.vllm.version)} cannot start, so no mHC op runs; the paths shown are what it "
        "would run once it imports."
    )
    return Found(detail, c.used_ops())


def _decide_rocm_unusable(c: FindingContext) -> Found | None:
    if c.facts.platform != "rocm" or c.rules is None or c.rules.rocm_style == "custom-op":
        return None
    return Found(
        "vLLM 0.20–0.21 treat ROCm as CUDA: the mHC pre kernels call DeepGEMM's "
        "tf32_hc_prenorm_gemm (no ROCm build) and the tilelang kernels ask for PDL, which ROCm lacks "
        "(vLLM #42876). Read from the code; the DeepGEMM failure is inferred, not run."
    )


VLLM: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="vllm-no-dsv4",
        severity="fail",
        title="This vLLM has no DeepSeek-V4 support",
        summary="The installed (or `--vllm`) release is older than 0.20.0.",
        decide=_decide_no_dsv4,
        fix=f"pip install -U 'vllm>={NEWEST.first}'",
        refs=("https://github.com/vllm-project/vllm/releases/tag/v0.20.0",),
    ),
    FindingSpec(
        id="vllm-newer-than-rules",
        severity="info",
        title="vLLM is newer than the newest rules mhcdoctor knows",
        summary=f"The vLLM release is newer than {NEWEST.last}: the newest rule set is applied.",
        decide=_decide_newer_than_rules,
        fix="pip install -U mhcdoctor",
        refs=(PR + "52737",),
    ),
    FindingSpec(
        id="vllm-not-installed",
        severity="info",
        title="vLLM is not installed here",
        summary="No vLLM was found (or `--vllm none`): the newest rule set is applied.",
        decide=_decide_not_installed,
        fix="Install the vLLM build for this machine (CUDA: pip install vllm; CPU, ROCm, XPU: their own builds); "
        "or ask about a release without it: mhcdoctor explain --vllm 0.25.1",
        refs=(PR + "52737",),
    ),
    FindingSpec(
        id="vllm-not-importable",
        severity="fail",
        title="vLLM is installed but does not import",
        summary="`import vllm` fails in the environment checked (e.g. `pip install --no-deps vllm` without torch, "
        "or a vLLM built against another torch): vLLM runs nothing (full check and explain --deep).",
        decide=_decide_not_importable,
        fix="pip check  # names what vLLM lacks; reinstall it with its requirements: "
        "pip install \"vllm==$(pip show vllm | sed -n 's/^Version: //p')\"",
        refs=("https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",),
    ),
    FindingSpec(
        id="vllm-pin-mismatch",
        severity=None,
        title="Libraries vLLM pins are missing or at other versions",
        summary="The installed vLLM's Requires-Dist pins torch, tilelang or triton to versions other than those "
        "installed, or they are not installed (`pip install --no-deps vllm`; read from its METADATA, no import); "
        "fail where torch is missing or the installed tilelang lacks an API vLLM's tilelang mHC kernels call.",
        decide=_decide_pin_mismatch,
        fix="pip install \"vllm==$(pip show vllm | sed -n 's/^Version: //p')\"  # reinstalls what it pins",
        refs=(
            "https://github.com/vllm-project/vllm/blob/main/requirements/cuda.txt",
            "https://github.com/tile-ai/tilelang",
        ),
    ),
    FindingSpec(
        id="rocm-dsv4-unusable",
        severity="fail",
        title="DeepSeek-V4 does not run on ROCm in this vLLM release",
        summary="vLLM 0.20–0.21 on ROCm: the mHC ops run CUDA-only code (DeepGEMM, tilelang PDL).",
        decide=_decide_rocm_unusable,
        fix="pip install -U 'vllm>=0.25' (ROCm gets aiter mHC from 0.25.0)",
        refs=("https://github.com/vllm-project/vllm/issues/42876", PR + "41946"),
    ),
)
