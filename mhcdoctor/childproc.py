"""The one way mhcdoctor starts a process: bounded in time and memory, and nothing of it left running.

Every child (an import probe, a compiler's `--version`, a verify worker) is started here, and:

- runs in its own session and process group, with `MHCDOCTOR_CHILD=<token>` in its environment, and on Linux a
  parent-death signal (SIGKILL when the doctor's thread that started it dies; SIGTERM for a child that is itself a
  doctor, which then stops what it started, as a fleet node's check does when Ray kills its worker);
- is waited for by its pid, never by EOF on a pipe: its stdout and stderr go to files (opened for appending), which
  the parent trims while it waits and reads only the last `OUTPUT_TAIL_BYTES` of, so a library printing 400 MB at
  import costs the doctor neither memory nor much disk (a caller that needs a child's whole stdout, such as a fleet
  node reading the JSON report its check printed, asks for up to `STDOUT_BYTES_MAX` of it with `stdout_bytes`);
- is killed with everything it started when it times out, and after it exits (an import that *succeeded* may have
  left helper daemons): its cgroup, its process group, its descendants (walked through /proc, before anything is
  killed, while the tree is whole), and every process carrying its token.
- on Linux with cgroup v2 where this process may make cgroups (root; a delegated subtree), runs in a cgroup of its
  own, which it enters before it execs: nothing it starts can leave it by setsid(), a double fork or a new
  environment, and cgroup.kill ends all of it (`MHCDOCTOR_CGROUPS=0` turns this off).
- has the doctor as child subreaper (PR_SET_CHILD_SUBREAPER), so every orphan in its tree is re-parented to the
  doctor rather than to init. Run as the program itself (`own_orphans`, from the CLI's entry point), the doctor
  takes every such orphan for a helper one of its children left and kills it: a helper that shed its session and
  its environment (the token) is found that way where there are no cgroups.
- `shutdown()` kills every live child and removes every temporary folder made here; the CLI calls it from its
  SIGTERM/SIGHUP/SIGINT handlers.

Temporary folders (`temp_dir`) hold a lock file their maker keeps flocked; a later doctor removes the folders of
dead doctors (`sweep_dead_folders`), never blocking, never following a link, opening only regular files it can prove
a doctor made, and never racing a live maker.

This module is a low layer: it imports nothing from mhcdoctor.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

try:
    import fcntl
except ImportError:  # not on Windows: folders are then only removed by their maker
    fcntl = None  # type: ignore[assignment]

# The most of a child's stdout/stderr kept as evidence. Large on purpose: shared reports mask secrets in the whole
# text first and only then cut it to its display length (redact.DISPLAY_CHARS), so no secret is split by a cut.
# `cut_evidence` is the one place evidence is cut to it.
EVIDENCE_CHARS = 64 * 1024
# The most of each output file the parent reads, unless the caller asks for more of stdout (`stdout_bytes`).
OUTPUT_TAIL_BYTES = 64 * 1024
# The most of stdout a caller may ask to keep and read back (`stdout_bytes`): it is held in memory whole.
STDOUT_BYTES_MAX = 64 * 1024 * 1024
# An output file longer than this (or than the part of it kept, if larger) has all but its kept tail punched out
# while the child runs (disk bound).
OUTPUT_DISK_BYTES = 8 * 1024 * 1024
# The most of a result file read back.
RESULT_BYTES = 4 * 1024 * 1024
TOKEN_VARIABLE = "MHCDOCTOR_CHILD"
# Every temporary folder made here is named TEMP_ROOT..., and holds LOCK_NAME, flocked by its maker (temp_dir).
TEMP_ROOT = "mhcdoctor-"
LOCK_NAME = ".mhcdoctor-lock"
_POLL_SECONDS = 0.02

_PR_SET_PDEATHSIG = 1
# The signals that stop a doctor (mhcdoctor.cli's handlers; mhcdoctor.fleet's while a fleet runs): Ctrl-C, `kill`,
# a closed terminal or dropped ssh session.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())
_PR_SET_CHILD_SUBREAPER = 36

_lock = threading.RLock()
_live: dict[int, Child] = {}  # pid -> child still to be cleaned up
_temp_dirs: set[str] = set()
_swept = False  # this process has swept dead doctors' folders (temp_dir)
_stopping = False
_prctl: ctypes._CFuncPtr | None = None  # type: ignore[name-defined]
_libc: ctypes.CDLL | None = None
_subreaper = False
_own_orphans = False  # this process is the doctor itself: every orphan re-parented to it is one of its children's


def _load_prctl() -> None:
    global _prctl, _libc
    if not sys.platform.startswith("linux") or _prctl is not None:
        return
    try:
        # the C library Python itself runs on (dlopen(NULL)): find_library("c") would start `ldconfig -p` to look it up
        _libc = ctypes.CDLL(None, use_errno=True)
        _prctl = _libc.prctl
    except (OSError, AttributeError):
        _prctl = _libc = None


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux), so orphaned grandchildren are re-parented to it. Idempotent."""
    global _subreaper
    _load_prctl()
    if _prctl is not None and not _subreaper:
        _subreaper = _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def own_orphans() -> None:
    """Declare this process the doctor itself (the CLI's entry point, nothing else running in it): it becomes a child
    subreaper, and every process re-parented to it that it did not start is a helper one of its children left
    behind, whatever session or environment it gave itself, and is killed when a child is cleaned up and by
    `finish()`. Not for a process that hosts the doctor among other work (a test run, a Ray worker), whose other
    processes could be re-parented to it too."""
    global _own_orphans
    _own_orphans = True
    become_subreaper()


