"""Findings that no other test makes fire, made to fire through the CLI, with what the user sees."""

from __future__ import annotations

import json

import doctor


def explain(*args: str) -> tuple[int, dict, str]:
    base = ["explain", "--platform", "cuda", *args]
    doc = json.loads(doctor.run(*base, "--json").stdout)
    text = doctor.run(*base)
    return text.returncode, doc, text.stdout + text.stderr


def ids(doc: dict) -> dict[str, str]:
    return {f["id"]: f["severity"] for f in doc["findings"]}


def test_a_vllm_newer_than_the_rules_is_an_info_finding_naming_the_rules_applied() -> None:
    _, doc, text = explain("--vllm", "0.99.0", "--model", "deepseek-v4-pro")
    assert ids(doc)["vllm-newer-than-rules"] == "info"
    assert "vLLM 0.99.0 is newer than 0.34.0; the vllm-0.30-0.34 rules are applied" in text


def test_deepseek_v41_on_a_vllm_that_has_its_model_is_approximate() -> None:
    _, doc, text = explain("--vllm", "0.30.0", "--model", "deepseek-v4.1-flash")
    assert ids(doc)["model-v41-approximate"] == "info" and "model-v41-unsupported" not in ids(doc)
    assert "vLLM serves DeepSeek-V4.1 with models/deepseek_v41" in text


def test_deepseek_v41_on_a_vllm_older_than_its_model_is_a_fail() -> None:
    code, doc, text = explain("--vllm", "0.25.0", "--model", "deepseek-v4.1-flash")
    assert ids(doc)["model-v41-unsupported"] == "fail" and "model-v41-approximate" not in ids(doc)
    assert code == 3 and "model-v41-unsupported" in text
