"""What users and children write, shown and never obeyed: one sanitiser (mhcdoctor.text.visible) for every view,
names that are not UTF-8, and numbers that are not numbers (issue 27 §2 and §3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import doctor
import pytest
from triage_docs import rocm_report, variant, write_json

from mhcdoctor.fleet.summary import clean
from mhcdoctor.probes.base import printable
from mhcdoctor.text import cut, visible

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"
# Every control that must never pass: ESC (CSI, OSC), BEL, CR, C1 CSI, the bidi controls, separators, lone surrogates.
CONTROLS = ["\x1b", "\x07", "\r", "\x9b", "\u061c", "\u200e", "\u200f", "\u2028", "\u2029", "\u202a", RLO, LRI, PDI]
CONTROLS += ["\ud8ff", "\udce9", "\ufffd"]


@pytest.mark.parametrize("char", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_each_view_shows_a_control_as_a_question_mark(char: str) -> None:
    text = f"0.1.12{char}31.1.0"
    assert visible(text) == printable(text) == clean(text) == "0.1.12?31.1.0"


def test_newlines_stay_unless_the_text_must_be_one_line() -> None:
    assert visible("a\n\tb") == "a\n\tb" and visible("a\n\tb", one_line=True) == clean("a\n\tb") == "a??b"


@pytest.mark.parametrize(("keep", "expected"), [("head", "abcdefgh…"), ("tail", "…stuvwxyz"), ("middle", "abcd…wxyz")])
def test_one_cut_for_every_view(keep: Literal["head", "tail", "middle"], expected: str) -> None:
    text = "abcdefghijklmnopqrstuvwxyz"
    assert cut(text, 9, keep) == expected
    assert cut(text, 26, keep) == text


def test_a_version_reordered_by_bidi_controls_is_shown_as_it_is_in_diff_and_explain(tmp_path: Path) -> None:
    """`0.1.12‮31.1.0‬` would read as 0.1.13 (reversed) on a terminal: shown with its controls as `?`."""
    hostile = variant(rocm_report(), **{"facts.aiter.version": f"0.1.12{RLO}31.1.0{PDI}", "host.hostname": f"n{LRI}1"})
    a = write_json(tmp_path / "a.json", rocm_report())
    b = write_json(tmp_path / f"b{RLO}.json", hostile)
    diff = doctor.run("diff", str(a), str(b))
    explain = doctor.run("explain", "--from", str(b))
    for done in (diff, explain):
        assert not any(char in done.stdout + done.stderr for char in CONTROLS), done.stdout
    assert "0.1.12?31.1.0?" in diff.stdout and "b?.json" in diff.stdout


def test_a_pythons_stderr_quoted_in_an_error_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """`--python X` where X writes OSC sequences (a window title, a hyperlink) and U+202E to stderr."""
    fake = tmp_path / "python"
    fake.write_text(
        '#!/bin/sh\nprintf "\\033]0;owned\\007\\033]8;;http://evil\\033\\\\click \\342\\200\\256exe\\n" >&2\n'
    )
    fake.chmod(0o755)
    done = doctor.run("check", "--fast", "--python", str(fake))
    assert done.returncode == 2
    assert done.stderr.endswith("is not a working Python interpreter: ?]0;owned??]8;;http://evil?\\click ?exe\n")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "1e999"])
@pytest.mark.parametrize("command", [["check", "--fast"], ["verify"], ["fleet"], ["bench"]])
def test_a_timeout_that_is_not_a_finite_number_is_bad_input(command: list[str], value: str) -> None:
    """`--timeout nan` passed every comparison, so no child ever timed out."""
    done = doctor.run(*command, "--timeout", value)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"mhcdoctor: error: Invalid value for '--timeout': {value!r} is not a finite number of seconds "
        f"(see 'mhcdoctor {command[0]} --help')"
    ]


@pytest.mark.slow
def test_folder_names_that_are_not_utf8_in_path_and_cwd(tmp_path: Path) -> None:
    """`report --bundle` exited 4 (UnicodeEncodeError) and `--json` printed lone surrogates (\\udce9)."""
    bad = os.fsencode(tmp_path) + b"/na\xefve-\xff"
    os.makedirs(bad + b"/bin")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env_bytes = {os.fsencode(k): os.fsencode(v) for k, v in env.items()}
    env_bytes[b"PATH"] = bad + b"/bin:" + os.fsencode(env["PATH"])
    bundle = tmp_path / "b.tar.gz"
    for args in (["--bundle", str(bundle)], ["--json"]):
        done = subprocess.run(
            doctor.argv("report", "--fast", *args),
            env=env_bytes,  # type: ignore[arg-type]
            cwd=bad,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-500:]
        assert b"\\udc" not in done.stdout.lower() and b"\xe9" not in done.stdout
    report = json.loads(done.stdout)
    assert report["host"]["cwd"].endswith("/na?ve-?") and report["env"]["PATH"].startswith("/")
    assert doctor.run("explain", "--from", str(bundle)).returncode in (0, 1, 3)
