"""`mhcdoctor report` end to end on a user's broken machine: a real subprocess, a fake machine tree, a Python
environment of fakes under a planted home folder, planted secrets in the environment, and probes that hang,
crash and print secrets. What it prints and bundles must be complete, and must hold none of the planted values.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

import doctor
import fakes
import jsonschema
import pytest

from mhcdoctor.redact import PROTECTED_WORDS

# user_report, once: probes that hang for the 2 s timeout and crash, so seconds for the module
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report-cli")]

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "mhcdoctor" / "schemas"
USER = "zed.planted"
SECRETS = {
    "HF_TOKEN": "hf_PLANTEDsecretTOKENvalue0123456789",
    "VLLM_API_KEY": "vllm-planted-api-key-98765",
    "AITER_REPO_PASSWORD": "planted-aiter-passw0rd",
}
# aiter's import prints the token and its own path (under the home folder), then fails naming the user.
_LEAKY_INIT = (
    "import os, sys\n"
    "sys.stderr.write('hub login with ' + os.environ.get('HF_TOKEN', '') + ' from ' + __file__ + '\\n')\n"
    "raise ImportError('no HIP runtime for ' + os.environ.get('USER', '') + ' on ' + os.uname().nodename)\n"
)


class UserMachine:
    """A MI300X host (two gfx942 and one gfx90a) with aiter 0.1.13, a hanging tilelang and a crashing triton."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home" / USER
        self.root = tmp / "root"
        fakes.kfd(self.root, [0, 90402, 90402, 90010])
        fakes.rocm(self.root, "7.0.2-56")
        site = fakes.site(self.home / "venv", "site-packages")
        fakes.aiter(site, version="0.1.13", kernel="racy", init=_LEAKY_INIT)
        fakes.library(site, "tilelang", "0.1.9", init=fakes.HANG)
        fakes.library(site, "triton", "3.4.0", init=fakes.SEGFAULT)
        fakes.library(site, "vllm", "0.25.0")
        self.python = fakes.write(
            self.home / "venv" / "bin" / "python", f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n'
        )
        self.python.chmod(0o755)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
        env.update(SECRETS)
        env.update(
            {
                "MHCDOCTOR_SYSROOT": str(self.root),
                "PATH": f"{self.home}/.local/bin:{self.tmp}/no-bin",
                "HOME": str(self.home),
                "USER": USER,
                "LOGNAME": USER,
                "HIP_VISIBLE_DEVICES": "0,1,2",
                "PYTHONPATH": str(REPO),
            }
        )
        return env

    def planted(self) -> list[str]:
        """Everything that identifies this user: none of it may be shared."""
        return [str(self.home), USER, *SECRETS.values()]


def leaks(text: str, planted: list[str]) -> list[str]:
    found = [p for p in planted if p.lower() in text.lower()]
    host = socket.gethostname().split(".")[0]
    # A host called "localhost" or "amd" names nobody; redaction leaves those words alone on purpose.
    if host.lower() not in PROTECTED_WORDS | {"localhost"} and re.search(
        rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])", text, re.IGNORECASE
    ):
        found.append(f"hostname {host}")
    return found


@pytest.fixture(scope="module")
def user_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[UserMachine, subprocess.CompletedProcess[str], Path]:
    """One full `report --bundle` on the broken machine (children hang for the 2 s timeout), shared by the tests."""
    machine = UserMachine(tmp_path_factory.mktemp("user"))
    bundle = machine.tmp / "mhcdoctor-report.tar.gz"
    proc = doctor.run(
        "report",
        "--python",
        str(machine.python),
        "--timeout",
        "2",
        "--bundle",
        str(bundle),
        env=machine.env(),
        cwd=machine.tmp,
    )
    return machine, proc, bundle


