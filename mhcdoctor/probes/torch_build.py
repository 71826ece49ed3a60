"""torch's version and build (CUDA, HIP or XPU) from torch/version.py read as text: importing torch is slow and risky.

Finds torch's folder on the search path (no import), parses version.py with `ast` (nothing is executed), and
falls back to the distribution's metadata for the version.
"""

from __future__ import annotations

import ast
from typing import Any

from mhcdoctor.facts import torch_build_of
from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import distribution, find_package

NAME = "torch"
SOURCE = "file: torch/version.py"
_KEYS = ("__version__", "cuda", "hip", "xpu", "git_version")


def probe(ctx: ProbeContext) -> ProbeResult:
    folder = find_package("torch", ctx.search_path)
    if folder is None:
        return ProbeResult(NAME, "missing", {"present": False}, [], SOURCE, error="torch is not installed")
    version_file = folder / "version.py"
    values = parse_assignments(read_text(version_file) or "")
    data: dict[str, Any] = {
        "present": True,
        "location": str(folder),
        "version": values.get("__version__"),
        "cuda": values.get("cuda"),
        "hip": values.get("hip"),
        "xpu": values.get("xpu"),
    }
    evidence = [f"{version_file}: " + ", ".join(f"{k}={values.get(k)!r}" for k in _KEYS if k in values)]
    if data["version"] is None:
        dist = distribution("torch", ctx.search_path)
        data["version"] = dist.version if dist else None
        evidence.append(f"{version_file}: no __version__; metadata {dist.path if dist else 'not found'}")
    data["build"] = torch_build_of(data["version"], data["cuda"], data["hip"], data["xpu"])
    return ProbeResult(NAME, "ok", data, evidence, SOURCE)


def parse_assignments(text: str) -> dict[str, Any]:
    """Top-level `name = "literal"` and `name: T = "literal"` assignments of a Python file, without running it."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, RecursionError):  # not a plain literal: not ours to evaluate
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                values[target.id] = literal
    return values
