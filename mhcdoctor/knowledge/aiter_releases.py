"""What AMD's aiter carries for mHC at each release: the one place probes, what-ifs and rules read it from.

Read from ROCm/aiter's tags (`git show TAG:aiter/ops/mhc.py`, `TAG:csrc/kernels/mhc_kernels.cu`):

- `aiter/ops/mhc.py` arrives with #2136 (commit 5e8ade9, "add mhc_pre hip kernel"), first tagged v0.1.11; every tag
  before it (v0.1.10.post3 and older, and PyPI's only `amd-aiter` wheel, 0.1.7.post2.dev18) has no mHC ops.
- `mhc_pre(..., norm_weight, norm_eps)` from the tag v0.1.15-rc0 (v0.1.14.post1 has none): a pre-release carries
  what its tag's code carries, so 0.1.15rc0 has them although it sorts below 0.1.15.
- `mhc_fused_post_pre` from v0.1.16 (no tag between v0.1.15.post3 and v0.1.16 has it).
- The sqrsum race (#2533, 6f68709) is in v0.1.12 to v0.1.13.post1; #3033 (b639cb6) fixes it from v0.1.14-rc0;
  v0.1.11 predates it.

Each "since" below is the first tag whose code has the feature, pre-release tags included, so comparing a version
with it answers by the code at every tag; a version between tags (a source build) gets its nearest tag's answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from mhcdoctor.documents.check import FixState
from mhcdoctor.knowledge.bugs import SQRSUM_RACE, KnownBug
from mhcdoctor.knowledge.versions import Version, parse

MHC_OPS_SINCE = Version("0.1.11")  # aiter/ops/mhc.py (#2136)
NORM_ARGS_SINCE = Version("0.1.15rc0")  # mhc_pre takes norm_weight/norm_eps (tag v0.1.15-rc0)
FUSED_SINCE = Version("0.1.16")  # mhc_fused_post_pre
FIRST_RACY = Version(SQRSUM_RACE.first_bad or "")  # aiter #2533, in v0.1.12
LAST_RACY = Version(SQRSUM_RACE.last_bad or "")
FIRST_FIXED = Version(SQRSUM_RACE.first_good or "")  # aiter #3033, first in v0.1.14-rc0
# setuptools_scm writes this when a source build has no git metadata (aiter's pyproject: fallback_version).
SCM_FALLBACK = Version("0.1.0")


@dataclass(frozen=True)
class AiterRelease:
    """What AMD's aiter at one version has: the mHC ops, mhc_pre's norm arguments, the fused op, the sqrsum fix."""

    version: str
    has_mhc_ops: bool | None  # None: a version that says nothing (setuptools_scm's fallback 0.1.0)
    mhc_pre_norm_args: bool | None
    has_fused_post_pre: bool | None
    sqrsum_fix: FixState
    sqrsum_why: str


def sqrsum_fix_from_version(version: str | None) -> tuple[FixState, str]:
    """(state, the rule applied) from an aiter version, by the known release list."""
    if not version:
        return "unknown", "no version found"
    v = parse(version)
    if v is None:
        return "unknown", f"version {version!r} is not a PEP 440 version"
    if v == SCM_FALLBACK:
        return "unknown", "version 0.1.0 is setuptools_scm's fallback for a build without git metadata"
    if v < MHC_OPS_SINCE:
        return "unknown", f"aiter {version} has no mHC ops (aiter/ops/mhc.py arrived in {MHC_OPS_SINCE})"
    if v >= FIRST_FIXED:
        return "present", f"version {version} >= 0.1.14rc0, the first release with aiter #3033"
    if v.is_devrelease or v.local:
        return "unknown", f"version {version} is a development build below 0.1.14: it may or may not contain #3033"
    if v < FIRST_RACY:
        return "present", f"version {version} < 0.1.12 predates the race (introduced by aiter #2533)"
    if v <= LAST_RACY:
        return "absent", f"version {version} is in 0.1.12 .. 0.1.13.post1, the releases with the race"
    return "unknown", f"version {version} is not a known aiter release"


def release(version: str) -> AiterRelease | None:
    """What AMD's aiter `version` carries; None when `version` is not a version."""
    v = parse(version)
    return release_of(v) if v is not None else None


def release_of(v: Version) -> AiterRelease:
    """What AMD's aiter at version `v` carries, by the first tag that carries each feature."""
    fix, why = sqrsum_fix_from_version(str(v))
    if v == SCM_FALLBACK:  # says nothing about the code
        return AiterRelease(str(v), None, None, None, fix, why)
    return AiterRelease(str(v), v >= MHC_OPS_SINCE, v >= NORM_ARGS_SINCE, v >= FUSED_SINCE, fix, why)


def has_bug(version: str | None, bug: KnownBug) -> bool | None:
    """Whether AMD's aiter `version` carries `bug`: None for a version that says nothing (none, unreadable,
    setuptools_scm's fallback, or a development build past the last tag that has it)."""
    v = parse(version)
    if v is None or v == SCM_FALLBACK:
        return None
    public = Version(v.public)
    if bug.first_bad is None or public < Version(bug.first_bad):
        return False
    if bug.last_bad is None or public <= Version(bug.last_bad):
        return True
    return None if v.is_devrelease else False  # a development build past the last buggy tag may predate the fix
