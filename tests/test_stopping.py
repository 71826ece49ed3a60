"""Attacks on the doctor's children: signals, hung and escaping grandchildren, helpers left by a good import, floods.

Each test runs a real `python -m mhcdoctor check` against a fake library whose import misbehaves, then asserts what
a user sees (how fast it stops, its exit code and message, the probe's status and evidence) and that nothing is left:
no process whose argv mentions the test's folder (the import child's result file and every helper's marker are in
it) and nothing in TMPDIR. Linux only: they read /proc.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import fakes
import pytest
from procs import daemon, escapee, helper, running

from mhcdoctor import childproc
from mhcdoctor.childproc import EVIDENCE_CHARS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

REPO = Path(__file__).resolve().parents[1]

# Runs the doctor as `python -m mhcdoctor` does, and on a normal exit prints its peak RSS (VmHWM) to stderr.
_WITH_HWM = """\
import atexit, runpy, sys
def _hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            sys.stderr.write("DOCTOR-" + line)
atexit.register(_hwm)
sys.argv[0] = "mhcdoctor"
runpy.run_module("mhcdoctor", run_name="__main__")
"""


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


class Doctor:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.marker = str(tmp_path)
        self.root = tmp_path / "root"
        self.root.mkdir()
        fakes.nvidia_proc(self.root)
        self.site = fakes.site(tmp_path)
        self.tmpdir = tmp_path / "tmp"
        self.tmpdir.mkdir()
        self.python = fakes.write(
            tmp_path / "bin" / "python", f'#!/bin/sh\nPYTHONPATH="{self.site}" exec "{sys.executable}" -S "$@"\n'
        )
        self.python.chmod(0o755)

    def tag(self, what: str) -> str:
        return f"{what}:{self.marker}"

    def start(self, *args: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
        env.update(
            MHCDOCTOR_SYSROOT=str(self.root),
            PATH=str(self.tmp / "no-bin"),
            HOME=str(self.tmp),
            TMPDIR=str(self.tmpdir),
            PYTHONPATH=str(REPO),
        )
        return subprocess.Popen(
            [sys.executable, "-c", _WITH_HWM, "check", "--python", str(self.python), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=self.tmp,
            start_new_session=True,  # the test's signals go to the doctor alone
        )

    def wait_for(self, needle: str, limit: float = 30) -> None:
        end = time.monotonic() + limit
        while not running(needle):
            assert time.monotonic() < end, f"{needle} never started"
            time.sleep(0.05)

    def leftovers(self, settle: float = 1.0) -> list[str]:
        """What still runs, after up to `settle` seconds for killed processes to be reaped."""
        end = time.monotonic() + settle
        while (left := running(self.marker)) and time.monotonic() < end:
            time.sleep(0.05)
        return left

    def temp_files(self) -> list[str]:
        return sorted(p.name for p in self.tmpdir.iterdir())


@pytest.fixture
def doctor(tmp_path: Path) -> Iterator[Doctor]:
    d = Doctor(tmp_path)
    yield d
    for line in running(d.marker):  # whatever a failing test left: never leave it to the machine
        os.kill(int(line.split(":")[0]), signal.SIGKILL)


def _report(attack: str, **figures: object) -> None:
    print(f"ATTACK {attack}: " + ", ".join(f"{k}={v}" for k, v in figures.items()), file=sys.stderr)


@pytest.mark.parametrize(
    ("signals", "code", "message"),
    [
        ([signal.SIGTERM], 143, "stopped by SIGTERM"),
        ([signal.SIGHUP], 129, "stopped by SIGHUP"),
        ([signal.SIGINT] * 3, 130, "interrupted"),
        ([signal.SIGINT], 130, "interrupted"),
    ],
    ids=["SIGTERM", "SIGHUP", "3xSIGINT", "1xSIGINT"],
)
@pytest.mark.parametrize("setsid", [False, True], ids=["grandchild", "setsid-grandchild"])
def test_a_signal_stops_the_doctor_at_once_with_nothing_left(doctor, signals, code, message, setsid):
    tag = doctor.tag("hung-helper")
    fakes.library(doctor.site, "tilelang", "0.1.12", init=helper(tag, setsid) + "time.sleep(600)\n")
    proc = doctor.start("--timeout", "60")
    doctor.wait_for(tag)
    rss = peak_rss_kib(proc.pid)
    start = time.monotonic()
    for number in signals:
        proc.send_signal(number)
        time.sleep(0.05)
    _, stderr = proc.communicate(timeout=10)
    seconds = time.monotonic() - start
    left = doctor.leftovers()
    _report(f"{'+'.join(s.name for s in signals)} setsid={setsid}", exit_s=round(seconds, 2), rss_kib=rss, left=left)
    assert proc.returncode == code
    assert seconds < 2, "it stops at once, not after the remaining --timeout"
    assert f"mhcdoctor: {message}" in stderr and "Traceback" not in stderr
    assert left == []
    assert doctor.temp_files() == []


def test_a_timeout_kills_a_grandchild_that_left_the_group(doctor):
    tag = doctor.tag("setsid-helper")
    fakes.library(doctor.site, "tilelang", "0.1.12", init=helper(tag, setsid=True) + "time.sleep(600)\n")
    start = time.monotonic()
    proc = doctor.start("--json", "--timeout", "2")
    stdout, stderr = proc.communicate(timeout=60)
    seconds = time.monotonic() - start
    left = doctor.leftovers()
    _report("timeout with a setsid grandchild", run_s=round(seconds, 2), left=left)
    probe = next(p for p in json.loads(stdout)["probes"] if p["name"] == "tilelang.import")
    assert probe["status"] == "timeout"
    assert left == []
    assert doctor.temp_files() == []


def test_an_import_that_succeeds_but_leaves_a_daemon_on_its_stdout_is_ok_and_the_daemon_dies(doctor):
    tag = doctor.tag("daemon")
    fakes.library(doctor.site, "tilelang", "0.1.12", init=daemon(tag))
    start = time.monotonic()
    proc = doctor.start("--json", "--timeout", "20")
    stdout, stderr = proc.communicate(timeout=60)
    seconds = time.monotonic() - start
    left = doctor.leftovers()
    _report("import ok leaving a setsid daemon on stdout", run_s=round(seconds, 2), left=left)
    probe = next(p for p in json.loads(stdout)["probes"] if p["name"] == "tilelang.import")
    assert probe["status"] == "ok", probe
    assert probe["seconds"] < 10, "waited for the child's exit, not for EOF on its output"
    assert left == []
    assert doctor.temp_files() == []


def test_a_library_printing_400_mb_on_import_leaves_the_doctor_small_and_the_tail_as_evidence(doctor):
    flood = (
        "import sys\nline = 'x' * 1023 + '\\n'\nblock = line * 1024\n"
        "for _ in range(400):\n    sys.stdout.write(block)\n"
        "sys.stdout.write('END-OF-FLOOD\\n'); sys.stdout.flush()\n"
        "raise ImportError('after the flood')\n"
    )
    fakes.library(doctor.site, "tilelang", "0.1.12", init=flood)
    start = time.monotonic()
    proc = doctor.start("--json", "--timeout", "60")
    stdout, stderr = proc.communicate(timeout=120)
    seconds = time.monotonic() - start
    rss = int(next(line for line in stderr.splitlines() if line.startswith("DOCTOR-VmHWM")).split()[1])
    _report("400 MB on stdout at import", run_s=round(seconds, 2), doctor_peak_rss_kib=rss)
    probe = next(p for p in json.loads(stdout)["probes"] if p["name"] == "tilelang.import")
    assert probe["status"] == "error" and "after the flood" in probe["error"]
    out = next(line for line in probe["evidence"] if line.startswith("stdout: "))
    # The local JSON keeps the tail raw (shared reports mask secrets in it, then cut it to redact.DISPLAY_CHARS).
    assert out.endswith("END-OF-FLOOD") and len(out) <= EVIDENCE_CHARS + 100, "the evidence is the output's tail, cut"
    assert rss < 80 * 1024, f"doctor peak RSS {rss} KiB"
    assert doctor.temp_files() == []
    assert doctor.leftovers() == []


def test_a_sigkilled_doctors_folders_are_removed_by_the_next_doctor_and_a_live_ones_are_not(doctor):
    fakes.library(doctor.site, "tilelang", "0.1.12", init="import time\ntime.sleep(600)\n")
    older = doctor.tmpdir / "mhcdoctor-older-release"  # no lock file: whose it is cannot be told, so it stays
    older.mkdir()
    outside = doctor.tmp / "outside"  # a dead doctor's folder reached through a link: links are never followed
    outside.mkdir()
    (outside / ".mhcdoctor-lock").touch()
    (doctor.tmpdir / "mhcdoctor-link").symlink_to(outside)
    before = set(doctor.temp_files())

    first = doctor.start("--timeout", "60")
    doctor.wait_for(str(doctor.tmpdir))  # its import child runs, with its result file in the doctor's folder
    first.kill()  # SIGKILL: nothing can be done at the time; the children die with it (parent-death signal)
    first.communicate(timeout=30)  # seconds at most; 30 for a loaded CI machine (a fresh-clone run hit 10)
    assert doctor.leftovers() == []
    dead = set(doctor.temp_files()) - before
    assert dead, "a SIGKILLed doctor cannot remove its folder itself"

    second = doctor.start("--timeout", "60")
    doctor.wait_for(str(doctor.tmpdir))
    live = set(doctor.temp_files()) - before
    assert live and not live & dead, "the next doctor removed the dead one's folders, and only those"
    assert childproc.sweep_dead_folders(str(doctor.tmpdir)) == [], "a live doctor's folders are locked"
    base = childproc.cgroup_base()
    if base is not None:  # and its empty cgroup (named after its pid) is gone too
        assert not [name for name in os.listdir(base) if name.startswith(f"mhcdoctor-{first.pid}-")]
    assert set(doctor.temp_files()) == before | live
    assert (outside / ".mhcdoctor-lock").exists()

    second.send_signal(signal.SIGTERM)
    _, stderr = second.communicate(timeout=30)  # a hang would pass any limit; 10 s was hit once under CI's load
    assert second.returncode == 143, stderr
    assert doctor.leftovers() == []
    assert set(doctor.temp_files()) == before


def test_a_folder_whose_lock_cannot_be_held_has_no_lock_file_so_no_sweeper_removes_it_while_in_use(monkeypatch):
    def refuse(fd: int, operation: int) -> None:
        raise OSError(37, "No locks available")  # ENOLCK, as some network file systems answer

    monkeypatch.setattr(childproc.fcntl, "flock", refuse)
    with childproc.temp_dir() as folder:
        assert folder.is_dir() and list(folder.iterdir()) == []
    assert not folder.exists()


@pytest.mark.parametrize("then", ["returns", "hangs"])
def test_a_helper_that_sheds_session_and_environment_dies_with_a_normal_check(doctor, then):
    tag = doctor.tag("escapee")
    hang = "import time\ntime.sleep(600)\n" if then == "hangs" else ""
    fakes.library(doctor.site, "tilelang", "0.1.12", init=escapee(tag) + hang)
    proc = doctor.start("--json", "--timeout", "3")
    stdout, stderr = proc.communicate(timeout=60)
    left = doctor.leftovers()
    _report(f"setsid + empty environment helper, import {then}", exit=proc.returncode, left=left)
    probe = next(p for p in json.loads(stdout)["probes"] if p["name"] == "tilelang.import")
    assert probe["status"] == ("ok" if then == "returns" else "timeout"), probe
    assert left == []
    assert doctor.temp_files() == []


@pytest.mark.skipif(childproc.cgroup_base() is None, reason="needs a writable cgroup v2 folder (root, or delegation)")
def test_in_a_process_hosting_the_doctor_a_helper_that_sheds_everything_dies_with_its_cgroup(tmp_path):
    """A Ray worker or a test run hosts the doctor among other work, so it cannot take every orphan for its own:
    there the child's cgroup, which a helper cannot leave by setsid, fork or a new environment, finds it."""
    tag = f"cgroup-escapee:{tmp_path}"
    done = childproc.run([sys.executable, "-c", escapee(tag)], {"PATH": os.environ.get("PATH", "")}, 20)
    left = running(tag)
    _report("setsid + empty environment helper, doctor hosted in-process, cgroup", left=left)
    for line in left:
        os.kill(int(line.split(":")[0]), signal.SIGKILL)
    assert done.status == "ok" and done.returncode == 0, done
    assert left == []
    assert not [p for p in os.listdir(childproc.cgroup_base() or "/") if p.startswith(f"mhcdoctor-{os.getpid()}-")]
