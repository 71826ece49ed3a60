"""The one version parser: every version string mhcdoctor compares (vLLM, aiter, tilelang, nvcc, a what-if option, a
report) is read here, so "v0.1.16", " 0.30.0+rocm723 " and "0.1.15rc0" mean the same everywhere."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["InvalidVersion", "Version", "parse", "parse_strict", "public", "release_key", "within"]


def parse_strict(text: str) -> Version:
    """A PEP 440 version, written with or without a leading `v` and spaces; InvalidVersion when it is not one."""
    return Version(text.strip().lstrip("v"))


def parse(text: str | None) -> Version | None:
    """As parse_strict, but None for an empty or unreadable version."""
    if not text:
        return None
    try:
        return parse_strict(text)
    except InvalidVersion:
        return None


def public(text: str | None) -> Version | None:
    """A version without its local label (`0.1.15.post2+g1234` → 0.1.15.post2); None when it is not one."""
    version = parse(text)
    return None if version is None else Version(version.public)


def release_key(text: str) -> Version:
    """The release a version belongs to (`0.30.0+rocm723`, `0.31.0rc1`, `0.31.0.dev5` → 0.30.0, 0.31.0, 0.31.0);
    InvalidVersion when it is not one."""
    version = parse_strict(text)
    return Version(".".join(str(p) for p in (list(version.release) + [0, 0])[:3]))


def within(text: str | None, spec: str) -> bool | None:
    """Whether version `text` (its local label dropped) is in `spec`, pre-releases included; None when either is not
    readable."""
    version = public(text)
    if version is None:
        return None
    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return None
