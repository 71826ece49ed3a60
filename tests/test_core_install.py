"""The core install is click and packaging: `pip install . && mhcdoctor check` must work where numpy, torch and
matplotlib are absent (they are extras). Run each command in a child whose imports of them fail, as on such a
machine, so a module-level `import numpy` on a core command's path is caught here and not by a new user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("numpy", "torch", "matplotlib", "ray", "jsonschema", "hypothesis")
RUNNER = f"""
import sys
for name in {EXTRAS!r}:
    sys.modules[name] = None  # `import name` raises ImportError, as where the extra is not installed
from mhcdoctor.cli import main
sys.argv = ["mhcdoctor", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--fast"],
        ["check", "--fast", "--json"],
        ["explain", "--hidden", "7168"],
        ["report", "--fast"],
        ["report", "--fast", "--bundle", "bundle.tar.gz"],
        ["--help"],
        ["verify", "--help"],
        ["bench", "--help"],
    ],
)
def test_a_core_command_runs_without_the_extras(args: list[str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 1, 3), (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip()
