"""`mhcdoctor fleet` on a real five-node Ray cluster on 127.0.0.1 (see conftest.py for the nodes).

One fleet run (module-scoped, it takes the cluster's timeout once) is read by several tests: while it runs, a
watcher kills the victim node's Ray worker in the middle of its check and records every socket the cluster's
processes hold; the hung node is left to the timeout; the liar and the pickler attack the driver.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import doctor
import procnet
import pytest
from localfleet import PWNED, ROLE, LocalFleet, fleet_validator

from mhcdoctor.reportfile import load_report

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-fleet")]  # one cluster, one run

TIMEOUT = 30.0  # per node; the fast checks of healthy nodes take a few seconds even on a loaded machine
GRACE = 10.0  # mhcdoctor.fleet.ray_runner.GRACE
# After the last node's deadline: cancelling it, leaving the cluster, writing the bundle. The driver's start and its
# connection to the cluster come before the nodes' deadline starts and are not bounded here (Ray's cost, not ours:
# 15-20 s of a 62 s run on a loaded machine).
TEARDOWN = 10.0


@dataclass
class Watch:
    started: float = 0.0  # time.monotonic() when the fleet run began
    killed_worker: int | None = None
    killed_at: float | None = None  # seconds into the fleet run
    sockets: set[tuple[int, str, str, str]] = field(default_factory=set)


def _report_processes(role: str) -> list[int]:
    """The `python -m mhcdoctor report` processes running on the node with this role (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd[1:4] == [b"-m", b"mhcdoctor", b"report"] and f"{ROLE}={role}".encode() in env:
            found.append(int(entry.name))
    return found


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _watch(fleet: LocalFleet, done: threading.Event, watch: Watch) -> None:
    """Kill the victim's Ray worker once its check runs; meanwhile record the cluster's sockets and processes."""
    while not done.wait(0.3):
        fleet.remember_processes()
        watch.sockets |= set(procnet.inet_sockets(procnet.descendants(os.getpid())))
        if watch.killed_worker is None:
            # Only this cluster's victim: another test run on the machine (or another xdist worker's cluster) has a
            # victim node of its own, and killing its worker would leave this run's victim to time out.
            ours = procnet.descendants(os.getpid())
            for pid in (p for p in _report_processes("victim") if p in ours):
                worker = _parent(pid)  # report <- the Ray worker (node_task starts it with mhcdoctor.childproc)
                os.kill(worker, signal.SIGKILL)
                watch.killed_worker, watch.killed_at = worker, time.monotonic() - watch.started


def _remember(fleet: LocalFleet, done: threading.Event) -> None:
    while not done.wait(0.3):
        fleet.remember_processes()


@dataclass
class Run:
    code: int
    seconds: float  # from when the nodes were given their deadline (the fleet says "checking each") to its exit
    summary: dict[str, Any]
    stderr: str
    watch: Watch
    bundle: Path
    names: dict[str, str]  # role -> node name in the summary
    pwned: Path  # what the pickler's payload writes if it is ever unpickled in the driver


@pytest.fixture(scope="module")
def fleet_run(local_fleet: LocalFleet, tmp_path_factory: pytest.TempPathFactory) -> Run:
    bundle = tmp_path_factory.mktemp("fleet-run") / "fleet.tar.gz"
    pwned = bundle.parent / "pwned"
    env = {k: v for k, v in os.environ.items() if k not in (ROLE, "MHCDOCTOR_SYSROOT", "RAY_ADDRESS")}
    env[PWNED] = str(pwned)
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)  # the fleet command must stay on loopback by itself
    cmd = doctor.argv("fleet", "--address", local_fleet.address, "--fast", "--json")
    cmd += ["--timeout", str(TIMEOUT), "--bundle", str(bundle)]
    watch, done = Watch(started=time.monotonic()), threading.Event()
    watcher = threading.Thread(target=_watch, args=(local_fleet, done, watch), daemon=True)
    watcher.start()
    start = time.monotonic()
    lines: list[tuple[float, str]] = []  # (when, line) of what the fleet writes to stderr, as it writes it
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out: list[str] = []
    assert proc.stdout is not None and proc.stderr is not None
    err_pipe, out_pipe = proc.stderr, proc.stdout
    readers = [
        threading.Thread(target=lambda: lines.extend((time.monotonic(), line) for line in err_pipe), daemon=True),
        threading.Thread(target=lambda: out.append(out_pipe.read()), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=600)  # a hang guard only: the bound is asserted from the nodes' deadline on
        ended = time.monotonic()
    finally:
        proc.kill()
        done.set()
        watcher.join()
        for reader in readers:
            reader.join(timeout=10)
    stdout = "".join(out)
    seconds = ended - start
    deadline_set = next(when for when, line in lines if "checking each" in line)  # the nodes' deadline starts
    print(f"\nfleet run on 7 nodes (2 hung, 2 hostile, --timeout {TIMEOUT:g}): {seconds:.1f} s")
    summary = json.loads(stdout)
    stderr = "".join(line for _, line in lines)
    by_id = {row["source"]: row["name"] for row in summary["nodes"]}
    names = {role: by_id[node_id] for role, node_id in local_fleet.node_ids.items()}
    return Run(proc.returncode, ended - deadline_set, summary, stderr, watch, bundle, names, pwned)


def _row(run: Run, role: str) -> dict[str, Any]:
    return next(row for row in run.summary["nodes"] if row["name"] == run.names[role])


def test_every_node_is_a_row_and_the_healthy_ones_are_checked(fleet_run: Run) -> None:
    assert fleet_run.summary["counts"]["nodes"] == 7, fleet_run.stderr
    assert {_row(fleet_run, r)["status"] for r in ("head", "normal", "odd")} == {"checked"}, fleet_run.stderr


def test_the_summary_singles_out_the_node_with_the_racy_aiter(fleet_run: Run) -> None:
    aiter = next(d for d in fleet_run.summary["differences"] if d["key"] == "aiter")
    assert aiter["majority"] == {"value": "0.1.14", "count": 2}
    assert aiter["odd"] == [{"value": "0.1.13", "count": 1, "nodes": [fleet_run.names["odd"]]}]
    fixes = next(d for d in fleet_run.summary["differences"] if d["key"] == "aiter_fixes")
    assert fixes["majority"] == {"value": "5 of 6 present, delayed-api unknown", "count": 2}
    assert fixes["odd"] == [
        {
            "value": "2 of 6 present, sqrsum, big-fuse-sync, post-race absent, delayed-api unknown",
            "count": 1,
            "nodes": [fleet_run.names["odd"]],
        }
    ]
    race = next(f for f in fleet_run.summary["findings"] if f["id"] == "aiter-sqrsum-race")
    assert race["nodes"] == [fleet_run.names["odd"]]


def test_a_node_whose_worker_was_killed_mid_run_is_reported_lost(fleet_run: Run) -> None:
    assert fleet_run.watch.killed_worker is not None, "the victim's check never started"
    row = _row(fleet_run, "victim")
    assert row["status"] == "lost" and row["verdict"] == "fail", (row, f"killed {fleet_run.watch.killed_at:.1f} s in")
    assert "worker died" in row["error"]


def test_a_hung_node_is_reported_as_timeout_and_the_run_ends_within_its_bound(fleet_run: Run) -> None:
    row = _row(fleet_run, "hung")
    assert row["status"] == "timeout", row
    assert fleet_run.seconds < TIMEOUT + GRACE + TEARDOWN, fleet_run.seconds


def test_the_exit_code_is_the_worst_node_and_unchecked_nodes_count_as_fail(fleet_run: Run) -> None:
    fleet_validator().validate(fleet_run.summary)
    assert fleet_run.summary["verdict"] == "fail"
    assert fleet_run.code == 3
    assert fleet_run.summary["counts"]["unchecked"] == 4


def test_a_report_a_node_sends_is_checked_as_merge_checks_a_file(fleet_run: Run) -> None:
    """The liar's report says `"severity": ["fail"]`: the fleet died with TypeError (exit 4), losing every node."""
    row = _row(fleet_run, "liar")
    assert (row["status"], row["verdict"]) == ("error", "fail")
    want = "findings[0].severity: expected one of ('info', 'warn', 'fail')"  # documents.vocabulary.Severity
    assert row["error"] == f"report from {row['name']}: {want}"


def test_a_node_cannot_run_code_in_the_driver(fleet_run: Run) -> None:
    """The pickler's tasks return a pickle whose loading writes a file: it is refused, never unpickled."""
    row = _row(fleet_run, "pickler")
    assert not fleet_run.pwned.exists(), fleet_run.pwned.read_text()
    assert (row["status"], row["verdict"]) == ("error", "fail")
    assert row["error"] == "the node returned a PYTHON object, not JSON bytes (not unpickled: it could run code here)"


def test_no_connection_of_the_cluster_leaves_loopback(fleet_run: Run) -> None:
    assert len(fleet_run.watch.sockets) > 10  # the raylets, GCS, workers and the fleet driver were all seen
    outside = [s for s in fleet_run.watch.sockets if not (procnet.is_loopback(s[2]) and procnet.is_loopback(s[3]))]
    assert outside == []


def test_the_cluster_and_the_checks_were_seen_running(local_fleet: LocalFleet, fleet_run: Run) -> None:
    """What the session's teardown requires to be gone afterwards was really there to begin with."""
    seen = " ".join(local_fleet.seen.values())
    assert "raylet" in seen and "gcs_server" in seen
    assert "-m mhcdoctor report" in seen


def test_the_bundle_holds_the_summary_and_every_nodes_bundle(fleet_run: Run, tmp_path: Path) -> None:
    import tarfile

    with tarfile.open(fleet_run.bundle) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    root = "mhcdoctor-fleet/"
    assert json.loads(members[root + "summary.json"])["verdict"] == "fail"
    odd_bundle = tmp_path / "odd.tar.gz"
    odd_bundle.write_bytes(members[f"{root}nodes/{fleet_run.names['odd']}.tar.gz"])
    assert load_report(odd_bundle)["facts"]["aiter"]["version"] == "0.1.13"  # the node bundle reads back as a report
    assert members[f"{root}nodes/{fleet_run.names['hung']}.error.txt"].startswith(b"timeout:")


def test_verify_runs_one_task_per_gpu_and_gpu_nodes_only_leaves_out_the_rest(local_fleet: LocalFleet) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (ROLE, "MHCDOCTOR_SYSROOT", "RAY_ADDRESS")}
    cmd = doctor.argv("fleet", "--address", local_fleet.address, "--fast", "--verify")
    cmd += ["--gpu-nodes-only", "--json", "--timeout", "40", "--hidden", "256"]
    done = threading.Event()
    watcher = threading.Thread(target=_remember, args=(local_fleet, done), daemon=True)
    watcher.start()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    finally:
        done.set()
        watcher.join()
    rows = json.loads(proc.stdout)["nodes"]
    assert [row["source"] for row in rows] == [local_fleet.node_ids["normal"]], proc.stderr  # the one GPU node
    gpu_rows = rows[0]["verify"]
    assert sorted(v["gpu"] for v in gpu_rows) == ["0", "1"], proc.stderr  # num_gpus=1 each: Ray gave each its own
