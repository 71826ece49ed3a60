"""The findings catalogue: what will go wrong, as data (id, severity, predicate, text, fix, references).

Each predicate reads the facts and the dispatch decision (`FindingContext`) and nothing else. An unknown fact
(None) never makes a predicate true on its own. `python -m mhcdoctor.docsgen` writes docs/findings.md from
this list; a test checks that every entry has a title, detail, fix and references.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from mhcdoctor import aiter_releases, known
from mhcdoctor.decision import Finding
from mhcdoctor.documents.vocabulary import Severity, severity_rank
from mhcdoctor.facts import Facts
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules.dispatch import (
    AITER_ARCHS,
    Dispatch,
    aiter_feature,
    arch_has,
    deepgemm_arch,
    deepgemm_supported,
)
from mhcdoctor.rules.releases import ISSUE, NEWEST, PR, RuleSet

AITER = "https://github.com/ROCm/aiter/"
TILELANG = "https://github.com/tile-ai/tilelang/"
V41_SINCE = Version("0.30.0")  # models/deepseek_v41 and DeepseekV41ForCausalLM first ship in vLLM 0.30.0
AITER_BUILD = (
    "pip uninstall -y aiter amd-aiter && git clone --recursive https://github.com/ROCm/aiter && "
    "cd aiter && pip install --no-build-isolation ."
)


@dataclass
class FindingContext:
    facts: Facts
    model: ModelConfig
    rules: RuleSet | None  # None: this vLLM has no DeepSeek-V4 support
    dispatch: Dispatch | None
    vllm_version: str | None
    rules_reason: str  # installed | no-vllm | unknown | newer | too-old

    def used_ops(self) -> list[str]:
        """The ops the model calls: the fused op only where the model runs it between sublayers."""
        if self.dispatch is None:
            return []
        ops = ["mhc_pre", "mhc_post", "hc_head"]
        return ops + ["mhc_fused_post_pre"] if self.dispatch.fused_post_pre else ops

    def ops_on(self, path: str) -> list[str]:
        if self.dispatch is None:
            return []
        return [op for op in self.used_ops() if self.dispatch.ops[op].path == path]

    def sqrsum_ops_on_aiter(self) -> list[str]:
        """aiter ops that run mhc_pre_gemm_sqrsum (pre and the fused post+pre; not mhc_post)."""
        return [op for op in self.ops_on("aiter") if op != "mhc_post"]

    def ops_text(self, path: str) -> str:
        return ", ".join(self.ops_on(path)) or "no op"


Text = Callable[[FindingContext], str]


@dataclass(frozen=True)
class FindingSpec:
    id: str
    severity: Severity | Callable[[FindingContext], Severity]
    title: str
    when: Callable[[FindingContext], bool]
    detail: Text
    fix: str
    refs: tuple[str, ...]
    summary: str  # one line for docs/findings.md: when it fires
    ops: Callable[[FindingContext], list[str]] | None = None  # the ops it is about (their rows are marked by it)
    fix_for: Callable[[FindingContext], str] | None = None  # the fix for this case, where `fix` is only the usual one
    from_tokens: int | None = None  # it shows only in calls of at least this many tokens

    def build(self, ctx: FindingContext) -> Finding:
        severity = self.severity(ctx) if callable(self.severity) else self.severity
        ops = self.ops(ctx) if self.ops is not None else []
        fix = self.fix_for(ctx) if self.fix_for is not None else self.fix
        return Finding(self.id, severity, self.title, self.detail(ctx), fix, list(self.refs), ops, self.from_tokens)


def evaluate(ctx: FindingContext) -> list[Finding]:
    """Every finding whose predicate holds, most severe first, catalogue order within a severity."""
    found = [spec.build(ctx) for spec in CATALOGUE if spec.when(ctx)]
    return sorted(found, key=lambda f: -severity_rank(f.severity))


# --- predicates --------------------------------------------------------------------------------------------------


def _torch_mismatch(ctx: FindingContext) -> bool:
    build = ctx.facts.torch.build
    return ctx.facts.platform in ("rocm", "cuda", "xpu") and build is not None and build != ctx.facts.platform


def _torch_sees_no_gpu(ctx: FindingContext) -> bool:
    return ctx.facts.platform in ("rocm", "cuda") and ctx.facts.torch.gpus_visible == 0 and not _torch_mismatch(ctx)


def _impostor(ctx: FindingContext) -> bool:
    return ctx.facts.aiter.present is True and ctx.facts.aiter.genuine is False


def _impostor_severity(ctx: FindingContext) -> Severity:
    if ctx.ops_on("aiter"):
        return "fail"
    return "warn" if ctx.facts.platform == "rocm" else "info"


def _genuine_on_aiter(ctx: FindingContext) -> bool:
    """AMD's aiter (or one not known to be another) runs mhc_pre with its mHC ops there to run."""
    return (
        bool(ctx.sqrsum_ops_on_aiter())
        and ctx.facts.aiter.genuine is not False
        and ctx.facts.aiter.has_mhc_ops is not False
    )


def _aiter_shape_problem(ctx: FindingContext) -> str | None:
    """Why aiter's kernels reject this model: the `hc_mult == 4` checks, mhc_pre's H ≥ 512 and mhc_post's block choice
    (`MHC_POST_KERNEL_DISPATCH`), all in ROCm/aiter's `csrc/kernels/mhc_kernels.cu` (v0.1.14)."""
    h, n = ctx.model.hidden_size, ctx.model.hc_mult
    if n != 4:
        return f"aiter's mHC kernels support hc_mult == 4 only (C++ check); this model has {n}"
    if h < 512 and any(op != "mhc_post" for op in ctx.ops_on("aiter")):
        return f"aiter's mhc_pre needs hidden_size >= 512; this model has {h}"
    if "mhc_post" in ctx.ops_on("aiter"):
        on_942 = arch_has(ctx.facts, "gfx942")
        blocks = {_post_block(h, gfx942) for gfx942 in ((on_942,) if on_942 is not None else (True, False))}
        if all(h < 2 * block for block in blocks):
            return f"aiter's mhc_post picks a block of {max(blocks)} for hidden {h} and needs hidden >= 2 x block"
    return None


def _post_block(h: int, gfx942: bool) -> int:
    if not gfx942 and h % 1024 == 0:
        return 1024
    return 512 if h % 512 == 0 else 256


def _aiter_api_too_old(ctx: FindingContext) -> bool:
    """0.29 calls aiter's mhc_pre with norm args and mhc_fused_post_pre without probing for them."""
    if ctx.rules is None or ctx.rules.aiter_fused != "unprobed" or ctx.facts.aiter.genuine is False:
        return False
    if ctx.facts.aiter.has_mhc_ops is False:
        return False  # aiter-no-mhc says it
    on_aiter = ctx.ops_on("aiter")
    pre_old = (
        any(op in on_aiter for op in ("mhc_pre", "mhc_fused_post_pre"))
        and aiter_feature(ctx.facts, "mhc_pre_norm_args") is False
    )
    fused_old = "mhc_fused_post_pre" in on_aiter and aiter_feature(ctx.facts, "has_fused_post_pre") is False
    return pre_old or fused_old


def _aiter_fallback_for_api(ctx: FindingContext) -> bool:
    """0.30+: vLLM probed aiter and moved an op it would otherwise give aiter to tilelang or torch."""
    if ctx.rules is None or not ctx.rules.aiter_probes_norm or ctx.dispatch is None or ctx.facts.aiter.genuine is False:
        return False
    if ctx.facts.aiter.has_mhc_ops is False or _aiter_import_breaks_vllm(ctx):
        return False  # aiter-no-mhc / aiter-import-breaks-vllm say what happens
    for op in ctx.used_ops():
        decision = ctx.dispatch.ops[op]
        failed = [g for g in decision.why if g.path == "aiter" and not g.passed]
        if decision.path != "aiter" and failed and failed[0].kind == "aiter-api":
            return True
    return False


def _aiter_has_mhc(ctx: FindingContext) -> bool:
    """False only where it is known that the installed aiter has no aiter/ops/mhc.py (PyPI's amd-aiter 0.1.7)."""
    return ctx.facts.aiter.has_mhc_ops is not False


def _aiter_no_mhc(ctx: FindingContext) -> bool:
    return bool(ctx.ops_on("aiter")) and ctx.facts.aiter.genuine is not False and not _aiter_has_mhc(ctx)


# vLLM 0.30+ layers/mhc.py, _aiter_mhc_op_accepts_norm: `except (AttributeError, ImportError, TypeError, ValueError)`
# around `from aiter.ops import mhc`. These and their built-in subclasses are caught; anything else escapes.
_CAUGHT_BY_VLLM_PROBE = frozenset(
    {
        "AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "ValueError", "UnicodeError",
        "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeTranslateError", "JSONDecodeError",
    }
)  # fmt: skip
_EXCEPTION_NAME = re.compile(r"^([A-Za-z_][\w.]*):")


