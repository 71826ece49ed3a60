"""The forms of secrets in docs/sharing-reports.md's table, each masked: the table is the test's data, so a form
documented is a form tested (issue 27 §3). `␤` in the table stands for a line break."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mhcdoctor.redact import MASK, Identity, redact

DOC = Path(__file__).resolve().parents[2] / "docs" / "sharing-reports.md"


def _forms() -> list[tuple[str, str, str]]:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("<!-- secret forms: start -->") : text.index("<!-- secret forms: end -->")]
    rows: list[tuple[str, str, str]] = []
    for line in table.splitlines()[3:]:
        form, example, masked, _source = (cell.strip() for cell in line.strip("|").split(" | "))
        code = [re.fullmatch(r"`(.+)`", cell) for cell in (example, masked)]
        assert code[0] and code[1], line
        rows.append((form, code[0].group(1), code[1].group(1)))
    return rows


FORMS = _forms()


def test_the_table_lists_every_form_the_issue_names():
    names = {form for form, _, _ in FORMS}
    assert len(FORMS) >= 30 and {"URL password, no user", "Stripe key", "Slack webhook", "Cookie header"} <= names


@pytest.mark.parametrize(("form", "example", "masked"), FORMS, ids=[form for form, _, _ in FORMS])
def test_each_form_is_masked_whole(form: str, example: str, masked: str) -> None:
    shown, record = redact({"probes": [{"evidence": [example.replace("␤", "\n")]}]}, Identity())
    line = shown["probes"][0]["evidence"][0]
    assert MASK in line and record.counts.get("secret")
    for part in masked.split("␤"):
        assert part not in line, line


@pytest.mark.parametrize(
    "text",
    [
        'stderr: {"detail": "bad hunter\\"2-pass-value"}',  # the value JSON-escaped inside a JSON string
        'the password hunter"2-pass-\n    value was refused',  # wrapped, with indentation
        'hunter"2-pass-\\nvalue',  # wrapped, the line break JSON-escaped
    ],
)
def test_a_secret_value_of_the_environment_is_found_escaped_or_wrapped(text: str) -> None:
    identity = Identity(secret_values=('hunter"2-pass-value',))
    shown, _ = redact({"x": text}, identity)
    assert "hunter" not in shown["x"] and "pass-" not in shown["x"] and MASK in shown["x"], shown["x"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("VLLM_API_KEY=vk-0123456789\nVLLM_USE_V1=1", "VLLM_USE_V1=1"),
        ("HF_TOKEN=hf_ABCDEFGHIJKLMNOPQR\nTraceback (most recent call last):", "Traceback (most recent call last):"),
    ],
)
def test_the_line_after_a_secret_is_kept_when_it_is_not_the_secrets_rest(text: str, kept: str) -> None:
    shown, _ = redact({"x": text}, Identity())
    assert shown["x"].endswith("\n" + kept) and MASK in shown["x"]
