"""diff_reports: the planted differences, most important first, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest
from triage_docs import rocm_report, variant

from mhcdoctor.diffing import diff_reports, to_document
from mhcdoctor.render.diff_text import render_text
from mhcdoctor.reportfile import validate_report


def _keys(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str]]:
    """The differences `diff` finds: both reports through the reader's checks first, as the command reads them."""
    return [(d.section, d.key) for d in diff_reports(validate_report(a, "a"), validate_report(b, "b"))]


def test_two_runs_on_one_machine_do_not_differ():
    later = variant(
        rocm_report(),
        **{"created": "2026-12-03T09:30:00Z", "seconds": 9.9, "probes.0.seconds": 0.5, "host.cwd": "/tmp"},
    )
    assert diff_reports(rocm_report(), later) == []


def test_planted_differences_come_back_most_important_first_and_alone():
    fixed = variant(
        rocm_report(),
        **{
            "facts.aiter.version": "0.1.16",
            "facts.aiter.sqrsum_fix": "present",
            "models.0.verdict": "ok",
            "models.0.findings": [],
            "models.1.ops.mhc_pre.path": "torch",
            "findings": [],
            "verdict": "ok",
            "env.AITER_LOG_MORE": "1",
        },
    )
    assert _keys(rocm_report(), fixed) == [
        ("verdict", "verdict"),
        ("ops", "deepseek-v4-pro: verdict"),
        ("ops", "deepseek-v4-flash: mhc_pre"),
        ("findings", "aiter-sqrsum-race"),
        ("facts", "aiter.version"),
        ("facts", "aiter.sqrsum_fix"),
        ("env", "AITER_LOG_MORE"),
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"facts.vllm.version": "0.29.0"}, ("facts", "vllm.version")),
        ({"facts.tilelang.imports": False}, ("facts", "tilelang.imports")),
        ({"facts.devices.3.arch": "gfx90a"}, ("devices", "gpu3.arch")),
        ({"facts.devices.5.driver": "6.8.1"}, ("devices", "gpu5.driver")),
        ({"probes.1.status": "timeout"}, ("probes", "aiter.import")),
        ({"models.1.fused_post_pre": True}, ("ops", "deepseek-v4-flash: fused_post_pre")),
        ({"env.HIP_VISIBLE_DEVICES": "0"}, ("env", "HIP_VISIBLE_DEVICES")),
    ],
)
def test_one_planted_difference_is_the_only_one_found(change, expected):
    assert _keys(rocm_report(), variant(rocm_report(), **change)) == [expected]


def test_a_missing_gpu_is_one_difference_per_device_and_the_count():
    fewer = variant(rocm_report(), **{"facts.devices": rocm_report()["facts"]["devices"][:6]})
    assert _keys(rocm_report(), fewer) == [("devices", "count"), ("devices", "gpu6"), ("devices", "gpu7")]


def test_a_finding_present_on_one_side_shows_its_severity_and_absence():
    clean = variant(rocm_report(), findings=[])
    (only,) = diff_reports(rocm_report(), clean)
    assert (only.key, only.a, only.b) == ("aiter-sqrsum-race", "fail", None)


def test_text_lists_each_difference_with_both_sides():
    newer = variant(rocm_report(), **{"facts.aiter.version": "0.1.16"})
    text = render_text(to_document(diff_reports(rocm_report(), newer), rocm_report(), newer, ("a.json", "b.json")))
    assert "aiter.version  A: 0.1.13  B: 0.1.16" in text
    assert text.splitlines()[0].startswith("A: a.json (gpunode-planted17, 2026-12-02T12:00:00Z, full)")


def test_verify_results_are_compared_row_by_row():
    rows = [{"path": "aiter", "op": "mhc_pre", "tokens": 80, "hidden": 7168, "device": "cuda:0", "status": "pass"}]
    passed = variant(rocm_report(), verify={"verdict": "ok", "results": rows})
    failed = variant(passed, **{"verify.results.0.status": "fail", "verify.verdict": "fail"})
    assert _keys(passed, failed) == [
        ("verify", "verify verdict"),
        ("verify", "aiter mhc_pre tokens=80 hidden=7168 cuda:0"),
    ]


def test_reports_from_different_modes_or_versions_carry_a_note_but_no_difference():
    other = variant(rocm_report(), mode="fast", mhcdoctor_version="0.2.0")
    text = render_text(to_document(diff_reports(rocm_report(), other), rocm_report(), other, ("a", "b")))
    assert "note: A was a full check and B a fast one: facts only a full check probes" in text
    assert "note: made by mhcdoctor 0.1.0 and 0.2.0" in text
    assert text.splitlines()[-1].startswith("no differences")


def test_verify_on_one_side_only_is_one_difference_not_every_row():
    rows = [
        {"path": "aiter", "op": op, "tokens": 80, "hidden": 7168, "device": "cuda:0", "status": "pass"} for op in "ab"
    ]
    verified = variant(rocm_report(), verify={"verdict": "ok", "results": rows})
    assert [(d.key, d.a, d.b) for d in diff_reports(verified, rocm_report())] == [("verify verdict", "ok", None)]


def test_reports_from_two_python_versions_differ_in_the_python_version(tmp_path):
    """The interpreter decides which wheels work (tile-kernels 2.x needs Python 3.12+): never "no differences"."""
    import doctor
    from triage_docs import write_json

    a = write_json(tmp_path / "a.json", rocm_report())
    b = write_json(tmp_path / "b.json", variant(rocm_report(), **{"host.python_version": "3.11.7"}))
    proc = doctor.run("diff", str(a), str(b))
    assert proc.returncode == 1
    assert "  [python]\n    python_version  A: 3.12.3  B: 3.11.7\n" in proc.stdout


def test_a_raw_report_and_a_redacted_one_of_the_same_machine_do_not_differ_by_their_home(tmp_path):
    import doctor
    from triage_docs import HOME, HOST, USER, write_json

    from mhcdoctor.redact import Identity, redact

    raw, _ = redact(rocm_report(), Identity(), identities=False)  # --no-redact: names kept, secrets masked
    shared, _ = redact(rocm_report(), Identity(homes=(HOME,), users=(USER,), hosts=(HOST,)))
    assert shared["env"]["PATH"].startswith("~/") and raw["env"]["PATH"].startswith(HOME)
    a, b = write_json(tmp_path / "raw.json", raw), write_json(tmp_path / "shared.json", shared)
    proc = doctor.run("diff", str(a), str(b))
    assert (proc.returncode, proc.stdout.splitlines()[-1]) == (
        0,
        "no differences in verdict, paths, findings, verify, facts, devices, probes or environment",
    )
    moved = write_json(tmp_path / "moved.json", variant(shared, **{"facts.torch.location": "~/other/lib"}))
    assert "torch.location" in doctor.run("diff", str(a), str(moved)).stdout  # a real difference still shows


def test_a_home_seen_only_inside_a_search_path_is_no_difference():
    """The redacted side's only `~` is PATH's second entry: the home is read from that entry, not left a difference."""
    from triage_docs import HOME

    raw = variant(rocm_report(), **{"env.PATH": f"/usr/bin:{HOME}/.local/bin", "env.AITER_JIT_DIR": "/opt/jit"})
    shared = variant(raw, **{"env.PATH": "/usr/bin:~/.local/bin"})
    assert _keys(raw, shared) == []
    assert _keys(raw, variant(shared, **{"env.PATH": "/usr/sbin:~/.local/bin"})) == [("env", "PATH")]
