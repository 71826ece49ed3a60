"""`mhcdoctor log` on the records of mhcdoctor's vLLM plugin: evidence of kind `observed`, certain, and said so in
text and Markdown; `--from` sets what the plugin observed against the report's prediction."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import doctor
import jsonschema
import pytest

from mhcdoctor.vllmlog import observed
from mhcdoctor.vllmlog.observed import Record, bucket

sys.path[:0] = [str(Path(__file__).parents[1] / "log"), str(Path(__file__).parents[1] / "triage")]
from logs import SCHEMA, Server, tilelang, vllm  # noqa: E402
from triage_docs import rocm_report, write_json  # noqa: E402  (an MI300X with vLLM 0.25: aiter predicted)

# As the plugin logged them through vLLM 0.34's logger on the CPU (tests/real/test_vllm_plugin.py makes them).
PRE_TORCH = "mhcdoctor-observed op=mhc_pre path=torch tokens=17-64 kernel=MHCPreOp.forward_native graph=eager"
POST_TORCH = "mhcdoctor-observed op=mhc_post path=torch tokens=1 kernel=MHCPostOp.forward_native graph=eager"
FUSED_CAPTURE = (
    "mhcdoctor-observed op=mhc_fused_post_pre path=tilelang tokens=2-8 kernel=mhc_fused_post_pre_tilelang "
    "prenorm=deepgemm graph=capture"
)


@pytest.mark.parametrize(
    ("tokens", "label"),
    [(1, "1"), (2, "2-8"), (8, "2-8"), (16, "9-16"), (17, "17-64"), (1024, "257-1024"), (16384, "4097-16384")]
    + [(16385, "16385+"), (10**7, "16385+")],
)
def test_buckets_split_at_the_trigger_points(tokens, label):
    assert bucket(tokens) == label


def test_a_record_reads_back_as_written_and_junk_does_not():
    record = observed.parse(FUSED_CAPTURE)
    assert record == Record(
        "mhc_fused_post_pre", "tilelang", "2-8", "mhc_fused_post_pre_tilelang", "deepgemm", "capture"
    )
    assert record.line() == FUSED_CAPTURE
    assert observed.parse(f"(Worker pid=7) INFO 12-04 21:57:13 [hooks.py:128] {PRE_TORCH}") == observed.parse(PRE_TORCH)
    for bad in (
        PRE_TORCH.replace("mhc_pre", "mhc_prefix_sum"),  # not an mHC op
        PRE_TORCH.replace("path=torch", "path=cuda"),  # not a path
        PRE_TORCH.replace("kernel=", "kernel=\x1b[31m"),  # control characters in a kernel name
        PRE_TORCH.replace("graph=eager", "graph=replay"),  # a replay records nothing, so never says so
        PRE_TORCH[:40],
    ):
        assert observed.parse(bad) is None, bad


def _server() -> Server:
    server = Server("0.25.0").banner("deepseek-ai/DeepSeek-V4-Pro").started().request()
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang"))  # inferred: tilelang compiled mhc_post
    server.worker(0, vllm("Worker_TP0", 2001, "INFO", "hooks.py:128", PRE_TORCH))
    server.worker(0, vllm("Worker_TP0", 2001, "INFO", "hooks.py:128", POST_TORCH))
    return server


def test_log_reads_the_plugins_records_as_observed_and_certain(tmp_path):
    (tmp_path / "vllm.log").write_text(_server().text())
    done = doctor.run("log", str(tmp_path / "vllm.log"), "--json")
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)
    ops = document["ops"]
    # the plugin saw mhc_post run torch: that outranks the tilelang compile line the log also holds
    assert (ops["mhc_post"]["path"], ops["mhc_post"]["certain"]) == ("torch", True)
    assert (ops["mhc_pre"]["path"], ops["mhc_pre"]["certain"]) == ("torch", True)
    assert ops["hc_head"]["path"] == "unknown"
    kinds = {(e["kind"], tuple(e["ops"])) for e in document["evidence"]}
    assert {("observed", ("mhc_pre",)), ("observed", ("mhc_post",)), ("tilelang-compile", ("mhc_post",))} <= kinds
    text = doctor.run("log", str(tmp_path / "vllm.log")).stdout
    assert "mhc_post: torch: observed by mhcdoctor's vLLM plugin" in text
    assert "observed torch (MHCPreOp.forward_native) for 17-64 token(s)" in text
    markdown = doctor.run("log", str(tmp_path / "vllm.log"), "--markdown").stdout
    assert "observed torch (MHCPostOp.forward_native) for 1 token(s)" in markdown


def test_log_from_sets_the_observation_against_the_prediction(tmp_path):
    """The report predicts aiter for mhc_pre and mhc_post on an MI300X; the plugin saw torch run both."""
    (tmp_path / "vllm.log").write_text(_server().text())
    path = write_json(tmp_path / "report.json", rocm_report())
    done = doctor.run("log", str(tmp_path / "vllm.log"), "--from", str(path), "--json")
    (prediction,) = json.loads(done.stdout)["prediction"]
    rows = {row["op"]: row for row in prediction["ops"]}
    assert (rows["mhc_post"]["predicted"], rows["mhc_post"]["seen"], rows["mhc_post"]["agrees"]) == (
        "aiter",
        "torch",
        False,
    )
    assert "mhcdoctor's vLLM plugin observed torch" in rows["mhc_post"]["text"]
    text = doctor.run("log", str(tmp_path / "vllm.log"), "--from", str(path)).stdout
    assert "mhc_pre: predicted aiter, mhcdoctor's vLLM plugin observed torch" in text
