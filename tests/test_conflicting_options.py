"""Options that contradict each other, or name the wrong kind of thing, are one line on stderr and exit 2: no option
silently wins, and the line says what was wrong (a folder, an empty file) before anything is probed."""

from __future__ import annotations

import os
from pathlib import Path

import doctor
import pytest


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    env = dict(os.environ, MHCDOCTOR_SYSROOT=str(tmp_path))
    report = tmp_path / "r.json"
    report.write_text(doctor.run("check", "--fast", "--json", env=env).stdout)
    return report


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["explain", "--from", "{r}", "--deep"],
            "--from and --deep cannot be given together: --from takes every fact from the report, and --deep probes "
            "this machine",
        ),
        (
            ["explain", "--from", "{r}", "--python", "{python}"],
            "--from and --python cannot be given together: --from takes every fact from the report, and --python "
            "names an environment to probe",
        ),
        (["explain", "--from", "{r}", "--from", "{r}"], "--from takes one report, not 2 (mhcdoctor diff compares two)"),
        (["merge", "{r}", "--json", "--markdown"], "--json and --markdown cannot be given together"),
        (["fleet", "--json", "--markdown"], "--json and --markdown cannot be given together"),
        (
            ["report", "--preview", "--json"],
            "--preview and --json cannot be given together: --preview prints every file that would be shared under "
            "a header; report --json alone writes nothing but its one document",
        ),
    ],
)
def test_contradicting_options_are_refused(saved: Path, args: list[str], message: str) -> None:
    import sys

    proc = doctor.run(*(a.format(r=saved, python=sys.executable) for a in args))
    assert (proc.returncode, proc.stdout) == (2, "")
    command = args[0]
    assert proc.stderr == f"mhcdoctor: error: {message} (see 'mhcdoctor {command} --help')\n"


def test_a_folder_given_as_the_bundle_file_is_one_line(tmp_path: Path) -> None:
    proc = doctor.run("report", "--fast", "--bundle", str(tmp_path))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"mhcdoctor: error: --bundle {tmp_path} is a folder; give a file name, e.g. {tmp_path}/report.tar.gz\n"
    )


def test_a_folder_given_as_the_interpreter_is_named_a_folder(tmp_path: Path) -> None:
    proc = doctor.run("check", "--fast", "--python", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"mhcdoctor: error: --python {tmp_path} is a folder; give its interpreter, e.g. {tmp_path}/bin/python\n"
    )


def test_dev_null_as_a_report_is_empty_at_once() -> None:
    proc = doctor.run("explain", "--from", "/dev/null")
    assert (proc.returncode, proc.stderr) == (2, "mhcdoctor: error: report /dev/null is empty\n")
