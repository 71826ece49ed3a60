"""Findings about AMD's aiter: the package, its API, the shapes it accepts, and known bugs in its mHC kernels."""

from __future__ import annotations

import re

from mhcdoctor.documents.vocabulary import Severity
from mhcdoctor.knowledge import aiter_code, aiter_releases, bugs
from mhcdoctor.knowledge.bugs import KnownBug
from mhcdoctor.rules.dispatch import (
    AITER_ARCHS,
    aiter_feature,
    arch_has,
)
from mhcdoctor.rules.findings.base import (
    AITER,
    AITER_BUILD,
    FindingContext,
    FindingSpec,
    Found,
    _named,
    bug_spec,
)
from mhcdoctor.rules.releases import PR


def _impostor(ctx: FindingContext) -> bool:
    return ctx.facts.aiter.present is True and ctx.facts.aiter.genuine is False


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


def _bug_ops(ctx: FindingContext, bug: KnownBug) -> list[str]:
    """The ops on AMD's aiter that run a kernel `bug` is in, on the archs where it shows."""
    if ctx.facts.aiter.genuine is False or ctx.facts.aiter.has_mhc_ops is False:
        return []
    if bug.archs and arch_has(ctx.facts, *bug.archs) is not True:
        return []
    kernels = set(bug.ops) | ({"mhc_fused_post_pre"} if "mhc_pre" in bug.ops else set())
    return [op for op in ctx.ops_on("aiter") if op in kernels]


def _aiter_bug(ctx: FindingContext, bug: KnownBug, fix: aiter_code.CodeFix) -> tuple[list[str], str]:
    """The ops on AMD's aiter that run a kernel with `bug` (`fix` told by the installed code, else by its version),
    and how that was told."""
    state, told = aiter_code.fix_state(ctx.facts.aiter, fix.id)
    return (_bug_ops(ctx, bug) if state == "absent" else []), told


def _told(c: FindingContext, told: str | None, source: str = "mhc_kernels.cu") -> str:
    """How a fix's state was told, for a finding's detail: the version only where no `source` was read."""
    if not told:
        return ""
    if told.startswith("by version"):
        return f" Judged by the version label ({told.removeprefix('by version: ')}): no {source} was read."
    if told.startswith(("stated", "by git ancestry")):
        return f" As stated: {told}."
    built = c.facts.aiter.module_mhc_so
    # aiter loads a built module by name only: what it was compiled from is not in it to read
    unread = f" aiter loads the built {built}, whose source cannot be read back from it." if built else ""
    return f" Told by the installed code: {told}.{unread}"


def _aiter_bug_spec(bug: KnownBug) -> FindingSpec:
    fix = bug.content
    if fix is None:  # a programming error: found when the catalogue is built
        raise ValueError(f"{bug.id}: an aiter kernel bug is told by its content signature (knowledge/aiter_code.py)")

    def decide(c: FindingContext) -> Found | None:
        ops, told = _aiter_bug(c, bug, fix)
        if not ops:
            return None
        detail = f"aiter {c.facts.aiter.version} runs {', '.join(ops)} here: {bug.explanation}{_told(c, told)}"
        return Found(detail, ops)

    return bug_spec(bug, decide)


def _decide_impostor(c: FindingContext) -> Found | None:
    if not _impostor(c):
        return None
    ops = c.ops_on("aiter")
    who = _named(c.facts.aiter.distribution or "another distribution", c.facts.aiter.version)
    severity: Severity = "fail" if ops else "warn" if c.facts.platform == "rocm" else "info"
    calls = f"calls aiter for {', '.join(ops)} and fails there." if ops else "may select it."
    detail = f"`aiter` comes from {who}, not amd-aiter. vLLM tests only find_spec('aiter'), so it {calls}"
    if c.facts.platform != "rocm":  # AMD's aiter runs on AMD GPUs only: here the fix is to remove the other one
        dist = c.facts.aiter.distribution or "aiter"
        return Found(
            detail,
            ops,
            fix=f"pip uninstall {dist}  # not AMD's aiter, which this machine cannot use",
            severity=severity,
        )
    return Found(detail, ops, severity=severity)


