"""The ROCm userspace version from rocm-core's version files; nothing is run.

Looks in $ROCM_PATH (then $ROCM_HOME, then /opt/rocm) for .info/version, then include/rocm-core/rocm_version.h.
A version such as `6.4.1-83` (or `4.5.2.100-40502`) is reported as `6.4.1`, the full text kept as evidence.
"""

from __future__ import annotations

import re
from pathlib import Path

from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext

NAME = "rocm"
SOURCE = "file: <ROCM_PATH>/.info/version"


def rocm_roots(ctx: ProbeContext) -> list[tuple[str, Path]]:
    """Where ROCm may live, in the order ROCm's own tools look: the environment first, then /opt/rocm."""
    roots = [(var, Path(ctx.env[var])) for var in ("ROCM_PATH", "ROCM_HOME") if ctx.env.get(var)]
    roots.append(("/opt/rocm", ctx.path("/opt/rocm")))
    return roots


def probe(ctx: ProbeContext) -> ProbeResult:
    evidence = []
    for via, root in rocm_roots(ctx):
        version_file = root / ".info" / "version"
        text = (read_text(version_file) or "").strip()
        if text:
            match = re.match(r"\d+\.\d+(?:\.\d+)?", text)
            if match is None:
                data = {"version": None, "path": str(root), "via": via}
                evidence.append(f"{version_file}: {text[:80]!r}")
                return ProbeResult(NAME, "error", data, evidence, SOURCE, error=f"{version_file} holds no version")
            data = {"version": match.group(0), "path": str(root), "via": via}
            return ProbeResult(NAME, "ok", data, [f"{version_file}: {text[:200]}"], SOURCE)
        header = root / "include" / "rocm-core" / "rocm_version.h"
        parts = [
            re.search(rf"#define\s+ROCM_VERSION_{p}\s+(\d+)", read_text(header) or "")
            for p in ("MAJOR", "MINOR", "PATCH")
        ]
        if all(parts):
            version = ".".join(m.group(1) for m in parts if m)
            data = {"version": version, "path": str(root), "via": via}
            return ProbeResult(NAME, "ok", data, [f"{header}: {version}"], f"file: {header}")
        evidence.append(f"{root} ({via}): no .info/version or rocm_version.h")
    return ProbeResult(NAME, "missing", {"version": None}, evidence, SOURCE, error="no ROCm installation found")
