"""Attacks on the files the doctor writes (`--bundle`, `--plot`): a full disk, a FIFO, a link, an existing file.

Each runs the real command in a child process and asserts what the user sees (exit code, one line) and what is on
disk afterwards: the target whole or as it was, nothing written through a link, no temporary file left beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import doctor
import pytest

from mhcdoctor.errors import InputError
from mhcdoctor.outfiles import write_file

REPO = Path(__file__).resolve().parents[2]


def cli(tmp: Path, *args: str, fsize: int | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m mhcdoctor ARGS` in `tmp` as a child process; `fsize`: its RLIMIT_FSIZE (a file-size limit)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "PYTHONPATH": str(REPO), "NO_COLOR": "1"}

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return doctor.spawn(*args, env=env, cwd=tmp, timeout=timeout, preexec_fn=limit)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@contextlib.contextmanager
def tmpfs(where: Path, size_kib: int) -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill the file system at `disk` until fewer than `leave` bytes are free; the filler file."""
    filler = disk / "filler"
    with open(filler, "wb") as f:
        chunk = b"\0" * 4096
        with contextlib.suppress(OSError):
            while shutil.disk_usage(disk).free > leave:
                f.write(chunk)
                f.flush()
    return filler


@pytest.mark.slow
def test_a_full_disk_leaves_no_cut_bundle_and_the_next_run_writes_it(tmp_path):
    with tmpfs(tmp_path / "disk", 1024) as disk:
        target = disk / "b.tar.gz"
        filler = fill(disk, 4096)  # a --fast bundle is about 10 KiB

        full = cli(tmp_path, "report", "--fast", "--bundle", str(target))

        assert full.returncode == 2 and full.stdout == ""
        assert full.stderr.strip().endswith("No space left on device; nothing was written"), full.stderr
        assert "Traceback" not in full.stderr
        assert not target.exists() and leftovers(disk) == []

        filler.unlink()
        again = cli(tmp_path, "report", "--fast", "--bundle", str(target))

        assert again.returncode == 0, again.stderr
        with tarfile.open(target) as tar:
            assert "mhcdoctor-report/report.json" in tar.getnames()


@pytest.mark.slow
def test_a_full_disk_leaves_the_bundle_being_replaced_as_it_was(tmp_path):
    with tmpfs(tmp_path / "disk", 1024) as disk:
        target = disk / "b.tar.gz"
        assert cli(tmp_path, "report", "--fast", "--bundle", str(target)).returncode == 0
        before = digest(target)
        fill(disk, 4096)

        proc = cli(tmp_path, "report", "--fast", "--bundle", str(target), "--force")

        assert proc.returncode == 2 and "No space left on device" in proc.stderr
        assert digest(target) == before and leftovers(disk) == []


def test_a_file_size_limit_cuts_nothing(tmp_path):
    target = tmp_path / "b.tar.gz"

    proc = cli(tmp_path, "report", "--fast", "--bundle", str(target), fsize=2048)

    assert proc.returncode == 2 and "File too large; nothing was written" in proc.stderr, proc.stderr
    assert not target.exists() and leftovers(tmp_path) == []


def test_a_bundle_onto_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "b.tar.gz"
    os.mkfifo(fifo)

    proc = cli(tmp_path, "report", "--fast", "--bundle", str(fifo), "--force", timeout=30)

    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"mhcdoctor: error: cannot write bundle {fifo}: it is a FIFO; refusing to replace anything but a regular file"
    )


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_a_bundle_onto_a_link_never_writes_through_it(tmp_path, force):
    victim = tmp_path / "notes.txt"
    victim.write_text("the engineer's notes\n")
    link = tmp_path / "b.tar.gz"
    link.symlink_to(victim)

    proc = cli(tmp_path, "report", "--fast", "--bundle", str(link), *force)

    assert proc.returncode == 2 and "it is a symbolic link" in proc.stderr
    assert victim.read_text() == "the engineer's notes\n" and link.is_symlink()


