"""Links that work for a pip-installed user: the project's URLs in its metadata, and each finding's own section of
docs/findings.md at the project's public home, beside the upstream refs; a fix shared by findings is shown once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import doctor

from mhcdoctor.documents.vocabulary import FINDINGS_DOCS, HOMEPAGE, finding_docs
from mhcdoctor.rules.findings import CATALOGUE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def test_the_package_metadata_names_the_home_and_the_findings_page() -> None:
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    assert (urls["Homepage"], urls["Findings"]) == (HOMEPAGE, FINDINGS_DOCS)


def test_every_finding_has_an_anchor_of_its_own_in_the_findings_page() -> None:
    page = (REPO / "docs" / "findings.md").read_text()
    assert [spec.id for spec in CATALOGUE if f'<a id="{spec.id}"></a>' not in page] == []


def test_explain_shows_each_findings_docs_and_a_shared_fix_once(tmp_path: Path) -> None:
    (tmp_path / "machine").mkdir()
    env = {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path / "machine"), "NO_COLOR": "1"}
    args = ["--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.13", "--vllm", "0.25.0", "--model"]
    shown = doctor.run("explain", *args, "deepseek-v4-pro", env=env).stdout
    assert f"      docs: {finding_docs('aiter-sqrsum-race')}" in shown
    fixes = [line.strip() for line in shown.splitlines() if line.startswith("      fix: ")]
    build = next(fix for fix in fixes if fix.startswith("fix: Build aiter"))
    assert (fixes.count(build), fixes.count("fix: as for aiter-sqrsum-race above")) == (1, 2)


def test_the_shared_markdown_links_each_finding_before_its_refs(tmp_path: Path) -> None:
    (tmp_path / "machine").mkdir()
    env = {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path / "machine"), "NO_COLOR": "1"}
    markdown = doctor.run("report", "--fast", env=env, cwd=tmp_path).stdout
    assert f"  Refs: {finding_docs('no-gpu')}, " in markdown
