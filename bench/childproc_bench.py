"""What the child runner's safety costs: a sweep of live temporary folders, a folder made and removed, and a child
run with and without its own cgroup.

    python bench/childproc_bench.py [--runs 5] [--folders 200] [--children 100]

Prints, for each figure, the median, min and max over `--runs` repeats: the time of one `sweep_dead_folders` over
`--folders` live doctors' folders (each opened, checked with fstat, its proof read, its lock tried), of one
`temp_dir` made and removed (lock file made under another name, flocked, renamed in), and of one
`childproc.run(['/bin/true'])` with a cgroup (where this process may make cgroups) and without
(MHCDOCTOR_CGROUPS=0, in a fresh interpreter, since the choice is made once per process).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from mhcdoctor import childproc

_CHILDREN = """
import json, sys, time
from mhcdoctor import childproc
n = int(sys.argv[1])
with childproc.temp_dir() as folder:
    start = time.perf_counter()
    for _ in range(n):
        childproc.run(["/bin/true"], {}, 10, folder=folder)
    print(json.dumps({"cgroup": childproc.cgroup_base(), "ms": (time.perf_counter() - start) / n * 1000}))
"""


def sweep_ms(base: str, folders: int) -> float:
    with contextlib.ExitStack() as stack:
        for _ in range(folders):
            stack.enter_context(childproc.temp_dir())
        start = time.perf_counter()
        childproc.sweep_dead_folders(base)
        return (time.perf_counter() - start) * 1000


def folder_ms(count: int = 200) -> float:
    start = time.perf_counter()
    for _ in range(count):
        with childproc.temp_dir():
            pass
    return (time.perf_counter() - start) / count * 1000


def child_ms(children: int, cgroups: bool) -> tuple[float, str | None]:
    env = {**os.environ, "MHCDOCTOR_CGROUPS": "1" if cgroups else "0"}
    done = subprocess.run([sys.executable, "-c", _CHILDREN, str(children)], env=env, capture_output=True, check=True)
    got = json.loads(done.stdout)
    return float(got["ms"]), got["cgroup"]


def show(name: str, values: list[float]) -> None:
    print(f"{name:<44} median {statistics.median(values):8.3f} ms  min {min(values):8.3f}  max {max(values):8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--folders", type=int, default=200)
    parser.add_argument("--children", type=int, default=100)
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="childproc-bench-")
    os.environ["TMPDIR"] = tempfile.tempdir = base
    show(f"sweep of {args.folders} live folders", [sweep_ms(base, args.folders) for _ in range(args.runs)])
    show("temp_dir made and removed", [folder_ms() for _ in range(args.runs)])
    with_cgroup = [child_ms(args.children, True) for _ in range(args.runs)]
    where = with_cgroup[0][1]
    show(f"child run, cgroup ({where or 'none available'})", [ms for ms, _ in with_cgroup])
    show("child run, MHCDOCTOR_CGROUPS=0", [child_ms(args.children, False)[0] for _ in range(args.runs)])
    os.rmdir(base)


if __name__ == "__main__":
    main()