def escaping_exception(error: str | None) -> str | None:
    """The exception type named by an import error ("RuntimeError: ...") when vLLM's aiter probe does not catch it."""
    match = _EXCEPTION_NAME.match(error or "")
    if match is None:
        return None
    name = match.group(1).rsplit(".", 1)[-1]
    return None if name in _CAUGHT_BY_VLLM_PROBE else name


def _aiter_import_breaks_vllm(ctx: FindingContext) -> bool:
    """0.30+ on ROCm with HAS_AITER_MHC: `import aiter` raises a type the API probe does not catch."""
    a, rs = ctx.facts.aiter, ctx.rules
    if rs is None or not rs.aiter_probes_norm or ctx.facts.platform != "rocm" or a.present is not True:
        return False
    if arch_has(ctx.facts, *AITER_ARCHS[rs.aiter_arch]) is not True:
        return False
    return a.imports is False and escaping_exception(a.import_error) is not None


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


def _named(name: str, version: str | None) -> str:
    """`vLLM 0.34.0`, or `vLLM` alone when the version is unknown (never a double space)."""
    return f"{name} {version}" if version else name


def _import_error(error: str | None) -> str:
    return error or "see the import probe's evidence"


def _is_v41(model: ModelConfig) -> bool:
    """DeepSeek-V4.1 by name: the built-in, or a config.json whose name or model_type says v4.1 / deepseek_v41."""
    name = (model.name or "").lower().replace("_", "-")
    return "v4.1" in name or "v41" in name


def _torch_fallbacks(ctx: FindingContext) -> list[str]:
    """Ops on the torch reference, except 0.20.0's hc_head, which is a torch.compile function by design."""
    designed = ctx.rules is not None and ctx.rules.hc_head == "torch"
    if _vllm_platform(ctx) == "xpu":  # 0.23–0.26 XPU: forward_xpu is forward_native by design, nothing faster
        return []
    return [op for op in ctx.ops_on("torch") if not (op == "hc_head" and designed)]


TORCH_FALLBACK_FIX = "pip install tilelang  # ROCm MI3xx: AMD's aiter serves mhc_pre/mhc_post first"


def _torch_fallback_fix(ctx: FindingContext) -> str:
    """The fix for the gate that sent the first torch op past its kernels: install, repair or build what failed, or
    say that no kernel serves this shape here."""
    for op in _torch_fallbacks(ctx):
        assert ctx.dispatch is not None  # _torch_fallbacks found ops
        failed = [g for g in ctx.dispatch.ops[op].why if not g.passed and g.path in ("aiter", "tilelang")]
        tilelang = next((g for g in failed if g.path == "tilelang"), None)
        aiter = next((g for g in failed if g.path == "aiter"), None)
        rs = ctx.rules
        tilelang_off = rs is not None and bool(
            (rs.tilelang_mhc_skips_gfx942 and arch_has(ctx.facts, "gfx942"))
            or (rs.tilelang_skips_gfx1250 and arch_has(ctx.facts, "gfx1250"))
        )
        if tilelang is not None and tilelang.kind == "package" and not tilelang_off:
            if ctx.facts.tilelang.present is True:
                return "python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang"
            return "pip install tilelang"
        # tilelang mHC is off on this arch (gfx942, gfx1250): only aiter offers a kernel here
        if aiter is None:
            continue
        if aiter.kind == "package" or ctx.facts.aiter.genuine is False:  # the impostor is no aiter to upgrade
            return "Build AMD's aiter (tilelang mHC is off on this GPU): " + AITER_BUILD
        if aiter.kind == "aiter-api":
            return f"Build aiter {aiter_releases.FUSED_SINCE} or later (this one lacks the API vLLM probes for): " + (
                AITER_BUILD
            )
        return (
            f"Nothing to install: aiter refuses this model ({aiter.text}) and vLLM turns tilelang mHC off on "
            f"{ctx.facts.arch or 'this GPU'}, so the torch path is the only one here"
        )
    return TORCH_FALLBACK_FIX


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


def cuda_capability(arch: str | None) -> tuple[int, int] | None:
    """ "sm_90" → (9, 0), "sm_100a" → (10, 0), "sm_86" → (8, 6); None for anything else."""
    digits = re.match(r"^sm_?(\d{2,3})a?$", (arch or "").lower())
    if digits is None:
        return None
    text = digits.group(1)
    return int(text[:-1]), int(text[-1])


def _archs(ctx: FindingContext) -> list[str]:
    """Each GPU architecture on the host with its count, e.g. ["gfx942 x2", "gfx90a x1"], in device order."""
    archs = [d.arch or "unknown" for d in ctx.facts.devices or []]
    return [f"{arch} x{archs.count(arch)}" for arch in dict.fromkeys(archs)]


def _mixed_arch(ctx: FindingContext) -> bool:
    known = {d.arch for d in ctx.facts.devices or [] if d.arch}
    return len(known) > 1


def _driver_mismatch(ctx: FindingContext) -> list[str]:
    """Per vendor, the drivers its GPUs report when they are not all the same: ["amd: 6.12.12 (GPU 0, 1), ..."]."""
    out = []
    for vendor in dict.fromkeys(d.vendor for d in ctx.facts.devices or []):
        by_driver: dict[str, list[str]] = {}
        for d in ctx.facts.devices or []:
            if d.vendor == vendor and d.driver:
                by_driver.setdefault(d.driver, []).append(str(d.index))
        if len(by_driver) > 1:
            out += [f"{vendor} {driver} (GPU {', '.join(gpus)})" for driver, gpus in by_driver.items()]
    return out


# The self-check's values by the name vLLM's code gives them (VllmSelfCheck field → vLLM's name).
SELFCHECK_GATES = {
    "platform": "current_platform",
    "forward": "CustomOp.dispatch_forward",
    "has_tilelang": "has_tilelang()",
    "has_tilelang_mhc": "HAS_TILELANG_MHC",
    "has_aiter_mhc": "HAS_AITER_MHC",
    "aiter_fused": "HAS_AITER_MHC_FUSED",
    "aiter_pre_norm": "HAS_AITER_MHC_PRE_NORM",
    "fused": "use_fused_mhc",
}
# Subclasses vLLM may resolve for one of the rules' platforms (vllm/platforms/zen_cpu.py: AMD Zen with zentorch).
_PLATFORM_ALIASES = {"ZenCpuPlatform": "CpuPlatform"}


def selfcheck_disagreements(ctx: FindingContext) -> list[str]:
    """Each gate where the installed vLLM's own value differs from the rules' prediction: "GATE: rules X, vLLM Y".

    Compared only when the rules describe the installed release (not a what-if --vllm) and both sides have a value.
    """
    check, result = ctx.facts.vllm.selfcheck, ctx.dispatch
    if check is None or result is None or ctx.rules_reason not in ("installed", "newer"):
        return []
    if ctx.vllm_version != ctx.facts.vllm.version:
        return []
    out = []
    for key, predicted in result.values.items():
        reported: object = getattr(check, key, None)
        gate = SELFCHECK_GATES.get(key, key)
        if key == "fused":
            size = f"{ctx.model.hidden_size}x{ctx.model.hc_mult}"
            flag = (check.fused or {}).get(size)
            reported = None if flag is None else flag == "true"
            gate += f" (hidden {ctx.model.hidden_size})"
        elif key == "platform" and isinstance(reported, str):
            reported = _PLATFORM_ALIASES.get(reported, reported)
        if predicted is None or reported is None or predicted == reported:
            continue
        out.append(f"{gate}: rules {predicted}, vLLM {reported}")
    return out


def _vllm_platform(ctx: FindingContext) -> str | None:
    return ctx.dispatch.platform if ctx.dispatch is not None else None


def _no_platform_model(ctx: FindingContext) -> bool:
    if ctx.rules is None:
        return False
    return not ctx.rules.cpu_model if _vllm_platform(ctx) == "cpu" else ctx.rules.xpu == "none"


def _build_mismatch(ctx: FindingContext) -> str | None:
    """A probed CUDA/ROCm/XPU build of vLLM on another GPU platform (a CPU build picks the CPU platform itself)."""
    build, platform = ctx.facts.vllm.build, _vllm_platform(ctx)
    if build is None or build == "cpu" or platform not in ("cuda", "rocm", "xpu") or build == platform:
        return None
    if ctx.vllm_version != ctx.facts.vllm.version:  # a what-if release: the installed build says nothing of it
        return None
    names = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU"}
    return (
        f"vLLM {ctx.vllm_version} is the {names[build]} build ({ctx.facts.vllm.build_evidence}), but vLLM detects "
        f"{names[platform]} here: its compiled ops are for the other platform and the model fails to load"
    )


