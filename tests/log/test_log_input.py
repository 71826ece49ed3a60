"""A log is a stranger's file: gzip, stdin, truncated, binary, huge lines, control characters, secrets."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import doctor
import jsonschema
import pytest
from logs import SCHEMA, Server, tilelang, vllm

REPO = Path(__file__).parents[2]
PDL = "RuntimeError: Worker failed with error 'Check failed: is false: PDL is not supported'"


def _server_log() -> bytes:
    server = Server("0.25.0").banner().started().request()
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:00:00"))
    server.worker(0, tilelang("0.1.9", "completes", "mhc_post_tilelang", "2026-07-06 16:00:07"))
    return server.text().encode()


def _json(*args: str) -> tuple[int, dict]:
    done = doctor.run("log", *args, "--json")
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)  # every document the tests read fits the published schema
    return done.returncode, document


def _error(*args: str) -> str:
    done = doctor.run("log", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    return done.stderr


def test_gzip_reads_as_the_plain_log(tmp_path):
    plain, packed = tmp_path / "vllm.log", tmp_path / "vllm.log.gz"
    plain.write_bytes(_server_log())
    packed.write_bytes(gzip.compress(_server_log()))
    _, a = _json(str(plain))
    _, b = _json(str(packed))
    assert b["source"]["gzip"] is True
    assert a["ops"] == b["ops"] and a["compiles"] == b["compiles"] and a["findings"] == b["findings"]


def test_a_truncated_gzip_is_read_up_to_its_end_and_says_so(tmp_path):
    data = gzip.compress(_server_log() * 200)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data[: len(data) // 2])
    code, doc = _json(str(path))
    assert "gzip stream ends early" in doc["source"]["ended_early"]
    assert doc["compiles"]["serving"]["count"] > 0 and code == 1
    assert "the input ends early" in doctor.run("log", str(path)).stdout


def test_stdin_dash_in_a_real_process():
    done = doctor.spawn("log", "-", "--json", input=gzip.compress(_server_log()), timeout=120, cwd=REPO)
    doc = json.loads(done.stdout)
    assert doc["source"]["name"] == "stdin" and doc["ops"]["mhc_post"]["path"] == "tilelang"
    assert done.returncode == 1  # mhc-jit-while-serving


def test_not_a_log_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "random.bin").write_bytes(os.urandom(70_000))
    assert "is not text" in _error(str(tmp_path / "random.bin"))
    assert "is not text" in _error("/dev/zero")
    (tmp_path / "log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"x" * 100)
    assert "zstd -dc FILE | mhcdoctor log -" in _error(str(tmp_path / "log.zst"))
    (tmp_path / "ps.log").write_bytes("x\n".encode("utf-16"))
    assert "iconv -f utf-16" in _error(str(tmp_path / "ps.log"))
    assert "log not found" in _error(str(tmp_path / "missing.log"))
    assert "is a folder" in _error(str(tmp_path))
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    assert "not a readable gzip stream" in _error(str(tmp_path / "bad.gz"))


def test_input_that_is_no_vllm_log_says_so_and_never_passes_a_gate(tmp_path):
    """`kubectl logs ... > f; mhcdoctor log f --fail-on degraded`: an empty f (kubectl failed), a stray text or a
    report given instead of the log is one line and exit 2, whatever --fail-on says (exit 2 is bad input)."""
    (tmp_path / "notes.txt").write_text("shopping list\nmilk\n")
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "hello.log").write_text("hello")
    report = {"schema": "mhcdoctor.check/7", "facts": {}, "models": []}
    (tmp_path / "check.json").write_text(json.dumps(report, indent=2))
    cases = {
        "notes.txt": "no vLLM line here (2 lines, none written by vLLM, tilelang or aiter)",
        "empty.log": "is empty: no vLLM line here",
        "hello.log": "no vLLM line here (1 line,",
        "check.json": "is an mhcdoctor JSON report, not a log: no vLLM line here",
    }
    for name, said in cases.items():
        for fail_on in ("degraded", "never"):
            assert said in _error(str(tmp_path / name), "--fail-on", fail_on)
    done = doctor.spawn("log", "-", "--json", input=b"", timeout=120, cwd=REPO)
    assert done.returncode == 2 and "log stdin is empty: no vLLM line here" in done.stderr and done.stdout == ""


def test_a_vllm_log_without_a_known_line_is_still_read_as_vllms(tmp_path):
    """Only vLLM's own INFO lines (its header and process prefix): a vLLM log, said to show nothing of mHC."""
    server = Server("0.25.0")
    server.worker_log(0, "INFO", "gpu_model_runner.py:2345", "Batch 7 scheduled")
    code, doc = _json(str(_write(tmp_path, server.text())))
    assert doc["source"]["vllm_line"] == 1 and doc["source"]["recognised"] == 0
    assert not any("vLLM's own format" in note for note in doc["unknowns"])
    assert code == 0


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "vllm.log"
    path.write_text(text)
    return path


