"""Every command that prints a verdict or differences colours it on a terminal, as check and explain do, and none
does with NO_COLOR set (https://no-color.org)."""

from __future__ import annotations

import os
from pathlib import Path

import doctor
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def saved_report(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(MHCDOCTOR_SYSROOT=str(tmp_path), PYTHONPATH=str(REPO), CUDA_VISIBLE_DEVICES="")
    proc = doctor.run("check", "--fast", "--json", env=env)
    report = tmp_path / "node-1.json"
    report.write_text(proc.stdout)
    return report, env


@pytest.mark.parametrize("command", [["diff", "{r}", "{r}"], ["merge", "{r}"]])
def test_diff_and_merge_colour_their_verdict_on_a_terminal(
    saved_report: tuple[Path, dict[str, str]], command: list[str]
) -> None:
    report, env = saved_report
    args = [part.format(r=report) for part in command]
    assert "\033[" in doctor.on_terminal(*args, env=env)
    assert "\033[" not in doctor.on_terminal(*args, env={**env, "NO_COLOR": "1"})


@pytest.mark.slow
def test_verify_colours_its_rows_and_verdict_on_a_terminal(saved_report: tuple[Path, dict[str, str]]) -> None:
    _, env = saved_report
    shown = doctor.on_terminal("verify", "--hidden", "256", "--path", "torch", "--tokens", "1", env=env)
    assert "verdict: \033[31mfail\033[0m" in shown  # no GPU here: nothing ran
