"""The Markdown report: what a support engineer sees first in a GitHub issue, and what is folded away."""

from __future__ import annotations

from triage_docs import rocm_report, variant

from mhcdoctor.render.markdown import GITHUB_LIMIT, fingerprint, render_markdown


def test_the_first_line_is_the_whole_story():
    first = render_markdown(rocm_report()).splitlines()[0]
    for fact in (
        "FAIL",
        "rocm gfx942 ×8",
        "ROCm 7.0.2",
        "torch 2.9.0+rocm7.0",
        "aiter 0.1.13 (sqrsum fix absent)",
        "tilelang 0.1.9",
        "vLLM 0.25.0",
        "pre aiter, post aiter, fused tilelang, head tilelang",
    ):
        assert fact in first


def test_the_aiter_row_shows_each_fix_the_probe_read():
    fixes = {"big-fuse-sync": "present", "post-race": "unknown", "big-fuse-rms": "absent", "invalid-config": "present"}
    rows = render_markdown(variant(rocm_report(), **{"facts.aiter.fixes": fixes})).splitlines()
    assert "| aiter | 0.1.13 (fixes: 2 of 5 present, sqrsum, big-fuse-rms absent, post-race unknown) |" in rows
    assert "aiter 0.1.13 (sqrsum fix absent)" in rows[0]  # line 1 keeps the fix vLLM's selection hinges on
    old = render_markdown(rocm_report()).splitlines()  # a report from before the probe read each fix
    assert "| aiter | 0.1.13 (fixes: 0 of 1 present, sqrsum absent, the others not in this report) |" in old


def test_findings_and_fixes_come_before_the_folded_details():
    text = render_markdown(variant(rocm_report(), **{"findings.0.fix": "Install aiter 0.1.14 or newer: `pip install`"}))
    assert (
        text.index("`aiter-sqrsum-race`")
        < text.index("**Fix:** Install aiter 0.1.14 or newer")
        < text.index("<details>")
    )


def test_the_full_check_with_probe_evidence_is_folded():
    text = render_markdown(rocm_report())
    folded = text[text.index("<details><summary>Full check</summary>") :]
    assert "gfx_target_version 90402" in folded and "</details>" in folded


def test_each_models_decision_trace_is_folded_when_a_renderer_is_given():
    text = render_markdown(rocm_report(), trace=lambda model: f"trace of {model['model']['name']}")
    assert "<summary>Decision trace: deepseek-v4-flash</summary>" in text
    assert "trace of deepseek-v4-flash" in text


def test_models_that_take_different_paths_are_shown_apart():
    first = render_markdown(variant(rocm_report(), **{"models.1.ops.mhc_pre.path": "torch"})).splitlines()[0]
    assert "deepseek-v4-pro: pre aiter" in first and "deepseek-v4-flash: pre torch" in first


def test_a_mixed_host_shows_each_architecture_and_every_device():
    mixed = variant(rocm_report(), **{f"facts.devices.{i}.arch": "gfx90a" for i in range(4, 8)})
    text = render_markdown(mixed)
    assert "rocm gfx942 ×4 + gfx90a ×4" in text.splitlines()[0]
    assert "| 7 | amd | gfx90a | AMD Instinct MI300X | 192 GiB | 6.10.5 |" in text


def test_a_huge_report_still_fits_in_a_github_issue():
    huge = variant(rocm_report(), **{"probes.1.evidence": ["stderr: " + "noise " * 20_000]})
    text = render_markdown(huge)
    assert len(text) <= GITHUB_LIMIT
    assert "characters cut to fit a GitHub issue" in text


def test_backticks_in_evidence_cannot_close_the_folded_block():
    text = render_markdown(variant(rocm_report(), **{"probes.0.evidence": ["```\n# injected heading"]}))
    folded = text[text.index("<summary>Full check</summary>") :]
    assert "\n````text\n" in folded


def test_the_fingerprint_ignores_identity_but_not_the_stack():
    moved = variant(rocm_report(), **{"host.hostname": "elsewhere", "created": "2027-01-01T00:00:00Z"})
    assert fingerprint(moved) == fingerprint(rocm_report())
    assert fingerprint(variant(rocm_report(), **{"facts.aiter.version": "0.1.16"})) != fingerprint(rocm_report())


def test_a_fix_that_is_a_command_is_code_and_prose_stays_prose():
    command = variant(rocm_report(), **{"findings.0.fix": "pip install -U 'vllm>=0.30'  # then restart"})
    assert "**Fix:** `pip install -U 'vllm>=0.30'  # then restart`" in render_markdown(command)
    prose = variant(rocm_report(), **{"findings.0.fix": "Build aiter v0.1.14 or later"})
    assert "**Fix:** Build aiter v0.1.14 or later" in render_markdown(prose)


def test_verify_results_are_folded_with_the_verify_table():
    from mhcdoctor.models import builtin
    from mhcdoctor.verify import run_verify

    verify = run_verify(
        builtin("deepseek-v4-flash"), paths=["aiter"], device="cpu", tokens=[1], progress=lambda _: None
    )
    text = render_markdown(variant(rocm_report(), verify=verify))
    folded = text[text.index("<summary>Verify</summary>") :]
    assert "aiter is not installed" in folded.split("</details>")[0]


def test_the_folded_report_json_replays_and_validates(tmp_path):
    import json
    from importlib.resources import files

    import jsonschema

    from mhcdoctor.reportfile import load_report

    saved = tmp_path / "issue.md"
    saved.write_text("My vLLM is broken, report below.\r\n\r\n" + render_markdown(rocm_report()).replace("\n", "\r\n"))
    replayed = load_report(saved)
    schema = json.loads((files("mhcdoctor") / "schemas" / "check.schema.json").read_text())
    jsonschema.validate(replayed, schema)
    assert (replayed["facts"], replayed["verdict"]) == (rocm_report()["facts"], "fail")
