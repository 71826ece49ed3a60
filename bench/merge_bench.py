"""Benchmark `mhcdoctor merge` on a generated fleet: N saved reports (default 512) merged, bar 2 s.

    python bench/merge_bench.py [--nodes 512] [--runs 5]

The reports are copies of this machine's own `mhcdoctor report --json` (a full check unless --fast), varied the
way a real fleet varies: one node in 64 with another aiter, one in 128 with another driver, one in 256 with a
finding more. Prints the median, min and max wall time of the whole command (`python -m mhcdoctor merge DIR
--json`, start-up and reading included) and of the summary alone (in process, files already parsed), the size of
the text summary in lines, and whether the bar holds.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BAR_SECONDS = 2.0


def base_report(fast: bool) -> dict:
    cmd = [sys.executable, "-m", "mhcdoctor", "report", "--json", *(["--fast"] if fast else [])]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def fleet(base: dict, nodes: int) -> list[dict]:
    out = []
    for i in range(nodes):
        doc = copy.deepcopy(base)
        facts = doc["facts"]
        if i % 64 == 7:
            facts["aiter"].update(present=True, genuine=True, version="0.1.13", sqrsum_fix="absent")
        if i % 128 == 3:
            facts["nvidia_driver"] = "570.86.15"
        if i % 256 == 11:
            doc["findings"].append(
                {
                    "id": "aiter-sqrsum-race",
                    "severity": "fail",
                    "title": "race",
                    "detail": "",
                    "fix": "upgrade aiter",
                    "refs": [],
                }
            )
            doc["verdict"] = "fail"
        out.append(doc)
    return out


def timed(fn, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def show(name: str, times: list[float]) -> None:
    print(f"{name:<34} median {statistics.median(times):.3f} s  min {min(times):.3f} s  max {max(times):.3f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=512)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fast", action="store_true", help="Generate from a `report --fast` (no imports).")
    args = parser.parse_args()

    from mhcdoctor.fleet.summary import NodeResult, summarize
    from mhcdoctor.render.fleet import render_text
    from mhcdoctor.render.term import Style

    docs = fleet(base_report(args.fast), args.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        for i, doc in enumerate(docs):
            Path(tmp, f"node-{i}.json").write_text(json.dumps(doc, indent=2))
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
        print(f"{args.nodes} reports, {size / 2**20:.1f} MiB in all, {args.runs} runs each")
        cmd = [sys.executable, "-m", "mhcdoctor", "merge", tmp, "--json"]
        whole = timed(lambda: subprocess.run(cmd, capture_output=True, check=False), args.runs)
        text = subprocess.run([sys.executable, "-m", "mhcdoctor", "merge", tmp], capture_output=True, text=True).stdout
    nodes = [NodeResult(f"node-{i}", "checked", report=doc) for i, doc in enumerate(docs)]
    alone = timed(lambda: render_text(summarize(nodes, "merge"), Style()), args.runs)
    show("mhcdoctor merge DIR --json", whole)
    show("summary + text view (in process)", alone)
    print(f"text summary: {len(text.splitlines())} lines")
    ok = max(whole) < BAR_SECONDS
    verdict = "met" if ok else "NOT met"
    print(f"bar: merge of {args.nodes} reports < {BAR_SECONDS:g} s: {verdict} (slowest {max(whole):.3f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
