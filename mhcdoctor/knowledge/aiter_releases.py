"""What AMD's aiter carries for mHC at each release: the one place probes, what-ifs and rules read it from.

Read from ROCm/aiter's tags (`git show TAG:aiter/ops/mhc.py`, `TAG:csrc/kernels/mhc_kernels.cu`):

- `aiter/ops/mhc.py` arrives with #2136 (commit 5e8ade9, "add mhc_pre hip kernel"), first tagged v0.1.11; every tag
  before it (v0.1.10.post3 and older, and PyPI's only `amd-aiter` wheel, 0.1.7.post2.dev18) has no mHC ops.
- `mhc_pre(..., norm_weight, norm_eps)` from the tag v0.1.15-rc0 (v0.1.14.post1 has none): a pre-release carries
  what its tag's code carries, so 0.1.15rc0 has them although it sorts below 0.1.15.
- `mhc_fused_post_pre` from v0.1.16 (no tag between v0.1.15.post3 and v0.1.16 has it).
- The sqrsum race (#2479, 7ea98c6: its store guard) is in v0.1.12 to v0.1.13.post1; #3033 (b639cb6) fixes it
  from v0.1.14-rc0; v0.1.11 predates it.

A version answers through aiter_code's table of what each tag's code holds (the API and every fix): a tag's version
its tag's code, a development build what git ancestry lets its tag and the next tag of its line say. The "since"
constants below name the first tag with each API, for the findings' text.
"""

from __future__ import annotations

from dataclasses import dataclass

from mhcdoctor.documents.check import FixState
from mhcdoctor.knowledge import aiter_code
from mhcdoctor.knowledge.versions import Version, parse

MHC_OPS_SINCE = Version("0.1.11")  # aiter/ops/mhc.py (#2136)
NORM_ARGS_SINCE = Version("0.1.15rc0")  # mhc_pre takes norm_weight/norm_eps (tag v0.1.15-rc0)
FUSED_SINCE = Version("0.1.16")  # mhc_fused_post_pre
# aiter/ops/triton/fusions/mhc_fused_post_pre_delayed_rmsnorm.py (vLLM 0.32+'s V4.1 seam on gfx950): in no tag of
# ROCm/aiter up to this one, nor main at e4048607a5 (2026-08-22): `git log --all -- PATH` is empty; a newer label's
# code is in no snapshot read, so it may have it
SEAM_RMSNORM_LAST_READ = Version("0.1.20.post1")
SEAM_RMSNORM = "aiter/ops/triton/fusions/mhc_fused_post_pre_delayed_rmsnorm.py"


def seam_rmsnorm_from_version(version: str | None) -> tuple[bool | None, str]:
    """Whether AMD's aiter `version` ships SEAM_RMSNORM, and why: absent up to the newest tag read, else unknown."""
    v = parse(version) if version else None
    if v is None or v == aiter_code.SCM_FALLBACK:
        return None, f"version {version!r} says nothing about its code" if version else "no version found"
    if Version(v.public) <= SEAM_RMSNORM_LAST_READ:  # a tag's build with local changes (+local) is that tag's
        return False, f"no ROCm/aiter tag up to v{SEAM_RMSNORM_LAST_READ} has {SEAM_RMSNORM}"
    return None, f"aiter {version} is newer than every tag read (v{SEAM_RMSNORM_LAST_READ}): it may have {SEAM_RMSNORM}"


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
    """(state, the rule applied) from an aiter version, by the code at aiter's tags (aiter_code.state_from_version)."""
    v = parse(version) if version else None
    if v is None or v == aiter_code.SCM_FALLBACK:
        return aiter_code.state_from_version(version, "sqrsum")  # unknown, and why the version cannot say
    if v < MHC_OPS_SINCE:
        return "unknown", f"aiter {version} has no mHC ops (aiter/ops/mhc.py arrived in {MHC_OPS_SINCE})"
    state, rule = aiter_code.state_from_version(version, "sqrsum")
    return state, f"version {version}: {rule}"


def fix_states_from_version(version: str | None) -> dict[str, tuple[FixState, str]]:
    """(state, the rule applied) of every fix in aiter_code.FIXES from an aiter version alone: where no source is
    installed (the probe) or a what-if names the version (`--aiter`)."""
    return {
        fix.id: sqrsum_fix_from_version(version)
        if fix is aiter_code.SQRSUM
        else aiter_code.state_from_version(version, fix.id)
        for fix in aiter_code.FIXES
    }


def release(version: str) -> AiterRelease | None:
    """What AMD's aiter `version` carries; None when `version` is not a version."""
    v = parse(version)
    return release_of(v) if v is not None else None


def release_of(v: Version) -> AiterRelease:
    """What AMD's aiter at version `v` carries, by the code at aiter's tags (aiter_code's table)."""
    fix, why = sqrsum_fix_from_version(str(v))
    if v == aiter_code.SCM_FALLBACK:  # says nothing about the code
        return AiterRelease(str(v), None, None, None, fix, why)
    if v < MHC_OPS_SINCE:
        return AiterRelease(str(v), False, False, False, fix, why)
    norm, fused = (aiter_code.feature_from_version(str(v), key) for key in aiter_code.FEATURES)
    return AiterRelease(str(v), True, norm, fused, fix, why)
