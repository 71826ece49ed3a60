"""A throwaway unprivileged user for attacks where identity matters (another user on the same machine).

`other_user()` makes one with useradd (no home, no login shell) and removes it afterwards; the test is skipped where
that cannot be done (not root, no useradd). `as_user` starts a process with that user's uid and gid only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

# A Python any user may run (the test's own may sit below a folder only root can enter, as pyenv's in /root does).
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "python3"


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    home: Path  # a folder of theirs, in a world-readable folder of root's
    started: list[subprocess.Popen[str]] = field(default_factory=list)  # killed, by pid, when the user goes

    def popen(self, argv: list[str], env: dict[str, str] | None = None, **kwargs: object) -> subprocess.Popen[str]:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), **(env or {})}
        proc: subprocess.Popen[str] = subprocess.Popen(  # type: ignore[call-overload]
            argv, user=self.uid, group=self.gid, extra_groups=[], env=env, cwd=self.home, text=True, **kwargs
        )
        self.started.append(proc)
        return proc

    def readable_copy(self, *packages: ModuleType) -> Path:
        """A folder this user can read holding a copy of each package: the test's own checkout and environment may
        sit below a folder they cannot enter (`mktemp -d` makes it 0700, and CI's venv is inside the clone)."""
        folder = self.home.parent / "src"
        for package in packages:
            source = Path(package.__file__ or "").parent
            shutil.copytree(source, folder / source.name, ignore=shutil.ignore_patterns("__pycache__"))
        return folder

    def run(
        self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        proc = self.popen(argv, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@contextlib.contextmanager
def other_user() -> Iterator[User]:
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd to make a throwaway user")
    name = "mhcd" + secrets.token_hex(4)
    done = subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"useradd failed: {done.stderr.strip()}")
    base = Path(tempfile.mkdtemp(prefix="mhcd-test-user-", dir="/tmp"))
    user = None
    try:
        base.chmod(0o755)
        ids = subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True).stdout.strip()
        gid = int(subprocess.run(["id", "-g", name], capture_output=True, text=True, check=True).stdout.strip())
        home = base / "home"
        home.mkdir(mode=0o755)
        os.chown(home, int(ids), gid)
        user = User(name, int(ids), gid, home)
        yield user
    finally:
        for proc in user.started if user else []:
            proc.kill()
            proc.wait(timeout=10)
        subprocess.run(["userdel", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
