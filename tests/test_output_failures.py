"""Output that cannot be written (a full disk, a closed stdout) is the machine's state, not a bug in mhcdoctor: one
line on stderr naming it and exit 2, never exit 4 ("a bug") or a silent verdict."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import doctor
import pytest


def _env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "machine").mkdir(exist_ok=True)
    return {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path / "machine"), "NO_COLOR": "1"}


@pytest.mark.parametrize("args", [["check", "--fast"], ["models"], ["explain", "--hidden", "7168"]])
def test_a_full_disk_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            doctor.argv(*args), stdout=full, stderr=subprocess.PIPE, text=True, env=_env(tmp_path), timeout=120
        )
    assert (done.returncode, done.stderr) == (2, "mhcdoctor: error: cannot write the output: No space left on device\n")


def test_a_closed_stdout_is_one_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        doctor.argv("check", "--fast"),
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        preexec_fn=lambda: os.close(1),  # `mhcdoctor check --fast >&-`
    )
    assert done.returncode == 2
    assert done.stderr == (
        "mhcdoctor: error: stdout is closed, so nothing could be shown; run it with stdout open (or --json > file)\n"
    )