def finish() -> None:
    """Kill what children left re-parented to this process (see own_orphans); for the end of a command."""
    if _own_orphans:
        _kill_orphans()


def _in_child(death_signal: int = signal.SIGKILL) -> None:
    """Runs in the forked child before exec: `death_signal` when the parent dies (Linux)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, death_signal, 0, 0, 0)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def cut_evidence(text: str) -> str:
    """The last EVIDENCE_CHARS of a child's output, marked `…` where cut."""
    text = text.strip()
    return text if len(text) <= EVIDENCE_CHARS else "…" + text[-EVIDENCE_CHARS:]


class _Capture:
    """One output stream of a child: a file it appends to; the parent keeps only a bounded tail, `keep` bytes."""

    def __init__(self, path: Path, keep: int = OUTPUT_TAIL_BYTES) -> None:
        self.path = path
        self.keep = keep
        self.punched = 0  # bytes at the file's start already given back to the disk

    def open_for_child(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)

    def trim(self) -> None:
        """Give back the disk blocks of all but the tail. The file keeps its length (a hole at its start), so no write
        of the child's can land between a read and a cut and be lost, as truncating would allow."""
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return
        keep_from = (size - self.keep) // 4096 * 4096
        if size > max(OUTPUT_DISK_BYTES, self.keep) and keep_from > self.punched and _punch_hole(self.path, keep_from):
            self.punched = keep_from

    def text(self) -> str:
        try:
            with open(self.path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - self.keep))
                data = f.read(self.keep)
        except OSError:
            return ""
        text = data.decode("utf-8", errors="replace")
        return "…" + text if size > self.keep else text


def _punch_hole(path: Path, length: int) -> bool:
    """fallocate(PUNCH_HOLE | KEEP_SIZE) over the first `length` bytes (Linux); False where it cannot."""
    _load_prctl()
    if _libc is None:
        return False
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        return int(_libc.fallocate(fd, 0x03, ctypes.c_long(0), ctypes.c_long(length))) == 0
    finally:
        os.close(fd)


# --- cgroups: a container a child and everything it starts cannot leave (Linux, cgroup v2, where writable) --------

_CGROUP_PREFIX = "mhcdoctor-"
_OFF = ("0", "off", "no", "false")  # MHCDOCTOR_CGROUPS=0 turns cgroups off
_cgroup_base: str | None = None
_cgroup_checked = False


def cgroup_base() -> str | None:
    """The cgroup v2 folder this process lives in, if it may make cgroups there (root, or a delegated subtree such as
    systemd gives a user service); else None and children are tracked without cgroups. Looked up once."""
    global _cgroup_base, _cgroup_checked
    with _lock:
        if not _cgroup_checked:
            _cgroup_checked = True
            _cgroup_base = _find_cgroup_base()
            if _cgroup_base is not None:
                _remove_dead_cgroups(_cgroup_base)
        return _cgroup_base


