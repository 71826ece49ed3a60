"""Machines for the explain tests: a machine tree in tmp_path (MHCDOCTOR_SYSROOT) that tests/doctor.py runs the real
`mhcdoctor` against."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


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
def broken_tilelang(tmp_path: Path) -> Path:
    """A site folder holding tilelang 0.1.12 whose import fails the way a missing libnvrtc makes it fail."""
    site = tmp_path / "site"
    (site / "tilelang").mkdir(parents=True)
    (site / "tilelang" / "__init__.py").write_text(
        'raise ImportError("libnvrtc.so.13: cannot open shared object file")\n'
    )
    dist = site / "tilelang-0.1.12.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.12\n")
    (dist / "RECORD").write_text("tilelang/__init__.py,,\n")
    (dist / "top_level.txt").write_text("tilelang\n")
    return site


@pytest.fixture
def sysroot_env(tmp_path: Path) -> Callable[..., dict[str, str]]:
    """The environment of a run (doctor.run's `env`) on a machine rooted at tmp_path/machine (empty: no GPU) unless
    `root` is given, with the packages in `site` found before the real ones."""
    empty = tmp_path / "machine"
    empty.mkdir()

    def make(root: Path | None = None, site: Path | None = None) -> dict[str, str]:
        env = dict(os.environ, MHCDOCTOR_SYSROOT=str(root or empty), NO_COLOR="1")
        if site is not None:  # packages found before the real ones, as an earlier sys.path entry
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
        env.pop("MHCDOCTOR_DEBUG", None)
        return env

    return make
