"""`verify --kernel OP=MODULE:FUNC`: a kernel author's own op, checked with verify's cases, on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import doctor
import needs
import pytest

KERNELS = Path(__file__).parents[1] / "bench"  # userkernels.py: a correct mhc_post and a transposed one
SMALL = ["--hidden", "256", "--device", "cpu", "--json"]

pytestmark = needs.library("torch")


def verify(*args: str) -> tuple[int, dict]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2]))
    proc = doctor.run("verify", *SMALL, *args, cwd=KERNELS, env=env)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.startswith("{") else {"stderr": proc.stderr}


@pytest.mark.slow
def test_a_correct_kernel_passes_every_case_including_stress() -> None:
    code, doc = verify("--kernel", "mhc_post=userkernels:good_post", "--stress")
    got = {(r["path"], r["op"], r["tokens"]): r["status"] for r in doc["results"]}
    assert (code, got) == (0, {("user", "mhc_post", t): "pass" for t in (1, 7, 80, 512, 1025, 4096, 16384)})


@pytest.mark.slow
def test_a_planted_bug_fails_verify() -> None:
    code, doc = verify("--kernel", "mhc_post=userkernels:transposed_post", "--tokens", "7")
    row = doc["results"][0]
    assert (code, doc["verdict"], row["path"], row["status"]) == (3, "fail", "user", "fail")
    assert "residual_out" in row["reason"]


@pytest.mark.slow
def test_a_function_that_does_not_exist_is_a_reason_not_a_crash() -> None:
    code, doc = verify("--kernel", "mhc_post=userkernels:missing", "--tokens", "7")
    assert code == 3
    assert "userkernels has no function 'missing'" in doc["paths"][0]["reason"]


def test_the_same_op_twice_is_bad_input() -> None:
    code, doc = verify("--kernel", "mhc_post=userkernels:good_post", "--kernel", "mhc_post=userkernels:x")
    assert code == 2 and "gives mhc_post twice" in doc["stderr"]


def test_a_sitecustomize_in_the_working_folder_never_runs_and_the_kernel_beside_it_does(tmp_path: Path) -> None:
    """Folder trust (issue 33 §8): the working folder's sitecustomize.py ran in every verify child before any
    mhcdoctor code. The folder is now added to the child's sys.path only to import the user's module, and last.
    Run as a user runs it: the `mhcdoctor` command in the folder holding the kernel."""
    command = Path(sys.executable).parent / "mhcdoctor"
    if not command.is_file():
        pytest.skip("the mhcdoctor command is not installed beside this Python")
    marker = tmp_path / "ran"
    (tmp_path / "userkernels.py").write_text((KERNELS / "userkernels.py").read_text())
    for name in ("sitecustomize", "usercustomize"):
        (tmp_path / f"{name}.py").write_text(f"import sys\nopen({str(marker)!r}, 'a').write(repr(sys.argv) + '\\n')\n")
    args = [str(command), "verify", *SMALL, "--kernel", "mhc_post=userkernels:good_post", "--tokens", "7"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and [r["status"] for r in doc["results"]] == ["pass"], proc.stderr
    assert not marker.exists(), marker.read_text()


def test_control_characters_in_a_kernels_error_reach_no_terminal(tmp_path: Path) -> None:
    """A kernel's (or a library's) exception text is the child's words: an escape in it (a JIT's coloured compiler
    output, an OSC that retitles the window) is shown as `?` in verify's text and progress, never sent as is."""
    (tmp_path / "loud.py").write_text('def post(*args):\n    raise RuntimeError("\\x1b]0;pwned\\x07 \\x1b[2J boom")\n')
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2]), NO_COLOR="1")
    done = doctor.run("verify", *SMALL[:-1], "--tokens", "1", "--kernel", "mhc_post=loud:post", cwd=tmp_path, env=env)
    assert "RuntimeError: ?]0;pwned? ?[2J boom" in done.stdout
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("mhc_post=../../etc:passwd", "'../../etc' is not a module name"),
        ("mhc_post=userkernels.py:good_post", "give the module, userkernels, not its file userkernels.py"),
        ("mhc_post=userkernels:good-post", "'good-post' is not a function name"),
    ],
)
def test_a_kernel_named_by_a_path_or_file_is_one_line_saying_so(spec: str, said: str) -> None:
    code, doc = verify("--kernel", spec)
    assert code == 2 and said in doc["stderr"] and len(doc["stderr"].splitlines()) == 1, doc
