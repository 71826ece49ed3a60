"""Which known bugs a failing verify row matches: its op, token count, shape, path and the version of the library
whose code the record says carries the bug (the path's own version: vLLM's for a vllm:* path, aiter's and tilelang's
for this project's aiter and tilelang paths). A version not known here matches nothing: no bug is named on a guess."""

from __future__ import annotations

from collections.abc import Callable

from mhcdoctor.documents.verify import KnownBugRef
from mhcdoctor.knowledge import bugs, known, versions

# Bugs whose trigger is a shape rule rather than a list of hidden sizes: (hidden, hc_mult, tokens) -> carries it
_SHAPE: dict[str, Callable[[int, int, int], bool]] = {
    bugs.FUSED_SHAPE.id: known.fused_small_fma_lost,
    bugs.GEMM_SHAPE.id: known.tilelang_gemm_asserts,
    bugs.DEEPGEMM_PRENORM_SHAPE.id: known.deepgemm_prenorm_refuses,
}


# Raised only by vLLM's mhc_pre_delayed and its gfx950 Triton seam (DeepSeek-V4.1's seams), which no verify path
# calls (aiter's mhc_pre is not)
_NOT_A_VERIFY_CALL = frozenset({bugs.DELAYED_API_TOO_OLD.id, bugs.SEAM_RMSNORM_MISSING.id})


def _any_shape(hidden: int, hc_mult: int, tokens: int) -> bool:
    return True


def _version_matches(bug: bugs.KnownBug, path: str, version: str | None) -> bool:
    """The row's path runs the code of the bug's library, in a version the record says carries it."""
    if bug.library == "vllm":
        runs_it = path.startswith("vllm:")
    elif bug.library == "amd-aiter":
        runs_it = path == "aiter"  # vllm:aiter's version is vLLM's: aiter's is not known here
    elif bug.library == "tilelang":
        runs_it = path == "tilelang"
    else:
        return False
    return runs_it and bool(versions.within(version, bug.affected or ""))


# A row's status and the effects whose bug can give it: wrong values fail the oracle, a crash raises (error) or hangs
_EFFECTS = {"fail": ("wrong results",), "error": ("crash",), "timeout": ("crash",)}


def platform_of(device_name: str | None) -> str | None:
    """The platform a row ran on, from the GPU's name torch gave ("NVIDIA H200", "AMD Instinct MI300X"); None for
    the CPU or a name that does not say, where no record is ruled out by its platform."""
    name = (device_name or "").strip().upper()
    return "cuda" if name.startswith("NVIDIA") else "rocm" if name.startswith("AMD") else None


def matching(
    path: str,
    version: str | None,
    op: str,
    tokens: int,
    hidden: int,
    hc_mult: int,
    status: str = "fail",
    platform: str | None = None,
) -> list[KnownBugRef]:
    """The known bugs whose effect gives this row's status and whose every trigger the row meets; `platform` (cuda,
    rocm; None: not known) rules out the records of another platform (a gfx942 bug is not named on an H200)."""
    backend = path.split(":")[-1]
    found: list[KnownBugRef] = []
    for bug in bugs.BUGS:
        first, last = bug.tokens
        if (
            bug.id in _NOT_A_VERIFY_CALL
            or bug.effect not in _EFFECTS.get(status, ())
            or op not in bug.ops
            or bug.path not in (backend, "any")
            or not first <= tokens <= (last if last is not None else tokens)
            or not bug.fits(hidden, hc_mult)
            or not _SHAPE.get(bug.id, _any_shape)(hidden, hc_mult, tokens)
            or not _version_matches(bug, path, version)
            or (platform is not None and bug.platforms and platform not in bug.platforms)
        ):
            continue
        found.append({"id": bug.id, "title": bug.title, "fix": bug.fix, "proof": bug.proof})
    return found