# --- the known-bugs catalogue: libraries inside the paths (docs/known-bugs.md) -------------------------------------

TILELANG_ISSUES = "https://github.com/tile-ai/tilelang/issues/"
AITER_ISSUES = AITER + "issues/"


def _tvm_ffi_pair(ctx: FindingContext) -> known.BadPair | None:
    tl, ffi = ctx.facts.tilelang, ctx.facts.tvm_ffi
    if tl.present is False or ffi.present is False:
        return None
    return known.bad_tvm_ffi_pair(tl.version, ffi.version)


def _tilelang_loaded(ctx: FindingContext) -> bool:
    """vLLM imports tilelang here: an op runs on it, CUDA (every release imports it), or a trial-import release."""
    rs = ctx.rules
    return (
        bool(ctx.ops_on("tilelang"))
        or ctx.facts.platform == "cuda"
        or (rs is not None and rs.has_tilelang == "import" and ctx.facts.platform == "rocm")
    )


def _tvm_ffi_text(ctx: FindingContext) -> str:
    pair = _tvm_ffi_pair(ctx) or known.TVM_FFI_BAD_PAIRS[0]  # the docs page shows the text without a machine
    tl, ffi = ctx.facts.tilelang.version, ctx.facts.tvm_ffi.version
    requires = known.TILELANG_TVM_FFI_REQUIRES.get(str(known.version_of(tl)))
    text = f"tilelang {tl} with apache-tvm-ffi {ffi}: {pair.effect}"
    if requires is not None and known.within(ffi, requires):
        text += f" (tilelang {tl} requires apache-tvm-ffi{requires}, which lets pip pick {ffi})"
    elif requires is not None:
        text += f" (tilelang {tl} requires apache-tvm-ffi{requires}: {ffi} was installed over that pin)"
    where = ctx.ops_text("tilelang") if ctx.ops_on("tilelang") else "vLLM's tilelang import"
    return text + f". Hit by {where}."


def _aiter_bug(ctx: FindingContext, bug: aiter_releases.AiterBug) -> list[str]:
    """The ops on AMD's aiter that run a kernel with `bug` (by the installed aiter's version and the GPU arch)."""
    if ctx.facts.aiter.genuine is False or ctx.facts.aiter.has_mhc_ops is False:
        return []
    if aiter_releases.has_bug(ctx.facts.aiter.version, bug) is not True:
        return []
    if bug.archs and arch_has(ctx.facts, *bug.archs) is not True:
        return []
    kernels = set(bug.ops) | ({"mhc_fused_post_pre"} if "mhc_pre" in bug.ops else set())
    return [op for op in ctx.ops_on("aiter") if op in kernels]


def _aiter_bug_spec(
    bug: aiter_releases.AiterBug,
    severity: Severity,
    id: str,
    title: str,
    summary: str,
    effect: str,
    fix: str,
    refs: tuple[str, ...],
) -> FindingSpec:
    return FindingSpec(
        id=id,
        severity=severity,
        title=title,
        summary=summary,
        when=lambda c: bool(_aiter_bug(c, bug)),
        detail=lambda c: f"aiter {c.facts.aiter.version} runs {', '.join(_aiter_bug(c, bug))} here: {effect}",
        fix=fix,
        refs=refs,
        ops=lambda c: _aiter_bug(c, bug),
    )


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
    if ctx.facts.platform != "rocm" or not known.within(ctx.vllm_version, known.HIP_ALLREDUCE_OFFSET_RELEASES):
        return []
    if not (ctx.facts.arch or "").startswith("gfx9") or ctx.dispatch is None or not ctx.dispatch.fused_post_pre:
        return []
    return [op for op in ctx.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]


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


def _block_m_ops(ctx: FindingContext) -> list[str]:
    """The pre ops that take 0.22–0.26's block-M tilelang prenorm GEMM from 1024 tokens (kernels/mhc/tilelang.py:
    `n_splits == 1 and use_default_config and x.shape[0] >= 1024`, taken where DeepGEMM is not used)."""
    version = known.version_of(ctx.vllm_version)
    if version is None or not known.within(str(version), known.BLOCK_M_ACCUMULATOR_RELEASES):
        return []
    if ctx.facts.platform == "cuda" and deepgemm_used(ctx) in (True, None):
        return []  # DeepGEMM computes the prenorm GEMM (or it is not known that it does not)
    if known.within(ctx.facts.tilelang.version, known.BLOCK_M_RIGHT_TILELANG):
        return []  # measured right under this tilelang
    return [op for op in ctx.ops_on("tilelang") if op in ("mhc_pre", "mhc_fused_post_pre")]


def _block_m_measured_wrong(ctx: FindingContext) -> bool:
    """The installed tilelang is one measured to lower the block-M accumulator wrong, on CUDA where it was measured."""
    return ctx.facts.platform == "cuda" and bool(known.within(ctx.facts.tilelang.version, known.BLOCK_M_WRONG_TILELANG))


def _block_m_text(ctx: FindingContext) -> str:
    tl = ctx.facts.tilelang.version
    head = (
        f"vLLM {ctx.vllm_version}'s {', '.join(_block_m_ops(ctx))} compute the prenorm GEMM with tilelang; from 1024 "
        "tokens (prefill) hc_prenorm_gemm_block_m_tilelang sums each token into one T.alloc_var(T.float32, init=0.0) "
        "inside the unrolled loop over the block's 2 tokens (vLLM 0.27.0 made them per-token T.alloc_local arrays). "
    )
    measured = (
        f"Measured on an H200 (vLLM {' and '.join(known.BLOCK_M_MEASURED_RELEASES)}'s kernel files, 2026-12-04): "
        "under tilelang 0.1.9 mhc_pre and the fused post+pre are wrong at 1024, 4096 and 16384 tokens (post_mix off "
        "by up to 1.58, about half of comb_mix wrong); under 0.1.12 and 0.1.15 they are right."
    )
    if _block_m_measured_wrong(ctx):
        return head + f"tilelang {tl} lowers it wrong: prefill gets wrong mixes. " + measured
    where = "this platform" if ctx.facts.platform != "cuda" else f"tilelang {tl or '(version unknown)'}"
    return head + f"Not measured with {where}. " + measured


def _fused_slow_tilelang(ctx: FindingContext) -> str | None:
    """The installed tilelang, where it is newer than the pin of a vLLM whose CUDA fused post+pre was measured slow."""
    if ctx.facts.platform != "cuda" or "mhc_fused_post_pre" not in ctx.ops_on("tilelang"):
        return None
    pin, tl = known.vllm_tilelang_pin(ctx.vllm_version), ctx.facts.tilelang.version
    if pin is None or not known.within(ctx.vllm_version, known.FUSED_POST_PRE_SLOW_RELEASES):
        return None
    return tl if known.within(tl, f">{pin}") else None


def _fused_slow_text(ctx: FindingContext) -> str:
    slow, fast = known.FUSED_POST_PRE_SLOW_MS
    pin = known.vllm_tilelang_pin(ctx.vllm_version)
    text = (
        f"vLLM {ctx.vllm_version}'s fused post+pre (mhc_fused_post_pre_tilelang, the same tilelang kernels in 0.33 "
        f"and 0.34) runs under tilelang {_fused_slow_tilelang(ctx)}, newer than the {pin} vLLM pins. Measured on an "
        f"H200 only (vLLM 0.34.0's kernel files, hidden 7168, 1 token, CUDA graph, 2026-12-04): {slow:.4f} ms per "
        f"call under tilelang {known.FUSED_POST_PRE_SLOW_TILELANG} against {fast:.4f} ms under {pin}"
    )
    if ctx.model.num_layers:
        calls = 2 * ctx.model.num_layers - 1  # nvidia/model.py: one before attention (not in layer 0), one before FFN
        text += f"; {ctx.model.name or 'this model'} calls it {calls} times per decode step: about "
        text += f"{(slow - fast) * calls:.1f} ms more per step"
    return text + ". Results are right; only the time differs. Other GPUs and tilelang versions are not measured."


