"""A terminal in a non-UTF-8 encoding (LANG=de_DE.ISO-8859-1, or PYTHONIOENCODING=latin-1) shows every command's text
view, with what it cannot encode escaped, never exit 4 for an en dash or a ❌."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import doctor
import pytest


@pytest.mark.parametrize(
    ("args", "code", "shown"),
    [
        (["check", "--fast"], 3, "Paths per model"),
        (["explain"], 3, "release (0.30.0\\u20130.34.0)"),  # –, escaped
        (["explain", "--vllm", "0.30.0"], 3, "rules: vllm-0.30-0.34"),
        (["report", "--fast"], 0, "\\u274c FAIL"),  # ❌, escaped
    ],
)
def test_text_in_a_latin_1_terminal_is_shown_with_what_it_cannot_encode_escaped(
    tmp_path: Path, args: list[str], code: int, shown: str
) -> None:
    env = {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path), "NO_COLOR": "1", "PYTHONIOENCODING": "latin-1"}
    done = subprocess.run(doctor.argv(*args), capture_output=True, env=env, timeout=120)
    assert (done.returncode, shown in done.stdout.decode("latin-1")) == (code, True), done.stderr[-300:]
