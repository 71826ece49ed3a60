"""`mhcdoctor diff A B` end to end: bundles from two fake MI300X machines that differ only in their aiter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import doctor
import fakes
import jsonschema
import pytest

pytestmark = pytest.mark.xdist_group("diff-cli")

REPO = Path(__file__).resolve().parents[2]
DIFF_SCHEMA = json.loads((REPO / "mhcdoctor" / "schemas" / "diff.schema.json").read_text())


def mhcdoctor(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base.update({"PYTHONPATH": str(REPO), **(env or {})})
    return doctor.run(*args, env=base, cwd=cwd)


def machine_bundle(tmp: Path, name: str, aiter_version: str, kernel: str) -> Path:
    """`report --fast --bundle` on a two-MI300X host; every machine is built in the same place (its home, venv
    and system tree), as two real hosts would have the same /opt/rocm, so only what a test plants differs."""
    shutil.rmtree(tmp / "machine", ignore_errors=True)
    home = tmp / "machine" / "home" / "someone"
    root = tmp / "machine" / "root"
    fakes.kfd(root, [0, 90402, 90402])
    fakes.executable(root / "opt/rocm/bin/hipcc", fakes.HIPCC_VERSION)  # aiter's JIT needs it
    site = fakes.site(home / "venv")
    newer = aiter_version >= "0.1.16"
    fakes.aiter(site, version=aiter_version, kernel=kernel, norm_args=newer, fused=newer)
    fakes.library(site, "vllm", "0.25.0")
    python = fakes.write(home / "venv/bin/python", f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    bundle = tmp / f"{name}.tar.gz"
    env = {"MHCDOCTOR_SYSROOT": str(root), "HOME": str(home), "PATH": "/nonexistent"}
    args = ("report", "--fast", "--model", "deepseek-v4-pro", "--python", str(python), "--bundle", str(bundle))
    proc = mhcdoctor(*args, cwd=tmp, env=env)
    assert proc.returncode == 0, proc.stderr
    return bundle


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("diff")
    broken = machine_bundle(tmp, "broken", "0.1.13", "racy")
    working = machine_bundle(tmp, "working", "0.1.16", "fixed")
    broken_again = machine_bundle(tmp, "broken-again", "0.1.13", "racy")
    return broken, working, broken_again


def test_the_broken_and_the_working_machine_differ_in_their_aiter_and_its_consequences(bundles):
    broken, working, _ = bundles
    proc = mhcdoctor("diff", "--json", str(broken), str(working), cwd=broken.parent)
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, DIFF_SCHEMA)
    assert proc.returncode == 1
    assert doc["differences"][0] == {"section": "verdict", "key": "verdict", "a": "fail", "b": "ok"}
    facts = {d["key"] for d in doc["differences"] if d["section"] == "facts"}
    assert {"aiter.version", "aiter.sqrsum_fix"} <= facts
    assert all(key.startswith("aiter.") for key in facts)  # nothing but the planted install differs
    assert {d["section"] for d in doc["differences"]} == {"verdict", "ops", "findings", "facts"}


def test_the_same_machine_reported_twice_does_not_differ(bundles):
    broken, _, broken_again = bundles
    proc = mhcdoctor("diff", str(broken), str(broken_again), cwd=broken.parent)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines()[-1].startswith("no differences")


def test_text_output_puts_the_verdict_first_then_paths_then_findings_then_facts(bundles):
    broken, working, _ = bundles
    text = mhcdoctor("diff", str(broken), str(working), cwd=broken.parent).stdout
    order = [text.index(f"[{section}]") for section in ("verdict", "ops", "findings", "facts")]
    assert order == sorted(order)
    assert "aiter-sqrsum-race" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "report not found"),
        ('{"schema": "mhcdoctor.explain/1", "facts": {}}', "expected a saved `mhcdoctor check --json`"),
        ("not json", "is not valid JSON"),
    ],
)
def test_a_bad_report_is_one_line_and_exit_2(bundles, tmp_path, content, message):
    broken, _, _ = bundles
    other = tmp_path / "other.json"
    if content is not None:
        other.write_text(content)
    proc = mhcdoctor("diff", str(broken), str(other), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr and "Traceback" not in proc.stderr


def test_a_bundle_with_a_path_outside_its_folder_is_refused(tmp_path, bundles):
    import tarfile

    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        tar.add(bundles[0], arcname="../../escape.tar.gz")
    proc = mhcdoctor("explain", "--from", str(evil), cwd=tmp_path)
    assert proc.returncode == 2 and "unsafe path '../../escape.tar.gz'" in proc.stderr
    assert not (tmp_path.parent.parent / "escape.tar.gz").exists()
