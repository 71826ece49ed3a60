"""An empty name (`--bundle "$OUT"` with OUT unset in a script) is bad input: one line naming the option, exit 2, and
nothing run, never the default model, no bundle at all, or the working folder read as a folder of reports."""

from __future__ import annotations

import os
from pathlib import Path

import doctor
import pytest


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "machine").mkdir()
    return {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path / "machine"), "NO_COLOR": "1"}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["explain", "--model", ""], "'--model'"),
        (["check", "--fast", "--model", " "], "'--model'"),
        (["explain", "--config", ""], "'--config'"),
        (["explain", "--from", ""], "'--from'"),
        (["explain", "--python", ""], "'--python'"),
        (["report", "--fast", "--bundle", ""], "'--bundle'"),
        (["bench", "--plot", ""], "'--plot'"),
        (["merge", ""], "'FILES|DIR'"),
        (["merge", "--bundle", "", "a.json"], "'--bundle'"),
        (["diff", "", "b.json"], "'A'"),
        (["log", ""], "'FILE|-'"),
        (["log", "--from", "", "-"], "'--from'"),
    ],
)
def test_an_empty_name_is_one_line_naming_the_option_and_exit_2(
    env: dict[str, str], tmp_path: Path, args: list[str], named: str
) -> None:
    done = doctor.run(*args, env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (2, "", 1), done.stderr
    assert named in done.stderr and "is empty" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["machine"]  # nothing written
