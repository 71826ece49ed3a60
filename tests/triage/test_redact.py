"""Redaction of a check/1 document: what a user shares carries no identity and no secret, and still replays."""

from __future__ import annotations

import json
import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st
from triage_docs import FQDN, HOME, HOST, PLANTED, SECRET_KEY, USER, rocm_report, variant

from mhcdoctor.environment import relevant_env
from mhcdoctor.facts import Facts
from mhcdoctor.redact import (
    GENERIC_USERS,
    MASK,
    PROTECTED_WORDS,
    Identity,
    is_doctor_word,
    pseudonym,
    redact,
)


def _shared(doc: dict, identity: Identity | None = None) -> str:
    out, _ = redact(doc, identity or Identity())
    return json.dumps(out)


def test_planted_home_user_host_and_secrets_are_gone_from_every_string(planted_env):
    doc = rocm_report()
    text = _shared(doc, Identity.of_this_machine())
    leaked = [p for p in PLANTED if p.lower() in text.lower()]
    assert leaked == []


def test_the_home_folder_is_shown_as_tilde(planted_env):
    out, _ = redact(rocm_report(), Identity.of_this_machine())
    assert (out["host"]["python"], out["host"]["cwd"]) == ("~/venvs/vllm/bin/python", "~/work")


def test_home_is_found_from_the_user_name_when_redacting_another_machines_report():
    out, _ = redact(rocm_report(), Identity())
    assert out["facts"]["aiter"]["location"] == "~/src/aiter/aiter"


def test_user_and_host_become_hashes_salted_per_report():
    salt = b"one report"
    out, _ = redact(rocm_report(), Identity(), salt=salt)
    assert out["host"]["user"] == pseudonym("user", USER, salt)
    assert out["host"]["hostname"] == pseudonym("host", HOST, salt)
    assert re.fullmatch(r"user-[0-9a-f]{12}", out["host"]["user"])
    assert pseudonym("user", "someone-else", salt) != pseudonym("user", USER, salt)


def test_a_pseudonym_cannot_be_found_by_hashing_guessed_names():
    """The salt is random per report and stored nowhere: two reports of one machine give different pseudonyms, and
    hashing the true name without the salt does not give the report's pseudonym."""
    first, _ = redact(rocm_report(), Identity())
    second, _ = redact(rocm_report(), Identity())
    assert first["host"]["hostname"] != second["host"]["hostname"]
    assert first["host"]["hostname"] != pseudonym("host", HOST, b"")


def test_a_fully_qualified_host_name_loses_its_domain_too():
    out, _ = redact(variant(rocm_report(), **{"probes.0.evidence": [f"ssh {FQDN} failed"]}), Identity(), salt=b"s")
    assert f"ssh {pseudonym('host', HOST, b's')} failed" in json.dumps(out)


def test_only_allowlisted_environment_variables_are_kept():
    env = {
        "HIP_VISIBLE_DEVICES": "0",
        "CUDA_VISIBLE_DEVICES": "1",
        "GPU_VISIBLE_DEVICES": "2",
        "AITER_LOG_MORE": "1",
        "VLLM_USE_V1": "1",
        "PYTORCH_ROCM_ARCH": "gfx942",
        "HOME": HOME,
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "AWS_SECRET_ACCESS_KEY": "abc123abc123",
        "MY_PROJECT": "x",
    }
    out, record = redact(variant(rocm_report(), env=env), Identity())
    kept = ["AITER_LOG_MORE", "CUDA_VISIBLE_DEVICES", "GPU_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"]
    assert sorted(out["env"]) == kept + ["PYTORCH_ROCM_ARCH", "VLLM_USE_V1"]
    assert record.env_dropped == 4


def test_relevant_env_is_the_same_allowlist_check_collects_with():
    environ = {
        "ROCR_VISIBLE_DEVICES": "0",
        "LD_LIBRARY_PATH": "/opt/rocm/lib",
        "EDITOR": "vi",
        "TRITON_HOME": "/t",
    }
    assert relevant_env(environ) == {
        "LD_LIBRARY_PATH": "/opt/rocm/lib",
        "ROCR_VISIBLE_DEVICES": "0",
        "TRITON_HOME": "/t",
    }


def test_an_allowlisted_name_that_looks_like_a_secret_is_masked_and_recorded():
    doc = variant(rocm_report(), **{"probes.0.evidence": [f"server started with key {SECRET_KEY}"]})
    out, record = redact(doc, Identity())
    assert out["env"]["VLLM_API_KEY"] == MASK
    assert SECRET_KEY not in json.dumps(out)
    assert record.to_dict()["env"]["masked"] == ["VLLM_API_KEY"]


def test_tokens_in_free_text_are_masked_by_their_shape():
    lines = [
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz",
        "git clone https://bob:pa55word@github.com/ROCm/aiter",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload",
        "export OPENAI_API_KEY=sk-proj-aaaaaaaaaaaaaaaaaaaaaaaa",
        "password: hunter22",
    ]
    text = _shared(variant(rocm_report(), **{"probes.0.evidence": lines}))
    for secret in ("hf_abcdefghijklmnop", "pa55word", "eyJhbGciOiJIUzI1NiJ9", "sk-proj-aaaa", "hunter22"):
        assert secret not in text
    assert "https://[masked]@github.com/ROCm/aiter" in text


