"""`log`'s views against what a stranger names (issue 33 §7): the log's and the --from report's file names carry
ESC, BEL and `ESC c` (reset the terminal), and home folders named after a finding id or an op name must not take
that id or name out of the view."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import doctor
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "triage"))
from triage_docs import rocm_report  # noqa: E402

CONTROL = "\x1bc\x07\x1b]0;owned\x07\x9b2J"


def test_control_characters_in_the_log_and_report_names_never_reach_the_terminal(tmp_path: Path) -> None:
    log = tmp_path / f"vllm{CONTROL}.log"
    log.write_text("RuntimeError: PDL is not supported\n")
    report = tmp_path / f"node{CONTROL}.json"
    report.write_text(json.dumps(rocm_report()))
    for args in ((), ("--markdown",), ("--json",)):
        shown = doctor.run("log", str(log), "--from", str(report), *args)
        assert shown.returncode == 3, shown.stderr
        assert not any(ch in shown.stdout for ch in "\x1b\x07\x9b"), args
        assert "vllm?c??" in shown.stdout and "owned??2J.log" in shown.stdout, args  # shown, each as `?`
        assert "node?c??" in shown.stdout, args  # the prediction from the report names it


@pytest.mark.parametrize(("home", "word"), [("aiter-no-mhc", "aiter-no-mhc"), ("mhc_post", "mhc_post")])
def test_a_home_folder_named_like_a_finding_or_an_op_keeps_that_word_in_every_view(
    tmp_path: Path, home: str, word: str
) -> None:
    log = tmp_path / "vllm.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        f'  File "/home/{home}/venv/lib/python3.12/site-packages/vllm/model_executor/layers/mhc.py", line 20, in '
        "mhc_post\n"
        "ModuleNotFoundError: No module named 'aiter.ops.mhc'\n"
    )
    for args in ((), ("--markdown",), ("--json",)):
        shown = doctor.run("log", str(log), *args).stdout
        assert f"/home/{home}" not in shown and "~/venv/lib" in shown, args  # the home is still redacted
        assert "aiter-no-mhc" in shown and "in mhc_post" in shown, args
        if word == "mhc_post" and not args:
            assert "mhc_post, fused post+pre, hc_head: no line shows the path" in shown
