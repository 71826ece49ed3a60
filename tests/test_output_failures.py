"""Output that cannot be written (a full disk, a closed stdout) is the machine's state, not a bug in mhcdoctor: one
line on stderr naming it and exit 2, never exit 4 ("a bug") or a silent verdict."""

from __future__ import annotations

import fcntl
import json
import os
import resource
import subprocess
import time
from collections.abc import Callable
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


def _stderr_closed() -> None:
    os.close(2)  # `mhcdoctor ... 2>&-`


def _stderr_full() -> None:
    full = os.open("/dev/full", os.O_WRONLY)  # `mhcdoctor ... 2>/dev/full`
    os.dup2(full, 2)
    os.close(full)


@pytest.mark.parametrize("stderr", [_stderr_closed, _stderr_full], ids=["closed", "full"])
@pytest.mark.parametrize(
    ("args", "code", "shown"),
    [
        (["check", "--fast"], 3, "Paths per model"),
        (["report", "--fast"], 0, "### Paths per model"),
        (["log", "-"], 0, "mHC path per op"),
    ],
)
def test_stderr_that_cannot_be_written_leaves_stdout_and_the_exit_code_as_they_are(
    tmp_path: Path, stderr: Callable[[], None], args: list[str], code: int, shown: str
) -> None:
    done = subprocess.run(
        doctor.argv(*args),
        input="INFO 05-01 12:00:00 [__init__.py:239] Automatically detected platform cuda.\n",
        stdout=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        preexec_fn=stderr,
    )
    assert (done.returncode, shown in done.stdout) == (code, True), done.stdout[-500:]


@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["PYTHONUNBUFFERED=1", "buffered"])
def test_output_cut_by_a_full_disk_is_exit_2_even_with_pythonunbuffered(tmp_path: Path, unbuffered: str) -> None:
    """A disk that fills while the document is written (here a file size limit: the write is cut, then refused).
    With PYTHONUNBUFFERED=1, which many container images set, Python's stdout dropped what a cut write left over
    without a word: a 4 KiB piece of the JSON and the verdict's exit code."""
    out = tmp_path / "check.json"
    with out.open("w") as target:
        done = subprocess.run(
            doctor.argv("check", "--fast", "--json"),
            stdout=target,
            stderr=subprocess.PIPE,
            text=True,
            env={**_env(tmp_path), "PYTHONUNBUFFERED": unbuffered},
            timeout=120,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)),
        )
    assert (done.returncode, done.stderr) == (2, "mhcdoctor: error: cannot write the output: File too large\n")


def test_a_stdout_left_non_blocking_is_waited_on_not_exit_4(tmp_path: Path) -> None:
    """Whatever started the doctor (a CI runner, node) may leave the shared pipe non-blocking: a write the pipe
    cannot take at once (EAGAIN) was exit 4 ("a bug"), with 4 KiB of the document read."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)  # a pipe of one page: the document does not fit at once
    os.set_blocking(write_end, False)
    proc = subprocess.Popen(
        doctor.argv("check", "--fast", "--json"), stdout=write_end, stderr=subprocess.PIPE, env=_env(tmp_path)
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        time.sleep(1)  # the doctor meets the full pipe before anything is read
        document = reader.read()
    assert (proc.wait(timeout=120), json.loads(document)["schema"]) == (3, "mhcdoctor.check/1")


F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ (Linux; Python 3.10+ names it, typeshed not yet everywhere)