def deepgemm_problem(ctx: FindingContext) -> str | None:
    """Why DeepGEMM's tf32_hc_prenorm_gemm cannot run where this release's CUDA mhc_pre calls it, if it cannot:
    0.20–0.21 and (first layer) 0.26+ call it with no fallback; 0.22+ wherever is_deep_gemm_supported() holds."""
    rs, f, dg = ctx.rules, ctx.facts, ctx.facts.deepgemm
    if rs is None or f.platform != "cuda" or "mhc_pre" not in ctx.ops_on("tilelang"):
        return None
    forced = rs.cuda_first_pre_deepgemm
    if not forced and deepgemm_supported(rs, f, ctx.vllm_version)[0] is not True:
        return None  # tilelang's own GEMM computes the prenorm mixes
    if deepgemm_arch(f, rs) is False:
        return f"DeepGEMM has no kernel for {f.arch} (it supports sm_90, sm_10x and, in vLLM 0.24+, sm_12x)"
    if (f.arch or "").startswith("sm_12") and dg.present is not False:
        vendored_ok = dg.vendored is not False and known.within(
            ctx.vllm_version, known.VENDORED_DEEPGEMM_SM120_RELEASES
        )
        if not vendored_ok:
            which = (
                f"vLLM {ctx.vllm_version}'s vendored DeepGEMM"
                if dg.vendored is not False
                else "the standalone deep_gemm"
            )
            return (
                f"{which} has no sm_12x tf32_hc_prenorm_gemm (DeepGEMM's hyperconnection.hpp: 'Unsupported "
                "architecture', DeepGEMM #317; vLLM vendors one with it from 0.27.0, #52035)"
            )
    if dg.present is False and f.vllm.present is True:  # a vLLM wheel vendors it: without vLLM, nothing to say
        return (
            "neither the standalone deep_gemm nor vLLM's vendored vllm.third_party.deep_gemm is installed, so "
            "vllm.utils.deep_gemm raises 'DeepGEMM backend is not available'"
        )
    nvcc = known.version_of(f.nvcc.version)
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
        return "pip install -U 'vllm>=0.27' (and pip uninstall -y deep_gemm)  # vendors a DeepGEMM with sm_12x kernels"
    if problem.startswith("its JIT needs nvcc"):
        return "Install CUDA 12.9 or newer and export CUDA_HOME to it (or: pip install 'nvidia-cuda-nvcc>=13')"
    return "pip uninstall -y deep_gemm  # vLLM then uses its vendored copy, which has tf32_hc_prenorm_gemm"


def deepgemm_used(ctx: FindingContext) -> bool | None:
    """Whether vLLM computes the prenorm GEMM with DeepGEMM here (is_deep_gemm_supported(); None: unknown)."""
    if ctx.facts.platform != "cuda" or ctx.rules is None:
        return False
    return deepgemm_supported(ctx.rules, ctx.facts, ctx.vllm_version)[0]


# vLLM's build per platform, as the fixes name it (https://docs.vllm.ai/en/latest/getting_started/installation/):
# PyPI's wheel is the CUDA build; CPU, ROCm and XPU have builds of their own.
_VLLM_BUILDS = {
    "cuda": "vLLM's CUDA build (pip install vllm)",
    "cpu": "vLLM's CPU build (0.30+, e.g. vllm-0.34.0+cpu from vLLM's releases; PyPI's vllm is the CUDA build)",
    "rocm": "vLLM's ROCm build (AMD's vLLM image or a +rocm wheel)",
    "xpu": "vLLM's XPU build",
}

# --- the catalogue -------------------------------------------------------------------------------------------------

