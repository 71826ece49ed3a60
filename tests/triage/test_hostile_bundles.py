"""Hostile bundles through `explain --from` and `diff`, in a child process: each is refused with one line and exit
2, within seconds of CPU time and a bounded peak memory (VmHWM of the child). CPU time, not wall time: the bound
is on mhcdoctor's own work, which a loaded machine slows down without making it any larger."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from triage_docs import rocm_report, write_json


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


pytestmark = pytest.mark.slow  # huge inputs, each in a child of its own: seconds each

CPU_SECONDS = 10  # the child's own user+system time, start-up included (about 0.3 s)
HANG_SECONDS = 120  # wall time after which the child counts as hung, however loaded the machine
PEAK_MIB = 120  # the interpreter with mhcdoctor loaded is about 40 MiB; the attacks reached 1.3-1.7 GB


def _gz(path: Path, raw: bytes) -> Path:
    path.write_bytes(gzip.compress(raw, 9))
    return path


def _ustar(name: str, kind: bytes, body: bytes, size: int | None = None) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, len(body) if size is None else size
    return (
        info.tobuf(tarfile.USTAR_FORMAT if kind != tarfile.GNUTYPE_SPARSE else tarfile.GNU_FORMAT)
        + body
        + (b"\0" * (-len(body) % 512))
    )


def _sparse(tmp: Path) -> Path:
    """A GNU sparse member: its header is all it stores, its holes cost nothing to compress."""
    member = _ustar("mhcdoctor-report/report.json", tarfile.GNUTYPE_SPARSE, b"")
    return _gz(tmp / "sparse.tar.gz", member + bytes(1024))


def _pax_sparse(tmp: Path) -> Path:
    """The pax (GNU 1.0) form of a sparse member: GNU.sparse.realsize says 1.33 GB."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("mhcdoctor-report/report.json")
        info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": "1330000000"}
        info.size = 512
        tar.addfile(info, io.BytesIO(b"1\n0\n1330000000\n".ljust(512, b"\0")))
    return _gz(tmp / "pax-sparse.tar.gz", raw.getvalue())


def _big_members(tmp: Path) -> Path:
    """Two 31 MiB members of `{` ... `}`: a 62 KB download."""
    body = b"{" + b" " * (31 << 20) + b"}"
    raw = _ustar("mhcdoctor-report/report.json", tarfile.REGTYPE, body)
    raw += _ustar("mhcdoctor-report/manifest.json", tarfile.REGTYPE, body)
    return _gz(tmp / "big.tar.gz", raw + bytes(1024))


def _pax_hang(tmp: Path) -> Path:
    """CVE-2024-6232: a pax header of digits makes tarfile's hdrcharset regex quadratic (minutes on 3.11.7)."""
    body = b"1" * (2 << 20)
    raw = _ustar("././@PaxHeader", tarfile.XHDTYPE, body)
    raw += _ustar("mhcdoctor-report/report.json", tarfile.REGTYPE, b"{}")
    return _gz(tmp / "pax-hang.tar.gz", raw + bytes(1024))


# Runs mhcdoctor and then writes the process's own peak RSS (VmHWM: its address space's high-water mark, which,
# unlike ru_maxrss, does not inherit the parent's from before exec) and its CPU seconds to the file named in argv[1].
_MEASURED = """
import os, sys
from mhcdoctor.cli import main
out, sys.argv = sys.argv[1], ["mhcdoctor", *sys.argv[2:]]
try:
    main()
finally:
    status = open("/proc/self/status").read()
    peak = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    cpu = os.times().user + os.times().system
    open(out, "w").write(f"{peak} {cpu}")
"""


