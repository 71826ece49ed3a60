"""Live logs, in real processes: a FIFO nobody writes to, `--follow` on a growing file, a pipe, and Ctrl-C (issue 31
item 10): findings appear as the log shows them, and Ctrl-C reports everything read so far."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

import doctor as harness
import pytest  # `doctor` names the process in these tests
from logs import Server

REPO = Path(__file__).parents[2]
PDL = "RuntimeError: Worker failed with error 'Check failed: is false: PDL is not supported'"


def _doctor(*args: str, **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        harness.argv("log", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        **kwargs,  # type: ignore[call-overload]
    )


def _wait_for(stream, needle: bytes, timeout: float = 60) -> bytes:
    """Read `stream` (a pipe) until `needle` appears; what was read."""
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([stream], [], [], left)[0], seen  # a read would wait past the deadline
        chunk = os.read(stream.fileno(), 4096)
        assert chunk, seen  # the process ended before saying it
        seen += chunk
    return seen


@pytest.mark.slow
def test_a_fifo_with_no_writer_is_one_line_after_a_bounded_wait(tmp_path):
    fifo = tmp_path / "vllm.fifo"
    os.mkfifo(fifo)
    began = time.monotonic()
    done = harness.spawn("log", str(fifo), timeout=60, cwd=REPO)
    took = time.monotonic() - began
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "is a FIFO that no process wrote to in 5 s" in done.stderr
    assert took < 30


def test_a_fifo_with_a_writer_is_read(tmp_path):
    fifo = tmp_path / "vllm.fifo"
    os.mkfifo(fifo)
    log = Server("0.25.0").banner().text() + PDL + "\n"

    def write() -> None:
        with open(fifo, "w") as out:  # blocks until the doctor opens its end
            out.write(log)

    writer = threading.Thread(target=write)
    writer.start()
    done = harness.spawn("log", str(fifo), "--json", timeout=60, cwd=REPO)
    writer.join(timeout=30)
    assert done.returncode == 3 and json.loads(done.stdout)["findings"][0]["id"] == "tilelang-pdl-unsupported"


@pytest.mark.slow
def test_follow_prints_a_finding_as_it_appears_and_everything_on_ctrl_c(tmp_path):
    path = tmp_path / "vllm.log"
    path.write_text(Server("0.25.0").banner().started().text())
    doctor = _doctor(str(path), "--follow")
    assert doctor.stderr is not None and doctor.stdout is not None
    time.sleep(2)  # it reads the start, then waits at the end of the file for more
    with path.open("a") as out:
        out.write(PDL + "\n")
    said = _wait_for(doctor.stderr, b"tilelang-pdl-unsupported")
    assert b"mhcdoctor log: line 4  (no process prefix): RuntimeError: Worker failed" in said
    assert doctor.poll() is None  # still following
    doctor.send_signal(signal.SIGINT)
    out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 3
    assert b"the input ends early: interrupted (Ctrl-C) after 4 lines" in out
    assert b"tilelang-pdl-unsupported" in out and b"verdict: fail" in out
    assert b"Traceback" not in said + err


@pytest.mark.slow
def test_follow_reads_a_log_truncated_under_it_from_its_start(tmp_path):
    """logrotate's copytruncate empties the file the server goes on writing: what is written after it is read (as
    `tail -F` does), not waited for past the old end for ever."""
    path = tmp_path / "vllm.log"
    path.write_text(Server("0.25.0").banner().started().text())
    doctor = _doctor(str(path), "--follow")
    assert doctor.stderr is not None
    time.sleep(2)  # it reads the start, then waits at the end of the file for more
    path.write_text(PDL + "\n")  # truncated, then one shorter line written from its start
    try:
        said = _wait_for(doctor.stderr, b"tilelang-pdl-unsupported", timeout=20)
    finally:
        doctor.send_signal(signal.SIGINT)
    out, _ = doctor.communicate(timeout=60)
    assert b"RuntimeError: Worker failed" in said
    assert doctor.returncode == 3 and b"verdict: fail" in out


@pytest.mark.slow
def test_ctrl_c_on_a_pipe_reports_what_was_read(tmp_path):
    """`kubectl logs -f | mhcdoctor log -` that is stopped: no bare "interrupted", the report of the lines read."""
    read_end, write_end = os.pipe()
    doctor = _doctor("-", "--json", stdin=read_end)
    os.close(read_end)
    os.write(write_end, (Server("0.25.0").banner().text() + PDL + "\n").encode())
    time.sleep(3)  # the lines are read as they come, not when the pipe ends
    doctor.send_signal(signal.SIGINT)
    out, err = doctor.communicate(timeout=60)
    os.close(write_end)
    document = json.loads(out)
    assert document["source"]["ended_early"].startswith("interrupted (Ctrl-C) after 3 lines")
    assert document["findings"][0]["id"] == "tilelang-pdl-unsupported" and doctor.returncode == 3


def test_a_pipe_into_a_terminal_shows_errors_as_they_come_without_follow(tmp_path):
    """stdin a pipe, stderr a terminal (a person watching `kubectl logs -f ... | mhcdoctor log -`): the errors come
    on the terminal while the pipe is open; stdout still gets the whole report at its end."""
    import pty

    leader, follower = pty.openpty()
    read_end, write_end = os.pipe()
    doctor = subprocess.Popen(
        harness.argv("log", "-"),
        stdin=read_end,
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=REPO,
    )
    os.close(read_end)
    os.close(follower)
    os.write(write_end, (Server("0.25.0").banner().text() + PDL + "\n").encode())
    said = b""
    deadline = time.monotonic() + 60
    while b"tilelang-pdl-unsupported" not in said:  # before the pipe is closed: live
        assert time.monotonic() < deadline, said
        said += os.read(leader, 4096)
    assert doctor.poll() is None
    os.close(write_end)
    out, _ = doctor.communicate(timeout=60)
    said += harness.read_terminal(leader)
    assert b"mhcdoctor log: line 3" in said and b"verdict: fail" in out and doctor.returncode == 3


@pytest.mark.slow
def test_follow_waits_for_a_fifos_writer_until_ctrl_c(tmp_path):
    fifo = tmp_path / "vllm.fifo"
    os.mkfifo(fifo)
    doctor = _doctor(str(fifo), "--follow")
    time.sleep(8)  # longer than the 5 s a FIFO is waited on without --follow
    assert doctor.poll() is None
    doctor.send_signal(signal.SIGINT)
    out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 2 and out == b""
    assert err.count(b"\n") == 1 and b"interrupted (Ctrl-C) before any process wrote to it" in err