def _decide_not_importable(c: FindingContext) -> Found | None:
    ops, a = c.ops_on("aiter"), c.facts.aiter
    if not ops or a.genuine is False or a.imports is not False or _aiter_import_breaks_vllm(c):
        return None
    detail = (
        f"vLLM calls aiter for {', '.join(ops)}, but `import aiter` fails: "
        f"{a.import_error or 'see the aiter.import probe'}."
    )
    return Found(detail, ops)


def _decide_no_mhc(c: FindingContext) -> Found | None:
    if not _aiter_no_mhc(c):
        return None
    ops = c.ops_on("aiter")
    detail = (
        f"aiter {c.facts.aiter.version or '(version unknown)'} has no aiter/ops/mhc.py (aiter's mHC ops "
        f"arrived in {aiter_releases.MHC_OPS_SINCE}). {_named('vLLM', c.vllm_version)} tests only "
        f"find_spec('aiter') and the arch, so it sends {', '.join(ops)} to aiter; `from aiter.ops.mhc "
        "import ...` then raises ModuleNotFoundError at the first forward."
    )
    if c.rules is not None and c.rules.aiter_probes_norm:
        detail += (
            " Its import-time probes make only mhc_pre with a folded RMSNorm and the fused op fall back; "
            "mhc_post is sent to aiter unprobed."
        )
    return Found(detail, ops)


def _decide_import_breaks_vllm(c: FindingContext) -> Found | None:
    if not _aiter_import_breaks_vllm(c):
        return None
    error = c.facts.aiter.import_error
    detail = (
        f"`import aiter` raises {error}. {_named('vLLM', c.vllm_version)}'s layers/mhc.py "
        "calls _aiter_mhc_op_accepts_norm() when it is imported, and that catches only AttributeError, "
        f"ImportError, TypeError and ValueError, so the {escaping_exception(error)} "
        "escapes: layers/mhc.py does not import and no mHC op runs, whatever path the trace shows."
    )
    return Found(detail, c.used_ops())


def _decide_sqrsum_race(c: FindingContext) -> Found | None:
    if c.facts.aiter.sqrsum_fix != "absent" or not _genuine_on_aiter(c):
        return None
    ops = c.sqrsum_ops_on_aiter()
    detail = (
        f"{_named('aiter', c.facts.aiter.version)} stores row sums from lanes 16–63 into other warps' "
        f"rows, so the RMS factor is wrong once more than 16 tokens run ({', '.join(ops)} on aiter). "
        "Fixed by aiter #3033 (commit b639cb6), in v0.1.14-rc0 and later; vLLM never checks the version."
        + _told(c, c.facts.aiter.sqrsum_fix_evidence)
    )
    return Found(detail, ops)


def _decide_sqrsum_unknown(c: FindingContext) -> Found | None:
    if c.facts.aiter.sqrsum_fix != "unknown" or not _genuine_on_aiter(c):
        return None
    detail = (
        f"aiter {c.facts.aiter.version or '(version unknown)'} serves {c.ops_text('aiter')}, but "
        "its mhc_kernels.cu was not found to read, and source builds carry versions that do not say. "
        "`mhcdoctor verify --stress` runs > 16 rows and shows the race if it is there."
    )
    return Found(detail, c.sqrsum_ops_on_aiter())


def _decide_fixes_unknown(c: FindingContext) -> Found | None:
    """Fixes (besides sqrsum's) whose state neither the installed code nor the version tells, on ops aiter runs."""
    unknown: list[str] = []
    tolds: list[str] = []
    ops: list[str] = []
    for bug in bugs.BUGS:
        if bug.content is None or bug.content is aiter_code.SQRSUM or bug.fixed_by is None:
            continue  # not an aiter kernel fix (sqrsum's has its own finding; #4633 has no fix)
        if bug.content.file != aiter_code.KERNELS:
            continue  # an API of aiter/ops/mhc.py, which vLLM calls only for some models: its own finding decides
        state, told = aiter_code.fix_state(c.facts.aiter, bug.content.id)
        bug_ops = _bug_ops(c, bug) if state == "unknown" else []
        if bug_ops:
            unknown.append(f"#{bug.fixed_by} ({', '.join(bug_ops)})")
            tolds += [told] if told not in tolds else []
            ops += [op for op in bug_ops if op not in ops]
    if not unknown:
        return None
    detail = (
        f"aiter {c.facts.aiter.version or '(version unknown)'} serves {', '.join(ops)}, and neither its code nor its "
        f"version tells whether it holds aiter {', '.join(unknown)}: {'; '.join(tolds)}. "
        "`mhcdoctor verify --stress` runs those ops."
    )
    return Found(detail, ops)


