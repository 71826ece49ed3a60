"""The forms of secrets in redact.SECRET_FORMS (the table docs/secret-forms.md is generated from), each masked: the
table is the test's data, so a form documented is a form tested (issue 27 §3, issue 33 §1), and it is tested where a
user meets it: `report`'s redaction row by row, and `log` and `check` over every row at once. `␤` in the table stands
for a line break."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import doctor
import fakes
import pytest
from fakemachine import Machine

from mhcdoctor.redact import MASK, SECRET_FORMS, Identity, SecretForm, mask_secrets, redact

IDS = [form.form for form in SECRET_FORMS]


def _leaks(form: SecretForm, shown: str) -> list[str]:
    return [part for part in form.masked.split("␤") if part in shown]


def test_the_table_lists_every_form_the_issues_name():
    names = {form.form for form in SECRET_FORMS}
    assert len(SECRET_FORMS) >= 45 and len(names) == len(SECRET_FORMS)
    assert {"URL password, no user", "Stripe key", "Slack webhook", "Cookie header", "GitLab private_token query",
            "vLLM's non-default args, a list of API keys", "compound secret-named key, JSON", "Docker Hub token",
            "mysql -pPASSWORD", "curl -u user:password", "token in a percent-encoded query"} <= names  # fmt: skip
    assert all(form.source and form.masked for form in SECRET_FORMS)


@pytest.mark.parametrize("form", SECRET_FORMS, ids=IDS)
def test_each_form_is_masked_whole(form: SecretForm) -> None:
    shown, record = redact({"probes": [{"evidence": [form.example.replace("␤", "\n")]}]}, Identity())
    line = shown["probes"][0]["evidence"][0]
    assert MASK in line and record.counts.get("secret")
    assert not _leaks(form, line), line


@pytest.mark.parametrize("form", SECRET_FORMS, ids=IDS)
def test_checks_own_view_masks_each_form_and_keeps_the_rest(form: SecretForm) -> None:
    text = form.example.replace("␤", "\n")
    own = "/home/alice GPU-12345678-1234-1234-1234-123456789abc\n"
    shown = mask_secrets({"probes": [{"evidence": [own + text]}]}, Identity(users=("alice",), homes=("/home/alice",)))
    line = shown["probes"][0]["evidence"][0]
    assert MASK in line and not _leaks(form, line)
    assert line.startswith(own)  # check is your own view: names, paths and GPU UUIDs stay


def test_log_masks_every_form_in_every_view(tmp_path: Path) -> None:
    """Every example on an error line of a vLLM log, as the log reader shows error lines: none reaches the text,
    Markdown or JSON view, with or without --no-redact."""
    lines = [f"RuntimeError: PDL is not supported {form.example.replace('␤', ' ')}" for form in SECRET_FORMS]
    lines.append("(APIServer pid=7) INFO 07-06 16:03:24 [utils.py:233] non-default args: {'model': 'm', "
                 "'api_key': ['sk-live-one', 'second key 2']}")  # fmt: skip
    path = tmp_path / "vllm.log"
    path.write_text("\n".join(lines) + "\n")
    for args in ((), ("--json",), ("--markdown",), ("--no-redact",)):
        shown = doctor.run("log", str(path), *args).stdout
        assert "PDL is not supported" in shown and MASK in shown
        leaks = {form.form: _leaks(form, shown.replace("\\n", " ")) for form in SECRET_FORMS if "␤" not in form.masked}
        assert not {k: v for k, v in leaks.items() if v}, args
        assert "sk-live-one" not in shown and "second key" not in shown


def test_check_masks_a_secret_in_a_probes_output(tmp_path: Path) -> None:
    """`check -v` shows a probe's output: a library that prints its caller's non-default args (and a VLLM_API_KEY
    value, percent-encoded) shows them masked, in the text and the JSON view alike."""
    machine = Machine(tmp_path)
    key = "vk-live/secret value"
    printed = f"non-default args: {{'api_key': ['sk-live-one']}} url=https://h/?a={urllib.parse.quote(key, safe='')}"
    fakes.library(machine.site, "tilelang", "0.1.12", init=f"import sys; print({printed!r}, file=sys.stderr); 1/0")
    env = {**machine.env(), "VLLM_API_KEY": key}
    for args in (("-v",), ("--json",)):
        done = doctor.run("check", "--python", str(machine.python), *args, env=env, cwd=tmp_path)
        assert "non-default args" in done.stdout, done.stdout[-2000:]
        assert "sk-live-one" not in done.stdout and "vk-live" not in done.stdout and "vk-live%2F" not in done.stdout
    assert json.loads(done.stdout)["env"]["VLLM_API_KEY"] == MASK


def test_a_secret_value_of_the_environment_is_found_percent_encoded() -> None:
    value = "p@ss/w0rd x"
    text = f"GET /?q={urllib.parse.quote(value, safe='').lower()}&r={urllib.parse.quote_plus(value)} then {value}"
    shown, _ = redact({"x": text}, Identity(secret_values=(value,)))
    assert "w0rd" not in shown["x"] and "p%40" not in shown["x"].lower() and shown["x"].count(MASK) == 3, shown["x"]


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