def _run(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """`mhcdoctor ARGS` in a child: the run, its CPU seconds and its peak MiB."""
    measured = tmp / "measured"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(measured), *args], capture_output=True, text=True, timeout=HANG_SECONDS
    )
    peak_kib, cpu = measured.read_text().split()
    return done, float(cpu), int(peak_kib) / 1024


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_sparse, "GNU sparse member"),
        (_pax_sparse, "pax header with key 'GNU.sparse"),
        (_big_members, "decompresses to more than 12 MiB"),
        (_pax_hang, "a pax header of 2097152 bytes"),
    ],
)
@pytest.mark.parametrize("command", ["explain", "diff"])
def test_a_hostile_bundle_is_refused_quickly_in_bounded_memory(tmp_path, make, message, command):
    bundle = make(tmp_path)
    good = write_json(tmp_path / "good.json", rocm_report())
    args = ("explain", "--from", str(bundle)) if command == "explain" else ("diff", str(good), str(bundle))
    done, cpu, peak_mib = _run(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert cpu < CPU_SECONDS and peak_mib < PEAK_MIB, (cpu, peak_mib)


# Worst-case inputs (issue 27 §4): each either refused at once or read in time linear in its size. The figures
# before and after are bench/hostile_inputs_bench.py's; the bounds here hold on a loaded two-core machine.


def _report(**extra: object) -> dict[str, object]:
    return {"schema": "mhcdoctor.check/1", "facts": {"platform": "cuda"}, "models": [], "findings": [], **extra}


def _with(doc: dict[str, object], marker: str, body: bytes) -> bytes:
    """`doc` as JSON with the string `marker` replaced by raw JSON `body` (built as bytes: fast and exact)."""
    return json.dumps(doc).encode().replace(f'"{marker}"'.encode(), body)


def _bundle(tmp: Path, report: bytes) -> Path:
    manifest = {"files": [{"path": "report.json", "sha256": hashlib.sha256(report).hexdigest()}]}
    raw = _ustar("mhcdoctor-report/report.json", tarfile.REGTYPE, report)
    raw += _ustar("mhcdoctor-report/manifest.json", tarfile.REGTYPE, json.dumps(manifest).encode())
    return _gz(tmp / "hostile.tar.gz", raw + bytes(1024))


def test_a_small_bundle_of_millions_of_values_is_refused_before_it_is_parsed(tmp_path):
    """A 10 KiB bundle whose report.json is 2.4 million `{}` models: minutes and 600 MiB to check before."""
    bundle = _bundle(tmp_path, _with(_report(models="M"), "M", b"[" + b"{}," * ((7 << 20) // 3) + b"{}]"))
    done, cpu, peak_mib = _run(tmp_path, "explain", "--from", str(bundle))
    assert done.returncode == 2 and "JSON values (a report has a few thousand; at most 200000)" in done.stderr
    assert cpu < CPU_SECONDS and peak_mib < PEAK_MIB, (cpu, peak_mib)


def test_24_mib_of_empty_lists_is_refused_before_it_is_parsed(tmp_path):
    """8 million `[]` in one fact: 51 s and 1.8 GiB before."""
    report = write_bytes(tmp_path / "r.json", _with(_report(facts="F"), "F", b'{"x": [' + b"[]," * (8 << 20) + b"[]]}"))
    done, cpu, peak_mib = _run(tmp_path, "explain", "--from", str(report))
    assert done.returncode == 2 and "JSON values" in done.stderr
    assert cpu < CPU_SECONDS and peak_mib < PEAK_MIB, (cpu, peak_mib)


@pytest.mark.parametrize("member", ["models", "findings"])
def test_the_most_values_a_report_may_hold_are_checked_in_seconds(tmp_path, member):
    """Just under the bound: 99,000 empty objects where each must be checked against its TypedDict."""
    bundle = _bundle(tmp_path, _with(_report(**{member: "M"}), "M", b"[" + b"{}," * 99_000 + b"{}]"))
    done, cpu, peak_mib = _run(tmp_path, "explain", "--from", str(bundle))
    assert done.returncode in (0, 1, 3), done.stderr
    assert cpu < CPU_SECONDS and peak_mib < PEAK_MIB * 2, (cpu, peak_mib)


@pytest.mark.parametrize("member", ["models", "findings"])
def test_empty_objects_that_would_grow_when_filled_in_are_refused_by_diff(tmp_path, member):
    """99,000 `{}` pass the parse bound; filling in the members each lacks (as an older report's are) would add a
    hundred values to each: diff reads the whole report and refuses it instead of growing it (10 s and 300 MiB)."""
    bundle = _bundle(tmp_path, _with(_report(**{member: "M"}), "M", b"[" + b"{}," * 99_000 + b"{}]"))
    done, cpu, peak_mib = _run(tmp_path, "diff", str(bundle), str(bundle))
    assert done.returncode == 2 and "too many values once the members it lacks are filled in" in done.stderr
    assert cpu < CPU_SECONDS and peak_mib < PEAK_MIB, (cpu, peak_mib)


def test_diff_of_thousands_of_differences_is_linear(tmp_path):
    """Two 870 KiB reports differing in 30,000 variables: 36 s before (each difference searched for in a list)."""
    a = write_json(tmp_path / "a.json", _report(env={f"VLLM_X{i}": "a" for i in range(30_000)}))
    b = write_json(tmp_path / "b.json", _report(env={f"VLLM_X{i}": "b" for i in range(30_000)}))
    done, cpu, _ = _run(tmp_path, "diff", str(a), str(b))
    assert done.returncode == 1 and done.stdout.count("A: a") == 30_000
    assert cpu < CPU_SECONDS, cpu


def test_the_markdown_replay_is_linear_in_repeated_titles(tmp_path):
    """1.7 MB of `<summary>report.json` and one `</summary>` at the end: 54 s before."""
    md = tmp_path / "issue.md"
    md.write_text("<summary>report.json" * 84_000 + "</summary>\n")
    done, cpu, _ = _run(tmp_path, "explain", "--from", str(md))
    assert done.returncode == 2 and "is not valid JSON" in done.stderr
    assert cpu < CPU_SECONDS, cpu


def test_merge_of_thousands_of_colliding_names_is_linear(tmp_path):
    """3,000 files whose names share their first 64 characters: 126 s before (each new name tried against all)."""
    folder = tmp_path / "reports"
    folder.mkdir()
    for i in range(3000):
        (folder / f"{'n' * 64}{i}.json").touch()
    done, cpu, _ = _run(tmp_path, "merge", "--json", str(folder))
    names = [row["name"] for row in json.loads(done.stdout)["nodes"]]
    assert len(set(names)) == 3000 and names[-1] == "n" * 64 + "~3000"
    assert cpu < CPU_SECONDS, cpu


def test_merge_of_many_models_named_differently_is_bounded(tmp_path):
    """200 reports of 16 models each, every model named differently: each model compared was a row of every node."""
    folder = tmp_path / "reports"
    folder.mkdir()
    ops = {op: {"path": "tilelang", "why": []} for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")}
    for node in range(200):
        models = [{"model": {"name": f"m{node}-{i}", "hidden_size": 4096}, "ops": ops} for i in range(16)]
        write_json(folder / f"node-{node}.json", _report(models=models))
    done, cpu, _ = _run(tmp_path, "merge", "--json", str(folder))
    keys = [d["key"] for d in json.loads(done.stdout)["differences"]]
    assert len([k for k in keys if k.startswith("paths:")]) == 16  # the first 16 models seen are compared
    assert cpu < CPU_SECONDS, cpu
