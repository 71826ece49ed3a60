"""Time `mhcdoctor verify` end to end, cold (fresh tilelang and triton JIT caches and a fresh bytecode cache) and
warm, and print medians.

Bars: full default verify at most 20 s cold and under 4 s warm on an H200; --stress adds at most 10 s.
Run on the GPU machine: `python3 bench/verify_bench.py --model deepseek-v4-pro` (scripts/gpu-tests does).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(args: list[str], cache: str, docs: list[dict] | None = None) -> tuple[float, int]:
    env = dict(
        os.environ,
        TILELANG_CACHE_DIR=os.path.join(cache, "tilelang"),
        TRITON_CACHE_DIR=os.path.join(cache, "triton"),
        MHCDOCTOR_CACHE_DIR=os.path.join(cache, "mhcdoctor"),  # the children's bytecode (mhcdoctor.bytecode)
    )
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mhcdoctor", "verify", *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if docs is not None:
        docs.append(json.loads(proc.stdout))
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n", file=sys.stderr)
    return seconds, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="deepseek-v4-pro")
    parser.add_argument("--cold", type=int, default=2, help="cold runs (each with fresh JIT caches)")
    parser.add_argument("--warm", type=int, default=3, help="warm runs of the default verify")
    parser.add_argument("--stress-runs", type=int, default=None, help="warm runs of --stress (default: as --warm)")
    opts = parser.parse_args()
    base = ["--model", opts.model]
    rows = []
    cold = []
    for _ in range(opts.cold):
        with tempfile.TemporaryDirectory(prefix="verify-bench-") as cache:
            cold.append(run_once(base, cache))
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as cache:
        run_once(base, cache)  # fill the caches
        docs: list[dict] = []
        warm = [run_once([*base, "--json"], cache, docs) for _ in range(opts.warm)]
        stress_runs = opts.warm if opts.stress_runs is None else opts.stress_runs
        stress = [run_once([*base, "--stress"], cache) for _ in range(stress_runs)]
    for name, runs in (("default, cold", cold), ("default, warm", warm), ("--stress, warm", stress)):
        times = [s for s, _ in runs]
        if not times:  # e.g. --cold 0
            continue
        codes = sorted({c for _, c in runs})
        rows.append((name, statistics.median(times), min(times), max(times), codes))
    print(f"verify benchmark, {opts.model} ({len(cold)} cold, {len(warm)} warm, {len(stress)} warm --stress runs)")
    print(f"{'run':<18}{'median s':>10}{'min s':>8}{'max s':>8}  exit codes")
    for name, med, lo, hi, codes in rows:
        print(f"{name:<18}{med:>10.2f}{lo:>8.2f}{hi:>8.2f}  {codes}")
    medians = {name: med for name, med, *_ in rows}
    if "--stress, warm" in medians and "default, warm" in medians:
        print(f"--stress adds {medians['--stress, warm'] - medians['default, warm']:.2f} s (median warm)")
    print("warm default, per path (median): child seconds, of which imports + GPU init + kernel loading")
    for path in sorted({p["path"] for d in docs for p in d["paths"] if p["status"] == "ran"}):
        ran = [p for d in docs for p in d["paths"] if p["path"] == path and p["status"] == "ran"]
        child = statistics.median(p["seconds"] for p in ran)
        load = statistics.median(p.get("load_seconds") or 0.0 for p in ran)
        print(f"  {path:<10}{child:>8.2f} s  load {load:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
