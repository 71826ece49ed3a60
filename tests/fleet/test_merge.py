"""`mhcdoctor merge`: the fleet summary from saved reports, as support reads it (no Ray needed).

The reports are real `check` documents of fake machines (fakes.py): MI300X nodes with AMD's aiter 0.1.14, one
with the racy 0.1.13, saved as `mhcdoctor report --json` would save them.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import doctor
import fakes
import pytest
from localfleet import fleet_validator

from mhcdoctor.checkreport import build_check
from mhcdoctor.fleet.summary import NodeResult, summarize
from mhcdoctor.models import BUILTIN_MODELS
from mhcdoctor.reportfile import validate_report

pytestmark = pytest.mark.xdist_group("merge")

MI300X = 90402


def machine_report(tmp_path: Path, name: str, aiter: str = "0.1.14", kernel: str = "fixed") -> dict[str, Any]:
    base = tmp_path / name
    site = fakes.site(base)
    fakes.aiter(site, version=aiter, kernel=kernel, norm_args=True, fused=True)
    fakes.torch(site, version="2.9.1+rocm7.2", cuda=None, hip="7.2.26015")
    fakes.kfd(base / "root", [0, MI300X, MI300X])
    fakes.rocm(base / "root")
    ctx = fakes.context(base, site=site, root=base / "root", fast=True)
    return dict(build_check(ctx, [BUILTIN_MODELS["deepseek-v4-pro"]]))  # as a node sends it: JSON


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as Slurm leaves it: node-0.json ... node-15.json, node-7 with the racy aiter."""
    tmp = tmp_path_factory.mktemp("merge")
    good = json.dumps(machine_report(tmp, "good"))
    racy = json.dumps(machine_report(tmp, "racy", aiter="0.1.13", kernel="racy"))
    folder = tmp / "reports"
    folder.mkdir()
    for i in range(16):
        (folder / f"node-{i}.json").write_text(racy if i == 7 else good)
    return folder


def test_the_text_names_the_odd_node_and_counts_the_others(saved: Path) -> None:
    proc = doctor.run("merge", str(saved))
    code, out = proc.returncode, proc.stdout
    assert "node-7: aiter 0.1.13 — 15 others 0.1.14" in out
    fixes = (  # the stand-in aiter/ops/mhc.py holds no known form of the delayed-pre API: unknown
        "node-7: aiter fixes 2 of 6 present, sqrsum, big-fuse-sync, post-race absent, delayed-api unknown — 15 others "
        "5 of 6 present, delayed-api unknown"
    )
    assert fixes in out
    assert "aiter-sqrsum-race on 1 of 16 nodes: node-7" in out
    assert code == 3


def test_facts_all_nodes_share_are_listed_once(saved: Path) -> None:
    proc = doctor.run("merge", str(saved))
    out = proc.stdout
    shared = out.split("Same on all 16 checked nodes:")[1].split("\n\n")[0]
    assert "GPUs" in shared and "2x gfx942" in shared
    assert out.count("2x gfx942") == 1


def test_json_follows_the_published_schema(saved: Path) -> None:
    proc = doctor.run("merge", "--json", str(saved))
    out = proc.stdout
    doc = json.loads(out)
    fleet_validator().validate(doc)
    assert [n["name"] for n in doc["nodes"]][:3] == ["node-0", "node-1", "node-2"]  # node-10 after node-9


def test_nodes_of_one_aiter_version_whose_fixes_differ_are_named(tmp_path: Path) -> None:
    for name, kernel in (("a", "fixed"), ("b", "fixed"), ("c", "racy")):  # c: 0.1.14's label on the racy guard
        (tmp_path / f"{name}.json").write_text(json.dumps(machine_report(tmp_path, name, kernel=kernel)))
    out = doctor.run("merge", *(str(tmp_path / f"{n}.json") for n in "abc")).stdout
    differences = out.split("Differences between nodes")[1].split("\n\n")[0]
    assert (
        "c: aiter fixes 2 of 6 present, sqrsum, big-fuse-sync, post-race absent, delayed-api unknown — 2 others 5 of 6"
        in differences
    )
    assert "aiter 0.1.14" not in differences  # the version is the same: only the fixes tell the nodes apart
    assert "  aiter                  0.1.14\n" in out.split("Same on all 3 checked nodes:")[1]


def test_markdown_holds_the_same_lines(saved: Path) -> None:
    proc = doctor.run("merge", "--markdown", str(saved))
    out = proc.stdout
    assert out.startswith("## mhcdoctor fleet: Fleet of 16 nodes: fail")
    assert "- node-7: aiter 0.1.13 — 15 others 0.1.14" in out
    assert (
        "- node-7: aiter fixes 2 of 6 present, sqrsum, big-fuse-sync, post-race absent, delayed-api unknown — 15 "
        in out
    )


