"""The findings catalogue: what will go wrong. Each finding's id, severity, title, summary, fix and references are
data; one function per finding (`FindingSpec.decide`) decides whether it holds and explains it (detail, ops, this
case's fix and severity) at once.

Each function reads the facts and the dispatch decision (`FindingContext`) and nothing else. An unknown fact
(None) never makes a finding hold on its own. The findings live by subject in this package's modules; this module
assembles them in the catalogue's order, which `python -m mhcdoctor.docsgen` follows in docs/findings.md.
"""

from __future__ import annotations

from mhcdoctor.decision import Finding
from mhcdoctor.documents.vocabulary import severity_rank
from mhcdoctor.knowledge.bugs import BUGS
from mhcdoctor.rules.findings import aiter, caches, deepgemm, models, platform, tilelang, vllm
from mhcdoctor.rules.findings.aiter import escaping_exception
from mhcdoctor.rules.findings.base import FindingContext, FindingSpec, Found, generic_spec
from mhcdoctor.rules.findings.platform import selfcheck_disagreements

__all__ = [
    "CATALOGUE",
    "IDS",
    "FindingContext",
    "FindingSpec",
    "Found",
    "escaping_exception",
    "evaluate",
    "selfcheck_disagreements",
]

# Today's order: docs/findings.md lists it, and findings of one severity are shown in it.
_DECIDED: tuple[FindingSpec, ...] = (
    *platform.PLATFORM,
    *vllm.VLLM,
    *aiter.SETUP,
    *tilelang.SETUP,
    *deepgemm.PRENORM_BROKEN,
    *tilelang.HIP_ALLREDUCE_OFFSET,
    *deepgemm.B300_LAUNCH,
    *tilelang.PRENORM,
    *caches.CACHES,
    *tilelang.LIBRARY,
    *aiter.BUGS,
    *platform.TORCH_FALLBACK,
    *models.MODELS,
    *platform.MULTI_GPU,
)
# Then every known-bug record no module above decides by hand: a new record is a finding with no other edit.
CATALOGUE: tuple[FindingSpec, ...] = _DECIDED + tuple(
    generic_spec(bug) for bug in BUGS if bug.id not in {spec.id for spec in _DECIDED}
)

IDS: tuple[str, ...] = tuple(spec.id for spec in CATALOGUE)


def evaluate(ctx: FindingContext) -> list[Finding]:
    """Every finding whose predicate holds, most severe first, catalogue order within a severity."""
    found = [finding for spec in CATALOGUE if (finding := spec.find(ctx)) is not None]
    return sorted(found, key=lambda f: -severity_rank(f.severity))
