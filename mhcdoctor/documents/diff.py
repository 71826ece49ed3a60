"""The diff/1 document (`diff --json`): what differs between two check/1 reports."""

from __future__ import annotations

from typing import Literal, TypedDict

SCHEMA = "mhcdoctor.diff/1"

# The parts of a report a difference is in, in the order diff lists them.
Section = Literal["verdict", "ops", "findings", "verify", "facts", "devices", "probes", "env"]


class DifferenceDocument(TypedDict):
    section: Section
    key: str
    a: object  # A's value, any JSON value (None: A does not have it)
    b: object


class ReportAbout(TypedDict):
    """Which report a side is: the label it was given (its file), and what the report says of itself."""

    source: str
    hostname: object
    created: object
    mode: object
    mhcdoctor_version: object


class DiffDocument(TypedDict):
    """The diff/1 document (`diff --json`)."""

    schema: str
    a: ReportAbout
    b: ReportAbout
    same: bool
    notes: list[str]
    differences: list[DifferenceDocument]
