"""Where a full `mhcdoctor check` spends its time: each probe alone, then all of them together.

    python bench/probe_costs.py [--runs 3]

Prints, per probe, the median seconds when it runs alone (one after another) and when every probe runs at once (as
`check` does), so contention between concurrent children shows as the difference.
"""

from __future__ import annotations

import argparse
import statistics
import time

from mhcdoctor.probes import PROBES, run_probes
from mhcdoctor.probes.base import guarded
from mhcdoctor.probes.context import ProbeContext


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ctx = ProbeContext()
    alone: dict[str, list[float]] = {name: [] for name in PROBES}
    together: dict[str, list[float]] = {name: [] for name in PROBES}
    wall: list[float] = []
    for _ in range(args.runs):
        for name, probe in PROBES.items():
            alone[name].append(guarded(name, lambda probe=probe: probe(ctx)).seconds)
        start = time.perf_counter()
        for result in run_probes(ctx):
            together[result.name].append(result.seconds)
        wall.append(time.perf_counter() - start)
    print(f"{'probe':<18} {'alone':>8} {'together':>9}   (median s of {args.runs} runs)")
    for name in PROBES:
        print(f"{name:<18} {statistics.median(alone[name]):8.3f} {statistics.median(together[name]):9.3f}")
    print(
        f"sum alone {sum(statistics.median(v) for v in alone.values()):.3f} s; "
        f"all together, wall {statistics.median(wall):.3f} s"
    )


if __name__ == "__main__":
    main()
