"""What backs a known fact: a measurement (the command, the machine, the date), the code at a tag (repository, tag,
file, line), or a report (an issue, which says what is not known). A fail needs one of the first two."""

from __future__ import annotations

from dataclasses import dataclass

H200 = "NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130)"


@dataclass(frozen=True)
class Measured:
    """Run on a machine: the command, the machine, the date, and what it showed."""

    command: str
    machine: str
    date: str
    result: str


@dataclass(frozen=True)
class Code:
    """Read in the code at a tag: repository, tag, file and line (None: the whole change), and what it shows."""

    repo: str
    tag: str
    file: str
    line: int | None
    shows: str


@dataclass(frozen=True)
class Report:
    """Reported (an issue or a PR thread), neither measured here nor read in code: says what is not known."""

    url: str
    not_known: str


Evidence = Measured | Code | Report
