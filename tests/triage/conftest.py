"""Fixtures for the triage tests; the documents themselves are in triage_docs.py."""

from __future__ import annotations

from typing import Any

import pytest
from triage_docs import HOME, SECRET_TOKEN, USER, rocm_report


@pytest.fixture
def report_doc() -> dict[str, Any]:
    return rocm_report()


@pytest.fixture
def planted_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process looks like the user's machine: its home, user and secrets are the planted ones."""
    monkeypatch.setenv("HOME", HOME)
    monkeypatch.setenv("USER", USER)
    monkeypatch.setenv("LOGNAME", USER)
    monkeypatch.setenv("HF_TOKEN", SECRET_TOKEN)
