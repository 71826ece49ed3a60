"""Benchmark the readers on inputs built to hurt: each case is one command in a child, its wall time and peak memory.

    python bench/hostile_inputs_bench.py [--runs 3] [--limit 120] [--case NAME ...]

Cases (issue 27 §4; each reader must be linear in its input and bounded in memory):
  explain-many-values  explain --from a 10 KiB bundle whose report.json is 2.4 million `{}` models
  explain-empty-lists  explain --from a report of 24 MiB of `[]` (8 million empty lists in one fact)
  diff-870k            diff two 870 KiB reports differing in 30,000 environment variables
  markdown-replay      explain --from 1.7 MB of Markdown: `<summary>report.json` repeated, one `</summary>` at the end
  merge-colliding      merge a folder of 3,000 empty files whose names share their first 64 characters
  merge-many-models    merge 500 reports of 16 models each, every model named differently
  merge-sparse-bundle  merge --bundle of one 1.5 GB sparse file
  check-fifo-files     check --fast with FIFOs as deep_gemm/__init__.py and a tilelang kernel source (issue 33 §5)
  check-glob-version   check --fast with tilelang's METADATA Version `../../../../../../**/**/x` (issue 33 §5)
  report-redact-shapes report of an environment whose tilelang prints a 60 KiB line shaped to make the secret
                       patterns backtrack (`://a`, `--`, `curl `, `mysql `, `a_`, `x_token_` repeated; issue 33 §1)

Prints, per case, the median, min and max wall time of the whole command (start-up included) and the child's peak
resident memory (VmHWM), or `> LIMIT s` when it did not finish within --limit seconds. Run it against another
checkout with PYTHONPATH=/that/checkout.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# Runs mhcdoctor, then writes the process's own peak RSS (VmHWM) to argv[1].
_MEASURED = """
import sys
from mhcdoctor.cli import main
out, sys.argv = sys.argv[1], ["mhcdoctor", *sys.argv[2:]]
try:
    main()
