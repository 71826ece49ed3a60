"""On a GPU machine: `mhcdoctor fleet --verify` on a one-node Ray cluster (127.0.0.1) holding every GPU runs one
verify per GPU, each on its own GPU, and every one passes.

Skipped where no GPU is visible (CI). Run: pytest -q -s -m gpu tests/fleet/test_ray_fleet_gpu.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import needs
import pytest

pytestmark = [*needs.gpu(), needs.library("ray", "needs Ray: pip install 'mhcdoctor[fleet]'")]


@pytest.fixture(scope="module")
def gpu_cluster() -> Iterator[str]:
    import torch
    from ray.cluster_utils import Cluster

    gpus = torch.cuda.device_count()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"node_ip_address": "127.0.0.1", "num_cpus": 2, "num_gpus": gpus, "include_dashboard": False},
    )
    try:
        yield cluster.address
    finally:
        cluster.shutdown()


def test_one_verify_per_gpu_and_each_passes(gpu_cluster: str) -> None:
    import torch

    start = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mhcdoctor",
            "fleet",
            "--address",
            gpu_cluster,
            "--verify",
            "--json",
            "--timeout",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=400,
    )
    wall = time.monotonic() - start
    doc = json.loads(proc.stdout)
    (node,) = doc["nodes"]
    print(f"fleet --verify: {wall:.1f} s; node check {node['seconds']} s; verify rows {node['verify']}")
    assert node["status"] == "checked", node
    assert sorted(v["gpu"] for v in node["verify"]) == [str(i) for i in range(torch.cuda.device_count())]
    assert [(v["gpu"], v["status"], v["verdict"]) for v in node["verify"] if v["verdict"] == "fail"] == []
