"""Hostile bundles through `explain --from` and `diff`, in a child process: each is refused with one line and exit
2, within seconds and a bounded peak memory (ru_maxrss of the child)."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from triage_docs import rocm_report, write_json

SECONDS = 10
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
# unlike ru_maxrss, does not inherit the parent's from before exec) to the file named in argv[1].
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


def _run(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    peak_file = tmp / "peak-kib"
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(peak_file), *args], capture_output=True, text=True, timeout=SECONDS * 3
    )
    return done, time.monotonic() - start, int(peak_file.read_text()) / 1024


@pytest.mark.slow
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
    done, seconds, peak_mib = _run(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert seconds < SECONDS and peak_mib < PEAK_MIB, (seconds, peak_mib)