def _decide_hidden_unsupported(c: FindingContext) -> Found | None:
    ops = c.ops_on("aiter")
    problem = _aiter_shape_problem(c) if ops else None
    if problem is None:
        return None
    return Found(f"{problem}; vLLM sends {', '.join(ops)} there anyway.", ops)


def _decide_api_too_old(c: FindingContext) -> Found | None:
    if not _aiter_api_too_old(c):
        return None
    ops = c.ops_on("aiter")
    detail = (
        f"vLLM {c.vllm_version or '0.29'} passes norm_weight/norm_eps to aiter.ops.mhc.mhc_pre "
        f"(aiter {aiter_releases.NORM_ARGS_SINCE}+) and imports mhc_fused_post_pre "
        f"({aiter_releases.FUSED_SINCE}+); "
        f"{_named('aiter', c.facts.aiter.version)} lacks them, so {', '.join(ops)} raise at the first call."
    )
    return Found(detail, ops)


def _decide_api_fallback(c: FindingContext) -> Found | None:
    if not _aiter_fallback_for_api(c):
        return None
    detail = (
        f"{_named('aiter', c.facts.aiter.version)} lacks mhc_fused_post_pre (0.1.16+) or the norm "
        "arguments of mhc_pre (0.1.15+), so those ops run on tilelang or torch while the rest stays on aiter."
    )
    return Found(detail)


def _decide_no_compiler(c: FindingContext) -> Found | None:
    ops, a = c.ops_on("aiter"), c.facts.aiter
    if not ops or a.genuine is not True or a.present is not True or a.module_mhc_so is not None:
        return None
    if a.has_mhc_ops is False or c.facts.hipcc.found is not False:
        return None
    detail = (
        f"aiter builds module_mhc.so on the first mHC call ({', '.join(ops)}); no built "
        "module was found ($AITER_JIT_DIR, aiter/jit/, ~/.aiter/jit) and hipcc is not found, so that build fails "
        "unless the module sits somewhere else."
    )
    return Found(detail)


