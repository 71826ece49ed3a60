"""Benchmark `mhcdoctor fleet` on a local Ray cluster on 127.0.0.1: its wall time against the slowest node's check.

    python bench/fleet_bench.py [--nodes 3] [--runs 3] [--full]

Starts a head and NODES-1 worker nodes, all bound to 127.0.0.1 (needs `pip install 'mhcdoctor[fleet]'`), runs
`mhcdoctor fleet --json` RUNS times, and prints for each run the command's wall time, the slowest node's own check
time (each node's `seconds`: its `python -m mhcdoctor report` from start to end) and the difference: the overhead
of the fleet (the driver's start and connection, Ray's scheduling, result transfer, the summary). Nodes share this
machine's cores, so per-node checks slow each other here as they would not on separate machines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="Full checks (imports in children) instead of --fast.")
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    start = time.perf_counter()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"node_ip_address": "127.0.0.1", "num_cpus": 1, "include_dashboard": False},
    )
    try:
        for _ in range(args.nodes - 1):
            cluster.add_node(node_ip_address="127.0.0.1", num_cpus=1)
        print(f"{args.nodes}-node cluster on 127.0.0.1 started in {time.perf_counter() - start:.1f} s")
        cmd = [sys.executable, "-m", "mhcdoctor", "fleet", "--address", cluster.address, "--json"]
        cmd += [] if args.full else ["--fast"]
        overheads = []
        for run in range(1, args.runs + 1):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            doc = json.loads(proc.stdout)
            slowest = max(n["seconds"] or 0.0 for n in doc["nodes"])
            statuses = ",".join(sorted({n["status"] for n in doc["nodes"]}))
            overheads.append(wall - slowest)
            print(
                f"run {run}: fleet {wall:.2f} s, slowest node's check {slowest:.2f} s, "
                f"overhead {wall - slowest:.2f} s ({len(doc['nodes'])} nodes, {statuses})"
            )
        print(
            f"overhead median {statistics.median(overheads):.2f} s, min {min(overheads):.2f}, max {max(overheads):.2f}"
        )
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