def _members(bundle: Path) -> dict[str, str]:
    with tarfile.open(bundle) as tar:
        return {
            m.name.removeprefix("mhcdoctor-report/"): tar.extractfile(m).read().decode()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def test_the_report_succeeds_and_says_what_it_redacted(user_report):
    _, proc, bundle = user_report
    assert proc.returncode == 0, proc.stderr
    assert "mhcdoctor: redacted:" in proc.stderr
    assert f"wrote {bundle}" in proc.stderr


def test_no_planted_secret_home_user_or_host_is_in_the_markdown(user_report):
    machine, proc, _ = user_report
    assert leaks(proc.stdout, machine.planted()) == []


def test_no_planted_secret_home_user_or_host_is_in_any_bundle_file(user_report):
    machine, _, bundle = user_report
    found = {name: leaks(text, machine.planted()) for name, text in _members(bundle).items()}
    assert {name: hit for name, hit in found.items() if hit} == {}


def test_the_leaky_probe_output_is_kept_with_the_secrets_masked(user_report):
    _, _, bundle = user_report
    probe = json.loads(_members(bundle)["probes/aiter.import.json"])
    evidence = "\n".join(probe["evidence"])
    assert "hub login with [masked] from ~/venv/site-packages/aiter/__init__.py" in evidence


def test_hanging_and_crashing_probes_leave_a_complete_report(user_report):
    _, proc, bundle = user_report
    files = _members(bundle)
    status = {name: json.loads(files[f"probes/{name}.json"])["status"] for name in ("tilelang.import", "triton.import")}
    assert status == {"tilelang.import": "timeout", "triton.import": "crash"}
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("**mhcdoctor: ❌ FAIL**")
    assert "aiter 0.1.13 (sqrsum fix absent)" in lines[0]
    for section in ("### Findings", "<summary>Full check</summary>", "<summary>Decision trace: deepseek-v4-pro"):
        assert section in proc.stdout


def test_the_bundle_json_validates_against_the_published_schemas(user_report):
    _, _, bundle = user_report
    files = _members(bundle)
    jsonschema.validate(json.loads(files["report.json"]), json.loads((SCHEMAS / "check.schema.json").read_text()))
    jsonschema.validate(json.loads(files["manifest.json"]), json.loads((SCHEMAS / "bundle.schema.json").read_text()))
    assert files["report.md"].splitlines()[0].startswith("**mhcdoctor:")


def test_the_environment_is_the_allowlist_with_secret_names_masked(user_report):
    _, _, bundle = user_report
    env = json.loads(_members(bundle)["report.json"])["env"]
    assert env["HIP_VISIBLE_DEVICES"] == "0,1,2"
    assert env["VLLM_API_KEY"] == "[masked]" and env["AITER_REPO_PASSWORD"] == "[masked]"
    assert env["PATH"].startswith("~/.local/bin:")
    assert "HF_TOKEN" not in env and "HOME" not in env and "USER" not in env


def test_explain_from_the_bundle_replays_the_users_machine(user_report, tmp_path):
    machine, _, bundle = user_report
    from_bundle = doctor.run(
        "explain", "--from", str(bundle), "--model", "deepseek-v4-pro", "--json", env=machine.env(), cwd=tmp_path
    )
    assert from_bundle.returncode == 3, from_bundle.stderr
    doc = json.loads(from_bundle.stdout)
    assert (doc["ops"]["mhc_pre"]["path"], doc["facts"]["arch"]) == ("aiter", "gfx942")
    assert "aiter-sqrsum-race" in {f["id"] for f in doc["findings"]}


def test_diff_of_a_bundle_and_its_own_report_json_is_empty(user_report, tmp_path):
    machine, _, bundle = user_report
    report_json = tmp_path / "report.json"
    report_json.write_text(_members(bundle)["report.json"])
    proc = doctor.run("diff", str(bundle), str(report_json), env=machine.env(), cwd=tmp_path)
    assert (proc.returncode, proc.stdout.splitlines()[-1]) == (
        0,
        "no differences in verdict, paths, findings, verify, facts, devices, probes or environment",
    )


def test_preview_prints_every_bundle_file_and_writes_nothing(tmp_path):
    machine = UserMachine(tmp_path)
    out = tmp_path / "never.tar.gz"
    proc = doctor.run(
        "report",
        "--fast",
        "--python",
        str(machine.python),
        "--bundle",
        str(out),
        "--preview",
        env=machine.env(),
        cwd=machine.tmp,
    )
    headers = re.findall(r"^==> (\S+) <==$", proc.stdout, re.MULTILINE)
    assert proc.returncode == 0 and not out.exists()
    assert {"manifest.json", "redactions.json", "report.json", "report.md", "probes/aiter.json"} <= set(headers)
    assert leaks(proc.stdout, machine.planted()) == []


def test_no_redact_shares_the_home_folder_as_it_is(tmp_path):
    machine = UserMachine(tmp_path)
    proc = doctor.run(
        "report", "--fast", "--python", str(machine.python), "--json", "--no-redact", env=machine.env(), cwd=machine.tmp
    )
    doc = json.loads(proc.stdout)
    assert doc["env"]["PATH"].startswith(f"{machine.home}/.local/bin")
    assert "NOT redacted" in proc.stderr


def test_report_json_is_one_document_that_explain_reads(tmp_path):
    machine = UserMachine(tmp_path)
    proc = doctor.run("report", "--fast", "--python", str(machine.python), "--json", env=machine.env(), cwd=machine.tmp)
    (tmp_path / "r.json").write_text(proc.stdout)
    replay = doctor.run(
        "explain", "--from", "r.json", "--model", "deepseek-v4-flash", "--json", env=machine.env(), cwd=machine.tmp
    )
    assert json.loads(replay.stdout)["facts"]["aiter"]["version"] == "0.1.13"


def test_a_host_with_mixed_architectures_is_a_finding_with_every_device_listed(user_report):
    _, proc, _ = user_report
    assert "**`multi-gpu-mixed-arch`** (warn)" in proc.stdout
    assert "| 2 | amd | gfx90a |" in proc.stdout


def test_a_bundle_path_that_cannot_be_written_is_one_line_and_exit_2(tmp_path):
    machine = UserMachine(tmp_path)
    target = tmp_path / "no-such-folder" / "b.tar.gz"
    proc = doctor.run(
        "report", "--fast", "--python", str(machine.python), "--bundle", str(target), env=machine.env(), cwd=machine.tmp
    )
    assert proc.returncode == 2 and proc.stdout == ""
    expected = f"cannot write bundle {target}: the folder {target.parent} does not exist"
    assert proc.stderr.strip() == f"mhcdoctor: error: {expected}"


def test_as_root_the_summary_and_redactions_json_say_the_user_was_replaced(tmp_path):
    """root's name is left alone in text (it is a word everywhere), but the report's user field is still hashed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(USER="root", LOGNAME="root", HOME="/root", MHCDOCTOR_SYSROOT=str(tmp_path), PYTHONPATH=str(REPO))
    bundle = tmp_path / "b.tar.gz"
    proc = doctor.run("report", "--fast", "--bundle", str(bundle), env=env, cwd=tmp_path)
    assert re.search(r"; user in [1-9]\d* string\(s\)", proc.stderr.splitlines()[-1]), proc.stderr
    replaced = json.loads(_members(bundle)["redactions.json"])["replaced"]
    assert any(r["kind"] == "user" and r["with"].startswith("user-") for r in replaced)
    assert json.loads(_members(bundle)["report.json"])["host"]["user"].startswith("user-")


def test_redactions_json_follows_its_published_schema(user_report):
    _, _, bundle = user_report
    schema = json.loads((SCHEMAS / "redactions.schema.json").read_text())
    jsonschema.validate(json.loads(_members(bundle)["redactions.json"]), schema)
