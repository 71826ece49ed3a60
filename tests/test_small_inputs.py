"""What a new user types: full-width digits, huge numbers, GPU product names, a BOM, a .zip bundle name, one report
named twice, stdin twice, --version. Each is accepted as meant, or refused with one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import doctor
import pytest

from mhcdoctor.cli import git_commit


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "machine").mkdir()
    return {**os.environ, "MHCDOCTOR_SYSROOT": str(tmp_path / "machine"), "NO_COLOR": "1"}


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (2, "", 1), done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("７１６８", "takes a whole number in the digits 0-9, not '７１６８'"),
        ("1" * 30, f"takes a whole number up to 1048576, not {'1' * 30}"),
    ],
)
def test_a_hidden_size_in_other_digits_or_absurdly_long_is_one_line(env: dict[str, str], value: str, message: str):
    assert message in _refused(doctor.run("explain", "--hidden", value, env=env))


@pytest.mark.parametrize(
    ("typed", "platform", "arch"),
    [("MI300X", "rocm", "gfx942"), ("AMD Instinct MI355X", "rocm", "gfx950"), ("H100", "cuda", "sm_90")],
)
def test_a_gpu_named_as_people_name_it_is_its_arch(env: dict[str, str], typed: str, platform: str, arch: str):
    doc = doctor.run("explain", "--json", "--arch", typed, "--vllm", "0.30.0", env=env).json()
    assert (doc["facts"]["platform"], doc["facts"]["arch"]) == (platform, arch)


def test_an_arch_that_is_no_gpu_names_both_kinds_of_answer(env: dict[str, str]):
    assert "nor a GPU such as MI300X or H100" in _refused(doctor.run("explain", "--arch", "MI999", env=env))


def test_json_with_a_byte_order_mark_reads_as_without(env: dict[str, str], tmp_path: Path):
    config = tmp_path / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + json.dumps({"model_type": "deepseek_v4", "hidden_size": 4096}).encode())
    doc = doctor.run("explain", "--json", "--config", str(config), env=env).json()
    assert doc["model"]["hidden_size"] == 4096


def test_a_bundle_named_zip_is_refused_before_anything_is_written(env: dict[str, str], tmp_path: Path):
    done = doctor.run("report", "--fast", "--bundle", "x.zip", env=env, cwd=tmp_path)
    assert "--bundle x.zip: a bundle is a gzip-compressed tar; give a name ending in .tar.gz, e.g. x.tar.gz" in (
        _refused(done)
    )
    assert list(tmp_path.iterdir()) == [tmp_path / "machine"]


def test_one_report_named_twice_is_not_two_nodes(env: dict[str, str], tmp_path: Path):
    report = tmp_path / "a.json"
    report.write_text(doctor.run("check", "--fast", "--json", env=env).stdout)
    message = _refused(doctor.run("merge", "a.json", str(tmp_path), env=env, cwd=tmp_path))  # and in its folder
    assert message == f"mhcdoctor: error: {report} is named twice (also as a.json); give each node's report once\n"


def test_diff_of_stdin_with_itself_is_one_line(env: dict[str, str]):
    message = _refused(doctor.run("diff", "-", "-", env=env))
    assert message == "mhcdoctor: error: diff reads stdin (-) for one report only; give a file for the other\n"


def test_version_names_the_commit_of_a_checkout_and_nothing_else_of_an_install(tmp_path: Path):
    assert doctor.run("--version").stdout.startswith("mhcdoctor 0.1.0")
    assert git_commit(tmp_path) is None  # an installed package: no .git beside it
    git = tmp_path / "clone" / ".git"
    (git / "refs/heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text("# pack-refs with: peeled\n" + "a" * 40 + " refs/heads/main\n")
    assert git_commit(tmp_path / "clone") == "a" * 12
    (git / "refs/heads/main").write_text("b" * 40 + "\n")
    assert git_commit(tmp_path / "clone") == "b" * 12
    worktree = tmp_path / "wt"
    (worktree / "gitdir").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {worktree / 'gitdir'}\n")
    (worktree / "gitdir/HEAD").write_text("ref: refs/heads/main\n")
    (worktree / "gitdir/commondir").write_text(str(git) + "\n")
    assert git_commit(worktree) == "b" * 12


@pytest.mark.parametrize(("args", "what"), [(["explain", "--from", "-"], "report"), (["log", "-"], "log")])
def test_stdin_closed_is_named_closed_not_a_terminal(env: dict[str, str], args: list[str], what: str):
    done = doctor.spawn(*args, env=env, preexec_fn=lambda: os.close(0), timeout=60)  # `mhcdoctor ... <&-`
    assert f"{what} from stdin (-): stdin is closed; pipe the {what} in" in _refused(done)


@pytest.mark.parametrize("root", ["no-such-folder", "a-file"])
def test_a_sysroot_that_is_no_folder_is_one_line_not_a_machine_without_gpus(tmp_path: Path, root: str):
    (tmp_path / "a-file").write_text("")
    env = {**os.environ, "MHCDOCTOR_SYSROOT": root}  # a typo would otherwise read as a machine with nothing in it
    for args in (["check", "--fast"], ["explain", "--deep"]):
        assert f"MHCDOCTOR_SYSROOT={root} is not a folder" in _refused(doctor.run(*args, env=env, cwd=tmp_path))


@pytest.mark.parametrize(
    ("prints", "said"),
    [
        ("echo hello", "its answer is not a Python version and search path: hello"),
        ('echo \'["3.11", "not a list"]\'', 'its answer is not a Python version and search path: ["3.11"'),
        ("echo oops >&2; exit 7", "exited with code 7: oops"),
        ("exit 0", "no output"),
    ],
)
def test_a_python_that_is_no_python_is_named_by_what_it_did(env: dict[str, str], tmp_path: Path, prints: str, said):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\n{prints}\n")
    fake.chmod(0o755)
    assert f"--python {fake} is not a working Python interpreter: {said}" in _refused(
        doctor.run("check", "--fast", "--python", str(fake), env=env)
    )


def test_a_venv_whose_pth_file_kills_its_start_up_is_named_with_that_file(env: dict[str, str], tmp_path: Path):
    """A .pth line that runs code (`import ...`) runs in every start of that Python, vLLM's too: the interpreter
    starts without its site-packages (python -S), so the doctor names the files that run code there."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "zz_broken.pth").write_text("import os; os._exit(3)\n")
    said = _refused(doctor.run("check", "--fast", "--python", str(venv / "bin" / "python"), env=env))
    assert said.endswith(
        f"exited with code 3; it starts without its site-packages (python -S), where {site / 'zz_broken.pth'} "
        "runs code at start-up\n"
    ), said


def test_a_python_named_bare_that_is_only_in_the_working_folder_is_told_how_to_name_it(env, tmp_path: Path):
    """`--python python` runs the PATH's, as a shell does; one that exists only here is named so, not 'no such file'."""
    (tmp_path / "mypython").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "mypython").chmod(0o755)
    said = _refused(doctor.run("check", "--fast", "--python", "mypython", env=env, cwd=tmp_path))
    assert "--python mypython is not on PATH; give the one in the working folder as ./mypython" in said