def _remove_dead_cgroups(base: str) -> None:
    """Remove the empty cgroups that doctors killed by SIGKILL left (named after their pid, which no longer runs).
    Only rmdir, which the kernel refuses for a cgroup with anything in it; nothing is killed."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            pid = name[len(_CGROUP_PREFIX) :].split("-")[0]
            if not name.startswith(_CGROUP_PREFIX) or not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(base, name))
            except OSError:
                pass


def _find_cgroup_base() -> str | None:
    if not sys.platform.startswith("linux") or os.environ.get("MHCDOCTOR_CGROUPS", "").strip().lower() in _OFF:
        return None
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            mine = next((line[3:].strip() for line in f if line.startswith("0::")), None)
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    for fields in mounts:
        dash = fields.index("-") if "-" in fields else -1
        if mine is None or dash < 0 or dash + 1 >= len(fields) or fields[dash + 1] != "cgroup2":
            continue
        root, point = fields[3], fields[4]
        if mine == root or mine.startswith(root.rstrip("/") + "/"):
            folder = os.path.normpath(os.path.join(point, mine[len(root.rstrip("/")) :].lstrip("/")))
            if os.access(os.path.join(folder, "cgroup.procs"), os.W_OK) and os.access(folder, os.W_OK):
                return folder
    return None


class _Cgroup:
    """One child's cgroup: the child moves itself in before it execs, so all it ever starts is in it too."""

    def __init__(self, base: str, token: str) -> None:
        self.path = os.path.join(base, f"{_CGROUP_PREFIX}{os.getpid()}-{token}")
        os.mkdir(self.path, 0o755)
        try:
            self.procs = os.open(os.path.join(self.path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            os.rmdir(self.path)
            raise

    def enter(self) -> None:
        """In the forked child, before exec: move there (a failure leaves it where it was, tracked as before)."""
        try:
            os.write(self.procs, b"0")
        except OSError:
            pass

    def pids(self) -> list[int]:
        found: list[int] = []
        for folder, _, files in os.walk(self.path):
            if "cgroup.procs" in files:
                with contextlib.suppress(OSError), open(os.path.join(folder, "cgroup.procs")) as f:
                    found += [int(line) for line in f if line.strip().isdigit()]
        return found

    def kill(self) -> None:
        """SIGKILL everything in it and in the cgroups below it (cgroup.kill, Linux 5.14+, else pid by pid)."""
        try:
            with open(os.path.join(self.path, "cgroup.kill"), "w") as f:
                f.write("1")
            return
        except OSError:
            pass
        for _ in range(20):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        """Remove it once empty (its dead are reaped by then); cgroups the child made below it go first."""
        procs, self.procs = self.procs, -1  # closed once: a second close could hit a descriptor reused since
        if procs >= 0:
            with contextlib.suppress(OSError):
                os.close(procs)
        for _ in range(100):
            for folder, _, _ in sorted(os.walk(self.path), key=lambda w: -len(w[0])):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            if not os.path.exists(self.path):
                return
            _reap_orphans(_processes())
            time.sleep(0.01)


class Child:
    """A started child. `poll()` while it runs; `kill()` on timeout; `close()` when done (always).

    `stdout_bytes`: how much of stdout is kept and read back by `output()`: all of it when it is no longer, else its
    last `stdout_bytes` marked `…`. OUTPUT_TAIL_BYTES by default (evidence); at most STDOUT_BYTES_MAX, for a caller
    that parses what the child printed (ValueError beyond it). stderr is always the last OUTPUT_TAIL_BYTES.
    `death_signal`: what the child gets when the thread that started it dies (SIGTERM for a child that is a doctor
    and must stop its own children; anything else is killed)."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        folder: Path,
        cwd: str | None = None,
        stdout_bytes: int = OUTPUT_TAIL_BYTES,
        death_signal: int = signal.SIGKILL,
    ) -> None:
        if not 0 < stdout_bytes <= STDOUT_BYTES_MAX:
            raise ValueError(f"stdout_bytes must be from 1 to {STDOUT_BYTES_MAX}, not {stdout_bytes}")
        self.token = secrets.token_hex(8)
        self.death_signal = death_signal
        self.folder = folder
        self.stdout = _Capture(folder / "stdout", stdout_bytes)
        self.stderr = _Capture(folder / "stderr")
        env = {**env, TOKEN_VARIABLE: self.token}
        self.cgroup: _Cgroup | None = None
        base = cgroup_base()
        if base is not None:
            with contextlib.suppress(OSError):  # none where it cannot be made: tracked without one
                self.cgroup = _Cgroup(base, self.token)
        out, err = self.stdout.open_for_child(), self.stderr.open_for_child()
        try:
            with _lock:
                if _stopping:
                    raise OSError("mhcdoctor is stopping")
                become_subreaper()
                self.popen = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    cwd=cwd if cwd is not None else str(folder),
                    start_new_session=True,
                    preexec_fn=self._in_child if _prctl is not None or self.cgroup is not None else None,
                )
                _live[self.popen.pid] = self
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.remove()
            raise
        finally:
            os.close(out)
            os.close(err)
        self.pid = self.popen.pid
        self.started = time.perf_counter()

    def _in_child(self) -> None:
        """Runs in the forked child before exec: into its cgroup; die with the parent (Linux); nothing else."""
        if self.cgroup is not None:
            self.cgroup.enter()
        _in_child(self.death_signal)

    def poll(self) -> int | None:
        """The exit code once the child has exited, else None; trims its output files while it runs."""
        self.stdout.trim()
        self.stderr.trim()
        return self.popen.poll()

    def kill(self) -> None:
        """Kill the child and everything it started; wait for them."""
        _kill_tree(self)

    def close(self) -> None:
        """Kill whatever is left (the child, or helpers it left running) and forget it."""
        _kill_tree(self)
        if self.cgroup is not None:
            self.cgroup.remove()
        with _lock:
            _live.pop(self.pid, None)

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def output(self) -> tuple[str, str]:
        """The tails of stdout (at most `stdout_bytes`) and stderr (at most OUTPUT_TAIL_BYTES)."""
        return self.stdout.text(), self.stderr.text()


@contextlib.contextmanager
def temp_dir(prefix: str = TEMP_ROOT) -> Iterator[Path]:
    """A temporary folder removed on exit and by `shutdown()`, and by a later doctor if this one is SIGKILLed.

    Its maker holds an exclusive flock on the folder's LOCK_NAME file for the folder's life. The kernel drops the
    lock when the maker dies however it dies, so a folder whose lock can be taken is a dead doctor's (a fleet
    node's Ray worker killed mid-check, an OOM kill): the first folder each process makes sweeps those away first
    (`sweep_dead_folders`). A lock, not a pid in the name, since a live maker in another pid namespace sharing /tmp
    looks dead by pid; the same idea as pytest's numbered temporary folders, which a later run removes once their
    lock is stale.
    """
    _sweep_once()
    path = tempfile.mkdtemp(prefix=prefix)
    lock = _hold_lock(path)
    with _lock:
        _temp_dirs.add(path)
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if lock is not None:
            os.close(lock)  # only once the folder is gone: a sweeper never sees it unlocked
        with _lock:
            _temp_dirs.discard(path)


def _proof(folder: os.stat_result, lock: os.stat_result) -> bytes:
    """What a lock file of ours holds: the identity of its folder and of itself, which no file unpacked from an
    archive or copied from another folder can carry (inode numbers are handed out by the file system)."""
    return f"mhcdoctor temporary folder\ndev {folder.st_dev} folder {folder.st_ino} lock {lock.st_ino}\n".encode()


def _hold_lock(folder: str) -> int | None:
    """Make `folder`'s LOCK_NAME, already flocked when it appears: it is made under another name, locked, given its
    proof, then renamed into place, so no sweeper can ever take the lock of a live maker. The open descriptor holds
    the lock. None where it cannot be held (no flock, a file system refusing it): no lock file is then left, so no
    sweeper takes the folder."""
    if fcntl is None:
        return None
    making = os.path.join(folder, LOCK_NAME + ".making")
    try:
        fd = os.open(making, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, _proof(os.stat(folder, follow_symlinks=False), os.fstat(fd)))
        os.rename(making, os.path.join(folder, LOCK_NAME))
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(making)
        return None
    return fd


def _sweep_once() -> None:
    global _swept
    with _lock:
        if _swept:
            return
        _swept = True
    with contextlib.suppress(OSError):
        sweep_dead_folders(tempfile.gettempdir())


def sweep_dead_folders(base: str) -> list[str]:
    """Remove the TEMP_ROOT* folders in `base` that a doctor of this user made and that doctor has died; the paths
    removed. Never blocks, never follows a link, never opens anything but a regular file, never takes a live folder.

    A folder is taken only if it is a real folder of this user's with mode 0700 (as mkdtemp makes it) whose LOCK_NAME
    is a regular file of this user's, mode 0600, holding the proof `_hold_lock` wrote (its folder's and its own
    inode numbers), and whose lock can be taken. Anything else named mhcdoctor-* (an unpacked bundle, a folder of
    notes, an older release's folder, one made this instant and not yet locked) is left as it is.
    """
    removed: list[str] = []
    if fcntl is None:
        return removed
    for name in os.listdir(base):
        if name.startswith(TEMP_ROOT):
            path = os.path.join(base, name)
            with contextlib.suppress(OSError):
                if _take_if_dead(path):
                    removed.append(path)
    return removed


_OPEN_SAFELY = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _take_if_dead(path: str) -> bool:
    """Remove `path` if it is a dead doctor's folder (see sweep_dead_folders); whether it was removed."""
    assert fcntl is not None
    uid = os.getuid()
    # O_DIRECTORY: a FIFO, a device or a file is refused by the open itself, a link by O_NOFOLLOW
    folder_fd = os.open(path, _OPEN_SAFELY | os.O_DIRECTORY)
    try:
        folder = os.fstat(folder_fd)
        if folder.st_uid != uid or stat.S_IMODE(folder.st_mode) != 0o700:
            return False
        seen = os.stat(LOCK_NAME, dir_fd=folder_fd, follow_symlinks=False)
        if not stat.S_ISREG(seen.st_mode) or seen.st_uid != uid or stat.S_IMODE(seen.st_mode) != 0o600:
            return False
        fd = os.open(LOCK_NAME, _OPEN_SAFELY, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)
    try:
        lock = os.fstat(fd)
        proof = _proof(folder, lock)
        if (lock.st_dev, lock.st_ino) != (seen.st_dev, seen.st_ino) or lock.st_nlink != 1:
            return False
        if os.read(fd, len(proof) + 1) != proof:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its maker is alive
        # Locked: still the same folder and lock file at these names? (A maker may have removed its folder and
        # dropped the lock between our open and our flock.)
        now, again = os.lstat(path), os.stat(os.path.join(path, LOCK_NAME), follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (folder.st_dev, folder.st_ino) or again.st_ino != lock.st_ino:
            return False
        shutil.rmtree(path, ignore_errors=True)
        return True
    finally:
        os.close(fd)


@dataclass
class Finished:
    status: Literal["ok", "timeout", "error"]  # ok: it exited (any code); error: it could not start
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None


def run(
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    folder: Path | None = None,
    cwd: str | None = None,
    stdout_bytes: int = OUTPUT_TAIL_BYTES,
    death_signal: int = signal.SIGKILL,
) -> Finished:
    """Run `argv` to completion or `timeout`; its output files go in `folder` (a fresh temporary one if None).
    `stdout_bytes` and `death_signal` as for Child: how much of stdout comes back in `Finished.stdout`, and what the
    child gets if this thread dies first."""
    with contextlib.ExitStack() as stack:
        where = folder if folder is not None else stack.enter_context(temp_dir())
        start = time.perf_counter()
        try:
            child = Child(argv, env, where, cwd, stdout_bytes, death_signal)
        except OSError as exc:
            return Finished("error", None, "", "", 0.0, f"could not start {argv[0]}: {exc}")
        try:
            while child.poll() is None:
                if time.perf_counter() - start > timeout:
                    child.kill()
                    out, err = child.output()
                    return Finished("timeout", None, out, err, round(time.perf_counter() - start, 4))
                time.sleep(_POLL_SECONDS)
            out, err = child.output()
            return Finished("ok", child.returncode, out, err, round(time.perf_counter() - start, 4))
        finally:
            child.close()
    raise AssertionError("unreachable")  # pragma: no cover  (ExitStack does not swallow)


# --- finding and killing what a child left -----------------------------------------------------------------------


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, state) of every process, from /proc (empty where there is no /proc)."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read(4096)
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2:
            table[int(name)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
    return table


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read(1 << 20).split(b"\0")
    except OSError:
        return False


def _victims(child: Child, table: dict[int, tuple[int, str]]) -> set[int]:
    """Live processes that belong to `child`: its descendants and whatever carries its token."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [child.pid]
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in found:
                found.add(pid)
                todo.append(pid)
    marker = f"{TOKEN_VARIABLE}={child.token}".encode()
    me = os.getpid()
    found |= {pid for pid in table if pid != me and pid not in found and _carries(pid, marker)}
    return {pid for pid in found if table.get(pid, (0, "Z"))[1] not in ("Z", "X")}


def _reap_orphans(table: dict[int, tuple[int, str]]) -> None:
    """Wait for dead processes re-parented to this one (as subreaper) that no Popen of ours owns."""
    me = os.getpid()
    with _lock:
        ours = set(_live)
    for pid, (ppid, state) in table.items():
        if ppid == me and state in ("Z", "X") and pid not in ours:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _kill_orphans(closing: Child | None = None) -> int:
    """Kill every live process re-parented to this one that no Popen of ours owns (only where own_orphans was
    called); how many. An orphan does not say which child left it, and another child still running may need its
    helper, so this waits until no child but `closing` runs. The table is read under the lock that Child holds
    while it starts a process, so a child being started is never taken for an orphan."""
    if not _own_orphans:
        return 0
    me = os.getpid()
    with _lock:
        ours = set(_live)
        if ours - {closing.pid if closing else -1}:
            return 0
        table = _processes()
    orphans = [
        pid for pid, (ppid, state) in table.items() if ppid == me and state not in ("Z", "X") and pid not in ours
    ]
    for pid in orphans:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(orphans)


def _kill_leftovers(child: Child) -> None:
    """After the child exited: kill what it left (helpers of an import that succeeded)."""
    if child.cgroup is not None:
        child.cgroup.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    for _ in range(20):
        table = _processes()
        victims = _victims(child, table)
        orphans = _kill_orphans(child)
        _reap_orphans(table)
        if not victims and not orphans:
            return
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    _reap_orphans(_processes())


def _kill_tree(child: Child) -> None:
    if child.popen.returncode is None:
        # Its descendants, read while the tree is whole: once a parent dies its children are re-parented (to us as
        # subreaper, or to init) and no longer found under the child.
        victims = _victims(child, _processes())
        if child.cgroup is not None:
            child.cgroup.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            child.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.popen.wait(timeout=5)
    _kill_leftovers(child)


def shutdown() -> int:
    """Kill every live child and its leftovers, remove every temporary folder made here; start nothing after.

    Returns how many children were stopped. Safe to call from a signal handler in the main thread.
    """
    global _stopping
    with _lock:
        _stopping = True
        live = list(_live.values())
        folders = list(_temp_dirs)
    for child in live:
        with contextlib.suppress(Exception):
            _kill_tree(child)
    me = os.getpid()  # anything else still re-parented to the doctor: an orphan of some child
    table = _processes()
    for pid, (ppid, state) in table.items():
        if ppid == me and state not in ("Z", "X") and pid not in _live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    time.sleep(0.01)
    _reap_orphans(_processes())
    for child in live:
        if child.cgroup is not None:
            child.cgroup.remove()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return len(live)


_T = TypeVar("_T")


def concurrently(calls: Sequence[Callable[[], _T]], name: str) -> list[_T]:
    """Each call's result, in order: each call in a thread of its own (they only wait on children), except where no
    thread can be started (the user's process limit, RLIMIT_NPROC, counts threads): those run here, one after the
    other, so a machine at its limit gets a slower check instead of `can't start new thread` and exit 4."""
    results: dict[int, _T] = {}
    errors: dict[int, BaseException] = {}

    def run_one(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as exc:  # raised to the caller below, as a plain call would raise it
            errors[index] = exc

    started: list[threading.Thread] = []
    for index in range(len(calls)):
        thread = threading.Thread(target=run_one, args=(index,), name=f"{name}-{index}", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # can't start new thread
            run_one(index)
            continue
        started.append(thread)
    for thread in started:
        thread.join()
    if errors:
        raise errors[min(errors)]
    return [results[index] for index in range(len(calls))]
