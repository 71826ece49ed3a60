"""Real packages from the package index, installed once into a cache and reused by every later run.

`installed("amd-aiter==0.1.7.post2.dev18")` is a folder holding that distribution exactly as `pip install
--no-deps --target` lays it out. The cache is $MHCDOCTOR_TEST_CACHE, else ~/.cache/mhcdoctor-tests, one folder per
`name==version`, filled atomically (a half-finished install is never reused). A test is skipped, with pip's own
words as the reason, only when the index cannot be reached; any other pip failure fails the test.
`environment(*folders)` is a wrapper interpreter that sees only those folders, as `check --python` is pointed at a
vLLM venv; `machine` gives a fake `/` (MHCDOCTOR_SYSROOT) to put GPUs into, and is where `doctor.run` runs.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# pip's words when the index cannot be reached (DNS, no route, proxy refused, TLS cut off).
_OFFLINE = re.compile(
    r"Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable|"
    r"Name or service not known|Connection refused|ProxyError|Could not fetch URL|Read timed out|"
    r"ConnectTimeoutError|No route to host"
)
INSTALL_TIMEOUT = 900  # a cold vLLM wheel is ~240 MB


def cache_root() -> Path:
    root = os.environ.get("MHCDOCTOR_TEST_CACHE") or Path.home() / ".cache" / "mhcdoctor-tests"
    return Path(root)


def install(spec: str, *pip_options: str) -> Path:
    """`spec` (name==version) installed with --no-deps (and `pip_options`) into its cache folder; the folder."""
    folder = cache_root() / re.sub(r"[^A-Za-z0-9_.=-]", "_", spec)
    if (folder / ".complete").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers may ask for the same spec at once: one installs, the others wait and reuse it (never
    # replacing a folder that a test of another worker is reading).
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / ".complete").is_file():
            return folder
        return _install(spec, folder, pip_options)


def _install(spec: str, folder: Path, pip_options: tuple[str, ...]) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=".installing-", dir=folder.parent))
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check"]
    try:
        proc = subprocess.run(
            [*command, *pip_options, "--quiet", "--target", str(staging), spec],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
        if proc.returncode != 0:
            words = (proc.stderr or proc.stdout).strip()
            if _OFFLINE.search(words):
                pytest.skip(f"the package index is unreachable, so {spec} cannot be installed: {words[-300:]}")
            pytest.fail(f"pip install --no-deps {spec} failed:\n{words[-2000:]}")
        (staging / ".complete").write_text(spec + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


@pytest.fixture(scope="session")
def installed() -> Callable[..., Path]:
    return install


class Machine:
    """A fake `/` for the probes and a wrapper python that sees only the given package folders."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "root"
        self.root.mkdir()
        self.python: Path | None = None

    def environment(self, *folders: Path) -> Path:
        path = os.pathsep.join(str(f) for f in folders)
        self.python = self.tmp / "bin" / "python"
        self.python.parent.mkdir(exist_ok=True)
        self.python.write_text(f'#!/bin/sh\nPYTHONPATH="{path}" exec "{sys.executable}" -S "$@"\n')
        self.python.chmod(0o755)
        return self.python

    @property
    def cwd(self) -> Path:
        return self.tmp

    def env(self) -> dict[str, str]:
        """The environment the doctor runs with here (a doctor.Place: `doctor.run(..., env=machine)` passes the
        wrapper python as `--python`)."""
        assert self.python is not None, "call environment() first"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MHCDOCTOR_DEBUG")}
        env.update(MHCDOCTOR_SYSROOT=str(self.root), NO_COLOR="1", HOME=str(self.tmp), PATH=str(self.tmp / "no-bin"))
        env["PYTHONPATH"] = str(REPO)
        return env


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)
