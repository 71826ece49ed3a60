"""What-if facts: this machine's probed facts (or a saved report's), with single facts replaced by the user.

`--from REPORT.json` takes all facts from a saved `check --json`; each what-if option then replaces
one fact, recorded in `Facts.sources` as "user:--option". Without --from, facts not given are probed on this
machine; with --from, facts the report lacks stay unknown (never this machine's). When a what-if changes the
platform, the facts that belong to the old platform (devices, arch, compilers, runtime versions) become unknown
rather than describing the wrong machine. `--aiter VERSION` stands for AMD's aiter at that version: present,
genuine, importable, with the mHC ops, the fixes and the API the code at aiter's tags gives that version
(mhcdoctor.knowledge.aiter_code: a tag's own code; a development build what git ancestry lets its tag say)
unless `--aiter-fix` says otherwise.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from mhcdoctor.documents.check import FIX_STATES, PLATFORMS, FixState
from mhcdoctor.errors import InputError
from mhcdoctor.facts import AiterFacts, CompilerFacts, DeepGemmFacts, Facts, PackageFacts, ReportFacts, VllmFacts
from mhcdoctor.knowledge import aiter_code, aiter_releases, known, versions, vllm_releases
from mhcdoctor.knowledge.vllm_builds import build_from_version
from mhcdoctor.text import visible

# gfx942, gfx950, gfx90a, gfx1100, gfx1250 ...; sm_90, sm_100, sm_120a, sm90.
_ARCH = re.compile(r"^(gfx[0-9]{2,4}[0-9a-f]?|sm_?[0-9]{2,3}a?)$")
# GPU archs that exist: LLVM's AMDGPU processors (https://llvm.org/docs/AMDGPUUsage.html#processors), GCN 5 on,
# and NVIDIA's compute capabilities (https://developer.nvidia.com/cuda-gpus) from Volta; `a` variants are sm_90a &c.
KNOWN_ARCHS = frozenset(
    "gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 gfx941 gfx942 gfx950 "
    "gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 "
    "gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 gfx1200 gfx1201 gfx1250 gfx1251 "
    "sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_101 sm_103 sm_110 sm_120 sm_121".split()
)
# Facts that describe the machine's platform: they do not survive a change of platform.
_PLATFORM_BOUND = (
    "devices",
    "arch",
    "rocm_version",
    "cuda_driver_version",
    "nvidia_driver",
    "nvcc",
    "hipcc",
    "torch.cuda",
    "torch.hip",
    "torch.xpu",
    "torch.build",
    "torch.gpus_visible",
    "xpu_kernels",
)


# The product names people type for --arch, and their arch. AMD: ROCm's GPU specifications
# (https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html); NVIDIA: compute capability per GPU
# (https://developer.nvidia.com/cuda-gpus).
PRODUCT_ARCHS = {
    **dict.fromkeys(("mi300x", "mi300a", "mi325x"), "gfx942"),
    **dict.fromkeys(("mi350x", "mi355x"), "gfx950"),
    **dict.fromkeys(("mi250x", "mi250", "mi210"), "gfx90a"),
    "mi100": "gfx908",
    **dict.fromkeys(("h100", "h200", "h800", "h20", "gh200"), "sm_90"),
    **dict.fromkeys(("a100", "a800", "a30"), "sm_80"),
    **dict.fromkeys(("l4", "l40", "l40s"), "sm_89"),
    **dict.fromkeys(("b200", "gb200"), "sm_100"),
}


def normal_arch(text: str) -> str:
    """`gfx942:sramecc+:xnack-` (torch's gcnArchName) → `gfx942`; `SM90` → `sm_90`; a product name (`MI300X`,
    `H100`) → its arch."""
    arch = text.strip().lower().split(":", 1)[0]
    product = re.sub(r"^(?:amd|nvidia|instinct|[\s_-])+|[\s_-]", "", arch)
    if product in PRODUCT_ARCHS:
        return PRODUCT_ARCHS[product]
    return re.sub(r"^sm_?(?=\d)", "sm_", arch)


@dataclass(frozen=True)
class WhatIf:
    """The what-if options as given on the command line; None means "not given"."""

    platform: str | None = None
    arch: str | None = None
    aiter: str | None = None  # a version, or "none"
    aiter_fix: str | None = None  # present | absent | unknown
    tilelang: str | None = None  # a version, or "none"
    vllm: str | None = None  # a version, or "none"
    rocm: str | None = None
    deepgemm: str | None = None  # a standalone deep_gemm version, or "none" (no DeepGEMM at all)

    def probes_here(self, package: str, from_report: bool) -> bool:
        """Whether `package`'s facts are this machine's probes: not read from a report, not replaced by a what-if
        (`package` is one of tilelang, aiter, vllm)."""
        return not from_report and getattr(self, package) is None


def build_facts(whatif: WhatIf, base: Callable[[], Facts]) -> Facts:
    """`base()` (this machine's probes, or a report's facts) with the what-ifs applied on top."""
    _validate(whatif)
    facts = base()
    platform = whatif.platform or _platform_of_arch(whatif.arch)
    if platform is not None and platform != facts.platform:
        _forget_platform(facts, "--platform" if whatif.platform else "--arch")
        facts.set("platform", platform, "user:--platform" if whatif.platform else "user:--arch")
    elif platform is not None:
        facts.sources["platform"] = "user:--platform" if whatif.platform else facts.sources.get("platform", "")
    if whatif.arch is not None:
        facts.set("arch", normal_arch(whatif.arch), "user:--arch")
    if whatif.rocm is not None:
        facts.set("rocm_version", whatif.rocm, "user:--rocm")
    if whatif.aiter is not None:
        _set_aiter(facts, whatif.aiter)
    if whatif.aiter_fix is not None:
        _state_aiter_fixes(facts, aiter_fixes(whatif.aiter_fix))
    if whatif.tilelang is not None:
        _set_package(facts, "tilelang", whatif.tilelang)
    if whatif.vllm is not None:
        _set_package(facts, "vllm", whatif.vllm)
        _vendored_deepgemm(facts)
    if whatif.deepgemm is not None:
        _set_deepgemm(facts, whatif.deepgemm)
    if whatif.platform == "cpu" and facts.vllm.version is None:  # rules.dispatch.vllm_platform takes it so
        facts.sources["vllm.build"] = ASSUMED + "--platform"  # its CPU build, as --platform xpu takes torch's XPU build
    return facts


def _vendored_deepgemm(facts: Facts) -> None:
    """--vllm RELEASE: that release's wheel vendors its DeepGEMM (which has tf32_hc_prenorm_gemm), unless a standalone
    deep_gemm installed here shadows it."""
    if facts.deepgemm.vendored is False and facts.deepgemm.present:
        return
    if facts.vllm.present:
        vendored = vllm_releases.vendored_deepgemm(facts.vllm.version)
        facts.deepgemm = DeepGemmFacts(present=True, version=vendored, vendored=True, has_prenorm_gemm=True)
    else:
        facts.deepgemm = DeepGemmFacts()
    for key in [k for k in facts.sources if k.startswith("deepgemm.")]:
        del facts.sources[key]
    facts.sources["deepgemm.present"] = "user:--vllm"


def _set_deepgemm(facts: Facts, value: str) -> None:
    if value.lower() == "none":
        facts.deepgemm = DeepGemmFacts(present=False)
    else:
        version = _version("--deepgemm", value)
        facts.deepgemm = DeepGemmFacts(
            present=True, version=str(version), vendored=False, has_prenorm_gemm=version >= known.DEEPGEMM_PRENORM_SINCE
        )
    for key in [k for k in facts.sources if k.startswith("deepgemm.")]:
        del facts.sources[key]
    for key in ("present", "version", "vendored", "has_prenorm_gemm"):
        facts.sources[f"deepgemm.{key}"] = "user:--deepgemm"


def report_facts(read: ReportFacts, label: str) -> Facts:
    """A saved report's facts, each source re-labelled "report:<label>". The members the report lacks (an older
    mhcdoctor never recorded them) stay unknown, with the source "unknown: not in report <label>": this machine is
    never probed to fill them, since its facts say nothing about the machine that wrote the report."""
    label = visible(label, one_line=True)  # a file name, shown in the trace
    facts = read.facts
    held = [*facts.sources, *_keys(facts.to_dict(), read.absent)]
    facts.sources = {key: f"report:{label}" for key in held if key.split(".")[0] not in read.absent}
    for name in (f.name for f in fields(Facts) if f.name in read.absent):
        facts.sources[name] = f"unknown: not in report {label}"
    return facts


def _keys(recorded: Mapping[str, Any], absent: frozenset[str]) -> list[str]:
    """The dotted names of the facts a report holds ("arch", "aiter.version"), its own `sources` aside."""
    keys = []
    for key, value in recorded.items():
        if key == "sources" or key in absent:
            continue
        keys += [f"{key}.{sub}" for sub in value] if isinstance(value, dict) else [key]
    return keys


def _validate(w: WhatIf) -> None:
    if w.platform is not None and w.platform not in PLATFORMS:
        raise InputError(f"--platform must be one of {', '.join(PLATFORMS)}, not {w.platform!r}")
    if w.aiter_fix is not None:
        aiter_fixes(w.aiter_fix)
    if w.arch is not None:
        if not _ARCH.match(normal_arch(w.arch)):
            raise InputError(
                f"--arch {w.arch!r} is not a GPU arch such as gfx942, gfx950, gfx90a or sm_90, nor a GPU such as "
                "MI300X or H100"
            )
        arch = normal_arch(w.arch)
        if arch not in KNOWN_ARCHS and not (arch.startswith("sm_") and arch.removesuffix("a") in KNOWN_ARCHS):
            raise InputError(
                f"--arch {w.arch!r} is no GPU arch known to mhcdoctor (AMD gfx900-gfx1251, NVIDIA sm_70-sm_121; "
                "e.g. gfx942, gfx950, gfx90a, sm_90)"
            )
        implied = _platform_of_arch(w.arch)
        if w.platform is not None and implied != w.platform:
            raise InputError(f"--arch {w.arch} is a {implied} arch, but --platform is {w.platform}")
    for option, value in (
        ("--aiter", w.aiter), ("--tilelang", w.tilelang), ("--vllm", w.vllm), ("--rocm", w.rocm),
        ("--deepgemm", w.deepgemm),
    ):  # fmt: skip
        if value is not None and not (value.lower() == "none" and option != "--rocm"):
            _version(option, value)


# An example version per option, so the error shows what that option takes.
_EXAMPLES = {"--aiter": "0.1.16", "--tilelang": "0.1.12", "--vllm": "0.30.0", "--rocm": "7.2.3", "--deepgemm": "2.3.0"}


def _version(option: str, value: str) -> versions.Version:
    try:
        return versions.parse_strict(value)
    except versions.InvalidVersion:
        allowed = " or 'none'" if option != "--rocm" else ""
        example = _EXAMPLES.get(option, "1.0")
        raise InputError(f"{option} {value!r} is not a version (e.g. {example}){allowed}") from None


def _platform_of_arch(arch: str | None) -> str | None:
    if arch is None:
        return None
    return "rocm" if normal_arch(arch).startswith("gfx") else "cuda"


# How the header names the dropped facts (DecisionDocument.sources marks each "assumed:<option>").
ASSUMED = "assumed:"


def _forget_platform(facts: Facts, option: str) -> None:
    """The probed machine's platform facts describe another machine now: make them unknown, marked as such, so that
    the view can say what the what-if assumes (an unknown fact raises no finding by itself)."""
    facts.devices = None
    facts.arch = None
    facts.rocm_version = facts.cuda_driver_version = facts.nvidia_driver = None
    facts.nvcc, facts.hipcc = CompilerFacts(), CompilerFacts()
    facts.torch.cuda = facts.torch.hip = facts.torch.xpu = facts.torch.build = facts.torch.gpus_visible = None
    facts.xpu_kernels = PackageFacts()
    for key in list(facts.sources):
        if key.startswith(_PLATFORM_BOUND):
            del facts.sources[key]
    facts.sources.update(dict.fromkeys(_PLATFORM_BOUND, ASSUMED + option))


def _set_aiter(facts: Facts, value: str) -> None:
    source = "user:--aiter"
    if value.lower() == "none":
        facts.aiter = AiterFacts(present=False, imports=False)
    else:
        version = _version("--aiter", value)
        known = aiter_releases.release_of(version)
        facts.aiter = AiterFacts(
            present=True,
            version=str(version),
            imports=True,
            genuine=True,
            distribution="amd-aiter",
            sqrsum_fix=known.sqrsum_fix,
            sqrsum_fix_evidence=f"by version: --aiter {version}: {known.sqrsum_why}",
            has_mhc_ops=known.has_mhc_ops,
            mhc_pre_norm_args=known.mhc_pre_norm_args,
            has_fused_post_pre=known.has_fused_post_pre,
        )
        facts.aiter.has_seam_rmsnorm = aiter_releases.seam_rmsnorm_from_version(str(version))[0]
        by_version = aiter_releases.fix_states_from_version(str(version))
        for fix in aiter_code.OTHER_FIXES:
            state, rule = by_version[fix.id]
            facts.aiter.fixes[fix.id] = state
            facts.aiter.fix_evidence[fix.id] = f"by version: --aiter {version}: {rule}"
    for key in list(facts.sources):
        if key.startswith("aiter."):
            del facts.sources[key]
    for key in (
        "present", "version", "genuine", "imports", "sqrsum_fix", "has_mhc_ops", "mhc_pre_norm_args",
        "has_fused_post_pre", "has_seam_rmsnorm", "fixes",
    ):  # fmt: skip
        facts.sources[f"aiter.{key}"] = source


# --aiter-fix ID=STATE: a fix of aiter_code.FIXES, or one of these API features of aiter/ops/mhc.py (their facts);
# seam-rmsnorm: aiter/ops/triton/fusions/mhc_fused_post_pre_delayed_rmsnorm.py, DeepSeek-V4.1's gfx950 seam.
API_FEATURES = {"norm-args": "mhc_pre_norm_args", "fused-op": "has_fused_post_pre", "seam-rmsnorm": "has_seam_rmsnorm"}
FIX_IDS = (*aiter_code.BY_ID, *API_FEATURES)


def aiter_fixes(value: str) -> dict[str, FixState]:
    """What `--aiter-fix` states: `STATE` alone is the sqrsum fix (CONTRACT.md), else `ID=STATE[,ID=STATE...]`."""
    if value in FIX_STATES:
        return {"sqrsum": typing.cast(FixState, value)}
    stated: dict[str, FixState] = {}
    for part in value.split(","):
        fix_id, _, state = part.strip().partition("=")
        if fix_id not in FIX_IDS or state not in FIX_STATES:
            raise InputError(
                f"--aiter-fix takes {'|'.join(FIX_STATES)} (the sqrsum race fix) or ID=STATE[,ID=STATE...] with ID one "
                f"of {', '.join(FIX_IDS)}; not {visible(part[:80])!r}"
            )
        stated[fix_id] = typing.cast(FixState, state)
    return stated


def _state_aiter_fixes(facts: Facts, stated: dict[str, FixState]) -> None:
    """Apply what --aiter-fix states; a fix stated present brings those it descends from on aiter's main where they
    are unknown (a build of main holding #3033 holds #2963 and #2978)."""
    source = "user:--aiter-fix"
    aiter = facts.aiter
    fixes, evidence = dict(aiter.fixes), dict(aiter.fix_evidence)
    for fix_id, state in stated.items():
        told = f"stated: --aiter-fix {fix_id}={state}"
        if fix_id == "sqrsum":
            facts.set("aiter.sqrsum_fix", state, source)
            aiter.sqrsum_fix_evidence = told
        elif fix_id in API_FEATURES:
            facts.set(f"aiter.{API_FEATURES[fix_id]}", {"present": True, "absent": False}.get(state), source)
        else:
            fixes[fix_id], evidence[fix_id] = state, told
    aiter.fixes, aiter.fix_evidence = fixes, evidence
    states = {fix.id: aiter_code.fix_state(aiter, fix.id)[0] for fix in aiter_code.OTHER_FIXES}
    states["sqrsum"] = aiter.sqrsum_fix
    present = {fix_id for fix_id, state in stated.items() if state == "present"}
    filled = aiter_code.fill_by_ancestry(states, present)
    for fix_id, why in filled.items():
        fixes[fix_id], evidence[fix_id] = "present", f"by git ancestry from what --aiter-fix stated: {why}"
    if filled or set(stated) - {"sqrsum", *API_FEATURES}:
        facts.sources["aiter.fixes"] = source


def _set_package(facts: Facts, name: str, value: str) -> None:
    source = f"user:--{name}"
    kind = VllmFacts if name == "vllm" else PackageFacts
    if value.lower() == "none":
        package = kind(present=False, imports=False)
    else:
        package = kind(present=True, version=str(_version(f"--{name}", value)), imports=True)
    if isinstance(package, VllmFacts):  # --vllm 0.34.0+cpu: the label names the build, as vLLM's own test reads it
        package.build, package.build_evidence = build_from_version(package.version)
    setattr(facts, name, package)
    if name == "vllm":  # the installed vLLM's pins say nothing about another release
        facts.vllm_pins = None
        facts.sources.pop("vllm_pins", None)
    for key in list(facts.sources):
        if key.startswith(f"{name}."):
            del facts.sources[key]
    for key in ("present", "version", "imports"):
        facts.sources[f"{name}.{key}"] = source
