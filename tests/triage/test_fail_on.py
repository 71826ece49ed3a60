"""--fail-on never|degraded|fail on check, explain and verify: the exit code a CI gate sees, per verdict."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import doctor
import fakes
import pytest

# verdict -> exit code, for each --fail-on (None: the default codes).
EXPECTED = {
    None: {"ok": 0, "degraded": 1, "fail": 3},
    "degraded": {"ok": 0, "degraded": 1, "fail": 3},
    "fail": {"ok": 0, "degraded": 0, "fail": 3},
    "never": {"ok": 0, "degraded": 0, "fail": 0},
}
FAIL_ON = [None, "degraded", "fail", "never"]


def _fail_on(value: str | None) -> list[str]:
    return [] if value is None else ["--fail-on", value]


def mi300x(tmp: Path, racy_aiter: bool) -> tuple[list[str], dict[str, str]]:
    """A two-MI300X machine with vLLM 0.25.0: with a racy aiter (fail), or with neither aiter nor tilelang (the
    torch fallback: degraded). Returns the check arguments and environment that probe it."""
    root, site = tmp / "root", fakes.site(tmp)
    fakes.kfd(root, [0, 90402, 90402])
    fakes.library(site, "vllm", "0.25.0")
    if racy_aiter:
        fakes.aiter(site, version="0.1.13", kernel="racy")
    python = fakes.write(tmp / "bin/python", f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    args = ["check", "--fast", "--model", "deepseek-v4-pro", "--python", str(python)]
    return args, {"MHCDOCTOR_SYSROOT": str(root), "PATH": str(tmp / "no-bin")}


@pytest.mark.parametrize("fail_on", FAIL_ON)
@pytest.mark.parametrize("verdict", ["degraded", "fail"])
def test_check(tmp_path, verdict, fail_on):
    args, env = mi300x(tmp_path, racy_aiter=verdict == "fail")
    proc = doctor.run(*args, *_fail_on(fail_on), env={**os.environ, **env})
    assert proc.returncode == EXPECTED[fail_on][verdict]


# Every fact the rules read is given, so nothing is probed (no slow tilelang import) and nothing depends on
# what the machine running the tests has installed.
_WHAT_IF = {
    "ok": ["--aiter", "0.1.16", "--tilelang", "0.1.12"],
    "degraded": ["--aiter", "none", "--tilelang", "none"],
    "fail": ["--aiter", "0.1.13", "--tilelang", "0.1.12"],
}


@pytest.mark.parametrize("fail_on", FAIL_ON)
@pytest.mark.parametrize("verdict", ["ok", "degraded", "fail"])
def test_explain(verdict, fail_on):
    machine = ["--platform", "rocm", "--arch", "gfx950", "--vllm", "0.25.0", "--model", "deepseek-v4-pro"]
    proc = doctor.run("explain", *machine, *_WHAT_IF[verdict], *_fail_on(fail_on))
    assert proc.returncode == EXPECTED[fail_on][verdict]


@pytest.mark.parametrize("fail_on", FAIL_ON)
def test_verify_of_a_path_that_is_not_installed(fail_on):
    """No aiter here: every aiter case is skipped, nothing passes, and verify's verdict is fail."""
    proc = doctor.run("verify", "--path", "aiter", "--device", "cpu", "--tokens", "1", *_fail_on(fail_on))
    assert proc.returncode == EXPECTED[fail_on]["fail"]


@pytest.mark.parametrize("command", ["check", "explain", "verify"])
def test_bad_fail_on_is_exit_2_in_every_command(command):
    proc = doctor.run(command, "--fail-on", "sometimes")
    assert proc.returncode == 2 and "--fail-on" in proc.stderr
