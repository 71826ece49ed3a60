"""How long `mhcdoctor --help` and `check --fast` keep a user waiting, and how much of it is importing mhcdoctor's own
modules (`python -X importtime`), over repeated runs on this machine.

    python bench/startup_bench.py [--runs 7] [ARGS ...]    (default: --help, then check --fast)

Prints, per command line: the median wall time, and the number of mhcdoctor modules imported with the median of
the sum of their own import times. The doctor's children (check --fast starts none that import Python) are not
counted. Measure on a quiet machine: the figures scale with the load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def one_run(args: list[str]) -> tuple[float, int, float]:
    """(wall seconds, mhcdoctor modules imported, seconds spent importing them) of one `python -m mhcdoctor ARGS`."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mhcdoctor", *args], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    own = [line for line in done.stderr.splitlines() if line.startswith("import time:") and "mhcdoctor" in line]
    micros = sum(int(line.split("|")[0].split(":")[1]) for line in own)  # self times: no module counted twice
    return wall, len(own), micros / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("args", nargs="*")
    options = parser.parse_args()
    lines = [options.args] if options.args else [["--help"], ["check", "--fast"]]
    for args in lines:
        one_run(args)  # bytecode written, caches warm
        runs = [one_run(args) for _ in range(options.runs)]
        wall = statistics.median(r[0] for r in runs)
        imported = statistics.median(r[2] for r in runs)
        shown = f"mhcdoctor {' '.join(args)}: {wall:.3f} s"
        print(f"{shown}; {runs[0][1]} mhcdoctor modules, {imported:.3f} s importing them")


if __name__ == "__main__":
    main()
