"""Hostile and odd reports through `explain --from` and `diff` (pipes, FIFOs and stdin in a child process): escape
sequences are shown, never obeyed; pipes, FIFOs and stdin are read bounded; malformed reports exit 2 with one line."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import doctor
import pytest
from triage_docs import rocm_report, variant, write_json

from mhcdoctor.reportfile import report_from_markdown

ESCAPES = ["\x1b]0;pwned\x07", "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "\x1b[2J", "\r✓ Verdict: ok"]


PLAIN = dict(os.environ, NO_COLOR="1")


def _hostile(tmp_path: Path) -> Path:
    doc = variant(rocm_report(), **{"facts.aiter.version": "0.1.13" + "".join(ESCAPES)})
    doc["findings"][0]["title"] = "".join(ESCAPES)
    doc["facts"]["aiter"]["location"] = "/x" + "".join(ESCAPES)
    return write_json(tmp_path / "hostile.json", doc)


@pytest.mark.parametrize("command", ["explain", "diff"])
def test_escape_sequences_in_a_report_never_reach_the_terminal(tmp_path, command):
    hostile = _hostile(tmp_path)
    good = write_json(tmp_path / "good.json", rocm_report())
    args = ("explain", "--from", str(hostile)) if command == "explain" else ("diff", str(good), str(hostile))
    done = doctor.run(*args, timeout=60, env=PLAIN)
    assert done.returncode in (0, 1, 2), done.stderr
    for stream in (done.stdout, done.stderr):
        assert "\x1b" not in stream and "\r" not in stream and "\x07" not in stream


def test_stdin_is_read_with_a_dash(tmp_path):
    done = doctor.spawn("explain", "--json", "--from", "-", input=json.dumps(rocm_report()), timeout=60, env=PLAIN)
    assert done.returncode not in (2, 4), done.stderr
    assert json.loads(done.stdout)["sources"]["platform"] == "report:-"


@pytest.mark.slow
def test_a_fifo_nobody_writes_to_is_one_line_not_a_hang(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    done = doctor.spawn("explain", "--from", str(fifo), timeout=20, env=PLAIN)
    assert done.returncode == 2 and time.monotonic() - start < 10
    assert done.stderr.strip().splitlines() == [
        f"mhcdoctor: error: report {fifo} is empty (nothing was written to the pipe or FIFO within 3 s)"
    ]


def test_a_fifo_with_a_report_written_to_it_is_read(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as f:
            f.write(json.dumps(rocm_report()))

    writer = threading.Thread(target=write)
    writer.start()
    done = doctor.spawn("explain", "--json", "--from", str(fifo), timeout=30, env=PLAIN)
    writer.join(timeout=5)
    assert done.returncode not in (2, 4), done.stderr
    assert json.loads(done.stdout)["facts"]["aiter"]["version"] == "0.1.13"


FACTS_DAMAGED: list[tuple[dict[str, object], str]] = [
    ({"facts.devices": "x"}, "facts.devices"),
    ({"facts.vllm.version": "1" * 100_000}, "facts.vllm.version is 100000 characters long; not a version"),
]
# Parts explain --from does not read (it decides on the facts alone): diff refuses them, explain does not look.
OTHER_PARTS_DAMAGED: list[tuple[dict[str, object], str]] = [
    ({"models": "x"}, "models: expected a list, not str"),
    ({"findings": [1, 2]}, "findings[0]: expected an object, not int"),
    ({"host": []}, "host: expected an object, not list"),
    # deeper: each member of a model, finding or verify entry has its check/1 type where present
    ({"host": {"hostname": ["x"]}}, "host.hostname: expected str, not list"),
    ({"findings": [{"id": "x", "severity": 5}]}, "findings[0].severity: expected one of ('info', 'warn', 'fail')"),
    ({"models": [{"ops": {"mhc_pre": 5}}]}, "models[0].ops.mhc_pre: expected an object"),
    ({"models": [{"fused_post_pre": "yes"}]}, "models[0].fused_post_pre: expected bool, not str"),
    ({"verify": {"paths": "x"}}, "verify.paths: expected a list"),
    ({"verify": {"results": [{"tokens": 1.5}]}}, "verify.results[0].tokens: expected int, not float"),
]


@pytest.mark.parametrize(("change", "message"), FACTS_DAMAGED + OTHER_PARTS_DAMAGED)
@pytest.mark.parametrize("command", ["explain", "diff"])
def test_a_malformed_report_exits_2_with_one_bounded_line_where_the_command_reads_it(
    tmp_path, change, message, command
):
    bad = write_json(tmp_path / "bad.json", variant(rocm_report(), **change))
    good = write_json(tmp_path / "good.json", rocm_report())
    if command == "explain" and (change, message) in OTHER_PARTS_DAMAGED:
        damaged, intact = (
            doctor.run("explain", "--json", "--from", str(bad), timeout=60, env=PLAIN),
            doctor.run("explain", "--json", "--from", str(good), timeout=60, env=PLAIN),
        )
        assert damaged.returncode == intact.returncode == 3, damaged.stderr
        assert json.loads(damaged.stdout)["findings"] == json.loads(intact.stdout)["findings"]
        return
    args = ("explain", "--from", str(bad)) if command == "explain" else ("diff", str(good), str(bad))
    done = doctor.run(*args, timeout=60, env=PLAIN)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and message in lines[0] and len(lines[0]) < 600, done.stderr


@pytest.mark.slow
def test_diff_output_is_bounded_for_a_50_mb_value(tmp_path):
    big = write_json(tmp_path / "big.json", variant(rocm_report(), **{"facts.aiter.location": "/x" * (25 << 20)}))
    good = write_json(tmp_path / "good.json", rocm_report())
    done = doctor.run("diff", str(good), str(big), timeout=60, env=PLAIN)
    assert done.returncode == 1 and len(done.stdout) < 64_000


def test_reading_a_large_markdown_report_is_linear():
    """Many report blocks whose fence never closes: 292 KB took the old regex search 12 s."""
    text = ("<summary>report.json</summary> ```json\n" + "x" * 60 + "\n") * 3000
    start = time.monotonic()
    assert report_from_markdown(text) is None
    assert time.monotonic() - start < 1.0


def test_check_shows_escape_sequences_from_a_packages_metadata_as_question_marks():
    from mhcdoctor.probes.base import ProbeResult

    result = ProbeResult("packages", "ok", data={"aiter": {"version": "0.1.13\x1b]0;pwned\x07", "path": "/x\r"}})
    assert result.data == {"aiter": {"version": "0.1.13?]0;pwned?", "path": "/x?"}}


@pytest.mark.parametrize(
    ("probe", "message"),
    [
        ({"name": 5, "status": "ok"}, "probes[0].name: expected str, not int"),
        ({"name": "aiter", "status": "ok", "evidence": "x"}, "probes[0].evidence: expected a list, not str"),
        ({"name": "aiter", "status": "ok", "seconds": "1"}, "probes[0].seconds: expected a number, not str"),
        ({"name": "aiter", "status": "ok", "data": []}, "probes[0].data: expected an object, not list"),
        ({"name": "aiter", "status": "fine"}, "probes[0].status: expected one of ('ok', 'missing', 'error', 'timeout'"),
        ({"name": "aiter"}, "probes[0]: no status"),
    ],
)
def test_a_malformed_probe_is_one_line_naming_it(probe, message):
    from mhcdoctor.errors import InputError
    from mhcdoctor.reportfile import validate_report

    doc = {"schema": "mhcdoctor.check/1", "facts": {}, "probes": [probe]}
    with pytest.raises(InputError, match=re.escape(message)):
        validate_report(doc, "r.json")
    short = validate_report({**doc, "probes": [{"name": "aiter", "status": "ok"}]}, "r.json")
    assert short["probes"][0]["evidence"] == [] and short["facts"]["aiter"]["sqrsum_fix"] == "unknown"
