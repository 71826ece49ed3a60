"""Benchmark `mhcdoctor check` against PyTorch's collect_env on this machine: wall time and peak memory.

    python bench/check_bench.py [--runs 7] [--python PYTHON]

Prints the median, min and max wall time of each command over repeated runs, the ratios the issue sets bars for
(`check --fast` at most 0.15x collect_env; full `check` no slower than it), and the doctor's own peak RSS (its
children, which import torch and friends, are measured apart: the bar is for the doctor's process).

The probes' children never write bytecode into the environment they diagnose, so measure against installed
packages: a library unpacked without its .pyc files (the GPU machine's carried tilelang) needs
`python -m compileall DIR` first, as pip does at install time, or each import compiles it from source.
Measured on the H200 machine that way (7 runs): check --fast 0.256 s, check 5.69 s, collect_env 5.92 s (0.96x).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

# Runs the CLI in this interpreter, then reports this process's own peak RSS (children excluded) on stderr.
_SELF_RSS = (
    "import resource, sys\n"
    "from mhcdoctor.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit:\n"
    "    pass\n"
    "try:\n"
    "    peak = int(next(x.split()[1] for x in open('/proc/self/status') if x.startswith('VmHWM:')))\n"
    "except (OSError, StopIteration):\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print('MAXRSS_KIB', peak, file=sys.stderr)\n"
)


def timed_runs(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def peak_rss_mib(python: str, args: list[str]) -> float:
    proc = subprocess.run([python, "-c", _SELF_RSS, *args], capture_output=True, text=True, check=False)
    for line in proc.stderr.splitlines():
        if line.startswith("MAXRSS_KIB"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no RSS reported: {proc.stderr[-500:]}")


def has_torch(python: str) -> bool:
    return subprocess.run([python, "-c", "import torch.utils.collect_env"], capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    py = args.python
    commands = {
        "check --fast": [py, "-m", "mhcdoctor", "check", "--fast", "--json"],
        "check": [py, "-m", "mhcdoctor", "check", "--json"],
    }
    if has_torch(py):
        commands["collect_env"] = [py, "-m", "torch.utils.collect_env"]
    else:
        print("torch is not importable here: collect_env is not measured", file=sys.stderr)
    for cmd in commands.values():  # warm the page cache once so the first timed run is not an outlier
        subprocess.run(cmd, capture_output=True, check=False)
    medians: dict[str, float] = {}
    print(f"{'command':<14} {'median':>8} {'min':>8} {'max':>8}   ({args.runs} runs)")
    for name, cmd in commands.items():
        times = timed_runs(cmd, args.runs)
        medians[name] = statistics.median(times)
        print(f"{name:<14} {medians[name]:8.3f} {min(times):8.3f} {max(times):8.3f} s")
    if "collect_env" in medians:
        base = medians["collect_env"]
        print(f"check --fast / collect_env = {medians['check --fast'] / base:.3f}  (bar: <= 0.15)")
        print(f"check / collect_env        = {medians['check'] / base:.3f}  (bar: <= 1.0)")
    for name, extra in (("check --fast", ["--fast"]), ("check", [])):
        rss = peak_rss_mib(py, ["check", *extra, "--json"])
        print(f"peak RSS of the doctor's own process, {name}: {rss:.1f} MiB  (bar: < 80)")


if __name__ == "__main__":
    main()