def test_evidence_that_only_mentions_keys_is_kept():
    lines = ["KeyError: 'libamd_smi'", "jit/optCompilerConfig.json has a module_mhc key", "tokens=4096 rows"]
    out, _ = redact(variant(rocm_report(), **{"probes.0.evidence": lines}), Identity())
    assert out["probes"][0]["evidence"] == lines


def test_secret_values_of_this_machines_environment_are_masked_wherever_they_appear(monkeypatch):
    monkeypatch.setenv("INTERNAL_REGISTRY_PASSWORD", "correct-horse-battery")
    doc = variant(rocm_report(), **{"probes.1.evidence": ["pip config: index=correct-horse-battery/simple"]})
    assert "correct-horse-battery" not in _shared(doc, Identity.of_this_machine())


def test_a_user_named_like_a_platform_does_not_corrupt_the_facts():
    doc = variant(rocm_report(), **{"host.user": "rocm"})
    out, _ = redact(doc, Identity(), salt=b"s")
    assert out["facts"]["platform"] == "rocm"
    assert out["host"]["user"] == pseudonym("user", "rocm", b"s")
    assert Facts.from_dict(out["facts"]).platform == "rocm"


def test_a_user_named_user_keeps_the_documents_keys():
    out, _ = redact(variant(rocm_report(), **{"host.user": "user"}), Identity())
    assert sorted(out["host"]) == sorted(rocm_report()["host"])


def test_redacted_facts_still_load_for_explain_from():
    out, _ = redact(rocm_report(), Identity())
    facts = Facts.from_dict(out["facts"])
    assert (facts.arch, facts.aiter.version, facts.aiter.sqrsum_fix) == ("gfx942", "0.1.13", "absent")


def _values(obj: object) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _values(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _values(v)]
    return []


_NAMES = st.text(string.ascii_lowercase + string.digits + "-", min_size=3, max_size=14).filter(
    lambda n: (
        n[0].isalpha()
        and n[-1].isalnum()
        and n not in PROTECTED_WORDS | GENERIC_USERS
        and not is_doctor_word(n)  # replaced only where it stands as a name: test_redact_attacks.py
        and "user" not in n
        and "host" not in n
        and "masked" not in n  # the mask's own word ([masked]): Hypothesis draws it from redact.py's literals
    )
)
_NOISE = st.text(string.ascii_letters + string.digits + " /:=@\"'._-\n", max_size=30)


@settings(max_examples=60, deadline=None)
@given(user=_NAMES, host=_NAMES, before=_NOISE, after=_NOISE)
def test_any_user_or_host_name_vanishes_wherever_it_is_planted(user, host, before, after):
    doc = variant(
        rocm_report(),
        **{
            "host.user": user,
            "host.hostname": host,
            "probes.1.evidence": [f"{before} {user}@{host}:/home/{user}/x {after}"],
            "facts.vllm.import_error": f"{after}/home/{user}/lib {host}.lan{before}",
        },
    )
    out, _ = redact(doc, Identity())
    text = "\n".join(_values(out))
    # As a name, not as part of another word ("mult" in "hc_mult"); keys like "env" are the program's own names.
    assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(user)}(?![A-Za-z0-9])", text, re.IGNORECASE)
    assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])", text, re.IGNORECASE)


def test_a_secret_variable_holding_a_path_does_not_mask_that_path_everywhere(monkeypatch):
    monkeypatch.setenv("XAUTHORITY", "/opt/rocm")  # the name contains AUTH; its value is only a file name
    out, _ = redact(rocm_report(), Identity.of_this_machine())
    assert out["facts"]["hipcc"]["path"] == "/opt/rocm/bin/hipcc"


def test_a_service_accounts_home_in_tmp_is_not_replaced(monkeypatch):
    monkeypatch.setenv("HOME", "/tmp")
    identity = Identity.of_this_machine()
    assert "/tmp" not in identity.homes and "tmp" not in identity.users


def test_the_user_under_home_is_known_even_without_user_variables(monkeypatch):
    for name in ("USER", "LOGNAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/home/quietuser")
    assert "quietuser" in Identity.of_this_machine().users


def test_a_secret_in_json_text_is_masked():
    text = _shared(variant(rocm_report(), **{"probes.0.evidence": ['config: {"VLLM_API_KEY": "abcdef123456"}']}))
    assert "abcdef123456" not in text and '\\"VLLM_API_KEY\\": \\"[masked]' in text


def test_a_folder_named_like_the_home_inside_another_path_is_kept():
    doc = variant(rocm_report(), **{"host.user": "root", "facts.hipcc.path": "/srv/root/opt/rocm/bin/hipcc"})
    out, _ = redact(variant(doc, **{"host.cwd": "/root/work"}), Identity())
    assert (out["facts"]["hipcc"]["path"], out["host"]["cwd"]) == ("/srv/root/opt/rocm/bin/hipcc", "~/work")
