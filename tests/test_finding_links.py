"""Each finding's documentation reaches a pip-installed user offline: every view names `mhcdoctor help ID` on a
`docs:` line under each finding (check, explain, report's Markdown, log's text and Markdown), that command prints it,
and no output links to the project's planned public home, which pyproject names but which is not published yet."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import doctor

from mhcdoctor.knowledge.bugs import BY_ID
from mhcdoctor.rules.findings import CATALOGUE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
HOME = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Homepage"]


def machine(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "machine").mkdir(exist_ok=True)
    return {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path / "machine"), "NO_COLOR": "1"}


def run_the_docs_line(shown: str, finding_id: str) -> str:
    """The command a `docs:` line names, run as the user would paste it: it shows that finding's documentation."""
    command = re.search(rf"docs: `?(mhcdoctor help {re.escape(finding_id)})`?$", shown, re.M)
    assert command is not None, shown
    done = doctor.run(*command.group(1).split()[1:])
    assert done.returncode == 0 and done.stdout.startswith(f"## `{finding_id}`: "), done
    return done.stdout


def test_the_package_metadata_names_the_planned_home_and_no_output_prints_it(tmp_path: Path) -> None:
    assert HOME.startswith("https://")
    args = ["--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.13", "--vllm", "0.25.0"]
    shown = doctor.run("explain", *args, env=machine(tmp_path))
    assert "aiter-sqrsum-race" in shown.stdout and HOME not in shown.stdout


def test_every_finding_has_an_anchor_of_its_own_in_the_findings_page() -> None:
    page = (REPO / "docs" / "findings.md").read_text()
    assert [spec.id for spec in CATALOGUE if f'<a id="{spec.id}"></a>' not in page] == []


def test_explain_names_each_findings_help_and_a_shared_fix_once(tmp_path: Path) -> None:
    args = ["--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.13", "--vllm", "0.25.0", "--model"]
    shown = doctor.run("explain", *args, "deepseek-v4-pro", env=machine(tmp_path)).stdout
    assert "      docs: mhcdoctor help aiter-sqrsum-race\n" in shown
    assert "Code at ROCm/aiter v0.1.13.post1 csrc/kernels/mhc_kernels.cu" in run_the_docs_line(
        shown, "aiter-sqrsum-race"
    )
    fixes = [line.strip() for line in shown.splitlines() if line.startswith("      fix: ")]
    build = next(fix for fix in fixes if fix.startswith("fix: Build aiter"))
    assert (fixes.count(build), fixes.count("fix: as for aiter-sqrsum-race above")) == (1, 2)


def test_the_shared_markdown_names_each_findings_help_before_its_refs(tmp_path: Path) -> None:
    markdown = doctor.run("report", "--fast", env=machine(tmp_path), cwd=tmp_path).stdout
    assert "  Docs: `mhcdoctor help no-gpu`\n  Refs: https://github.com/vllm-project/" in markdown
    assert HOME not in markdown
    run_the_docs_line(markdown.replace("  Docs: ", "docs: "), "no-gpu")


def test_the_log_views_name_the_help_of_the_bug_the_log_shows(tmp_path: Path) -> None:
    """A log holding tilelang-tvm-ffi-mismatch's own sample traceback (knowledge/bugs.py): its finding and docs."""
    log = tmp_path / "vllm.log"
    log.write_text("Traceback (most recent call last):\n" + "\n".join(BY_ID["tilelang-tvm-ffi-mismatch"].log[0].sample))
    text = doctor.run("log", str(log), env=machine(tmp_path)).stdout
    markdown = doctor.run("log", str(log), "--markdown", env=machine(tmp_path)).stdout
    assert "      docs: mhcdoctor help tilelang-tvm-ffi-mismatch\n" in text
    assert "  - docs: `mhcdoctor help tilelang-tvm-ffi-mismatch`\n" in markdown
    assert "Measured on NVIDIA H200" in run_the_docs_line(text, "tilelang-tvm-ffi-mismatch")
