"""Reports written by earlier mhcdoctor commits (tests/data/old_reports, made with `check --json`, `check --verify
--json` and `check --fast --json` at the commit in each name) still read as check/1: the readers' checks reject a
member of the wrong type, never one an older release did not write yet."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path

import doctor
import pytest

from mhcdoctor.documents.check import CheckDocument
from mhcdoctor.documents.verify import VerifyDocument
from mhcdoctor.reportfile import load_report

OLD = sorted((Path(__file__).parents[1] / "data" / "old_reports").glob("*.json"))


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_older_report_loads_with_its_models_findings_and_verify(path: Path) -> None:
    doc = load_report(path)
    assert doc["schema"] == "mhcdoctor.check/1"
    names = [m["model"]["name"] for m in doc["models"]]
    assert names == ["deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v4.1-flash"]
    assert {f["id"] for f in doc["findings"]} >= {"vllm-not-installed"}
    assert (doc.get("verify") is not None) == ("verify" in path.stem)


def test_explain_replays_the_oldest_report() -> None:
    done = doctor.run("explain", "--from", str(OLD[0]), "--model", "deepseek-v4-pro")
    assert done.returncode == 3, done.stderr  # the no-GPU verdict the report recorded, not a usage error (2)
    assert "facts given by report" in done.stdout


def _absent(value: object, hint: object, where: str) -> list[str]:
    """The members of the TypedDicts `hint` names that `value` lacks, at every level the reader's check walks."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if typing.is_typeddict(hint) and isinstance(value, dict):
        hints = typing.get_type_hints(hint, localns={"VerifyDocument": VerifyDocument})
        return [f"{where}.{key}" for key in hints if key not in value] + [
            wrong
            for key, member in hints.items()
            if key in value
            for wrong in _absent(value[key], member, f"{where}.{key}")
        ]
    if origin in (typing.Union, types.UnionType):
        return min((_absent(value, arg, where) for arg in args), key=len)
    if origin is list and isinstance(value, list):
        return [wrong for i, item in enumerate(value) for wrong in _absent(item, args[0], f"{where}[{i}]")]
    if origin is dict and isinstance(value, dict):
        return [wrong for key, item in value.items() for wrong in _absent(item, args[1], f"{where}.{key}")]
    return []


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_older_report_loads_complete(path: Path) -> None:
    """Each member of check/1 an older release did not write is there after loading, so readers need no `.get`."""
    raw = json.loads(path.read_text())
    assert _absent(raw, CheckDocument, "report"), "the stored report lacks nothing: it cannot show the filling"
    doc = load_report(path)
    assert _absent(doc, CheckDocument, "report") == []
    assert doc.get("vllm_platform", "absent") is None or "vllm_platform" in raw
