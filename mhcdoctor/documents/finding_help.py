"""A finding's documentation as `mhcdoctor help FINDING-ID --json` gives it (mhcdoctor.finding-help/1)."""

from __future__ import annotations

from typing import Literal, TypedDict

from mhcdoctor.documents.vocabulary import FindingId, Severity

SCHEMA = "mhcdoctor.finding-help/1"


class EvidenceDocument(TypedDict):
    """One piece of what backs a known bug: a measurement, the code at a tag, or a report."""

    kind: Literal["measured", "code", "report"]
    # measured: the machine; code: the repository, tag, file and line; report: the address
    source: str
    date: str | None  # measured: the day it ran; null otherwise
    what: str  # measured: the command; code: what the code shows; report: what is not known
    result: str | None  # measured: what it showed; null otherwise


class FindingHelpDocument(TypedDict):
    """Everything the docs say about one finding, from the catalogue and its known-bug record where it has one."""

    schema: str
    id: FindingId
    severity: Severity | None  # null: each case gives its own, at most `worst`
    worst: Severity  # the most severe it gives
    title: str
    summary: str  # when it fires
    applies: list[str]  # where it applies (library versions, platforms, archs, ops, token counts); empty: anywhere
    fix: str  # the usual fix (a case may give its own)
    refs: list[str]
    evidence: list[EvidenceDocument]  # empty: a finding about this machine's setup, not a known bug
    docs: str  # the command that shows this documentation
