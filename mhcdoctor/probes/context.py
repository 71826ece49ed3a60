"""ProbeContext: where the probes look (a machine tree, a Python environment's search path) and how a child
interpreter is launched there. verify and bench launch their path children with the same context, so a path child
sees the packages the probes saw; mhcdoctor.probes.target builds it from --python and MHCDOCTOR_SYSROOT.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mhcdoctor import bytecode


@dataclass
class ProbeContext:
    """Where the probes look. Tests point it at fake trees and fake installs in temporary folders."""

    root: Path = Path("/")  # prefix for /sys, /proc, /opt/rocm, /usr/local/cuda
    python: str = sys.executable  # the interpreter children run in
    python_version: str = field(default_factory=platform.python_version)  # that interpreter's
    search_path: list[str] = field(default_factory=lambda: list(sys.path))  # where packages are looked up
    timeout: float = 20.0  # seconds for each child
    fast: bool = False  # no imports, no GPU initialisation
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def path(self, absolute: str) -> Path:
        """`/sys/class/kfd` under this context's root."""
        return self.root / absolute.lstrip("/")

    def which(self, program: str) -> str | None:
        for folder in self.env.get("PATH", "").split(os.pathsep):
            if not folder:
                continue
            candidate = Path(folder) / program
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        return None

    def child_env(self) -> dict[str, str]:
        """The environment of a Python child started with this context: its search path on PYTHONPATH, the Python
        stack printed on a segfault (evidence), and bytecode kept in mhcdoctor's own cache (mhcdoctor.bytecode)."""
        env = bytecode.child_env(self.env, self.search_path)
        env["PYTHONPATH"] = os.pathsep.join(p for p in self.search_path if p)
        env["PYTHONFAULTHANDLER"] = "1"
        return env
