"""A stop signal to `mhcdoctor fleet` is the doctor's, not Ray's: the driver stops every node's check, and what the
checks started, before it exits as every command does (128 + the signal, one line, no traceback).

A real one-node Ray cluster on 127.0.0.1 of its own: the node's tilelang import leaves a helper that shed its
session and environment (tests/procs.py's escapee), then hangs. The tests stop the fleet (or kill the node's Ray
worker) once that helper runs, and assert that it, the check and its import child are gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import doctor
import fakes
import pytest
from procs import escapee, running

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hanging_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(the cluster's address, the tag in the argv of the helper its check's import leaves, the node's site)."""
    pytest.importorskip("ray", reason="the fleet tests need Ray: pip install 'mhcdoctor[fleet]' (CI installs it)")
    from ray.cluster_utils import Cluster

    base = tmp_path_factory.mktemp("signals")
    tag = f"fleet-escapee:{base}"
    site = fakes.site(base)
    fakes.library(site, "tilelang", "0.1.12", init=escapee(tag) + "import time\ntime.sleep(600)\n")
    env = {"PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"node_ip_address": "127.0.0.1", "num_cpus": 1, "include_dashboard": False, "env_vars": env},
    )
    try:
        yield cluster.address, tag, str(site)
    finally:
        cluster.shutdown()
        for line in running(tag):  # whatever a failing test left: never leave it to the machine
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


def _start_fleet(address: str) -> subprocess.Popen[str]:
    """`mhcdoctor fleet --json` on the test's cluster, in a session of its own (as a shell would start it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.Popen(
        doctor.argv("fleet", "--address", address, "--json", "--timeout", "120"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_fleet_stops_every_nodes_check_and_its_helpers_and_exits_as_the_doctor_does(hanging_node, number):
    address, tag, site = hanging_node
    fleet = _start_fleet(address)
    deadline = time.monotonic() + 120
    while not running(tag):
        assert fleet.poll() is None, fleet.communicate()
        assert time.monotonic() < deadline, "the node's check never started its import"
        time.sleep(0.2)

    start = time.monotonic()
    fleet.send_signal(number)
    stdout, stderr = fleet.communicate(timeout=60)
    seconds = time.monotonic() - start
    end = time.monotonic() + 10
    while (left := running(tag)) and time.monotonic() < end:
        time.sleep(0.2)
    print(
        f"ATTACK {signal.Signals(number).name} to fleet: exit {fleet.returncode} in {seconds:.1f} s, left={left}, "
        f"stderr tail={stderr.strip().splitlines()[-1:]!r}",
        file=sys.stderr,
    )
    name = "interrupted" if number == signal.SIGINT else "stopped by SIGTERM"
    assert fleet.returncode == 128 + number, stderr
    assert stderr.strip().splitlines()[-1] == f"mhcdoctor: {name}" and "Traceback" not in stderr
    assert stdout == ""
    assert left == [], "the helper the node's check left behind still runs"
    assert _checks(site) == [], "the node's check still runs"


@pytest.mark.slow
def test_a_check_whose_ray_worker_is_killed_stops_what_it_started(hanging_node):
    """The worker dies under the check (OOM-killed, crashed): the check, told by its parent-death signal (SIGTERM),
    kills its own children and the helper they left, then exits; the fleet reports the node lost."""
    address, tag, site = hanging_node
    fleet = _start_fleet(address)
    deadline = time.monotonic() + 120
    while not running(tag) or not _checks(site):
        assert fleet.poll() is None, fleet.communicate()
        assert time.monotonic() < deadline, "the node's check never started its import"
        time.sleep(0.2)
    worker = _parent(_checks(site)[0])
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = fleet.communicate(timeout=120)
    end = time.monotonic() + 10
    while (left := running(tag) + [str(pid) for pid in _checks(site)]) and time.monotonic() < end:
        time.sleep(0.2)
    assert json.loads(stdout)["nodes"][0]["status"] == "lost", stderr
    assert left == [], "the check, or the helper its import left, outlived the Ray worker"


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def _checks(site: str) -> list[int]:
    """The `python -m mhcdoctor report` processes of this test's node (its site on their PYTHONPATH)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"-m\0mhcdoctor\0report" in argv and site.encode() in environ:
            found.append(int(entry.name))
    return found
