"""`mhcdoctor log` on a generated vLLM server log of --size MB (default 1024): MB/s and peak RSS, repeated runs.

The log is written to a temporary folder and removed afterwards (never committed). Its lines follow vLLM 0.25's
format (every worker line prefixed), in a serving mix: uvicorn access lines and vLLM's metrics lines for the most
part, vLLM INFO lines, and in every block of about 1 MiB a few tilelang compile lines, an aiter import line and a
worker traceback, so the slow path (lines that are decoded and matched) is exercised throughout, not only the
byte search. `--gzip` also times the same log gzip-compressed.

    python bench/log_bench.py                  # 1 GB, 3 runs
    python bench/log_bench.py --size 200 --runs 5 --gzip
    python bench/log_bench.py --kind dense --size 100 --runs 1      every line matched: the slow path's cost per MB
    python bench/log_bench.py --kind compiles --size 248 --gzip     issue 33 item 3: begun, never completed
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _block(index: int) -> bytes:
    """About 1 MiB of a serving log; `index` varies the numbers so no two blocks are the same."""
    lines: list[str] = []
    for i in range(6000):
        when = f"07-06 16:{(index // 60) % 60:02d}:{index % 60:02d}"
        kind = i % 10
        if kind < 5:
            port = 40000 + (i * 7 + index) % 20000
            lines.append(
                f'(APIServer pid=100) INFO:     10.0.0.{i % 250}:{port} - "POST /v1/chat/completions HTTP/1.1" 200 OK'
            )
        elif kind < 8:
            lines.append(
                f"(APIServer pid=100) INFO {when} [loggers.py:224] Engine 000: Avg prompt throughput: {i % 977}.0 "
                f"tokens/s, Avg generation throughput: {i % 331}.5 tokens/s, Running: {i % 64} reqs, Waiting: 0 reqs, "
                f"GPU KV cache usage: {i % 90}.1%, Prefix cache hit rate: 42.{i % 10}%"
            )
        else:
            lines.append(
                f"(Worker_TP{i % 8} pid={1000 + i % 8}) INFO {when} [gpu_model_runner.py:2345] "
                f"Batch {index}-{i} scheduled"
            )
    rank = index % 8
    prefix = f"(Worker_TP{rank} pid={1000 + rank}) "
    stamp = f"2026-07-06 16:{(index // 60) % 60:02d}:{index % 60:02d}"
    lines += [
        prefix + f"{stamp}  [TileLang:tilelang.jit.kernel:INFO] (kernel.py:133): TileLang begins to compile kernel "
        "`mhc_pre_big_fuse_with_norm_tilelang` with `out_idx=None`",
        prefix + f"{stamp}  [TileLang:tilelang.jit.kernel:INFO] (kernel.py:141): TileLang completes to compile kernel "
        "`mhc_pre_big_fuse_with_norm_tilelang`",
        prefix + "[aiter] import [module_mhc] under /opt/aiter/aiter/jit/module_mhc.so",
        prefix + f"ERROR {stamp[5:]} [multiproc_executor.py:962] Traceback (most recent call last):",
        prefix
        + f'ERROR {stamp[5:]} [multiproc_executor.py:962]   File "/opt/vllm/model_executor/kernels/mhc/torch.py", '
        "line 50, in mhc_pre_torch",
        prefix + f"ERROR {stamp[5:]} [multiproc_executor.py:962] torch.OutOfMemoryError: CUDA out of memory",
    ]
    return ("\n".join(lines) + "\n").encode()


def _dense_block(index: int) -> bytes:
    """About 1 MiB in which every line is one the reader decodes and matches (the worst case for its time): frames,
    errors, INFO lines that name an error, tilelang compiles of 64 kernels in 8 workers."""
    lines: list[str] = []
    when = f"07-06 16:{(index // 60) % 60:02d}:{index % 60:02d}"
    for i in range(7000):
        prefix = f"(Worker_TP{i % 8} pid={1000 + i % 8}) ERROR {when} [multiproc_executor.py:962] "
        kind = i % 5
        if kind == 0:
            lines.append(prefix + f'  File "/opt/vllm/v1/worker/gpu_model_runner.py", line {i}, in execute_model')
        elif kind == 1:
            lines.append(prefix + f"RuntimeError: CUDA error: an illegal memory access was encountered ({index}-{i})")
        elif kind == 2:
            lines.append(f"(APIServer pid=100) INFO {when} [serving.py:1] Error in request {index}-{i}: retried")
        else:
            what = "begins" if kind == 3 else "completes"
            tail = " with `out_idx=None`" if kind == 3 else ""
            lines.append(
                f"(Worker_TP{i % 8} pid={1000 + i % 8}) 2026-07-06 16:00:{i % 60:02d}  [TileLang:tilelang.jit.kernel:"
                f"INFO] (kernel.py:{133 if kind == 3 else 141}): TileLang {what} to compile kernel `k{i % 64}`{tail}"
            )
    return ("\n".join(lines) + "\n").encode()


def _compiles_block(index: int) -> bytes:
    """About 1 MiB of tilelang compiles that begin and never complete, each of another kernel, in 256 processes: what
    the reader keeps for a compile's time must not grow with them (issue 33 item 3)."""
    lines = [
        f"(Worker_TP{i % 256} pid={1000 + i % 256}) 2026-07-06 16:00:00  [TileLang:tilelang.jit.kernel:INFO] "
        f"(kernel.py:133): TileLang begins to compile kernel `k{index}_{i}` with `out_idx=None`"
        for i in range(7000)
    ]
    return ("\n".join(lines) + "\n").encode()


