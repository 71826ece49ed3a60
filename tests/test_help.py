"""`mhcdoctor --help` lists the commands from cli's table without importing them; `mhcdoctor help [COMMAND]`, and
`mhcdoctor help FINDING-ID`: the finding's documentation, offline, as docs/findings.md's section of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import doctor
import jsonschema

from mhcdoctor.cli import COMMANDS
from mhcdoctor.rules.findings import CATALOGUE

REPO = Path(__file__).resolve().parents[1]


def test_the_command_list_imports_no_command_and_no_rules() -> None:
    """Measured with bench/startup_bench.py: 107 mhcdoctor modules and 0.29 s importing them before, 8 and 0.02 s."""
    ask = (
        "import json, sys\nfrom mhcdoctor.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mhcdoctor'))), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, timeout=60)
    imported = json.loads(done.stderr.splitlines()[-1])
    assert [m for m in imported if m.startswith(("mhcdoctor.commands", "mhcdoctor.rules", "mhcdoctor.probes"))] == []
    for name, summary in COMMANDS.items():
        assert f"  {name} " in done.stdout and summary.split()[0] in done.stdout


def test_help_shows_the_list_and_help_of_a_command_is_its_own() -> None:
    assert doctor.run("help").stdout == doctor.run("--help").stdout
    shown = doctor.run("help", "models")
    assert (shown.returncode, shown.stdout) == (0, doctor.run("models", "--help").stdout)
    assert shown.stdout.startswith("Usage: mhcdoctor models [OPTIONS]")


def test_help_of_a_name_that_is_neither_a_command_nor_a_finding_is_one_line_and_exit_2() -> None:
    done = doctor.run("help", "frobnicate")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("mhcdoctor: error: no command or finding 'frobnicate'; the commands are check, ")
    assert "mhcdoctor help findings lists the findings" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_a_mistyped_finding_id_gets_the_closest_ids_and_exit_2() -> None:
    done = doctor.run("help", "aiter-sqrsm-race", "--json")
    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (2, "", 1)
    assert "no command or finding 'aiter-sqrsm-race'; did you mean aiter-sqrsum-race, " in done.stderr
    assert "did you mean diff?" in doctor.run("help", "diffs").stderr


def test_an_unknown_name_is_shown_escaped_and_cut() -> None:
    done = doctor.run("help", "no-gpu\x1b[2J" + "x" * 5000)
    assert (done.returncode, len(done.stderr.splitlines())) == (2, 1)
    assert "\x1b" not in done.stderr and "'no-gpu\\x1b[2J" in done.stderr and len(done.stderr) < 400


def section_of_the_findings_page(finding_id: str) -> str:
    page = (REPO / "docs" / "findings.md").read_text()
    start = page.index(f'<a id="{finding_id}"></a>\n\n') + len(f'<a id="{finding_id}"></a>\n\n')
    end = page.find("<a id=", start)
    return page[start : end if end != -1 else len(page)].rstrip() + "\n"


def test_help_of_a_finding_is_its_whole_section_of_the_findings_page() -> None:
    for spec in CATALOGUE:
        done = doctor.run("help", spec.id)
        assert (done.returncode, done.stdout) == (0, section_of_the_findings_page(spec.id)), spec.id
    shown = doctor.run("help", "tilelang-tvm-ffi-mismatch").stdout
    for part in ("Severity: ", "When: ", "Applies to:", "Fix: ", "References: https://", "Evidence:"):
        assert f"\n{part}" in shown, part
    assert "\n- Measured on NVIDIA H200" in shown and "\n- Code at " in shown and "\n- Reported at https://" in shown


def test_help_of_a_setup_finding_has_no_evidence_section() -> None:
    shown = doctor.run("help", "no-gpu").stdout
    assert shown.startswith("## `no-gpu`: No GPU") and "\nSeverity: fail\n" in shown and "Evidence" not in shown


def test_help_json_is_the_findings_document_and_matches_its_schema() -> None:
    schema = json.loads((REPO / "mhcdoctor/schemas/finding-help.schema.json").read_text())
    done = doctor.run("help", "tilelang-fused-post-pre-slow", "--json")
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, schema)
    assert (done.returncode, doc["id"]) == (0, "tilelang-fused-post-pre-slow")
    assert (doc["docs"], doc["severity"]) == ("mhcdoctor help tilelang-fused-post-pre-slow", "warn")
    assert [e["kind"] for e in doc["evidence"]] == ["measured"] and "H200" in doc["evidence"][0]["source"]
    setup = json.loads(doctor.run("help", "no-gpu", "--json").stdout)
    jsonschema.validate(setup, schema)
    assert (setup["severity"], setup["evidence"], setup["applies"]) == ("fail", [], [])


def test_help_findings_lists_every_finding_and_json_needs_a_finding() -> None:
    listed = doctor.run("help", "findings").stdout.splitlines()
    assert [line.split()[0] for line in listed[1:]] == [spec.id for spec in CATALOGUE]
    done = doctor.run("help", "check", "--json")
    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (2, "", 1)
    assert "--json shows a finding's documentation" in done.stderr
