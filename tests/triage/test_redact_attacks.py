"""Attacks on redaction: secrets in every form and at the cut edge, --no-redact, GPU UUIDs, and user or host names
that are also the doctor's own words. Each asserts on what a user would share (the JSON and the Markdown)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from triage_docs import rocm_report, variant

from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.redact import DISPLAY_CHARS, MASK, Identity, redact
from mhcdoctor.render.markdown import render_markdown

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY0123"  # 44 characters


def _shared(doc: dict, *, identities: bool = True) -> str:
    out: Any = redact(doc, Identity(), identities=identities)[0]  # a check/1 document, as JSON
    return json.dumps(out) + render_markdown(out)


def _with_evidence(*lines: str) -> dict:
    return variant(rocm_report(), **{"probes.0.evidence": list(lines)})


def test_a_secret_split_by_the_display_cut_ships_in_no_part(monkeypatch: pytest.MonkeyPatch):
    """A probe keeps 64 KiB of output; the cut to DISPLAY_CHARS comes after masking, so whichever side of the cut
    a secret straddles, no 8 characters of it reach the shared report."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    for edge in (DISPLAY_CHARS - 30, DISPLAY_CHARS - 10, 200):
        for line in ("x" * edge + AWS_SECRET + "y" * 300, "y" * 300 + AWS_SECRET + "x" * edge):
            probe = ProbeResult("aiter.import", "error", evidence=["stderr: " + line]).to_dict()
            doc = variant(rocm_report(), **{"probes.0": probe})
            out: Any = redact(doc, Identity.of_this_machine())[0]
            text = json.dumps(out) + render_markdown(out)
            assert not any(AWS_SECRET[i : i + 8] in text for i in range(len(AWS_SECRET) - 8)), edge
            assert len(out["probes"][0]["evidence"][0]) <= DISPLAY_CHARS + 1


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("Authorization: Bearer abcdefghij0123456789", "abcdefghij0123456789"),
        ("headers={'Authorization': 'Bearer abcdefghij0123456789'}", "abcdefghij0123456789"),
        ('{"authorization": "token abcdefghij0123456789"}', "abcdefghij0123456789"),
        ("retrying with Bearer abcdefghij0123456789", "abcdefghij0123456789"),
        ("pip from https://abcdefghij0123456789@pypi.corp.example/simple", "abcdefghij0123456789"),
        ("https://bob:p@ss/w0rd!x@github.com/ROCm/aiter", "p@ss/w0rd!x"),
        ("https://bob:p@ss/w0rd!x@github.com/ROCm/aiter", "w0rd!x"),
        ("GET /x?access_token=abcdefghij0123456789&b=1", "abcdefghij0123456789"),
        ("GET /x?key=AbCdEfGh12345678", "AbCdEfGh12345678"),
        ("blob?sv=2020&sig=AbCdEfGh12345678%3D", "AbCdEfGh12345678"),
        ("s3?X-Amz-Signature=abcdef0123456789abcdef&X-Amz-Credential=AKIAEXAMPLE/x", "abcdef0123456789abcdef"),
        ("oauth?client_secret=AbCdEfGh12345678", "AbCdEfGh12345678"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
        ("got hf_abcdefghijklmnopqrstu", "hf_abcdefghijklmnopqrstu"),
        ("got ghp_abcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnopqrstuvwx"),
        ("got github_pat_11ABCDEFG0abcdefghijkl_xyz", "github_pat_11ABCDEFG0abcdefghijkl_xyz"),
        ("got glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789"),
        ("got npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("got pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoaWprbG1ub3A", "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoaWprbG1ub3A"),
        ("got sk-ant-api03-abcdefghijklmnopqrst", "sk-ant-api03-abcdefghijklmnopqrst"),
        ("got AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdefghijklmnopqrstu"),
        ("got xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
        ("DB_PWD=hunter2hunter2", "hunter2hunter2"),
        ("GPG_PASSPHRASE=hunter2hunter2", "hunter2hunter2"),
        ("REGISTRY_CREDS=hunter2hunter2", "hunter2hunter2"),
    ],
)
def test_every_form_of_secret_is_masked(line: str, secret: str):
    text = _shared(_with_evidence(line))
    assert secret not in text
    assert MASK in text


@pytest.mark.parametrize("name", ["DB_PWD", "GPG_PASSPHRASE", "REGISTRY_CREDS", "HIP_AUTH_SIGNATURE"])
def test_secret_looking_variable_names_are_masked(name: str):
    env = {"HIP_" + name if not name.startswith("HIP_") else name: "hunter2hunter2"}
    out, _ = redact(variant(rocm_report(), env=env), Identity())
    assert list(out["env"].values()) == [MASK]


def test_no_redact_keeps_names_but_never_secrets_or_gpu_uuids():
    uuid = "GPU-12345678-abcd-ef01-2345-6789abcdef01"
    doc = _with_evidence("Authorization: Bearer abcdefghij0123456789", f"nvidia uuid {uuid}")
    out, _ = redact(doc, Identity(), identities=False)
    text = json.dumps(out)
    assert out["host"]["hostname"] == doc["host"]["hostname"]
    assert "abcdefghij0123456789" not in text and out["env"]["VLLM_API_KEY"] == MASK
    assert uuid not in text and "gpu-" in text


def test_gpu_uuids_become_pseudonyms_that_keep_devices_apart():
    a, b = "GPU-12345678-abcd-ef01-2345-6789abcdef01", "GPU-87654321-abcd-ef01-2345-6789abcdef01"
    out, _ = redact(_with_evidence(a, b, a), Identity())
    first, second, again = out["probes"][0]["evidence"]
    assert first == again != second and a not in first and first.startswith("gpu-")


@pytest.mark.parametrize(
    ("user", "host"), [("vllm", "vllm-0"), ("aiter", "mi300x"), ("torch", "rocm-7"), ("pip", "fail")]
)
def test_a_user_or_host_named_like_the_doctors_words_does_not_corrupt_the_report(user: str, host: str):
    race = rocm_report()["findings"][0]
    fix = "pip install -U vllm aiter torch on the MI300X (mi300x) rocm-7 fail"
    doc = variant(rocm_report(), **{"host.user": user, "host.hostname": host})
    doc["findings"][0]["fix"] = fix
    doc["probes"][0]["evidence"] = [f"ssh {user}@{host}: failed", f"http://{host}:8000/v1", f"/home/{user}/x"]
    out, _ = redact(doc, Identity())
    assert out["findings"][0]["fix"] == fix
    assert out["findings"][0]["id"] == race["id"] and out["models"][0]["rules"] == doc["models"][0]["rules"]
    evidence = " ".join(out["probes"][0]["evidence"])
    assert f"{user}@" not in evidence and f"@{host}" not in evidence and f"//{host}" not in evidence
    assert "~/x" in evidence
    assert out["host"]["user"].startswith("user-") and out["host"]["hostname"].startswith("host-")