KINDS = {"serving": _block, "dense": _dense_block, "compiles": _compiles_block}


def write_log(path: Path, size_mb: int, kind: str = "serving") -> int:
    written, index = 0, 0
    with path.open("wb") as out:
        out.write(
            b"(APIServer pid=100) INFO 07-06 16:00:00 [api_utils.py:319] vLLM server version 0.25.0, serving model "
            b"deepseek-ai/DeepSeek-V4-Pro\n(APIServer pid=100) INFO:     Application startup complete.\n"
        )
        while written < size_mb * 1_000_000:
            block = KINDS[kind](index)
            out.write(block)
            written += len(block)
            index += 1
    return path.stat().st_size


def run_once(path: Path) -> tuple[float, float, float, dict[str, object]]:
    """Wall seconds, CPU seconds (user + system: what other work on a shared machine disturbs least), peak RSS in
    MiB, and the document of one `mhcdoctor log FILE --json` in a child process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "mhcdoctor", "log", str(path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1, 3):
        raise SystemExit(
            f"mhcdoctor log exited {child.returncode}: {child.stderr.read().decode()[-500:] if child.stderr else ''}"
        )
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="MB of log to generate (default 1024)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gzip", action="store_true", help="also time the log gzip-compressed")
    parser.add_argument(
        "--kind",
        choices=sorted(KINDS),
        default="serving",
        help="serving: a serving mix (default); dense: every line one the reader matches (its worst time); "
        "compiles: compiles that begin and never complete, each of another kernel (its memory bound)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mhcdoctor-logbench-") as folder:
        path = Path(folder) / "vllm.log"
        started = time.perf_counter()
        size = write_log(path, args.size, args.kind)
        print(f"generated {size / 1e6:,.0f} MB in {time.perf_counter() - started:.1f} s: {path}")
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (other work slows the wall-clock figure)")
        inputs = [("plain", path, size)]
        if args.gzip:
            packed = path.with_suffix(".log.gz")
            with path.open("rb") as src, gzip.open(packed, "wb", compresslevel=1) as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            inputs.append(("gzip", packed, size))
        for label, target, raw_size in inputs:
            times, cpus, peaks = [], [], []
            doc: dict[str, object] = {}
            for run in range(args.runs):
                seconds, cpu, peak, doc = run_once(target)
                times.append(seconds)
                cpus.append(cpu)
                peaks.append(peak)
                print(
                    f"  {label} run {run + 1}: {seconds:.1f} s wall, {cpu:.1f} s CPU, {raw_size / 1e6 / seconds:,.0f} "
                    f"MB/s, peak RSS {peak:.0f} MiB (load average {os.getloadavg()[0]:.1f})"
                )
            median = statistics.median(times)
            cpu_median = statistics.median(cpus)
            source = doc["source"]
            assert isinstance(source, dict)
            print(
                f"{label}: {raw_size / 1e6:,.0f} MB, {source['lines']:,} lines in {median:.1f} s "
                f"(median of {args.runs}): "
                f"{raw_size / 1e6 / median:,.0f} MB/s wall, {raw_size / 1e6 / cpu_median:,.0f} MB per CPU-second; "
                f"peak RSS {max(peaks):.0f} MiB (max); verdict {doc['verdict']}"
            )


if __name__ == "__main__":
    main()
