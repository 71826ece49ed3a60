"""`mhcdoctor --help` lists the commands from cli's table without importing them; `mhcdoctor help [COMMAND]`."""

from __future__ import annotations

import json
import subprocess
import sys

import doctor

from mhcdoctor.cli import COMMANDS


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


def test_help_of_a_command_that_does_not_exist_is_one_line_and_exit_2() -> None:
    done = doctor.run("help", "frobnicate")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("mhcdoctor: error: no command 'frobnicate'; the commands are check, explain,")
    assert len(done.stderr.splitlines()) == 1
