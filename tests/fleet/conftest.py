"""A real multi-node Ray cluster on 127.0.0.1, started once for the fleet tests, and the nodes' environments.

Nodes (all on loopback, each a raylet of its own, as on separate machines):
    head     MI300X tree, AMD's aiter 0.1.14 (fixed)
    normal   the same as head, and two (pretend) GPUs for Ray to hand to verify tasks
    odd      MI300X tree, aiter 0.1.13 with the sqrsum race: the node the summary must single out
    victim   its check hangs in a sysfs read; the test kills its Ray worker mid-run
    hung     its check hangs in a sysfs read and is left to the timeout
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import fakes
import pytest
from localfleet import ROLE, LocalFleet, alive

MI300X = 90402  # gfx942


def _machine(root: Path, hang: bool = False) -> Path:
    fakes.kfd(root, [0, MI300X, MI300X])
    if hang:  # a driver file whose read never returns, as a wedged amdgpu does
        version = root / "sys/module/amdgpu/version"
        version.unlink()
        os.mkfifo(version)
    return root


def _site(base: Path, version: str, kernel: str) -> Path:
    site = fakes.site(base)
    fakes.aiter(site, version=version, kernel=kernel)
    return site


@pytest.fixture(scope="session")
def local_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalFleet]:
    pytest.importorskip("ray", reason="the fleet tests need Ray: pip install 'mhcdoctor[fleet]' (CI installs it)")
    from ray.cluster_utils import Cluster

    base = tmp_path_factory.mktemp("fleet")
    fixed = _site(base / "fixed", "0.1.14", "fixed")
    racy = _site(base / "racy", "0.1.13", "racy")
    nodes = {
        "head": {"PYTHONPATH": str(fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-head"))},
        "normal": {"PYTHONPATH": str(fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-normal"))},
        "odd": {"PYTHONPATH": str(racy), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-odd"))},
        "victim": {"PYTHONPATH": str(fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-victim", hang=True))},
        "hung": {"PYTHONPATH": str(fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-hung", hang=True))},
    }
    loopback = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "include_dashboard": False}
    head_env = {**nodes["head"], ROLE: "head"}
    cluster = Cluster(initialize_head=True, head_node_args={**loopback, "env_vars": head_env})
    fleet = LocalFleet(cluster)
    try:
        for role in ("normal", "odd", "victim", "hung"):
            gpus = 2 if role == "normal" else 0
            node = cluster.add_node(
                node_ip_address="127.0.0.1", num_cpus=1, num_gpus=gpus, env_vars={**nodes[role], ROLE: role}
            )
            fleet.node_ids[role] = node.node_id
        fleet.remember_processes()
        yield fleet
        fleet.remember_processes()
    finally:
        cluster.shutdown()
    deadline = time.monotonic() + 15
    left = alive(fleet.seen)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = alive(fleet.seen)
    assert not left, f"processes left running after the cluster shut down: {left}"