finally:
    status = open("/proc/self/status").read()
    open(out, "w").write(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
"""


def minimal_report(**extra: object) -> dict[str, object]:
    """A check/1 document with nothing in it but what `explain --from` needs, plus `extra`."""
    return {"schema": "mhcdoctor.check/1", "facts": {"platform": "cuda"}, "models": [], "findings": [], **extra}


def bundle_bytes(report: bytes) -> bytes:
    """A bundle holding `report` as report.json, with a manifest whose sha256 matches (as `report --bundle` writes)."""
    manifest = {
        "schema": "mhcdoctor.bundle/1",
        "files": [{"path": "report.json", "bytes": len(report), "sha256": hashlib.sha256(report).hexdigest()}],
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("report.json", report), ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(f"mhcdoctor-report/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), 9)


def explain_many_values(tmp: Path) -> list[str]:
    models = b"{}," * ((7 << 20) // 3)  # under the 8 MiB a bundle member may hold
    report = json.dumps(minimal_report(models=["X"])).encode().replace(b'["X"]', b"[" + models + b"{}]")
    path = tmp / "many-values.tar.gz"
    path.write_bytes(bundle_bytes(report))
    return ["explain", "--from", str(path)]


def explain_empty_lists(tmp: Path) -> list[str]:
    lists = b"[]," * ((24 << 20) // 3)
    report = json.dumps(minimal_report(facts={"platform": "cuda", "extra": "X"})).encode()
    path = tmp / "empty-lists.json"
    path.write_bytes(report.replace(b'"X"', b"[" + lists + b"[]]"))
    return ["explain", "--from", str(path)]


def diff_870k(tmp: Path) -> list[str]:
    a = minimal_report(env={f"VLLM_X{i}": "a" for i in range(30_000)})
    b = minimal_report(env={f"VLLM_X{i}": "b" for i in range(30_000)})
    (tmp / "a.json").write_text(json.dumps(a))
    (tmp / "b.json").write_text(json.dumps(b))
    return ["diff", str(tmp / "a.json"), str(tmp / "b.json")]


def markdown_replay(tmp: Path) -> list[str]:
    path = tmp / "replay.md"
    path.write_text("<summary>report.json" * 84_000 + "</summary>\n")
    return ["explain", "--from", str(path)]


def merge_colliding(tmp: Path) -> list[str]:
    folder = tmp / "colliding"
    folder.mkdir()
    for i in range(3000):
        (folder / f"{'n' * 64}{i}.json").touch()
    return ["merge", str(folder), "--json"]


def merge_many_models(tmp: Path) -> list[str]:
    folder = tmp / "models"
    folder.mkdir()
    ops = {op: {"path": "tilelang", "why": []} for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")}
    for node in range(500):
        models = [{"model": {"name": f"m{node}-{i}", "hidden_size": 4096}, "ops": ops} for i in range(16)]
        (folder / f"node-{node}.json").write_text(json.dumps(minimal_report(models=models)))
    return ["merge", str(folder), "--json"]


def merge_sparse_bundle(tmp: Path) -> list[str]:
    sparse = tmp / "huge.json"
    with open(sparse, "wb") as f:
        f.truncate(1500 << 20)
    return ["merge", str(sparse), "--bundle", str(tmp / "fleet.tar.gz")]


# Output that made a secret pattern read to the end of the line from every start: quadratic in the line (64 KiB of
# `://a` took 9 s, of `--` 202 s, of `curl ` 22 s) before each pattern was anchored or bounded.
REDACT_SHAPES = ("://a", "--", "curl ", "mysql ", "docker login ", "a_", "x_token_", "--k", "api_key='x ", "%3Ftoken")


def report_redact_shapes(tmp: Path) -> list[str]:
    """A Python environment whose tilelang prints one 60 KiB line, 6 KiB of each shape, and fails: its output is kept
    as evidence (64 KiB) and redacted whole before it is cut."""
    site = tmp / "site"
    (site / "tilelang").mkdir(parents=True)
    line = "".join((shape * 6000)[: 6 << 10] for shape in REDACT_SHAPES)
    (site / "tilelang" / "__init__.py").write_text(f"import sys\nsys.stderr.write({line!r})\n1/0\n")
    python = tmp / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    return ["report", "--json", "--python", str(python)]


def _fake_python(tmp: Path, site: Path) -> Path:
    python = tmp / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    return python


def _library(site: Path, name: str, version: str) -> None:
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(f"__version__ = {version!r}\n")
    info = site / f"{name}-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(name + "\n")


def check_fifo_files(tmp: Path) -> list[str]:
    """check --fast where deep_gemm/__init__.py and a tilelang kernel source are FIFOs nobody writes to (issue 33 §5):
    a plain open() waited for a writer for ever."""
    site = tmp / "site"
    _library(site, "tilelang", "0.1.12")
    (site / "deep_gemm").mkdir()
    os.mkfifo(site / "deep_gemm" / "__init__.py")
    kernel = tmp / ".tilelang" / "cache" / "0.1.12-x86_64" / "kernels" / "k"
    kernel.mkdir(parents=True)
    os.mkfifo(kernel / "device_kernel.cu")
    os.environ["HOME"] = str(tmp)  # the cache is found under HOME; each case runs in a fresh temporary folder
    return ["check", "--fast", "--json", "--python", str(_fake_python(tmp, site))]


def check_glob_version(tmp: Path) -> list[str]:
    """check --fast where tilelang's METADATA Version is `../../../../../../**/**/x` (issue 33 §5): it was put into a
    glob under the cache folder and walked the whole disk."""
    site = tmp / "site"
    _library(site, "tilelang", "../../../../../../**/**/x")
    (tmp / ".tilelang" / "cache").mkdir(parents=True)
    os.environ["HOME"] = str(tmp)
    return ["check", "--fast", "--json", "--python", str(_fake_python(tmp, site))]


CASES: dict[str, Callable[[Path], list[str]]] = {
    "explain-many-values": explain_many_values,
    "explain-empty-lists": explain_empty_lists,
    "diff-870k": diff_870k,
    "markdown-replay": markdown_replay,
    "merge-colliding": merge_colliding,
    "merge-many-models": merge_many_models,
    "merge-sparse-bundle": merge_sparse_bundle,
    "report-redact-shapes": report_redact_shapes,
    "check-fifo-files": check_fifo_files,
    "check-glob-version": check_glob_version,
}


def run_once(tmp: Path, args: list[str], limit: float) -> tuple[float | None, float | None, int | None]:
    """(seconds, peak MiB, exit code), or (None, None, None) when it ran past `limit`."""
    peak = tmp / "peak-kib"
    peak.unlink(missing_ok=True)
    for leftover in tmp.glob("*.tar.gz"):
        if leftover.name == "fleet.tar.gz":
            leftover.unlink()
    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURED, str(peak), *args], capture_output=True, timeout=limit, cwd=tmp
        )
    except subprocess.TimeoutExpired:
        return None, None, None
    seconds = time.monotonic() - start
    return seconds, int(peak.read_text()) / 1024 if peak.exists() else None, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds before a run counts as did not finish")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases (repeatable)")
    opts = parser.parse_args()
    print(f"{'case':<22} {'median s':>9} {'min s':>7} {'max s':>7} {'peak MiB':>9}  exit  (runs: {opts.runs})")
    for name in opts.case or list(CASES):
        with tempfile.TemporaryDirectory(prefix="mhcdoctor-bench-") as folder:
            tmp = Path(folder)
            args = CASES[name](tmp)
            runs = [run_once(tmp, args, opts.limit) for _ in range(opts.runs)]
            if any(seconds is None for seconds, _, _ in runs):
                print(f"{name:<22} {'> ' + format(opts.limit, 'g') + ' s':>9}", flush=True)
                continue
            times = [s for s, _, _ in runs if s is not None]
            peaks = [p for _, p, _ in runs if p is not None]
            peak = f"{max(peaks):9.0f}" if peaks else f"{'?':>9}"
            print(
                f"{name:<22} {statistics.median(times):9.2f} {min(times):7.2f} {max(times):7.2f} {peak}  {runs[0][2]}",
                flush=True,
            )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