SETUP: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="aiter-impostor",
        severity=None,
        title="The installed `aiter` is not AMD's aiter",
        summary="A package importable as `aiter` is installed but is not AMD's (PyPI's async-iterator `aiter`); "
        "fail when vLLM selects the aiter path (its find_spec accepts any `aiter`), warn on ROCm otherwise.",
        decide=_decide_impostor,
        fix=AITER_BUILD,
        refs=("https://pypi.org/project/aiter/", AITER, PR + "43950"),
    ),
    FindingSpec(
        id="aiter-not-importable",
        severity="fail",
        title="aiter is selected but does not import",
        summary="vLLM selects aiter (find_spec) but importing AMD's aiter fails.",
        decide=_decide_not_importable,
        fix="python -c 'import aiter'  # read the error; then rebuild: " + AITER_BUILD,
        refs=(AITER, PR + "43950"),
    ),
    FindingSpec(
        id="aiter-no-mhc",
        severity="fail",
        title="vLLM calls aiter's mHC ops, and the installed aiter has none",
        summary="vLLM sends an op to aiter (find_spec finds AMD's aiter) but that aiter has no aiter/ops/mhc.py "
        f"(before {aiter_releases.MHC_OPS_SINCE}, e.g. PyPI's amd-aiter 0.1.7.post2.dev18): the first forward "
        "fails with ModuleNotFoundError.",
        decide=_decide_no_mhc,
        fix=AITER_BUILD + "  # or drop it (vLLM then takes tilelang or torch): pip uninstall -y amd-aiter",
        refs=(AITER + "pull/2136", AITER + "blob/v0.1.11/aiter/ops/mhc.py", PR + "43950", PR + "52737"),
    ),
    FindingSpec(
        id="aiter-import-breaks-vllm",
        severity="fail",
        title="Importing aiter raises an error vLLM's aiter probe does not catch: layers/mhc.py fails to import",
        summary="vLLM 0.30+ on a CDNA3+ GPU probes aiter.ops.mhc at import, catching only AttributeError, "
        "ImportError, TypeError and ValueError; an aiter whose import raises anything else (RuntimeError from its "
        "chip-info helpers) stops the model from being built.",
        decide=_decide_import_breaks_vllm,
        fix="python -c 'import aiter'  # read the error and fix it, or rebuild: " + AITER_BUILD,
        refs=(PR + "52737", AITER + "blob/main/aiter/jit/utils/chip_info.py"),
    ),
    bug_spec(bugs.SQRSUM_RACE, _decide_sqrsum_race),
    FindingSpec(
        id="aiter-sqrsum-unknown",
        severity="warn",
        title="Can't tell whether aiter has the sqrsum race fix",
        summary="The aiter path runs mhc_pre and the fix can be established neither way.",
        decide=_decide_sqrsum_unknown,
        fix="mhcdoctor verify --stress",
        refs=(AITER + "pull/3033", AITER + "commit/b639cb63bcac4672dce33a731fad042a65cb3649"),
    ),
    FindingSpec(
        id="aiter-hidden-unsupported",
        severity="fail",
        title="aiter's mHC kernels reject this model's shape",
        summary="vLLM sends an op to aiter (its gate is hidden % 256 and, from 0.29, hc_mult == 4), but aiter's "
        "kernels reject the hidden size or hc_mult.",
        decide=_decide_hidden_unsupported,
        fix="Use a model with hc_mult 4 and hidden size >= 1024 (2048 off gfx942), or an older vLLM path: "
        "mhcdoctor explain --aiter none",
        refs=(AITER + "blob/v0.1.14/csrc/kernels/mhc_kernels.cu", PR + "52737"),
    ),
    bug_spec(bugs.API_TOO_OLD, _decide_api_too_old),
    FindingSpec(
        id="aiter-api-fallback",
        severity="info",
        title="vLLM moved ops off aiter: the installed aiter lacks an API it probes for",
        summary="vLLM 0.30+ found no mhc_fused_post_pre, or no norm_weight/norm_eps on mhc_pre, and fell back.",
        decide=_decide_api_fallback,
        fix="Build aiter 0.1.16 or later: " + AITER_BUILD,
        refs=(PR + "52737", AITER),
    ),
    FindingSpec(
        id="aiter-no-compiler",
        severity="warn",
        title="aiter must JIT-build its mHC module and no hipcc is found",
        summary="The aiter path is selected, no built module_mhc.so was found and hipcc is not found.",
        decide=_decide_no_compiler,
        fix="export ROCM_PATH=/opt/rocm PATH=/opt/rocm/bin:$PATH  # or prebuild: python -c 'import aiter.ops.mhc'",
        refs=(AITER + "blob/main/aiter/jit/core.py",),
    ),
)


BUGS: tuple[FindingSpec, ...] = (
    _aiter_bug_spec(bugs.INVALID_CONFIG),
    _aiter_bug_spec(bugs.BIG_FUSE_RMS),
    _aiter_bug_spec(bugs.BIG_FUSE_SYNC),
    _aiter_bug_spec(bugs.POST_RACE),
    FindingSpec(
        id="aiter-fix-unknown",
        severity="warn",
        title="Can't tell whether aiter has the fixes of its mHC kernels",
        summary="The aiter path runs an op whose kernel had a bug (aiter #2978, #2963, #3417), and neither the "
        "installed mhc_kernels.cu (none, or code of no known form) nor the version tells whether the fix is there.",
        decide=_decide_fixes_unknown,
        fix="mhcdoctor verify --stress  # or state it: mhcdoctor explain --aiter-fix big-fuse-sync=present",
        refs=(AITER + "pull/2978", AITER + "pull/2963", AITER + "pull/3417"),
    ),
)
