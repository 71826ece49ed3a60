"""The GPU machine's scripts (scripts/, bench/) name mhcdoctor modules in code that CI never runs: each name they
import must exist, so a module moved in a refactor breaks here and not on the GPU machine."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IMPORT = re.compile(r"^\s*\"?from (mhcdoctor[\w.]*) import ([\w, ]+)", re.MULTILINE)
FILES = sorted([*ROOT.glob("scripts/*"), *ROOT.glob("bench/*.py")])


def _imports() -> list[tuple[str, str, str]]:
    found = []
    for path in FILES:
        for module, names in IMPORT.findall(path.read_text(encoding="utf-8")):
            found += [(path.name, module, name.strip()) for name in names.split(",") if name.strip()]
    return found


def test_the_scripts_import_something() -> None:
    assert {"gpu-bench", "gpu-tests", "merge_bench.py"} <= {script for script, _, _ in _imports()}


@pytest.mark.parametrize(("script", "module", "name"), _imports())
def test_each_name_a_script_imports_exists(script: str, module: str, name: str) -> None:
    found = hasattr(importlib.import_module(module), name) or importlib.util.find_spec(f"{module}.{name}") is not None
    assert found, f"{script}: {module} has no {name}"