def test_an_empty_report_file_is_a_node_not_checked(saved: Path, tmp_path: Path) -> None:
    empty = tmp_path / "node-99.json"
    empty.write_text("")  # what `mhcdoctor report --json > node-99.json` leaves where mhcdoctor is missing
    proc = doctor.run("merge", "--json", str(saved / "node-0.json"), str(empty))
    code, out = proc.returncode, proc.stdout
    doc = json.loads(out)
    row = doc["nodes"][1]
    assert (row["name"], row["status"], row["verdict"]) == ("node-99", "unreadable", "fail")
    assert "is empty" in row["error"]  # an empty file is named as such by the shared report reader
    assert doc["counts"]["unchecked"] == 1 and code == 3


def test_a_missing_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = doctor.run("merge", str(tmp_path / "nope"))
    code, out, err = proc.returncode, proc.stdout, proc.stderr
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"mhcdoctor: error: no such file or folder: {tmp_path / 'nope'}"]


def test_the_bundle_holds_each_report_and_the_summary(saved: Path, tmp_path: Path) -> None:
    import tarfile

    bundle = tmp_path / "fleet.tar.gz"
    doctor.run("merge", "--bundle", str(bundle), str(saved))
    with tarfile.open(bundle) as tar:
        names = set(tar.getnames())
    assert {"mhcdoctor-fleet/summary.json", "mhcdoctor-fleet/summary.md", "mhcdoctor-fleet/nodes/node-7.json"} <= names
    assert len([n for n in names if n.startswith("mhcdoctor-fleet/nodes/")]) == 16


