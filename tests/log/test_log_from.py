"""`mhcdoctor log --from report.json`: a saved check's prediction against what the log shows, op by op."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import doctor
import jsonschema
from logs import SCHEMA, Server, aiter_import, tilelang

sys.path.insert(0, str(Path(__file__).parents[1] / "triage"))
from triage_docs import rocm_report, write_json  # noqa: E402  (a check/1 report of an MI300X with vLLM 0.25)


def _run(tmp_path, log: str, report: dict) -> tuple[int, dict, str]:
    (tmp_path / "vllm.log").write_text(log)
    path = write_json(tmp_path / "report.json", report)
    done = doctor.run("log", str(tmp_path / "vllm.log"), "--from", str(path), "--json")
    text = doctor.run("log", str(tmp_path / "vllm.log"), "--from", str(path)).stdout
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)
    return done.returncode, document, text


def test_a_kernel_on_another_path_than_predicted_is_the_line_that_matters(tmp_path):
    """The report predicts aiter for mhc_post (vLLM 0.25, gfx942); the log shows tilelang compiling mhc_post."""
    server = Server("0.25.0").banner("deepseek-ai/DeepSeek-V4-Pro").started().request()
    server.worker(0, aiter_import())
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang"))
    code, doc, text = _run(tmp_path, server.text(), rocm_report())
    (prediction,) = doc["prediction"]  # the log names the model, so only that one is compared
    assert prediction["model"] == "deepseek-v4-pro"
    rows = {row["op"]: row for row in prediction["ops"]}
    assert (rows["mhc_post"]["predicted"], rows["mhc_post"]["seen"], rows["mhc_post"]["agrees"]) == (
        "aiter",
        "tilelang",
        False,
    )
    assert rows["mhc_pre"]["agrees"] is True  # module_mhc loaded: aiter ran pre, post or fused; aiter is predicted
    assert rows["hc_head"]["agrees"] is None and rows["hc_head"]["text"].endswith("the log cannot tell")
    assert "mhc_post: predicted aiter, the log shows tilelang (line 6): DISAGREES" in text
    assert code == 1


def test_a_shared_module_on_a_path_predicted_for_none_of_its_ops_disagrees(tmp_path):
    report = rocm_report()
    for model in report["models"]:
        for op in model["ops"].values():
            op["path"] = "tilelang"
    server = Server("0.25.0").banner("deepseek-ai/DeepSeek-V4-Flash").started()
    server.worker(0, aiter_import())
    code, doc, text = _run(tmp_path, server.text(), report)
    rows = doc["prediction"][0]["ops"]
    shared = [row for row in rows if row["op"] == "mhc_pre+mhc_post+mhc_fused_post_pre"]
    assert shared and shared[0]["agrees"] is False and shared[0]["lines"] == [4]
    assert "line 4 shows aiter ran one of them: DISAGREES" in text
    assert code == 1


def test_versions_of_another_install_are_said(tmp_path):
    server = Server("0.29.0").banner().started()
    server.worker(0, tilelang("0.1.12", "begins", "hc_head_fuse_tilelang"))
    _, doc, _ = _run(tmp_path, server.text(), rocm_report())
    notes = doc["prediction"][0]["notes"]
    assert "the report is of vLLM 0.25.0, the log of vLLM 0.29.0: the prediction is for another install" in notes
    assert "the report is of tilelang 0.1.9; the log's tilelang lines come from tilelang 0.1.10 or 0.1.12" in notes


def test_one_version_written_two_ways_is_one_install(tmp_path):
    """A report's "v0.25.0" (a hand-edited or tag-named version) against the log's banner 0.25.0: the same vLLM."""
    report = rocm_report()
    report["facts"]["vllm"]["version"] = "v0.25.0"
    report["facts"]["tilelang"]["version"] = "v0.1.12"
    server = Server("0.25.0").banner().started()
    server.worker(0, tilelang("0.1.12", "begins", "hc_head_fuse_tilelang"))
    _, doc, text = _run(tmp_path, server.text(), report)
    notes = doc["prediction"][0]["notes"]
    assert not [note for note in notes if "the report is of" in note], notes
    assert "another install" not in text


def test_a_report_that_is_not_one_is_bad_input(tmp_path):
    (tmp_path / "vllm.log").write_text("RuntimeError: PDL is not supported\n")
    (tmp_path / "report.json").write_text('{"schema": "mhcdoctor.explain/1"}')
    done = doctor.run("log", str(tmp_path / "vllm.log"), "--from", str(tmp_path / "report.json"))
    assert done.returncode == 2 and "expected a saved `mhcdoctor check --json`" in done.stderr


def test_a_report_whose_op_lacks_its_path_is_bad_input_naming_it(tmp_path):
    """Every release wrote an op's path; one without it (edited, cut) is refused, not exit 4 in the comparison."""
    report = rocm_report()
    del report["models"][0]["ops"]["mhc_post"]["path"]
    (tmp_path / "vllm.log").write_text(Server("0.25.0").banner().started().text())
    done = doctor.run("log", str(tmp_path / "vllm.log"), "--from", str(write_json(tmp_path / "report.json", report)))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("models[0].ops.mhc_post: no path\n"), done.stderr


def test_a_report_that_names_no_vllm_says_so(tmp_path):
    """A check run where vLLM was not installed predicts for another install than the log's: said, not skipped."""
    report = rocm_report()
    report["facts"]["vllm"]["version"] = None
    server = Server("0.25.0").banner().started()
    server.worker(0, tilelang("0.1.9", "begins", "hc_head_fuse_tilelang"))
    _, doc, text = _run(tmp_path, server.text(), report)
    note = "the report names no vLLM (none was found where check ran): its prediction may be for another install"
    assert f"{note} than the log's (vLLM 0.25.0)" in doc["prediction"][0]["notes"]
    assert note in text
