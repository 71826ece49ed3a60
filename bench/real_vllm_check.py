"""Full `mhcdoctor check` against a real vLLM install, beside `vllm collect-env` there: wall time, and whether the
self-check finished inside the default --timeout (issue 26 §21: one vLLM child, inside the timeout).

    python bench/real_vllm_check.py VLLM_PYTHON [--runs 3] [--timeout 20]

VLLM_PYTHON is the interpreter of a venv holding vLLM (scripts/real-vllm-check builds one); the doctor runs here,
with `--python VLLM_PYTHON`, as the playbook's recipe does. Prints, per run, the check's wall time, the status and
seconds of the vllm.selfcheck and vllm.import probes (the import's result comes from the self-check's child: one
vLLM import per check), then the median and range of both commands.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("python")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()
    check = [
        sys.executable,
        "-m",
        "mhcdoctor",
        "check",
        "--json",
        "--python",
        args.python,
        "--timeout",
        str(args.timeout),
    ]
    collect = [args.python, "-m", "vllm.collect_env"]
    walls: dict[str, list[float]] = {"check": [], "vllm collect-env": []}
    for run in range(args.runs):
        seconds, done = timed(check)
        walls["check"].append(seconds)
        probes = {p["name"]: p for p in json.loads(done.stdout)["probes"]}
        shown = ", ".join(
            f"{name} {probes[name]['status']} {probes[name]['seconds']:.1f} s"
            for name in ("vllm.import", "vllm.selfcheck")
        )
        print(f"run {run + 1}: check {seconds:.1f} s (exit {done.returncode}); {shown}")
        seconds, done = timed(collect)
        walls["vllm collect-env"].append(seconds)
        print(f"run {run + 1}: vllm collect-env {seconds:.1f} s (exit {done.returncode})")
    for name, times in walls.items():
        print(f"{name:<17} median {statistics.median(times):6.1f} s  min {min(times):6.1f}  max {max(times):6.1f}")


if __name__ == "__main__":
    main()
