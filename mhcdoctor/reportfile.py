"""Reading a saved report back (for `explain --from` and `diff`): every problem is one InputError line.

One reader and one validator serve both commands, so what one accepts the other accepts. A report comes from
someone else: it is read bounded (size, and time for a pipe), its strings are shown with control characters made
visible and cut to a display length, and its facts must load as facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from mhcdoctor.bundle import is_bundle_data, read_bundle_data
from mhcdoctor.documents.check import REPLAY_NAME, CheckDocument, ProbeDocument
from mhcdoctor.documents.check import SCHEMA as CHECK_SCHEMA
from mhcdoctor.documents.explain import OpDocument
from mhcdoctor.documents.verify import VerifyDocument
from mhcdoctor.errors import InputError
from mhcdoctor.facts import FactsError, ReportFacts, read_report_facts
from mhcdoctor.redact import cut_for_display
from mhcdoctor.text import cut, visible_strings
from mhcdoctor.userfiles import TooManyValues, fill_absent, mismatch, parse_json, read_user_bytes

_MAX_VERSION = 64  # characters: "2.9.0+rocm7.0.2.git1234abcd" is far below; a 100k-digit "version" is not one


@dataclass(frozen=True)
class SavedReport:
    """A saved check/1 report read back: the document, and its facts as read (once) from it."""

    document: CheckDocument
    facts: ReportFacts


def load_report(path: str | Path, *, regular_only: bool = False) -> CheckDocument:
    """The check/1 document saved at `path` ("-" for stdin); InputError (exit 2, one line) when it is anything else.

    `path` may also be a `report --bundle` tar.gz (its report.json), or a saved `report` Markdown (its replay block).
    `regular_only`: `path` was found in a folder, so it must be a regular file and is not followed if a link.
    """
    return read_saved_report(path, regular_only=regular_only).document


def read_saved_report(
    path: str | Path, *, regular_only: bool = False, uses: frozenset[str] | None = None
) -> SavedReport:
    """As load_report, with the facts read from the report (for `explain --from`, which decides on them).

    `uses`: the top-level members the caller reads (None: all); the others are neither checked nor kept, so a
    damaged part a command does not read (a report's verify block, for explain) does not refuse the report."""
    label = "stdin" if str(path) == "-" else str(path)
    data = read_user_bytes(path, "report", InputError, regular_only=regular_only)
    if is_bundle_data(data):
        return _validated(read_bundle_data(data, label).report, label, uses)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read report {label}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        document = parse_json(text)
    except TooManyValues as exc:
        raise InputError(f"report {label} {exc}; is it the right file?") from None
    except ValueError as exc:
        document = report_from_markdown(text)
        if document is None:
            raise InputError(f"report {label} is not valid JSON: {cut(str(exc), 200)}") from None
    return _validated(document, label, uses)


def validate_report(document: object, label: str) -> CheckDocument:
    """A check/1 document fit to show and decide on, or InputError naming the first thing wrong with it.

    Its facts and probes are normalised on the way (every member present, of its type), so what reads them after
    this boundary can trust FactsDocument and ProbeDocument; the other members are checked for their JSON type."""
    return _validated(document, label).document


def _validated(document: object, label: str, uses: frozenset[str] | None = None) -> SavedReport:
    if not isinstance(document, dict):
        raise InputError(f"report {label} must hold a JSON object")
    if uses is not None:
        document = {key: value for key, value in document.items() if key == "schema" or key in uses}
    schema = document.get("schema")
    if schema != CHECK_SCHEMA:
        found = f"{str(schema)[:80]!r}" if schema is not None else "no schema"
        raise InputError(f"report {label} has {found}; expected a saved `mhcdoctor check --json` ({CHECK_SCHEMA})")
    if not isinstance(document.get("facts"), dict):
        raise InputError(f"report {label} has no facts object")
    _check_versions(document["facts"], "facts", label)
    document = cut_for_display(visible_strings(document))
    try:
        facts = read_report_facts(document["facts"])
    except FactsError as exc:
        raise InputError(f"report {label}: {cut(str(exc), 300)}") from None
    document["facts"] = facts.facts.to_dict()
    # What an older release did not write, at every level, reads as None or its type's empty value (a probe that
    # said nothing: no data, no evidence); then the one checker. A member with no empty value (a Literal) may still
    # be absent, except a probe's and an op's (its path, which every release wrote): each must have all of its members.
    namespace = {"VerifyDocument": VerifyDocument}
    try:
        document = fill_absent(document, CheckDocument, namespace)
    except TooManyValues as exc:
        raise InputError(f"report {label} {exc}; is it the right file?") from None
    wrong = mismatch(document, CheckDocument, "report", namespace, complete=(ProbeDocument, OpDocument))
    if not _fits(document, wrong):
        raise InputError(f"report {label}: {cut(str(wrong).removeprefix('report.'), 300)}")
    return SavedReport(document, facts)


def _fits(document: object, wrong: str | None) -> TypeGuard[CheckDocument]:
    """`document` is a CheckDocument when userfiles.mismatch found nothing wrong with it (`wrong` is None)."""
    return wrong is None


def _check_versions(value: object, where: str, label: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if str(key).endswith("version") and isinstance(item, str) and len(item) > _MAX_VERSION:
                raise InputError(f"report {label}: {where}.{key} is {len(item)} characters long; not a version")
            _check_versions(item, f"{where}.{key}", label)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_versions(item, f"{where}[{index}]", label)


_FENCE_OPEN = re.compile(r"\s*(`{3,})json\r?\n")


def report_from_markdown(text: str) -> dict[str, object] | None:
    """The compact report.json folded into a `report` Markdown (an issue body saved to a file), or None."""
    # str.find and anchored matches only, each start looked at once: linear in the text, whatever a paste holds.
    pos = 0
    while (start := text.find("<summary>" + REPLAY_NAME, pos)) >= 0:
        pos = start + 1
        # The title's end is the next `<`, never further than the next start: each character is looked at once (a
        # search for `</summary>` from every start went to the end each time, quadratic on repeated starts).
        close = text.find("<", start + 1)
        if close < 0:
            return None
        if not text.startswith("</summary>", close):
            continue
        opening = _FENCE_OPEN.match(text, close + len("</summary>"))
        if opening is not None:
            break
    else:
        return None
    fence = opening.group(1)
    ending = re.compile(r"\r?\n" + fence + r"(?!`)").search(text, opening.end())
    if ending is None:
        return None  # no later start can close either
    try:
        document = parse_json(text[opening.end() : ending.start()])
    except ValueError:
        return None
    return document if isinstance(document, dict) else None
