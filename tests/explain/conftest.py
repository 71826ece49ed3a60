"""Run the real `mhcdoctor` in a subprocess against a machine tree in tmp_path (MHCDOCTOR_SYSROOT)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


@pytest.fixture
def amd_machine(tmp_path: Path) -> Callable[[str, int], Path]:
    """A machine tree whose sysfs KFD topology has one CPU node and one GPU (90402 = gfx942, 90500 = gfx950)."""

    def make(name: str, target_version: int = 90402) -> Path:
        nodes = tmp_path / name / "sys/class/kfd/kfd/topology/nodes"
        for index, target in ((0, 0), (1, target_version)):
            (nodes / str(index)).mkdir(parents=True)
            (nodes / str(index) / "properties").write_text(f"gfx_target_version {target}\ndevice_id 29856\n")
        return tmp_path / name

    return make


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., Run]:
    """`mhcdoctor ARGS` with the machine rooted at tmp_path/machine (empty: no GPU) unless `root` is given."""
    empty = tmp_path / "machine"
    empty.mkdir()

    def run(*args: str, root: Path | None = None) -> Run:
        env = dict(os.environ, MHCDOCTOR_SYSROOT=str(root or empty), NO_COLOR="1")
        env.pop("MHCDOCTOR_DEBUG", None)
        proc = subprocess.run(
            [sys.executable, "-m", "mhcdoctor", *args], capture_output=True, text=True, env=env, timeout=120
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return run
