"""The findings' shared vocabulary: the context a finding reads, the spec it is declared with, shared helpers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from mhcdoctor.decision import Finding
from mhcdoctor.documents.vocabulary import Severity
from mhcdoctor.facts import Facts
from mhcdoctor.knowledge import versions
from mhcdoctor.knowledge.bugs import KnownBug
from mhcdoctor.knowledge.evidence import Report
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules.dispatch import (
    Dispatch,
    arch_has,
    deepgemm_supported,
)
from mhcdoctor.rules.releases import RuleSet

AITER = "https://github.com/ROCm/aiter/"
TILELANG = "https://github.com/tile-ai/tilelang/"
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
    code_release: str | None = None  # the release whose mHC files are installed, where they are one release's

    @property
    def release(self) -> str | None:
        """The release whose knowledge applies: the one whose mHC code is installed, else the version."""
        return self.code_release or self.vllm_version

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


@dataclass(frozen=True)
class Found:
    """What a finding says in this case: decided and explained by one function, which runs its helpers once."""

    detail: str
    ops: list[str] = field(default_factory=list)  # the ops it is about (their rows are marked by it)
    fix: str | None = None  # the fix for this case; None: the spec's usual `fix`
    severity: Severity | None = None  # None: the spec's severity


@dataclass(frozen=True)
class FindingSpec:
    """A finding's published data (id, severity, title, summary, fix, refs) and the one function that decides it:
    `decide` returns a Found (detail, ops, this case's fix and severity) where the finding holds, None elsewhere."""

    id: str
    severity: Severity | None  # None: each Found says (the docs pages show the range)
    title: str
    fix: str  # the usual fix (docs pages and log findings show it)
    refs: tuple[str, ...]
    summary: str  # one line for docs/findings.md: when it fires
    decide: Callable[[FindingContext], Found | None]
    from_tokens: int | None = None  # it shows only in calls of at least this many tokens

    def find(self, ctx: FindingContext) -> Finding | None:
        """The finding in this context, or None where it does not hold."""
        found = self.decide(ctx)
        if found is None:
            return None
        severity = found.severity or self.severity
        assert severity is not None, f"{self.id}: a spec without a severity gives one in each Found"
        fix = found.fix if found.fix is not None else self.fix
        return Finding(self.id, severity, self.title, found.detail, fix, list(self.refs), found.ops, self.from_tokens)


def bug_spec(bug: KnownBug, decide: Callable[[FindingContext], Found | None]) -> FindingSpec:
    """The finding a known bug raises: its published data from the record, its decision from `decide`; a bug backed
    by a report alone is at most a warning and says what is not known, whatever `decide` says."""
    first = bug.tokens[0]
    reports = [e for e in bug.evidence if isinstance(e, Report)]

    def proven(c: FindingContext) -> Found | None:
        found = decide(c)
        if found is None or bug.proof != "report" or not reports:
            return found
        detail = f"{found.detail} Only reported ({reports[0].url}), neither measured nor read in code: "
        severity = found.severity or bug.severity
        return dataclasses.replace(
            found, detail=detail + reports[0].not_known + ".", severity="warn" if severity == "fail" else severity
        )

    return FindingSpec(
        id=bug.id,
        severity=capped_severity(bug) if bug.severity is not None else None,
        title=bug.title,
        fix=bug.fix,
        refs=bug.refs,
        summary=bug.summary,
        decide=proven,
        from_tokens=first if first > 1 else None,
    )


def _named(name: str, version: str | None) -> str:
    """`vLLM 0.34.0`, or `vLLM` alone when the version is unknown (never a double space)."""
    return f"{name} {version}" if version else name


def _import_error(error: str | None) -> str:
    return error or "see the import probe's evidence"


def _vllm_platform(ctx: FindingContext) -> str | None:
    return ctx.dispatch.platform if ctx.dispatch is not None else None


def deepgemm_used(ctx: FindingContext) -> bool | None:
    """Whether vLLM computes the prenorm GEMM with DeepGEMM here (is_deep_gemm_supported(); None: unknown)."""
    if ctx.facts.platform != "cuda" or ctx.rules is None:
        return False
    return deepgemm_supported(ctx.rules, ctx.facts, ctx.release)[0]


# vLLM's build per platform, as the fixes name it (https://docs.vllm.ai/en/latest/getting_started/installation/):
# PyPI's wheel is the CUDA build; CPU, ROCm and XPU have builds of their own.
_VLLM_BUILDS = {
    "cuda": "vLLM's CUDA build (pip install vllm)",
    "cpu": "vLLM's CPU build (0.30+, e.g. vllm-0.34.0+cpu from vLLM's releases; PyPI's vllm is the CUDA build)",
    "rocm": "vLLM's ROCm build (AMD's vLLM image or a +rocm wheel)",
    "xpu": "vLLM's XPU build",
}


def _library_version(ctx: FindingContext, library: str) -> str | None:
    """The installed version of the library whose code carries a bug (None: unknown, or not a package)."""
    f = ctx.facts
    return {
        "amd-aiter": f.aiter.version,
        "tilelang": f.tilelang.version,
        "apache-tvm-ffi": f.tvm_ffi.version,
        "vllm": ctx.release,
        "deep_gemm": f.deepgemm.version,
    }.get(library)


def capped_severity(bug: KnownBug) -> Severity:
    """The severity a bug's evidence allows: a report alone never fails (a fail needs a measurement or the code)."""
    worst = bug.severity or bug.worst
    return "warn" if worst == "fail" and bug.proof == "report" else worst


def generic_decide(bug: KnownBug) -> Callable[[FindingContext], Found | None]:
    """The decision a record gives where rules/findings/ has none: the installed `library` version is in the record's
    `affected` range, on its platforms, archs and shapes, and the model runs one of its ops on its path."""

    def decide(c: FindingContext) -> Found | None:
        version = _library_version(c, bug.library)
        if bug.affected is None or versions.within(version, bug.affected) is not True:
            return None
        if bug.platforms and c.facts.platform not in bug.platforms:
            return None
        if bug.archs and arch_has(c.facts, *bug.archs) is not True:
            return None
        if not bug.fits(c.model.hidden_size, c.model.hc_mult):
            return None
        on_path = c.used_ops() if bug.path == "any" else c.ops_on(bug.path)
        ops = [op for op in on_path if op in bug.ops]
        if not ops:
            return None
        detail = f"{bug.library} {version} runs {', '.join(ops)} here: {bug.explanation or bug.summary}"
        return Found(detail, ops, severity=bug.severity or bug.worst)

    return decide


def generic_spec(bug: KnownBug) -> FindingSpec:
    """The finding of a record that rules/findings/ does not decide by hand."""
    return bug_spec(bug, generic_decide(bug))
