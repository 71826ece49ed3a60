"""A full check shows each probe as it finishes, with its time, on stderr (flutter doctor's way): redrawn in place on
a terminal, a plain line each with TERM=dumb, nothing in a pipe; stdout keeps the report alone."""

from __future__ import annotations

import os
import pty
import subprocess

import doctor
import fakes
import pytest
from fakemachine import Machine

from mhcdoctor.probes import PROBES

pytestmark = pytest.mark.slow  # full checks: a child per import probe


def _stderr_on_a_terminal(machine: Machine, term: str) -> str:
    leader, follower = pty.openpty()
    argv = doctor.argv("check", "--python", str(machine.python), "--model", "deepseek-v4-pro")
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=follower, env={**machine.env(), "TERM": term}, cwd=machine.cwd
    )
    os.close(follower)
    shown = doctor.read_terminal(leader).decode("utf-8", "replace")
    proc.wait(timeout=120)
    return shown


@pytest.fixture
def machine(tmp_path) -> Machine:
    machine = Machine(tmp_path)
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.12")
    return machine


def test_on_a_dumb_terminal_each_probe_is_a_plain_line_with_its_time(machine: Machine) -> None:
    shown = _stderr_on_a_terminal(machine, "dumb").replace("\r\n", "\n")
    lines = [line for line in shown.splitlines() if "probes; " in line]
    assert len(lines) == len(PROBES) and "\x1b" not in shown
    assert lines[-1].startswith(f"mhcdoctor: {len(PROBES)}/{len(PROBES)} probes; ")
    assert any(line.startswith("mhcdoctor: ") and " tilelang.import ok in " in line for line in lines)


def test_on_a_terminal_one_status_line_is_redrawn_and_cleared(machine: Machine) -> None:
    shown = _stderr_on_a_terminal(machine, "xterm")
    assert f"] {len(PROBES)}/{len(PROBES)} probes; " in shown and "\r\x1b[Kmhcdoctor: [" in shown
    assert shown.endswith("\r\x1b[K")  # cleared before the report


def test_in_a_pipe_nothing_but_the_report(machine: Machine) -> None:
    done = doctor.spawn("check", "--model", "deepseek-v4-pro", env=machine, timeout=120)
    assert "probes; " not in done.stderr and "\x1b" not in done.stderr and done.stdout.startswith("mhcdoctor ")
