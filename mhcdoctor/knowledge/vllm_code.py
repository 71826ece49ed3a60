"""Which release's mHC code an installed vLLM holds, told by its files rather than its version label.

A dev build, a nightly, an rc or a source install carries a version between releases (0.26.1.dev3+gabc,
0.35.0.dev12); its mHC kernel and dispatch files (MHC_FILES, under the vllm package) are either byte for byte those
of one release's wheel, whose rules and known bugs then apply, or new code, said as such with the nearest release.
The fingerprints (vllm_fingerprints.py) are generated from the wheels by scripts/vllm-fingerprints, through the
same reader the vllm probe uses on an install (probes/vllm_build.fingerprint).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mhcdoctor.knowledge.versions import Version, parse, release_key
from mhcdoctor.knowledge.vllm_fingerprints import FINGERPRINTS

# The mHC kernel and dispatch files of every release, relative to the vllm package (the audit's set: VLLM_AUDIT).
MHC_FILES = (
    "model_executor/layers/mhc.py",
    "model_executor/kernels/mhc/*.py",
    "_tilelang_ops.py",
    "utils/deep_gemm.py",
)
MAX_FILE_BYTES = 4 << 20  # the largest is tilelang_kernels.py at about 100 KB; a bigger file is not vLLM's


def digest(data: bytes) -> str:
    """The fingerprint of one file: its SHA-256, first 16 hex digits."""
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True)
class CodeMatch:
    """What the installed mHC files are: `release` where they are exactly one release's (the version's own among
    releases with the same files), else None with the nearest release and the files that differ from it."""

    release: str | None
    same_as: tuple[str, ...]  # every release with exactly these files
    nearest: str | None
    differing: tuple[str, ...]  # files that differ from the nearest release's (changed, added or missing)

    def text(self) -> str:
        """What a user reads: the code the files hold."""
        if self.release is not None:
            others = [r for r in self.same_as if r != self.release]
            same = f" (the same files as {', '.join(others)})" if others else ""
            return f"its mHC files are vLLM {self.release}'s{same}"
        if self.nearest is None:
            return "new mHC code: none of its files is a vLLM release's"
        return (
            f"new mHC code: its files match no vLLM release (nearest {self.nearest}; differing: "
            f"{', '.join(self.differing)})"
        )


def match(files: dict[str, str], version: str | None = None) -> CodeMatch:
    """The release whose mHC files are exactly `files` (vllm_build.fingerprint's), or the nearest with what differs."""
    same = tuple(r for r, prints in FINGERPRINTS.items() if prints == files)
    if same:
        own = parse(version)
        key = release_key(str(own)) if own is not None else None
        release = next((r for r in same if key is not None and Version(r) == key), same[-1])
        return CodeMatch(release, same, release, ())
    if not files:
        return CodeMatch(None, (), None, ())

    def shared(release: str) -> int:
        return sum(FINGERPRINTS[release].get(path) == value for path, value in files.items())

    order = list(FINGERPRINTS)
    nearest = max(order, key=lambda r: (shared(r), order.index(r)))  # most files in common; ties: the newest
    if shared(nearest) == 0:
        return CodeMatch(None, (), None, ())  # not one file is a release's: no release is near it
    prints = FINGERPRINTS[nearest]
    differing = tuple(sorted(p for p in set(prints) | set(files) if prints.get(p) != files.get(p)))
    return CodeMatch(None, (), nearest, differing)