def test_the_verdict_is_the_worst_nodes_and_fail_on_narrows_the_exit_code(tmp_path: Path) -> None:
    good = machine_report(tmp_path, "good")
    degraded = dict(good, verdict="degraded")
    (tmp_path / "a.json").write_text(json.dumps(good))
    (tmp_path / "b.json").write_text(json.dumps(degraded))
    proc = doctor.run("merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    code = proc.returncode
    assert code == 1
    proc = doctor.run("merge", "--fail-on", "fail", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    code = proc.returncode
    assert code == 0


def test_a_node_without_a_report_makes_the_fleet_fail_even_when_the_rest_are_ok(tmp_path: Path) -> None:
    good = machine_report(tmp_path, "good")
    doc = summarize(
        [
            NodeResult("node-0", "checked", report=validate_report(good, "good")),
            NodeResult("node-1", "timeout", error="hung"),
        ],
        source="ray",
    )
    assert doc["verdict"] == "fail"
    assert doc["counts"] == {"nodes": 2, "checked": 1, "ok": 0, "degraded": 0, "fail": 0, "unchecked": 1} | {
        good["verdict"]: 1
    }


def test_a_hostile_report_cannot_put_control_characters_on_the_terminal(tmp_path: Path) -> None:
    good = machine_report(tmp_path, "good")
    hostile = json.loads(json.dumps(good))
    hostile["facts"]["aiter"]["version"] = "0.1.14\x1b[2J\x1b]0;owned\x07"
    (tmp_path / "a.json").write_text(json.dumps(good))
    (tmp_path / "b.json").write_text(json.dumps(hostile))
    proc = doctor.run("merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    out = proc.stdout
    assert "\x1b" not in out and "\x07" not in out
    assert "b: aiter 0.1.14?[2J?]0;owned? — 1 other 0.1.14" in out


def test_a_report_with_a_verdict_not_known_counts_as_fail(tmp_path: Path) -> None:
    odd = dict(machine_report(tmp_path, "good"), verdict="splendid")
    (tmp_path / "a.json").write_text(json.dumps(odd))
    proc = doctor.run("merge", "--json", str(tmp_path / "a.json"))
    code, out = proc.returncode, proc.stdout
    doc = json.loads(out)
    fleet_validator().validate(doc)
    assert (code, doc["verdict"], doc["nodes"][0]["verdict"]) == (3, "fail", "fail")


def test_a_node_on_another_python_version_is_named(tmp_path: Path) -> None:
    """The interpreter decides which wheels work (tile-kernels 2.x needs Python 3.12+)."""
    report = machine_report(tmp_path, "node")
    for i, version in enumerate(("3.12.1", "3.12.1", "3.11.7")):
        report["host"]["python_version"] = version
        (tmp_path / f"node-{i}.json").write_text(json.dumps(report))
    proc = doctor.run("merge", *(str(tmp_path / f"node-{i}.json") for i in range(3)))
    out = proc.stdout
    assert "node-2: Python 3.11.7 — 2 others 3.12.1" in out


def test_a_fleet_without_nodes_says_nothing_was_checked() -> None:
    """`fleet --gpu-nodes-only` on a cluster without GPUs leaves no node: a fail, and no count of failed nodes."""
    from mhcdoctor.render.fleet import render_markdown, render_text
    from mhcdoctor.render.term import Style

    summary = summarize([], source="ray")
    headline = "Fleet of 0 nodes: fail (no node to check: nothing was checked)"
    assert render_text(summary, Style()).splitlines()[0] == f"✗ {headline}"
    assert f"## mhcdoctor fleet: {headline}" in render_markdown(summary)


PLANTED_TOKEN = "hf_PLANTEDmergeTOKEN0123456789abcdef"
PLANTED_KEY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQPLANTED"


def _bundle_text(bundle: Path) -> str:
    import tarfile

    with tarfile.open(bundle) as tar:
        members = [tar.extractfile(m) for m in tar.getmembers() if m.isfile()]
        return "\n".join(f.read().decode() for f in members if f is not None)


def test_links_and_fifos_in_a_folder_are_not_followed_and_ship_nothing(saved: Path, tmp_path: Path) -> None:
    """The attack: node-8.json -> an environment file, node-9.json -> an ssh key, a FIFO among the reports."""
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "environ").write_text(f"HOME=/root\0HF_TOKEN={PLANTED_TOKEN}\0")
    (secrets / "id_ed25519").write_text(
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PLANTED_KEY}\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "node-1.json").write_text((saved / "node-0.json").read_text())
    (folder / "node-8.json").symlink_to(secrets / "environ")
    (folder / "node-9.json").symlink_to(secrets / "id_ed25519")
    (folder / "node-10.json").symlink_to(saved)  # a link to a folder is a link too
    os.mkfifo(folder / "node-11.json")
    device = os.geteuid() == 0  # a character device (the one /dev/null is) can only be made as root
    if device:
        os.mknod(folder / "node-12.json", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    bundle = tmp_path / "fleet.tar.gz"
    proc = doctor.run("merge", "--json", "--bundle", str(bundle), str(folder))
    code, out = proc.returncode, proc.stdout
    rows = {row["name"]: (row["status"], row["error"]) for row in json.loads(out)["nodes"]}
    assert rows["node-1"] == ("checked", None)
    for name in ("node-8", "node-9", "node-10"):
        assert rows[name] == (
            "unreadable",
            f"report {folder}/{name}.json is a symbolic link; links in a folder are not followed",
        )
    assert rows["node-11"] == ("unreadable", f"report {folder}/node-11.json is a FIFO, not a regular file; refusing it")
    if device:
        error = f"report {folder}/node-12.json is a character device, not a regular file; refusing it"
        assert rows["node-12"] == ("unreadable", error)
    shipped = _bundle_text(bundle)
    assert PLANTED_TOKEN not in shipped and PLANTED_KEY not in shipped and code == 3


def test_the_bundle_carries_reports_redacted_never_their_raw_bytes(saved: Path, tmp_path: Path) -> None:
    """A report saved with `check --json` (not redacted) with a token in its environment and evidence, and a file
    that is no report but holds a token: the bundle masks the one and carries only why the other was unreadable."""
    report = json.loads((saved / "node-0.json").read_text())
    report["env"] = {"VLLM_API_KEY": PLANTED_TOKEN, "VLLM_LOGGING_LEVEL": "INFO"}
    report["probes"][0]["evidence"] = [f"Authorization: Bearer {PLANTED_TOKEN}"]
    (tmp_path / "node-1.json").write_text(json.dumps(report))
    (tmp_path / "node-2.json").write_text(f"export HF_TOKEN={PLANTED_TOKEN}\n")
    bundle = tmp_path / "fleet.tar.gz"
    doctor.run("merge", "--bundle", str(bundle), str(tmp_path / "node-1.json"), str(tmp_path / "node-2.json"))
    shipped = _bundle_text(bundle)
    assert PLANTED_TOKEN not in shipped
    assert '"VLLM_API_KEY": "[masked]"' in shipped and "Authorization: Bearer [masked]" in shipped
    assert "unreadable: report" in shipped and "node-2.json is not valid JSON" in shipped


@pytest.mark.slow
def test_a_fifo_named_with_no_writer_is_a_row_not_a_hang(saved: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "node-2.json"
    os.mkfifo(fifo)
    proc = doctor.run("merge", "--json", "--bundle", str(tmp_path / "f.tar.gz"), str(saved / "node-0.json"), str(fifo))
    code, out = proc.returncode, proc.stdout
    row = json.loads(out)["nodes"][1]
    assert row["status"] == "unreadable" and "nothing was written to the pipe or FIFO" in row["error"] and code == 3


def test_a_huge_sparse_file_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "node-1.json"
    with open(huge, "wb") as f:
        f.truncate(1500 << 20)
    proc = doctor.run("merge", "--json", "--bundle", str(tmp_path / "f.tar.gz"), str(huge))
    out = proc.stdout
    assert json.loads(out)["nodes"][0]["error"] == f"report {huge} is larger than 64 MiB; is it the right file?"


def test_a_file_name_that_is_not_utf8_gives_no_lone_surrogates_in_json(saved: Path, tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    name = os.fsdecode(b"node-\xff\xe9.json")  # as Python reads it from the folder: lone surrogates
    (folder / name).write_text((saved / "node-0.json").read_text())
    proc = doctor.run("merge", "--json", str(folder))
    out = proc.stdout
    row = json.loads(out)["nodes"][0]
    assert "\\ud" not in out and row["source"] == f"{folder}/node-??.json" and row["status"] == "checked"
