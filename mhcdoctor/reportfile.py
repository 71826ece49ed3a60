"""Reading a saved `check --json` report back (for `explain --from`): every problem is one InputError line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mhcdoctor.bundle import is_bundle, read_bundle
from mhcdoctor.errors import InputError
from mhcdoctor.render.markdown import report_from_markdown
from mhcdoctor.userfiles import parse_json, read_user_text

CHECK_SCHEMA = "mhcdoctor.check/1"


def load_report(path: str | Path) -> dict[str, Any]:
    """The check/1 document saved at `path`; InputError (exit 2, one line) when it is anything else.

    `path` may also be a `report --bundle` tar.gz (its report.json), or a saved `report` Markdown (its replay block).
    """
    p = Path(path)
    if is_bundle(p):
        return _check_document(read_bundle(p).report, p)
    text = read_user_text(p, "report", InputError)
    try:
        document = parse_json(text)
    except ValueError as exc:
        document = report_from_markdown(text)
        if document is None:
            raise InputError(f"report {p} is not valid JSON: {exc}") from None
    return _check_document(document, p)


def _check_document(document: Any, p: Path) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise InputError(f"report {p} must hold a JSON object")
    schema = document.get("schema")
    if schema != CHECK_SCHEMA:
        found = f"{schema!r}" if schema is not None else "no schema"
        raise InputError(f"report {p} has {found}; expected a saved `mhcdoctor check --json` ({CHECK_SCHEMA})")
    if not isinstance(document.get("facts"), dict):
        raise InputError(f"report {p} has no facts object")
    return document
