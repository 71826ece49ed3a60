"""Attacks on the temporary-folder sweeper: what it may open, what it may remove, and live makers racing it.

A doctor that dies by SIGKILL cannot remove its folder; the next doctor of the same user sweeps it
(childproc.sweep_dead_folders). These tests plant what a hostile archive, a careless engineer or another doctor could
leave in TMPDIR, then run real doctors and real sweeps. Linux only (flock, FIFOs).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from mhcdoctor import childproc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock, FIFOs and /proc")

REPO = Path(__file__).resolve().parents[1]

# Makes a temporary folder as a doctor does, says where, and waits to be killed.
_MAKER = """
import sys
from mhcdoctor import childproc
with childproc.temp_dir() as d:
    print(d, flush=True)
    sys.stdin.read()
"""


def python(tmpdir: Path, code: str, *args: str) -> subprocess.Popen[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir), "HOME": str(tmpdir)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def dead_doctors_folder(tmpdir: Path) -> Path:
    """A real doctor's folder whose maker was SIGKILLed."""
    maker = python(tmpdir, _MAKER)
    assert maker.stdout is not None
    folder = Path(maker.stdout.readline().strip())
    maker.kill()
    maker.wait(timeout=10)
    assert folder.is_dir()
    return folder


def a_doctors_first_folder(tmpdir: Path, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """A new doctor process making its first temporary folder (which sweeps first), as any command does."""
    code = "from mhcdoctor import childproc\nwith childproc.temp_dir():\n    pass\nprint('done')\n"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir), "HOME": str(tmpdir)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)


def hostile_bundle(lock: str) -> bytes:
    """A tiny tar.gz whose top folder is mhcdoctor-report/ and which holds a `.mhcdoctor-lock` of the kind asked."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        top = tarfile.TarInfo("mhcdoctor-report")
        top.type, top.mode = tarfile.DIRTYPE, 0o700
        tar.addfile(top)
        entry = tarfile.TarInfo("mhcdoctor-report/.mhcdoctor-lock")
        entry.mode = 0o600
        if lock == "fifo":
            entry.type = tarfile.FIFOTYPE
            tar.addfile(entry)
        else:  # a regular file holding a made-up proof of the right form
            forged = b"mhcdoctor temporary folder\ndev 1 folder 2 lock 3\n"
            entry.size = len(forged)
            tar.addfile(entry, io.BytesIO(forged))
    return out.getvalue()


def unpack(tmpdir: Path, bundle: bytes) -> Path:
    """Unpacked with the real `tar`, as an engineer would, in TMPDIR."""
    archive = tmpdir.parent / "bundle.tar.gz"
    archive.write_bytes(bundle)
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(tmpdir)], check=True)
    return tmpdir / "mhcdoctor-report"


@pytest.fixture
def tmpdir(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_a_fifo_unpacked_from_a_hostile_bundle_never_hangs_a_doctor(tmpdir):
    bundle = hostile_bundle("fifo")
    report = unpack(tmpdir, bundle)
    (report / "notes.txt").write_text("what I found so far\n")
    assert len(bundle) < 300

    start = time.monotonic()
    done = a_doctors_first_folder(tmpdir)

    print(
        f"ATTACK FIFO lock in a {len(bundle)} B bundle: doctor took {time.monotonic() - start:.2f} s", file=sys.stderr
    )
    assert done.stdout.strip() == "done", done.stderr
    assert (report / "notes.txt").read_text() == "what I found so far\n"


@pytest.mark.parametrize("what", ["forged-file", "folder", "link", "copied-real-lock"])
def test_a_folder_the_doctor_did_not_make_is_never_removed(tmpdir, what):
    notes = tmpdir / "mhcdoctor-notes"
    if what == "forged-file":
        notes = unpack(tmpdir, hostile_bundle("forged"))
    else:
        notes.mkdir(mode=0o700)
        if what == "folder":
            (notes / ".mhcdoctor-lock").mkdir()
        elif what == "link":
            (notes / ".mhcdoctor-lock").symlink_to(dead_doctors_folder(tmpdir) / ".mhcdoctor-lock")
        else:  # a real, unlocked lock file copied from a dead doctor's folder: its proof names that folder
            (notes / ".mhcdoctor-lock").write_bytes((dead_doctors_folder(tmpdir) / ".mhcdoctor-lock").read_bytes())
            (notes / ".mhcdoctor-lock").chmod(0o600)
    (notes / "notes.txt").write_text("keep me\n")

    removed = childproc.sweep_dead_folders(str(tmpdir))

    assert str(notes) not in removed
    assert (notes / "notes.txt").read_text() == "keep me\n"


def test_a_dead_doctors_folder_is_removed_and_a_live_ones_is_not(tmpdir):
    live = python(tmpdir, _MAKER)
    assert live.stdout is not None and live.stdin is not None
    alive = Path(live.stdout.readline().strip())
    dead = dead_doctors_folder(tmpdir)

    removed = childproc.sweep_dead_folders(str(tmpdir))

    assert removed == [str(dead)] and alive.is_dir()
    live.stdin.close()
    assert live.wait(timeout=10) == 0 and not alive.exists()


# Each worker makes folders as fast as it can for `seconds`, puts a file in each, sweeps as a new doctor would, and
# counts the folders of its own that vanished while it held them. One in five is left behind by a SIGKILL-like
# exit (os._exit in a forked child), so every sweep has dead folders to take.
_RACER = """
import json, os, sys, tempfile, time
from mhcdoctor import childproc
base, seconds = tempfile.gettempdir(), float(sys.argv[1])
made = lost = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    made += 1
    if made % 5 == 0 and os.fork() == 0:
        with childproc.temp_dir() as d:
            os._exit(0)
    with childproc.temp_dir() as d:
        try:
            (d / "work").write_bytes(b"x")
            childproc.sweep_dead_folders(base)
            kept = (d / "work").exists()
        except OSError:  # the folder went before the file was written
            kept = False
        lost += not kept
    if made % 5 == 0:
        os.wait()
print(json.dumps({"made": made, "lost": lost}))
"""


@pytest.mark.slow
def test_under_load_no_sweep_ever_takes_a_live_doctors_folder(tmpdir):
    workers = [python(tmpdir, _RACER, "8") for _ in range(6)]
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        results.append(json.loads(out))
    made, lost = sum(r["made"] for r in results), sum(r["lost"] for r in results)
    print(f"ATTACK sweep race, 6 workers x 8 s: {lost} of {made} live folders taken", file=sys.stderr)
    assert made > 100
    assert lost == 0
    childproc.sweep_dead_folders(str(tmpdir))
    assert list(tmpdir.iterdir()) == [], "every dead folder is swept in the end"