def test_binary_junk_inside_a_text_log_and_an_over_long_line(tmp_path):
    junk = os.urandom(3000).replace(b"\n", b"")
    long_line = b"TileLang " + b"x" * (3 << 20)  # longer than a block: read as its head
    data = junk[:500] + b"\n" + long_line + b"\n" + _server_log() + junk[500:] + b"\n" + PDL.encode() + b"\n"
    path = tmp_path / "junk.log"
    path.write_bytes(data)
    code, doc = _json(str(path))
    assert doc["source"]["long_lines"] == 1
    assert doc["ops"]["mhc_post"]["lines"] == [7]
    assert doc["findings"][0]["id"] == "tilelang-pdl-unsupported" and doc["fatal"][0]["line"] == 10
    assert code == 3


def test_control_characters_are_shown_not_sent_to_the_terminal(tmp_path):
    path = tmp_path / "vllm.log"
    path.write_bytes(b"RuntimeError: PDL is not supported \x1b]0;owned\x07 \x08\x08 \x9b2J\n")
    out = doctor.run("log", str(path)).stdout
    assert not any(ch in out for ch in "\x1b\x07\x08\x9b")
    assert "PDL is not supported  ?? ?2J" in out


def test_what_is_printed_is_redacted_as_report_redacts(tmp_path):
    token = "hf_" + "Q" * 30
    frame = '  File "/home/alice/venv/lib/python3.12/site-packages/aiter/ops/mhc.py", line 350, in mhc_pre'
    lines = [
        "Traceback (most recent call last):",
        frame,
        f"torch.AcceleratorError: CUDA error: invalid configuration argument HF_TOKEN={token}",
    ]
    path = tmp_path / "vllm.log"
    path.write_text("\n".join(lines) + "\n")
    for args in ((), ("--json",), ("--markdown",)):
        out = doctor.run("log", str(path), *args).stdout
        assert "alice" not in out and token not in out
        assert "~/venv/lib/python3.12/site-packages/aiter/ops/mhc.py" in out and "[masked]" in out
    shown = doctor.run("log", str(path), "--no-redact").stdout
    assert "/home/alice/venv" in shown and token not in shown  # secrets stay masked, as with report --no-redact


def _log_through_stdin(script: str) -> tuple[dict, float]:
    """`mhcdoctor log - --json` reading what `script` writes: its document and its peak RSS in MiB. The peak is
    read from /proc at its end: VmHWM belongs to the process image exec made, while ru_maxrss would count the pytest
    worker that was forked to start it."""
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    measure = (
        "import runpy, sys\n"
        "sys.argv = ['mhcdoctor', 'log', '-', '--json']\n"
        "try:\n    runpy.run_module('mhcdoctor', run_name='__main__')\n"
        "finally:\n"
        "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "    print('peak-kib', hwm, file=sys.stderr)\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", measure], stdin=writer.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
    )
    assert writer.stdout is not None
    writer.stdout.close()  # the reader holds the pipe now
    out, err = reader.communicate(timeout=300)
    writer.wait(timeout=60)
    return json.loads(out), int(err.decode().rsplit("peak-kib", 1)[1].split()[0]) / 1024