CATALOGUE: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="no-gpu",
        severity="fail",
        title="No GPU, and this vLLM is not its CPU build",
        summary="No AMD, NVIDIA or Intel GPU was found (or `--platform cpu`) and vLLM's version has no 'cpu' "
        "(PyPI's wheel is the CUDA build): vLLM detects no platform (UnspecifiedPlatform).",
        when=lambda c: _vllm_platform(c) == "unspecified" and c.facts.platform == "cpu",
        detail=lambda c: (
            (f"vLLM {c.vllm_version} reports" if c.facts.vllm.present is not False else "vLLM would report")
            + " an unspecified platform here: its CUDA platform needs an NVIDIA GPU and its CPU platform a CPU build "
            "('cpu' in its version), so it builds no model; the CUDA build also lacks the CPU mHC ops "
            "(hc_pre_fused_cpu & co.)."
        ),
        fix=f"Run on a ROCm, CUDA or Intel XPU machine; or serve on CPU with {_VLLM_BUILDS['cpu']}; replay: "
        "mhcdoctor explain --platform cpu --vllm 0.34.0+cpu",
        refs=(PR + "41946", "https://github.com/vllm-project/vllm/blob/main/vllm/platforms/__init__.py"),
    ),
    FindingSpec(
        id="vllm-no-platform-model",
        severity="fail",
        title="This vLLM has no DeepSeek-V4 model for its platform",
        summary="vLLM's platform is CPU before 0.30.0 or XPU before 0.23.0: models/deepseek_v4/{cpu,xpu}/ do not "
        "exist yet, and the CUDA model it imports instead needs NVIDIA kernels.",
        when=lambda c: _vllm_platform(c) in ("cpu", "xpu") and _no_platform_model(c),
        detail=lambda c: (
            f"vLLM {c.vllm_version} runs on its {str(_vllm_platform(c)).upper()} platform, but has no DeepSeek-V4 "
            f"model for it and imports the CUDA model, which needs NVIDIA kernels (the "
            f"{str(_vllm_platform(c)).upper()} model arrives in "
            f"{'0.30.0' if _vllm_platform(c) == 'cpu' else '0.23.0'})."
        ),
        fix="pip install -U vllm  # CPU: vLLM's CPU build 0.30+; XPU: 0.27+ runs every mHC op on vllm-xpu-kernels",
        refs=("https://github.com/vllm-project/vllm/tree/main/vllm/models/deepseek_v4",),
    ),
    FindingSpec(
        id="vllm-platform-conflict",
        severity="fail",
        title="Two of vLLM's platform plugins detect at once",
        summary="A CPU build of vLLM ('cpu' in its version) on a machine whose AMD or Intel GPU a plugin also "
        "detects: vLLM raises 'Only one platform plugin can be activated'.",
        when=lambda c: _vllm_platform(c) == "conflict",
        detail=lambda c: (
            f"vLLM {c.vllm_version} is a CPU build, and this machine's {c.facts.platform.upper()} GPU makes its "
            f"{c.facts.platform} plugin detect too; vllm/platforms/__init__.py refuses two and raises RuntimeError."
        ),
        fix="Install the vLLM build for this machine's GPUs, or (vLLM 0.28+) export VLLM_TARGET_DEVICE=cpu to choose "
        "the CPU platform",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/platforms/__init__.py",),
    ),
    FindingSpec(
        id="vllm-build-mismatch",
        severity="fail",
        title="vLLM is built for another platform than the one it runs on here",
        summary="The installed vLLM's build (its version label or extension modules) is CUDA, ROCm or XPU and "
        "vLLM's platform here is another GPU platform: its compiled ops do not fit.",
        when=lambda c: _build_mismatch(c) is not None,
        detail=lambda c: f"{_build_mismatch(c)}.",
        fix="pip uninstall -y vllm, then install the build for this machine (ROCm: "
        f"{_VLLM_BUILDS['rocm']}; XPU: {_VLLM_BUILDS['xpu']}; CUDA: {_VLLM_BUILDS['cuda']})",
        refs=("https://docs.vllm.ai/en/latest/getting_started/installation/",),
    ),
    FindingSpec(
        id="xpu-kernels-missing",
        severity="fail",
        title="vLLM's XPU platform needs vllm-xpu-kernels, and it is not installed",
        summary="vLLM's platform is XPU and the vllm-xpu-kernels package (torch.ops._xpu_C) is not installed.",
        when=lambda c: _vllm_platform(c) == "xpu" and c.facts.xpu_kernels.present is False,
        detail=lambda c: (
            "vllm/platforms/xpu.py imports vllm_xpu_kernels._C, ._moe_C and ._xpu_C when the platform loads, so "
            "vLLM fails to start; from 0.27 every mHC op's forward_xpu also calls torch.ops._xpu_C."
        ),
        fix="pip install vllm-xpu-kernels  # the version vLLM's XPU requirements pin",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/platforms/xpu.py",),
    ),
    FindingSpec(
        id="rules-disagree-with-vllm",
        severity="warn",
        title="The installed vLLM's own dispatch values differ from the rules",
        summary="Full check: vLLM, asked in a child process, reports a platform, forward method, has_tilelang(), "
        "HAS_TILELANG_MHC, HAS_AITER_MHC, aiter API probe or use_fused_mhc other than the rules predict.",
        when=lambda c: bool(selfcheck_disagreements(c)),
        detail=lambda c: (
            f"vLLM {c.vllm_version} itself says otherwise than the rules ({c.rules.id if c.rules else '?'}) at "
            + "; ".join(selfcheck_disagreements(c))
            + ". The paths shown follow the rules; vLLM will follow its own values."
            + (
                f" (The self-check stopped at {c.facts.vllm.selfcheck.error}.)"
                if c.facts.vllm.selfcheck and c.facts.vllm.selfcheck.error
                else ""
            )
        ),
        fix="mhcdoctor check -v  # the vllm.selfcheck probe's evidence; report it with mhcdoctor report --bundle",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/mhc.py",),
    ),
    FindingSpec(
        id="torch-build-mismatch",
        severity="fail",
        title="torch is not built for this machine's GPUs",
        summary="torch/version.py says a CUDA, ROCm, XPU or CPU-only build that does not match the GPUs found.",
        when=_torch_mismatch,
        detail=lambda c: (
            f"torch {c.facts.torch.version} is a {c.facts.torch.build} build, but this machine's GPUs are "
            f"{c.facts.platform}: vLLM, and every mHC path with it, cannot use them. A common cause: "
            "`pip install vllm` on a ROCm host replaces ROCm's torch with PyPI's CUDA build."
        ),
        fix="Install the torch build for this platform (ROCm: PyTorch's ROCm wheels or AMD's rocm/vllm image; "
        "CUDA: the CUDA build vLLM pins; Intel XPU: PyTorch's XPU wheels), then run mhcdoctor check again",
        refs=("https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",),
    ),
    FindingSpec(
        id="torch-sees-no-gpu",
        severity="fail",
        title="torch imports but sees no GPU",
        summary="The GPUs are found in sysfs, /proc or NVML, but torch.cuda.device_count() is 0 (full check).",
        when=_torch_sees_no_gpu,
        detail=lambda c: (
            f"The {c.facts.platform} GPUs are there, but {_named('torch', c.facts.torch.version)} counts none, so vLLM "
            "cannot start on them. Usual causes: a driver older than torch's "
            f"{'CUDA' if c.facts.platform == 'cuda' else 'ROCm'} runtime needs, CUDA_VISIBLE_DEVICES / "
            "HIP_VISIBLE_DEVICES hiding every GPU, or no access to /dev/nvidia* or /dev/kfd in a container."
        ),
        fix="mhcdoctor check -v  # gpu.torch's evidence; then: echo $CUDA_VISIBLE_DEVICES $HIP_VISIBLE_DEVICES; "
        "ls -l /dev/kfd /dev/nvidia*",
        refs=("https://docs.pytorch.org/docs/stable/notes/cuda.html",),
    ),
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
    FindingSpec(
        id="aiter-impostor",
        severity=_impostor_severity,
        title="The installed `aiter` is not AMD's aiter",
        summary="A package importable as `aiter` is installed but is not AMD's (PyPI's async-iterator `aiter`); "
        "fail when vLLM selects the aiter path (its find_spec accepts any `aiter`), warn on ROCm otherwise.",
        when=_impostor,
        detail=lambda c: (
            f"`aiter` comes from {_named(c.facts.aiter.distribution or 'another distribution', c.facts.aiter.version)}"
            ", not amd-aiter. vLLM tests only find_spec('aiter'), so it "
            + (f"calls aiter for {c.ops_text('aiter')} and fails there." if c.ops_on("aiter") else "may select it.")
        ),
        fix=AITER_BUILD,
        refs=("https://pypi.org/project/aiter/", AITER, PR + "43950"),
        ops=lambda c: c.ops_on("aiter"),
    ),
    FindingSpec(
        id="aiter-not-importable",
        severity="fail",
        title="aiter is selected but does not import",
        summary="vLLM selects aiter (find_spec) but importing AMD's aiter fails.",
        when=lambda c: (
            bool(c.ops_on("aiter"))
            and c.facts.aiter.genuine is not False
            and c.facts.aiter.imports is False
            and not _aiter_import_breaks_vllm(c)
        ),
        detail=lambda c: (
            f"vLLM calls aiter for {c.ops_text('aiter')}, but `import aiter` fails: "
            f"{c.facts.aiter.import_error or 'see the aiter.import probe'}."
        ),
        fix="python -c 'import aiter'  # read the error; then rebuild: " + AITER_BUILD,
        refs=(AITER, PR + "43950"),
        ops=lambda c: c.ops_on("aiter"),
    ),
    FindingSpec(
        id="aiter-no-mhc",
        severity="fail",
        title="vLLM calls aiter's mHC ops, and the installed aiter has none",
        summary="vLLM sends an op to aiter (find_spec finds AMD's aiter) but that aiter has no aiter/ops/mhc.py "
        f"(before {aiter_releases.MHC_OPS_SINCE}, e.g. PyPI's amd-aiter 0.1.7.post2.dev18): the first forward "
        "fails with ModuleNotFoundError.",
        when=_aiter_no_mhc,
        detail=lambda c: (
            f"aiter {c.facts.aiter.version or '(version unknown)'} has no aiter/ops/mhc.py (aiter's mHC ops "
            f"arrived in {aiter_releases.MHC_OPS_SINCE}). {_named('vLLM', c.vllm_version)} tests only "
            f"find_spec('aiter') and the arch, so it sends {c.ops_text('aiter')} to aiter; `from aiter.ops.mhc "
            "import ...` then raises ModuleNotFoundError at the first forward."
            + (
                " Its import-time probes make only mhc_pre with a folded RMSNorm and the fused op fall back; "
                "mhc_post is sent to aiter unprobed."
                if c.rules is not None and c.rules.aiter_probes_norm
                else ""
            )
        ),
        fix=AITER_BUILD + "  # or drop it (vLLM then takes tilelang or torch): pip uninstall -y amd-aiter",
        refs=(AITER + "pull/2136", AITER + "blob/v0.1.11/aiter/ops/mhc.py", PR + "43950", PR + "52737"),
        ops=lambda c: c.ops_on("aiter"),
    ),
    FindingSpec(
        id="aiter-import-breaks-vllm",
        severity="fail",
        title="Importing aiter raises an error vLLM's aiter probe does not catch: layers/mhc.py fails to import",
        summary="vLLM 0.30+ on a CDNA3+ GPU probes aiter.ops.mhc at import, catching only AttributeError, "
        "ImportError, TypeError and ValueError; an aiter whose import raises anything else (RuntimeError from its "
        "chip-info helpers) stops the model from being built.",
        when=_aiter_import_breaks_vllm,
        detail=lambda c: (
            f"`import aiter` raises {c.facts.aiter.import_error}. {_named('vLLM', c.vllm_version)}'s layers/mhc.py "
            "calls _aiter_mhc_op_accepts_norm() when it is imported, and that catches only AttributeError, "
            f"ImportError, TypeError and ValueError, so the {escaping_exception(c.facts.aiter.import_error)} "
            "escapes: layers/mhc.py does not import and no mHC op runs, whatever path the trace shows."
        ),
        fix="python -c 'import aiter'  # read the error and fix it, or rebuild: " + AITER_BUILD,
        refs=(PR + "52737", AITER + "blob/main/aiter/jit/utils/chip_info.py"),
        ops=lambda c: c.used_ops(),
    ),
    FindingSpec(
        id="aiter-sqrsum-race",
        severity="fail",
        title="aiter's mhc_pre_gemm_sqrsum race corrupts rows past 16 tokens",
        summary="The aiter path runs mhc_pre and the installed aiter lacks the race fix (aiter #3033).",
        when=lambda c: _genuine_on_aiter(c) and c.facts.aiter.sqrsum_fix == "absent",
        detail=lambda c: (
            f"{_named('aiter', c.facts.aiter.version)} stores row sums from lanes 16–63 into other warps' "
            "rows, so the RMS factor is wrong once more than 16 tokens run "
            f"({', '.join(c.sqrsum_ops_on_aiter())} on aiter). "
            "Fixed by aiter #3033 (commit b639cb6), in v0.1.14-rc0 and later; vLLM never checks the version."
        ),
        fix="Build aiter v0.1.14 or later from source (PyPI's amd-aiter is stale): " + AITER_BUILD,
        refs=(AITER + "pull/3033", AITER + "commit/b639cb63bcac4672dce33a731fad042a65cb3649", PR + "43950"),
        ops=lambda c: c.sqrsum_ops_on_aiter(),
        from_tokens=17,  # lanes 16–63 store into other rows: one call of more than 16 tokens
    ),
    FindingSpec(
        id="aiter-sqrsum-unknown",
        severity="warn",
        title="Can't tell whether aiter has the sqrsum race fix",
        summary="The aiter path runs mhc_pre and the fix can be established neither way.",
        when=lambda c: _genuine_on_aiter(c) and c.facts.aiter.sqrsum_fix == "unknown",
        detail=lambda c: (
            f"aiter {c.facts.aiter.version or '(version unknown)'} serves {c.ops_text('aiter')}, but "
            "its mhc_kernels.cu was not found to read, and source builds carry versions that do not say. "
            "`mhcdoctor verify --stress` runs > 16 rows and shows the race if it is there."
        ),
        fix="mhcdoctor verify --stress",
        refs=(AITER + "pull/3033", AITER + "commit/b639cb63bcac4672dce33a731fad042a65cb3649"),
        ops=lambda c: c.sqrsum_ops_on_aiter(),
    ),
    FindingSpec(
        id="aiter-hidden-unsupported",
        severity="fail",
        title="aiter's mHC kernels reject this model's shape",
        summary="vLLM sends an op to aiter (its gate is hidden % 256 and, from 0.29, hc_mult == 4), but aiter's "
        "kernels reject the hidden size or hc_mult.",
        when=lambda c: bool(c.ops_on("aiter")) and _aiter_shape_problem(c) is not None,
        detail=lambda c: f"{_aiter_shape_problem(c)}; vLLM sends {c.ops_text('aiter')} there anyway.",
        fix="Use a model with hc_mult 4 and hidden size >= 1024 (2048 off gfx942), or an older vLLM path: "
        "mhcdoctor explain --aiter none",
        refs=(AITER + "blob/v0.1.14/csrc/kernels/mhc_kernels.cu", PR + "52737"),
        ops=lambda c: c.ops_on("aiter"),
    ),
    FindingSpec(
        id="aiter-api-too-old",
        severity="fail",
        title="aiter is too old for what this vLLM release calls",
        summary="vLLM 0.29 calls aiter's mhc_pre with norm_weight/norm_eps (aiter 0.1.15+) and "
        "mhc_fused_post_pre (0.1.16+) without probing for them.",
        when=_aiter_api_too_old,
        detail=lambda c: (
            f"vLLM {c.vllm_version or '0.29'} passes norm_weight/norm_eps to aiter.ops.mhc.mhc_pre "
            f"(aiter {aiter_releases.NORM_ARGS_SINCE}+) and imports mhc_fused_post_pre "
            f"({aiter_releases.FUSED_SINCE}+); "
            f"{_named('aiter', c.facts.aiter.version)} lacks them, so {c.ops_text('aiter')} raise at the first call."
        ),
        fix="Build aiter 0.1.16 or later: " + AITER_BUILD + "  (or pip install 'vllm>=0.30', which falls back)",
        refs=(PR + "52737", AITER),
        ops=lambda c: c.ops_on("aiter"),
    ),
    FindingSpec(
        id="aiter-api-fallback",
        severity="info",
        title="vLLM moved ops off aiter: the installed aiter lacks an API it probes for",
        summary="vLLM 0.30+ found no mhc_fused_post_pre, or no norm_weight/norm_eps on mhc_pre, and fell back.",
        when=_aiter_fallback_for_api,
        detail=lambda c: (
            f"{_named('aiter', c.facts.aiter.version)} lacks mhc_fused_post_pre (0.1.16+) or the norm "
            "arguments of mhc_pre (0.1.15+), so those ops run on tilelang or torch while the rest stays on aiter."
        ),
        fix="Build aiter 0.1.16 or later: " + AITER_BUILD,
        refs=(PR + "52737", AITER),
    ),
    FindingSpec(
        id="aiter-no-compiler",
        severity="warn",
        title="aiter must JIT-build its mHC module and no hipcc is found",
        summary="The aiter path is selected, no built module_mhc.so was found and hipcc is not found.",
        when=lambda c: (
            bool(c.ops_on("aiter"))
            and c.facts.aiter.genuine is True
            and c.facts.aiter.present is True
            and c.facts.aiter.module_mhc_so is None
            and c.facts.aiter.has_mhc_ops is not False
            and c.facts.hipcc.found is False
        ),
        detail=lambda c: (
            f"aiter builds module_mhc.so on the first mHC call ({c.ops_text('aiter')}); no built "
            "module was found ($AITER_JIT_DIR, aiter/jit/, ~/.aiter/jit) and hipcc is not found, so that build fails "
            "unless the module sits somewhere else."
        ),
        fix="export ROCM_PATH=/opt/rocm PATH=/opt/rocm/bin:$PATH  # or prebuild: python -c 'import aiter.ops.mhc'",
        refs=(AITER + "blob/main/aiter/jit/core.py",),
    ),
    FindingSpec(
        id="tilelang-missing",
        severity="fail",
        title="tilelang is required and cannot be imported",
        summary="The rules require tilelang (CUDA; ROCm in 0.20–0.21) and it is not installed or fails to import.",
        when=_tilelang_missing,
        detail=lambda c: (
            "vLLM's DeepSeek-V4 mHC ops on this platform have no path but tilelang, and tilelang is "
            + (
                "not installed."
                if c.facts.tilelang.present is False
                else f"installed but fails to import: {_import_error(c.facts.tilelang.import_error)}."
            )
        ),
        fix="pip install tilelang  # vLLM pins 0.1.12 from 0.27 (0.1.9 before)",
        refs=(PR + "43905", "https://github.com/tile-ai/tilelang"),
        ops=lambda c: c.used_ops(),
    ),
    FindingSpec(
        id="tilelang-import-broken",
        severity="fail",
        title="tilelang is selected but does not import",
        summary="A find_spec-only release (0.20–0.22, 0.28+) selects tilelang that fails to import.",
        when=_tilelang_selected_broken,
        detail=lambda c: (
            f"has_tilelang() only asks find_spec, so {_named('vLLM', c.vllm_version)} sends "
            f"{c.ops_text('tilelang')} to tilelang, whose import fails: "
            f"{c.facts.tilelang.import_error or 'see the tilelang.import probe'}."
        ),
        fix="python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang",
        refs=(PR + "51159", "https://github.com/vllm-project/vllm/issues/51162"),
        ops=lambda c: c.ops_on("tilelang"),
    ),
    FindingSpec(
        id="tilelang-import-ignored",
        severity="warn",
        title="tilelang is installed but fails to import, so vLLM ignores it",
        summary="A trial-import release (0.23–0.27) counts a broken tilelang as absent and falls back.",
        when=_tilelang_ignored_broken,
        detail=lambda c: (
            "has_tilelang() imports tilelang in this release; the import fails "
            f"({c.facts.tilelang.import_error or 'see the tilelang.import probe'}), so the mHC ops fall back."
        ),
        fix="python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang",
        refs=(PR + "44035",),
    ),
    FindingSpec(
        id="tilelang-wrong-arch",
        severity="fail",
        title="tilelang mHC kernels are selected on gfx942, where they compute wrong results",
        summary="A tilelang mHC kernel runs on gfx942 (releases before 0.24 do not exclude it).",
        when=lambda c: (
            c.facts.platform == "rocm" and bool(c.ops_on("tilelang")) and arch_has(c.facts, "gfx942") is True
        ),
        detail=lambda c: (
            f"On gfx942 the tilelang mHC path produces incorrect output (vLLM #45698); this release "
            f"still sends {c.ops_text('tilelang')} there. vLLM 0.24 stopped doing so (#45931)."
        ),
        fix="pip install -U 'vllm>=0.25'  # or remove tilelang: pip uninstall -y tilelang",
        refs=("https://github.com/vllm-project/vllm/issues/45698", PR + "45931"),
        ops=lambda c: c.ops_on("tilelang"),
    ),
    FindingSpec(
        id="tilelang-no-compiler",
        severity="fail",
        title="tilelang is selected but no compiler is found for its JIT",
        summary="A tilelang kernel runs and nvcc (CUDA) or hipcc (ROCm) is not found.",
        when=_compiler_missing,
        detail=lambda c: (
            f"tilelang compiles {c.ops_text('tilelang')} at first call with "
            f"{'nvcc' if c.facts.platform == 'cuda' else 'hipcc'}, which was not found (PATH, CUDA_HOME/ROCM_PATH, "
            "/usr/local/cuda, /opt/rocm)."
        ),
        # tilelang/env.py: "only nvidia-cuda-nvcc>=13.0 works"; the -cu12 wheel installs ptxas, not nvcc
        fix="CUDA: pip install 'nvidia-cuda-nvcc>=13' (or install the CUDA toolkit and set CUDA_HOME); "
        "ROCm: install ROCm's HIP SDK (hipcc) and export ROCM_PATH=/opt/rocm",
        refs=("https://github.com/tile-ai/tilelang",),
        ops=lambda c: c.ops_on("tilelang"),
    ),
    FindingSpec(
        id="deepgemm-prenorm-broken",
        severity="fail",
        title="DeepGEMM's tf32_hc_prenorm_gemm cannot run where vLLM calls it",
        summary="CUDA releases whose mhc_pre calls DeepGEMM's tf32_hc_prenorm_gemm with no tilelang fallback "
        "(0.20–0.21 always, 0.26+ the first layer's pre), on an arch DeepGEMM lacks (sm_90, sm_10x, sm_12x from "
        "0.24), or with no deep_gemm (standalone or vLLM's vendored copy), or one without tf32_hc_prenorm_gemm.",
        when=lambda c: deepgemm_problem(c) is not None,
        detail=lambda c: (
            f"vLLM {c.vllm_version or ''}'s mhc_pre calls DeepGEMM's tf32_hc_prenorm_gemm ("
            + (
                "with no tilelang fallback"
                if c.rules and c.rules.cuda_first_pre_deepgemm
                else "is_deep_gemm_supported()"
            )
            + f"), but {deepgemm_problem(c)}: the model fails at its first forward (the profile run at start-up)."
        ),
        fix="Run on sm_90/sm_100 (H100/H200/B200); where deep_gemm is the cause: pip uninstall -y deep_gemm  "
        "# vLLM then uses its vendored copy, which has tf32_hc_prenorm_gemm",
        fix_for=lambda c: _deepgemm_fix(deepgemm_problem(c) or ""),
        refs=(PR + "43905", "https://github.com/deepseek-ai/DeepGEMM/issues/317", ISSUE + "52732"),
        ops=lambda c: ["mhc_pre"] if "mhc_pre" in c.ops_on("tilelang") else [],
    ),
    FindingSpec(
        id="tilelang-hip-allreduce-offset",
        severity="fail",
        title="vLLM 0.29–0.30's tilelang mhc_pre with a folded RMSNorm reduces on threads TileLang's HIP AllReduce "
        "gets wrong",
        summary="vLLM 0.29–0.30 on a 64-wide-wavefront ROCm GPU (gfx9) folds the RMSNorm into tilelang's mhc_pre where "
        "aiter does not serve; the norm's sum runs on threads 32.. and TileLang's HIP AllReduce ignores that offset "
        "(vLLM 0.31.0 moved it to threads 0..63 on ROCm).",
        when=lambda c: bool(_hip_allreduce_ops(c)),
        detail=lambda c: (
            f"vLLM {c.vllm_version} runs {', '.join(_hip_allreduce_ops(c))} on tilelang with the RMSNorm folded in "
            f"(mhc_pre_big_fuse_with_norm_tilelang); on {c.facts.arch} a wavefront is 64 threads and the norm's sum "
            "runs on threads 32 and up, an offset TileLang's HIP AllReduce ignores, so the normalised layer input is "
            "wrong. vLLM 0.31.0 runs that reduction on threads 0..63 on ROCm. Read from the code (vLLM's own comment "
            "in 0.31.0); depends on the tilelang that compiles it, not measured here."
        ),
        fix="pip install -U 'vllm>=0.31'",
        refs=("https://github.com/vllm-project/vllm/blob/v0.31.0/vllm/model_executor/kernels/mhc/tilelang_kernels.py",),
        ops=_hip_allreduce_ops,
    ),
    FindingSpec(
        id="deepgemm-prenorm-b300-launch",
        severity="warn",
        title="DeepGEMM's sm100 tf32_hc_prenorm_gemm fails to launch on B300 (sm_103)",
        summary="vLLM 0.23+ on a B300 (sm_103) computes mhc_pre's prenorm GEMM with DeepGEMM, whose "
        "sm100_tf32_hc_prenorm_gemm launch failed there at start-up (vLLM #46796, open: invalid argument on CUDA 13, "
        "invalid configuration on 12.9).",
        when=lambda c: (
            c.facts.platform == "cuda"
            and (c.facts.arch or "").startswith("sm_103")
            and bool(known.within(c.vllm_version, ">=0.23.0"))
            and "mhc_pre" in c.ops_on("tilelang")
            and (bool(c.rules and c.rules.cuda_first_pre_deepgemm) or deepgemm_used(c) is not False)
        ),
        detail=lambda c: (
            f"vLLM {c.vllm_version} runs mhc_pre's prenorm GEMM on DeepGEMM here; on an 8x B300 node vLLM 0.23.0 "
            "crashed in the profile run when sm100_tf32_hc_prenorm_gemm launched (cudaErrorInvalidValue with CUDA 13, "
            "cudaErrorInvalidConfiguration with 12.9), while 0.20.1 served the same model (vLLM #46796, open; not "
            "confirmed for later releases)."
        ),
        fix="If it fails at start-up: VLLM_USE_DEEP_GEMM=0 on vLLM 0.22–0.25 (tilelang's GEMM; 0.26+ still call "
        "DeepGEMM in the first layer), or vLLM 0.20.1 as reported in vLLM #46796",
        refs=(ISSUE + "46796",),
        ops=lambda c: ["mhc_pre"],
    ),
    FindingSpec(
        id="tilelang-prenorm-block-m",
        severity=lambda c: "fail" if _block_m_measured_wrong(c) else "warn",
        title="vLLM 0.22–0.26's block-M prenorm GEMM (1024+ tokens) is wrong under tilelang 0.1.9",
        summary="vLLM 0.22–0.26 runs mhc_pre's prenorm GEMM on tilelang (no DeepGEMM: ROCm, or CUDA where "
        "is_deep_gemm_supported() is False); from 1024 tokens its hc_prenorm_gemm_block_m_tilelang reduces into a "
        "T.alloc_var that tilelang 0.1.9 (vLLM's pin) lowers wrong: measured wrong on an H200 (fail); warn for "
        "tilelang 0.1.10–0.1.11 or off CUDA (not measured); measured right under tilelang 0.1.12 and 0.1.15.",
        when=lambda c: bool(_block_m_ops(c)),
        detail=_block_m_text,
        fix="pip install -U 'vllm>=0.27'  # or tilelang>=0.1.12 (measured right with 0.26's kernel, outside "
        "vLLM's pin); mhcdoctor verify --stress checks 1024+ tokens",
        refs=(PR + "43905",),
        ops=lambda c: _block_m_ops(c),
        from_tokens=1024,  # kernels/mhc/tilelang.py: x.shape[0] >= 1024 takes the block-M GEMM
    ),
    FindingSpec(
        id="tilelang-fused-post-pre-slow",
        severity="warn",
        title="vLLM 0.33–0.34's fused post+pre is 5x slower per decode call under a tilelang newer than its pin",
        summary="vLLM 0.33–0.34 on CUDA runs the fused post+pre on tilelang, and the installed tilelang is newer than "
        "the 0.1.12 it pins: measured on an H200, 0.0480 ms per 1-token call under 0.1.15 against 0.0091 ms under "
        "0.1.12 (slow, not wrong).",
        when=lambda c: _fused_slow_tilelang(c) is not None,
        detail=lambda c: _fused_slow_text(c),
        fix="pip install 'tilelang==0.1.12'  # the tilelang vLLM 0.33–0.34 pin",
        fix_for=lambda c: (
            f"pip install 'tilelang=={known.vllm_tilelang_pin(c.vllm_version)}'  # vLLM {c.vllm_version}'s pin"
        ),
        refs=("https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/model_executor/kernels/mhc/tilelang.py",),
        ops=lambda c: ["mhc_fused_post_pre"],
    ),
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
    FindingSpec(
        id="tilelang-tvm-ffi-mismatch",
        severity=lambda c: "fail" if _tilelang_loaded(c) else "warn",
        title="tilelang and apache-tvm-ffi are a known-bad pair",
        summary="The installed tilelang and apache-tvm-ffi (read from their metadata, also with --fast) form a "
        "pair known to break: tilelang 0.1.10–0.1.12 with apache-tvm-ffi 0.1.12+ aborts at import (0.1.12 measured); "
        "tilelang 0.1.8–0.1.9 with 0.1.10+ fails to compile kernels. Fail where vLLM imports tilelang.",
        when=lambda c: _tvm_ffi_pair(c) is not None,
        detail=_tvm_ffi_text,
        fix="pip install 'apache-tvm-ffi<0.1.12'",
        fix_for=lambda c: (
            (p.pin if (p := _tvm_ffi_pair(c)) else "")
            + "  # or a tilelang that registers it once (0.1.13+, tilelang #2795): pip install -U tilelang"
        ),
        refs=(
            TILELANG_ISSUES + "2367",
            TILELANG + "pull/2795",
            TILELANG_ISSUES + "2040",
            "https://github.com/kvcache-ai/ktransformers/issues/2045",
            PR + "45169",
        ),  # fmt: skip
        ops=lambda c: c.ops_on("tilelang"),
    ),
    FindingSpec(
        id="tilelang-pdl-unsupported",
        severity="fail",
        title="vLLM's tilelang mHC kernels ask for PDL, which ROCm lacks",
        summary="vLLM 0.20–0.21 on ROCm sends an op to its tilelang kernels, which call T.pdl_sync/T.pdl_trigger "
        "unconditionally: tilelang raises 'PDL is not supported' when it compiles them (vLLM #42876).",
        when=_pdl_on_rocm,
        detail=lambda c: (
            f"vLLM {c.vllm_version or ''} runs {c.ops_text('tilelang')} on its tilelang kernels, which use "
            "programmatic dependent launch (a CUDA sm_90 feature); on ROCm tilelang refuses to compile them "
            "('PDL is not supported') and the server fails at start-up. vLLM #43679 (0.22) made PDL CUDA-only."
        ),
        fix="pip install -U 'vllm>=0.25'  # ROCm runs aiter or tilelang without PDL from 0.22",
        refs=(ISSUE + "42876", PR + "43679"),
        ops=lambda c: c.ops_on("tilelang"),
    ),
    _aiter_bug_spec(
        aiter_releases.INVALID_CONFIG,
        "warn",
        id="aiter-mhc-pre-invalid-config",
        title="aiter's mhc_pre fails with 'invalid configuration argument' on MI300X",
        summary="aiter 0.1.18+ (the mhc code of v0.1.19, where it was reported, and later) runs mhc_pre on gfx942: "
        "the profile run dies with 'CUDA error: invalid configuration argument' (aiter #4633, open).",
        effect="on MI300X (gfx942) every tensor-parallel worker crashed in the profile run at start-up with 'CUDA "
        "error: invalid configuration argument' in aiter/ops/mhc.py mhc_pre (aiter #4633, reported on v0.1.19 and "
        "main, ROCm 7.1.1; v0.1.18 ships the same mHC code). Not fixed in any release yet.",
        fix="Workaround from aiter #4633: set HAS_AITER_MHC = False in vllm/model_executor/layers/mhc.py (vLLM then "
        "runs mhc_pre on torch on gfx942); or try aiter v0.1.17, the last mHC code before #4115 (not confirmed to "
        "avoid it): pip uninstall -y aiter amd-aiter && git clone --recursive -b v0.1.17 "
        "https://github.com/ROCm/aiter && cd aiter && pip install --no-build-isolation .",
        refs=(AITER_ISSUES + "4633", AITER + "pull/4115"),
    ),
    _aiter_bug_spec(
        aiter_releases.BIG_FUSE_RMS,
        "fail",
        id="aiter-rocm-compiler",  # the contract's id; issue 23: wrong results are fail, on any ROCm
        title="aiter 0.1.15.x: mhc_pre's RMS reduction reads unset lanes (wrong results; aiter #3417)",
        summary="aiter 0.1.15rc0–0.1.15.post3 runs mhc_pre (aiter #3396 without the fix #3417, first in 0.1.16).",
        effect="mhc_pre_big_fuse (and its fused-RMSNorm twin) reduce the RMS partial sums across lanes that the "
        "guard added by aiter #3396 left unset, so the RMS factor is wrong at every token count (GSM8K 1.29% measured "
        "with ROCm 7.2.3's compiler; the code is wrong under any compiler). Fixed by #3417 (1be6aee) in 0.1.16.",
        fix="Build aiter 0.1.16 or later: " + AITER_BUILD,
        refs=(AITER + "pull/3417", AITER + "commit/1be6aee67b7cf9e0e90daccc700f763043a99f5d", AITER + "pull/3396"),
    ),
    _aiter_bug_spec(
        aiter_releases.BIG_FUSE_SYNC,
        "fail",
        id="aiter-big-fuse-sync",
        title="aiter before 0.1.14: mhc_pre_big_fuse reads an LDS tile before every wave finished writing it",
        summary="aiter 0.1.11–0.1.13.post1 runs mhc_pre (aiter #2978, fixed in 0.1.14-rc0).",
        effect="mhc_pre_big_fuse's double-buffered residual loop has its barrier before the loop instead of in it, "
        "so a wave can read a tile another wave is still loading: wrong layer inputs where the loop runs more than "
        "once (hidden sizes above one residual block). Fixed by aiter #2978 (a858741) in 0.1.14-rc0.",
        fix="Build aiter v0.1.14 or later from source (PyPI's amd-aiter is stale): " + AITER_BUILD,
        refs=(AITER + "pull/2978", AITER + "commit/a85874151dc9a9e607598b8b73f83c6fab954a6b"),
    ),
    _aiter_bug_spec(
        aiter_releases.POST_RACE,
        "fail",
        id="aiter-mhc-post-race",
        title="aiter before 0.1.14: mhc_post prefetches into LDS without a barrier (wrong results)",
        summary="aiter 0.1.12–0.1.13.post1 runs mhc_post (aiter #2963, fixed in 0.1.14-rc0).",
        effect="mhc_post loads the next residual tile into the LDS buffer other waves may still read, with no barrier "
        "between (aiter #2963: 'Fix mhc_post accuracy'); its outputs are wrong. Fixed in 0.1.14-rc0 (9141aa9).",
        fix="Build aiter v0.1.14 or later from source (PyPI's amd-aiter is stale): " + AITER_BUILD,
        refs=(AITER + "pull/2963", AITER + "commit/9141aa9301b960daea99fa9303f39aa28b426284"),
    ),
    FindingSpec(
        id="torch-fallback",
        severity="warn",
        title="The slow torch reference path is selected",
        summary="An op the model runs falls back to the torch reference (about 15x slower than tilelang).",
        when=lambda c: bool(_torch_fallbacks(c)),
        detail=lambda c: (
            f"{', '.join(_torch_fallbacks(c))} run as eager torch: correct, but about 15x slower than the "
            "kernels (1.4 ms vs 0.12 ms per pre+post at one token, H=7168)."
        ),
        fix=TORCH_FALLBACK_FIX,
        refs=(PR + "43679", PR + "43950"),
        fix_for=_torch_fallback_fix,
        ops=_torch_fallbacks,
    ),
    FindingSpec(
        id="model-v41-unsupported",
        severity="fail",
        title="This vLLM has no DeepSeek-V4.1 model",
        summary="The model is DeepSeek-V4.1 and the vLLM release is older than 0.30.0, where deepseek_v41 arrives.",
        when=lambda c: _is_v41(c.model) and c.rules is not None and Version(c.rules.first) < V41_SINCE,
        detail=lambda c: (
            f"vLLM {c.vllm_version} registers no DeepseekV41ForCausalLM (models/deepseek_v41 first "
            "ships in 0.30.0), so the checkpoint does not load."
        ),
        fix="pip install -U 'vllm>=0.30'",
        refs=(PR + "56503",),
    ),
    FindingSpec(
        id="model-v41-approximate",
        severity="info",
        title="DeepSeek-V4.1 runs through its own model in vLLM",
        summary="The model is DeepSeek-V4.1: vLLM 0.30+ serves it with models/deepseek_v41 (mhc_pre_delayed, no "
        "learned hc_head); the trace follows the V4 model's gates.",
        when=lambda c: _is_v41(c.model) and c.rules is not None and Version(c.rules.first) >= V41_SINCE,
        detail=lambda c: (
            "vLLM serves DeepSeek-V4.1 with models/deepseek_v41, whose delayed pre op tests the same "
            "HAS_AITER_MHC / HAS_TILELANG_MHC gates but folds no RMSNorm and folds mhc_post into the next pre; this "
            "trace follows the V4 model with the same hidden size."
        ),
        fix="mhcdoctor explain --hidden 5120  # the V4 model at V4.1-Flash's hidden size",
        refs=(PR + "56503", PR + "56513"),
    ),
    FindingSpec(
        id="multi-gpu-mixed-arch",
        severity="warn",
        title="GPUs of different architectures on one host",
        summary="The host's GPUs are not all one architecture (e.g. gfx942 with gfx90a, or AMD with NVIDIA).",
        when=_mixed_arch,
        detail=lambda c: (
            f"This host has {', '.join(_archs(c))}. vLLM picks each mHC path once, from one GPU's arch (on ROCm "
            "amdsmi's first GPU, whatever HIP_VISIBLE_DEVICES says), and runs it on every rank: a tensor-parallel "
            f"group that spans archs runs kernels chosen for {c.facts.arch or 'GPU 0'} on the others."
        ),
        fix="Give vLLM GPUs of one arch only: HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES, or a container given "
        "only those devices (so amdsmi's first GPU is one of them too)",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/platforms/rocm.py",),  # _get_gcn_arch: handles[0]
    ),
    FindingSpec(
        id="multi-gpu-driver-mismatch",
        severity="warn",
        title="GPUs of one vendor report different driver versions",
        summary="Two GPUs of the same vendor report different driver versions (a half-finished driver update).",
        when=lambda c: bool(_driver_mismatch(c)),
        detail=lambda c: (
            f"Drivers: {'; '.join(_driver_mismatch(c))}. One host loads one kernel driver per vendor; differing "
            "versions mean the sources disagree, typically a driver update without a reboot (the loaded module and "
            "the user-space libraries differ), which breaks GPU initialisation or makes ranks behave differently."
        ),
        fix="Finish the driver update and reboot, so every GPU reports the same driver; then run mhcdoctor check again",
        refs=("https://github.com/wookayin/gpustat/issues/147",),  # NVML's LibRmVersionMismatch after an update
    ),
)

IDS: tuple[str, ...] = tuple(spec.id for spec in CATALOGUE)
