"""Numbers someone else wrote (issue 33 §4): a float fact as a 400-digit integer, 1e400, Infinity, a document nested
600 deep, a 5000-digit pid or line number and unreadable costs in a log. No reader may exit 4 (a traceback's code),
merge and fleet keep the other nodes with one unreadable row, and no view prints `Infinity` (not JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import doctor
import pytest
from triage_docs import rocm_report

from mhcdoctor.fleet.ray_runner import NodeRun, _record_check
from mhcdoctor.fleet.summary import NodeResult

BIG = "1" + "0" * 400  # an aiter .so's mtime (a float fact) written as a 400-digit integer
PDL = "RuntimeError: PDL is not supported"
TILELANG_BEGINS = (
    "(Worker pid=3) 2026-07-06 16:03:24  [TileLang:tilelang.jit.kernel:INFO] (kernel.py:91): TileLang begins to "
    "compile kernel `mhc_post_kernel` with `out_idx=None`"
)


def _strict(text: str) -> object:
    """JSON as any other program reads it: Infinity and NaN are not JSON."""
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the JSON output"))


def _report_with(tmp_path: Path, name: str, number: str) -> Path:
    report = rocm_report()
    report["facts"]["aiter_jit"] = {"path": "/x/module_mhc.so", "targets": ["gfx942"], "mtime": "NUMBER"}
    path = tmp_path / name
    path.write_text(json.dumps(report).replace('"NUMBER"', number))
    return path


@pytest.mark.parametrize("number", [BIG, "1e400", "-1e400", "Infinity", "NaN", "9" * 5000])
def test_a_number_no_float_holds_is_one_line_and_exit_2_for_every_reader(tmp_path: Path, number: str) -> None:
    bad = _report_with(tmp_path, "bad.json", number)
    good = _report_with(tmp_path, "good.json", "1733300000.5")
    log = tmp_path / "vllm.log"
    log.write_text(PDL + "\n")
    for args in (("explain", "--from", str(bad)), ("diff", str(bad), str(good)), ("log", str(log), "--from", str(bad))):
        done = doctor.run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "not valid JSON" in done.stderr and "Traceback" not in done.stderr


def test_merge_keeps_the_other_nodes_and_shows_each_unreadable_one_as_a_row(tmp_path: Path) -> None:
    folder = tmp_path / "nodes"
    folder.mkdir()
    _report_with(folder, "big.json", BIG)
    _report_with(folder, "inf.json", "1e400")
    _report_with(folder, "good.json", "1733300000.5")
    deep = rocm_report()
    deep["facts"]["extra"] = "DEEP"
    (folder / "deep.json").write_text(json.dumps(deep).replace('"DEEP"', "[" * 600 + "]" * 600))
    done = doctor.run("merge", str(folder), "--json")
    assert done.returncode == 3, done.stderr  # fail: unreadable nodes count as fail, and the good one has a race
    rows = {row["name"]: row for row in _strict(done.stdout)["nodes"]}  # type: ignore[index]
    assert rows["good"]["status"] == "checked"
    assert {name: rows[name]["status"] for name in ("big", "inf", "deep")} == dict.fromkeys(
        ("big", "inf", "deep"), "unreadable"
    )
    assert "401 digits" in rows["big"]["error"] and "nested more than 64 deep" in rows["deep"]["error"]


def test_fleet_shows_a_node_whose_report_holds_such_a_number_as_one_error_row() -> None:
    report = json.dumps(rocm_report()).replace('"seconds": 3.2', f'"seconds": {BIG}')
    assert BIG in report
    run = NodeRun(NodeResult("node-01", "timeout"))
    outcome = {"code": 0, "timed_out": False, "seconds": 2.0, "stdout": report, "stderr": "", "python": "python3"}
    _record_check(run, outcome)
    assert run.result.status == "error" and run.result.report is None
    assert run.result.error == "exit 0: its output is not valid JSON: a number of 401 digits (at most 19)"


@pytest.mark.parametrize(
    "line",
    [
        f"(APIServer pid={'9' * 5000}) INFO 07-06 16:03:24 [utils.py:1] started",
        "[aiter INFO] 2026-07-06 16:03:24.123 - MainProcess:" + "9" * 5000 + " - /a/jit/core.py:667 - get_module",
        "2026-07-06 16:03:24  [TileLang:tilelang.jit.kernel:INFO] (kernel.py:" + "9" * 5000 + "): TileLang begins "
        "to compile kernel `mhc_post_kernel` with `out_idx=None`",
        f"[aiter] [pid={'9' * 5000} pname=x] start build [module_mhc]",
        f'  File "/x/aiter/ops/mhc.py", line {"9" * 5000}, in mhc_pre',
        "[aiter] start build [module_mhc]\n[aiter] finish build [module_mhc], cost 1.2.3s",
        "[aiter] start build [module_mhc]\n[aiter] finish build [module_mhc], cost " + "9" * 400 + "s",
        f"{TILELANG_BEGINS} [repeated {'9' * 5000}x across cluster]",
        "INFO 07-06 16:03:24 [mhc.py:1] DeepSeek V4 mHC TileLang warmup finished in 1.2.3 seconds",
        "INFO 07-06 16:03:24 [kernel_warmup.py:1] JIT kernel warmup finished in " + "9" * 400 + "s",
    ],
    ids=[
        "pid",
        "log-more-pid",
        "tilelang-line",
        "aiter-pid",
        "frame-line",
        "cost-1.2.3",
        "cost-400-nines",
        "ray-repeated",
        "warmup-1.2.3",
        "jit-warmup-400-nines",
    ],
)
def test_a_log_line_with_an_absurd_number_is_read_and_every_view_is_json_or_text(tmp_path: Path, line: str) -> None:
    log = tmp_path / "vllm.log"
    log.write_text(f"{line}\n{PDL}\n")
    done = doctor.run("log", str(log), "--json")
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr  # the PDL error's fail, read whole
    document = _strict(done.stdout)
    assert document["findings"][0]["id"] == "tilelang-pdl-unsupported"  # type: ignore[index]
    for args in ((), ("--markdown",)):
        shown = doctor.run("log", str(log), *args)
        assert shown.returncode == 3 and "Infinity" not in shown.stdout and "inf s" not in shown.stdout


def test_ray_counts_and_warmup_seconds_are_read_through_the_one_number_bound(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text(
        "INFO 07-06 16:03:24 [mhc.py:1] DeepSeek V4 mHC TileLang warmup finished in 1.2.3 seconds\n"
        "INFO 07-06 16:03:25 [kernel_warmup.py:1] JIT kernel warmup finished in " + "9" * 400 + "s\n"
        f"{TILELANG_BEGINS} [repeated 123456789012x across cluster]\n"
        f"{TILELANG_BEGINS} [repeated {'9' * 19}x across cluster]\n"
    )
    done = doctor.run("log", str(log), "--json")
    document = _strict(done.stdout)
    assert isinstance(document, dict), done.stderr
    phases = document["phases"]
    assert phases["mhc_warmup_seconds"]["value"] is None and phases["jit_warmup_seconds"]["value"] is None
    # an 18-digit count is Ray's (123456789012 more workers began it); 19 digits is not a count: that line is one
    assert document["compiles"]["unknown"]["count"] == 123456789013 + 1