def test_merge_bundle_replaces_a_file_only_with_force(tmp_path):
    report = tmp_path / "node-1.json"
    report.write_text(cli(tmp_path, "report", "--fast", "--json").stdout)
    target = tmp_path / "fleet.tar.gz"
    target.write_bytes(b"yesterday's bundle")

    refused = doctor.run("merge", str(report), "--bundle", str(target), cwd=tmp_path)

    assert refused.returncode == 2 and refused.stdout == ""
    assert (
        refused.stderr.strip()
        == f"mhcdoctor: error: cannot write bundle {target}: it exists (give --force to replace it)"
    )
    assert target.read_bytes() == b"yesterday's bundle"

    forced = doctor.run("merge", str(report), "--bundle", str(target), "--force", "--fail-on", "never", cwd=tmp_path)

    assert forced.returncode == 0, forced.stderr
    with tarfile.open(target) as tar:
        assert "mhcdoctor-fleet/nodes/node-1.json" in tar.getnames()


def test_bench_plot_onto_a_link_is_refused_before_anything_is_timed(tmp_path):
    pytest.importorskip("matplotlib")
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"not yours")
    link = tmp_path / "bw.png"
    link.symlink_to(victim)

    proc = doctor.run("bench", "--device", "cpu", "--path", "torch", "--plot", str(link), cwd=tmp_path)

    assert proc.returncode == 2 and proc.stdout == ""
    assert "cannot write --plot" in proc.stderr and "it is a symbolic link" in proc.stderr
    assert victim.read_bytes() == b"not yours"


def test_a_link_put_in_place_after_the_check_is_replaced_not_followed(tmp_path, monkeypatch):
    """The race: the target is checked, then swapped for a link before the write; the rename replaces the link."""
    from mhcdoctor import outfiles

    victim = tmp_path / "victim"
    victim.write_text("keep")
    target = tmp_path / "out.bin"
    target.write_text("old")
    checked = outfiles.check_target

    def check_then_swap(path: str | Path, what: str, replace: bool) -> None:
        checked(path, what, replace)
        target.unlink()
        target.symlink_to(victim)

    monkeypatch.setattr(outfiles, "check_target", check_then_swap)
    write_file(target, b"new", "test file", replace=True)

    assert victim.read_text() == "keep"
    assert not target.is_symlink() and target.read_bytes() == b"new"


def test_without_replace_a_file_that_appears_meanwhile_is_never_overwritten(tmp_path, monkeypatch):
    from mhcdoctor import outfiles

    target = tmp_path / "out.bin"
    checked = outfiles.check_target

    def check_then_create(path: str | Path, what: str, replace: bool) -> None:
        checked(path, what, replace)
        target.write_text("someone else's")

    monkeypatch.setattr(outfiles, "check_target", check_then_create)
    with pytest.raises(InputError, match="it exists"):
        write_file(target, b"new", "test file", replace=False)

    assert target.read_text() == "someone else's" and leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["folder", "device"])
def test_a_folder_or_a_device_is_never_replaced(tmp_path, kind):
    target = tmp_path / "out" if kind == "folder" else Path("/dev/null")
    if kind == "folder":
        target.mkdir()

    with pytest.raises(InputError, match=f"it is a {kind}; refusing"):
        write_file(target, b"x", "test file", replace=True)


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "private.tar.gz"
    target.write_bytes(b"old")
    target.chmod(0o600)

    write_file(target, b"new", "test file", replace=True)

    assert target.read_bytes() == b"new" and oct(target.stat().st_mode & 0o777) == "0o600"


def test_the_documented_report_command_run_twice_keeps_the_report_beside_its_bundle(tmp_path: Path) -> None:
    """`report --bundle b.tar.gz > report.md` again: the shell has emptied report.md before mhcdoctor refuses to
    replace the bundle; the report the bundle holds is printed again, so report.md still matches it."""
    first = cli(tmp_path, "report", "--fast", "--bundle", "b.tar.gz")
    again = cli(tmp_path, "report", "--fast", "--bundle", "b.tar.gz")
    assert first.returncode == 0 and first.stdout
    assert (again.returncode, again.stdout) == (2, first.stdout)
    assert again.stderr.splitlines()[-1] == (
        "mhcdoctor: error: cannot write bundle b.tar.gz: it exists (give --force to replace it); the report it holds "
        "was printed again, so it matches what stdout goes to"
    )
