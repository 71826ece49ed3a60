"""Adding a known bug is one record (issue 30 §1): a record added to knowledge/bugs.py, and nothing else, reaches the
findings catalogue (explain), docs/known-bugs.md and the log reader. Each run is a real `python` process that
appends the record before anything reads the records, then runs the doctor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NEW_ID = "tilelang-post-scale"

# What a maintainer would add to knowledge/bugs.py, then the doctor's own entry point.
DRIVER = """
import sys
from mhcdoctor.knowledge import bugs
from mhcdoctor.knowledge.evidence import Code, Report

evidence = {evidence}
NEW = bugs.KnownBug(
    id={new_id!r},
    severity="fail",
    title="tilelang 0.1.12 scales mhc_post's output twice",
    summary="tilelang 0.1.12 runs mhc_post.",
    fix="pip install 'tilelang!=0.1.12'",
    refs=("https://github.com/tile-ai/tilelang/issues/99999",),
    effect="wrong results",
    library="tilelang",
    path="tilelang",
    ops=("mhc_post",),
    told_by="version",
    evidence=evidence,
    platforms=("cuda",),
    affected="==0.1.12",
    log=bugs.LogSignature("scaled twice", r"mhc_post scaled twice"),
    log_severity="fail",
    explanation="its output is scaled by post_mix twice.",
)
bugs.BUGS = (*bugs.BUGS, NEW)
if sys.argv[1] == "page":
    from mhcdoctor.docsgen import known_bugs_page
    print(known_bugs_page())
else:
    from mhcdoctor.cli import main
    main(sys.argv[1:])
"""
CODE = "(Code('tile-ai/tilelang', 'v0.1.12', 'src/op/x.cc', 10, 'scales twice'),)"
REPORT = "(Report('https://github.com/tile-ai/tilelang/issues/99999', 'not reproduced by anyone else'),)"


def run(tmp_path: Path, evidence: str, *args: str) -> subprocess.CompletedProcess[str]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(evidence=evidence, new_id=NEW_ID), encoding="utf-8")
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, str(driver), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )


def explain(tmp_path: Path, evidence: str) -> tuple[int, dict]:
    done = run(tmp_path, evidence, "explain", "--json", "--platform", "cuda", "--arch", "sm_90", "--tilelang",
               "0.1.12", "--vllm", "0.34.0", "--model", "deepseek-v4-pro")  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def test_a_new_record_is_a_finding_of_the_catalogue(tmp_path):
    code, doc = explain(tmp_path, CODE)
    finding = next(f for f in doc["findings"] if f["id"] == NEW_ID)
    assert (finding["severity"], finding["ops"], code) == ("fail", ["mhc_post"], 3)
    assert finding["detail"] == "tilelang 0.1.12 runs mhc_post here: its output is scaled by post_mix twice."


def test_a_new_record_backed_by_a_report_alone_is_a_warning_that_says_what_is_not_known(tmp_path):
    _, doc = explain(tmp_path, REPORT)
    finding = next(f for f in doc["findings"] if f["id"] == NEW_ID)
    assert finding["severity"] == "warn"
    assert "not reproduced by anyone else" in finding["detail"]


def test_a_new_record_is_on_the_known_bugs_page(tmp_path):
    page = run(tmp_path, CODE, "page").stdout
    row = next(line for line in page.splitlines() if line.startswith(f"| `{NEW_ID}` |"))
    assert "tilelang 0.1.12 runs mhc_post." in row and "tilelang!=0.1.12" in row


def test_a_new_records_log_signature_is_read_by_the_log_reader(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("RuntimeError: mhc_post scaled twice\n", encoding="utf-8")
    done = run(tmp_path, CODE, "log", str(log), "--json")
    doc = json.loads(done.stdout)
    assert [(f["id"], f["severity"]) for f in doc["findings"]] == [(NEW_ID, "fail")]
    assert done.returncode == 3
