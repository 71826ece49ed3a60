"""The suite's own rules (issue 32): one way to run the CLI in process and one in a real process (tests/doctor.py),
and no test module importing another's helpers (shared helpers live in named helper modules)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MODULES = sorted(TESTS.rglob("*.py"))


def test_no_test_module_imports_another_test_module() -> None:
    found = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.relative_to(TESTS)}: {name}" for name in names if name.split(".")[-1].startswith("test_")]
    assert found == []


def test_only_doctor_py_spells_out_how_mhcdoctor_is_started() -> None:
    """Everything else calls doctor.run, doctor.spawn or doctor.argv, so a change of how the CLI starts is one edit."""
    spelled = [p.relative_to(TESTS) for p in MODULES if '"-m", "mhcdoctor"' in p.read_text(encoding="utf-8")]
    assert spelled == [Path("doctor.py"), Path("test_harness.py")]