@pytest.mark.slow
def test_memory_stays_bounded_on_a_large_log_with_a_huge_line():
    """80 MB through stdin, one line of 40 MB among them: the peak RSS of the child stays far below the input."""
    line = vllm("APIServer", 1, "INFO", "loggers.py:1", "Avg prompt throughput: 1.0 tokens/s") + "\n"
    script = (
        "import sys; out = sys.stdout.buffer; out.write(b'TileLang ' + b'y' * (40 << 20) + b'\\n'); "
        f"out.write({line.encode()!r} * ((40 << 20) // {len(line)}))"
    )
    doc, peak_mib = _log_through_stdin(script)
    assert doc["source"]["long_lines"] == 1 and doc["source"]["bytes"] >= 80 << 20
    assert peak_mib < 120, f"peak RSS {peak_mib:.0f} MiB"


@pytest.mark.slow
def test_state_stays_bounded_when_every_line_names_another_kernel(tmp_path):
    """Kernel names and line numbers come from the log: a million distinct ones must not grow what is kept."""
    from mhcdoctor.vllmlog.scan import Scanner

    scanner = Scanner()
    for chunk in range(20):
        lines = (
            f"[TileLang:tilelang.jit.kernel:INFO] (kernel.py:{chunk * 5000 + i}): TileLang begins to compile kernel "
            f"`k{chunk}_{i}` with `out_idx=None`\n"
            for i in range(5000)
        )
        scanner.feed("".join(lines).encode())
    scan = scanner.scan
    assert sum(int(v[0]) for v in scan.compile_totals.values()) == 100_000
    assert len(scan.tilelang_lines) <= 16 and len(scan.compile_kernels) <= 256
    assert scanner.open_compiles <= 512  # MAX_OPEN: begun and never completed, kept by the hundred, not the million
    assert len(scan.compiles) <= 400


def test_a_known_error_at_the_start_of_a_block_finds_its_frames_at_the_end_of_the_last():
    """The blocks a log is read in may cut a traceback: its frames end one block, its error starts the next."""
    from mhcdoctor.vllmlog import analyse
    from mhcdoctor.vllmlog.scan import Scanner
    from mhcdoctor.vllmlog.stream import Source

    scanner = Scanner()
    scanner.feed(
        b"noise\n" * 1000 + b'  File "/x/aiter/ops/mhc.py", line 350, in mhc_pre\n    comb_mix = torch.empty()\n'
    )
    scanner.feed(b"torch.AcceleratorError: CUDA error: invalid configuration argument\n")
    doc = analyse(scanner.scan, Source("blocks"))
    assert [f["id"] for f in doc["findings"]] == ["aiter-mhc-pre-invalid-config"]
    assert [k["line"] for k in doc["fatal"][0]["context"]] == [1001, 1002]
    assert doc["ops"]["mhc_pre"]["lines"] == [1001] and doc["ops"]["mhc_pre"]["path"] == "aiter"


@pytest.mark.slow
def test_compiles_that_never_complete_keep_memory_bounded():
    """Issue 33 item 3: tilelang compiles that begin and never complete, each of another kernel, in 256 processes,
    40 MB through stdin (1 GB of them peaked at 995 MiB before): the child's peak stays under 100 MiB."""
    script = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "for block in range(40):\n"
        "    out.write(''.join(f'(Worker_TP{i % 256} pid={1000 + i % 256}) 2026-07-06 16:00:00  "
        "[TileLang:tilelang.jit.kernel:INFO] (kernel.py:133): TileLang begins to compile kernel `k{block}_{i}` "
        "with `out_idx=None`\\n' for i in range(6500)).encode())\n"
    )
    doc, peak_mib = _log_through_stdin(script)
    assert doc["compiles"]["unknown"]["count"] == 260_000 and len(doc["processes"]) <= 256
    assert peak_mib < 100, f"peak RSS {peak_mib:.0f} MiB"
