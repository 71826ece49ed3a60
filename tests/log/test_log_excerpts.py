"""`mhcdoctor log` on log lines users posted in public issues (tests/log/data/SOURCES.md says where each is from)."""

from __future__ import annotations

import doctor
from logs import DATA, log_json

from mhcdoctor.rules.findings import CATALOGUE


def test_vllm_48809_four_workers_compile_the_pre_kernel_with_tilelang_0_1_9():
    code, doc = log_json("vllm-48809.log")
    assert doc["versions"]["tilelang"]["releases"] == ["0.1.9"]
    assert [p["name"] for p in doc["processes"]] == [f"Worker_TP{i} pid={1098 + i}" for i in range(4)]
    pre = doc["ops"]["mhc_pre"]
    assert (pre["path"], pre["certain"], pre["lines"]) == ("tilelang", False, [1, 2, 3, 4])
    assert doc["ops"]["mhc_post"]["path"] == "unknown"  # nothing in the excerpt names mhc_post: not guessed
    unknown = doc["compiles"]["unknown"]  # no start-up line in the excerpt: when they ran cannot be told
    assert (unknown["count"], unknown["timed"], unknown["seconds"]) == (4, 3, 30.0)
    assert doc["compiles"]["serving"]["count"] == 0
    assert any("whether they came at start-up or while serving" in note for note in doc["unknowns"])
    assert code == 0


def test_vllm_41834_docker_compose_prefix_and_a_kernel_compiled_three_times():
    _, doc = log_json("vllm-41834.log")
    assert [p["name"] for p in doc["processes"]] == ["Worker_TP1_EP1 pid=643"]
    unknown = doc["compiles"]["unknown"]
    assert unknown["count"] == 3 and unknown["longest"]["seconds"] == 8.0
    assert unknown["repeats"] == [
        "Worker_TP1_EP1 pid=643 compiled mhc_pre_big_fuse_with_norm_tilelang 3 times (lines 1, 3, 5)"
    ]


def test_vllm_42876_pdl_failure_is_the_fatal_finding():
    code, doc = log_json("vllm-42876.log")
    assert [f["id"] for f in doc["findings"]] == ["tilelang-pdl-unsupported"]
    spec = next(s for s in CATALOGUE if s.id == "tilelang-pdl-unsupported")  # one text, from the catalogue
    assert (doc["findings"][0]["title"], doc["findings"][0]["fix"]) == (spec.title, spec.fix)
    assert doc["fatal"][0]["line"] == 1 and doc["fatal"][0]["finding"] == "tilelang-pdl-unsupported"
    assert code == 3


def test_aiter_4633_traceback_proves_mhc_pre_ran_on_aiter_and_names_the_finding():
    code, doc = log_json("aiter-4633.log")
    pre = doc["ops"]["mhc_pre"]
    assert (pre["path"], pre["certain"], pre["lines"]) == ("aiter", True, [1])
    assert [f["id"] for f in doc["findings"]] == ["aiter-mhc-pre-invalid-config"]
    assert doc["findings"][0]["lines"] == [3]
    assert [k["line"] for k in doc["fatal"][0]["context"]] == [1, 2]  # the frame and its source line
    assert code == 3


def test_vllm_53320_engine_death_without_its_root_cause_is_fail_with_no_finding_guessed():
    code, doc = log_json("vllm-53320.log")
    assert [k["line"] for k in doc["engine_death"]] == [1]
    assert doc["findings"] == [] and doc["fatal"] == []
    assert any(note.startswith("the engine died (line 1) and no known mHC failure") for note in doc["unknowns"])
    assert code == 3


def test_fail_on_and_conflicting_views():
    assert doctor.run("log", str(DATA / "vllm-42876.log"), "--fail-on", "never").returncode == 0
    done = doctor.run("log", str(DATA / "vllm-42876.log"), "--json", "--markdown")
    assert done.returncode == 2 and "--json and --markdown are two views" in done.stderr


def test_text_and_markdown_views_say_the_same():
    text = doctor.run("log", str(DATA / "aiter-4633.log")).stdout
    markdown = doctor.run("log", str(DATA / "aiter-4633.log"), "--markdown").stdout
    for view in (text, markdown):
        assert "aiter-mhc-pre-invalid-config" in view
        assert "invalid configuration argument" in view
    assert "| all processes | aiter | ? | ? | ? |" in markdown
    assert "mhc_pre: aiter: line 1" in text
