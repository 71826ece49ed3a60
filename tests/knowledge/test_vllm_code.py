"""vLLM by its installed code (issue 30 §2): the mHC files an install holds decide whose rules and known bugs apply, so
a dev build, a nightly or a source install between releases gets the release whose code it holds, or "new code"
said as such. Through the CLI with fake installs; the fingerprints of two releases are those of the fake files (a
test cannot hold vLLM's own files), the rest of the mechanism is the real one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import doctor
import fakes
import pytest
from fakemachine import Machine

from mhcdoctor.knowledge import vllm_code, vllm_releases
from mhcdoctor.knowledge.vllm_fingerprints import FINGERPRINTS

FILES = {
    "0.33.0": {"model_executor/layers/mhc.py": "# layers 0.33\n", "model_executor/kernels/mhc/tilelang.py": "# tl 1\n"},
    "0.34.0": {"model_executor/layers/mhc.py": "# layers 0.34\n", "model_executor/kernels/mhc/tilelang.py": "# tl 2\n"},
}


@pytest.fixture
def releases(monkeypatch):
    prints = {r: {p: vllm_code.digest(t.encode()) for p, t in files.items()} for r, files in FILES.items()}
    monkeypatch.setattr(vllm_code, "FINGERPRINTS", prints)


def h200_with_vllm(machine: Machine, version: str, files: dict[str, str]) -> None:
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.12")
    vllm = fakes.library(machine.site, "vllm", version)
    for path, text in files.items():
        fakes.write(vllm / path, text)


def test_a_nightly_holding_0_34_0s_code_gets_its_rules_and_no_newer_than_known_warning(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.35.0.dev12+g1234abc", FILES["0.34.0"])
    doc, _ = machine.check_json("--fast")
    assert (doc["facts"]["vllm"]["code"], doc["facts"]["vllm"]["code_evidence"]) == (
        "0.34.0",
        "its mHC files are vLLM 0.34.0's",
    )
    model = doc["models"][0]
    assert model["rules"] == "vllm-0.30-0.34"
    assert model["rules_note"] == (
        "vLLM 0.35.0.dev12+g1234abc: its mHC files are vLLM 0.34.0's: the rules (vllm-0.30-0.34) and known bugs of "
        "0.34.0 apply"
    )
    assert "vllm-newer-than-rules" not in {f["id"] for f in doc["findings"]}


def test_a_dev_build_labelled_between_releases_gets_the_release_whose_code_it_holds(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.34.1.dev3", FILES["0.33.0"])  # a build of a 0.33 branch, mislabelled
    proc = machine.check("--fast")
    assert "vLLM 0.34.1.dev3: its mHC files are vLLM 0.33.0's: the rules (vllm-0.30-0.34) and known bugs of 0.33.0" in (
        proc.stdout
    )


def test_a_source_install_with_changed_mhc_files_is_new_code_said_as_such(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.34.0", {**FILES["0.34.0"], "model_executor/layers/mhc.py": "# patched\n"})
    doc, _ = machine.check_json("--fast")
    evidence = "new mHC code: its files match no vLLM release (nearest 0.34.0; differing: model_executor/layers/mhc.py)"
    assert (doc["facts"]["vllm"]["code"], doc["facts"]["vllm"]["code_evidence"]) == ("new", evidence)
    assert doc["models"][0]["rules_note"] == f"vLLM 0.34.0: {evidence}; rules vllm-0.30-0.34 by its version"
    text = machine.check("--fast").stdout
    assert evidence in text


def test_the_release_a_wheel_installs_is_no_note(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.34.0", FILES["0.34.0"])
    doc, _ = machine.check_json("--fast")
    assert doc["facts"]["vllm"]["code"] == "0.34.0" and doc["models"][0]["rules_note"] is None


def test_the_fingerprints_tell_apart_exactly_the_releases_the_audit_says_changed_the_mhc_files():
    same = {tuple(r for r, p in FINGERPRINTS.items() if p == prints) for prints in FINGERPRINTS.values()}
    unchanged = {tuple(pair.split(" → ")) for pair, _, _, kind in vllm_releases.VLLM_AUDIT if kind == "none"}
    assert {group for group in same if len(group) > 1} == unchanged
    for release, prints in FINGERPRINTS.items():
        assert vllm_code.match(prints, release).release == release


def test_without_its_code_a_nightly_is_newer_than_the_rules(tmp_path, releases):
    machine = Machine(tmp_path)  # the same nightly with no mHC files to read: the version alone decides
    h200_with_vllm(machine, "0.35.0.dev12+g1234abc", {})
    doc, _ = machine.check_json("--fast")
    assert doc["facts"]["vllm"]["code"] is None
    assert "vllm-newer-than-rules" in {f["id"] for f in doc["findings"]}


def test_the_check_shows_whose_mhc_code_is_installed_on_the_vllm_build_row(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.34.0", FILES["0.34.0"])
    row = next(line for line in machine.check("--fast").stdout.splitlines() if "vLLM build" in line)
    assert "its mHC files are vLLM 0.34.0's" in row


WHEELS = Path("/work/cache/vllm-files")  # the unpacked wheels, on the project's build machines only


@pytest.mark.skipif(not WHEELS.is_dir(), reason="the unpacked vLLM wheels are not on this machine")
def test_the_fingerprints_are_what_the_wheels_give():
    script = Path(__file__).parents[2] / "scripts" / "vllm-fingerprints"
    done = subprocess.run([sys.executable, str(script), "--check", str(WHEELS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_explain_and_a_replay_of_the_saved_report_say_whose_code_decided(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.34.1.dev3", FILES["0.33.0"])
    note = (
        "vLLM 0.34.1.dev3: its mHC files are vLLM 0.33.0's: the rules (vllm-0.30-0.34) and known bugs of 0.33.0 apply"
    )
    assert note in machine.run("explain", "--model", "deepseek-v4-pro").stdout
    report = tmp_path / "report.json"
    report.write_text(machine.check("--fast", "--json").stdout, encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    elsewhere = Machine(tmp_path / "elsewhere")  # no vLLM there: the report's facts alone say whose code it was
    replay = doctor.run("explain", "--from", str(report), "--model", "deepseek-v4-pro", "--json", env=elsewhere.env())
    assert json.loads(replay.stdout)["rules_note"] == note, replay.stderr


def test_a_stand_in_sharing_no_file_with_any_release_names_no_nearest_release(tmp_path, releases):
    machine = Machine(tmp_path)
    h200_with_vllm(machine, "0.34.0", {"model_executor/layers/mhc.py": "HAS_TILELANG_MHC = True\n"})
    doc, _ = machine.check_json("--fast")
    vllm = doc["facts"]["vllm"]
    assert (vllm["code"], vllm["code_evidence"]) == ("new", "new mHC code: none of its files is a vLLM release's")
