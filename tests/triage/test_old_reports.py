"""Reports written by earlier mhcdoctor commits (tests/data/old_reports, made with `check --json`, `check --verify
--json` and `check --fast --json` at the commit in each name) still read as check/1: the readers' checks reject a
member of the wrong type, never one an older release did not write yet."""

from __future__ import annotations

from pathlib import Path

import doctor
import pytest

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
