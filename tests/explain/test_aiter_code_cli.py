"""Every aiter finding follows the installed code, not the version label: `check` on fake MI300X, MI355X and gfx1250
hosts with the real code of ROCm/aiter's tags (tests/data/aiter_code) installed under honest and misleading labels,
its report replayed by `explain --from`, and the what-ifs that state a fix."""

from __future__ import annotations

import json

import doctor
import fakes
import pytest
from fakemachine import Machine, check_json, finding_ids, model

MI300X, MI355X, GFX1250 = 90402, 90500, 120500  # kfd's gfx_target_version
BUG_FINDINGS = {
    "aiter-sqrsum-race", "aiter-big-fuse-sync", "aiter-mhc-post-race", "aiter-rocm-compiler",
    "aiter-mhc-pre-invalid-config", "aiter-sqrsum-unknown", "aiter-fix-unknown",
}  # fmt: skip


def machine_with(tmp_path, target: int, code: str, label: str, vllm: str = "0.25.0") -> Machine:
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, target])
    fakes.rocm(machine.root, "7.2.3-42")
    fakes.aiter(machine.site, version=label, code=code)
    fakes.library(machine.site, "vllm", vllm)
    return machine


@pytest.mark.parametrize(
    ("target", "code", "label", "vllm", "expected"),
    [
        # aiter 0.1.15's RMS guard bug in a tarball build (setuptools_scm's fallback label): told by the code
        (MI300X, "v0.1.15-rc0", "0.1.0", "0.25.0", {"aiter-rocm-compiler"}),
        # a build of main holding every fix of v0.1.16, labelled as main's builds are before v0.1.14-rc0
        (MI300X, "v0.1.16", "0.1.12.post2.dev5", "0.25.0", set()),
        # the racy v0.1.12 code under a fixed release's label
        (MI355X, "v0.1.12", "0.1.16", "0.25.0", {"aiter-sqrsum-race", "aiter-big-fuse-sync", "aiter-mhc-post-race"}),
        # main at #2978 (and up to #3033, the same mHC code): #2963 and #2978 are in, the sqrsum race is not
        (MI355X, "main-at-2978", "0.1.12.post2.dev164", "0.25.0", {"aiter-sqrsum-race"}),
        # the code aiter #4633 was reported on, under an old label: the report's warning, on MI300X only
        (MI300X, "v0.1.18", "0.1.12.post2.dev5", "0.25.0", {"aiter-mhc-pre-invalid-config"}),
        (MI355X, "v0.1.18", "0.1.12.post2.dev5", "0.25.0", set()),
        # vLLM 0.34 sends the ops to aiter on gfx1250 too (mhc_pre only where the model folds no RMSNorm into it)
        (GFX1250, "v0.1.12", "0.1.16", "0.34.0", {"aiter-sqrsum-race", "aiter-big-fuse-sync", "aiter-mhc-post-race"}),
        (GFX1250, "v0.1.20", "0.1.13", "0.34.0", set()),
    ],
)
def test_the_aiter_findings_follow_the_installed_code(tmp_path, target, code, label, vllm, expected):
    doc, proc = check_json(machine_with(tmp_path, target, code, label, vllm), "--fast")
    assert finding_ids(doc) & BUG_FINDINGS == expected
    failing = bool(expected - {"aiter-mhc-pre-invalid-config"})
    assert (model(doc, "deepseek-v4-pro")["verdict"] == "fail") == failing, "a fail only for buggy code"
    for finding in (f for f in doc["findings"] if f["id"] in expected):
        assert "Told by the installed code: " in finding["detail"] and "mhc_kernels.cu:" in finding["detail"]


def test_the_rms_guard_finding_names_the_line_it_read(tmp_path):
    doc, _ = check_json(machine_with(tmp_path, MI300X, "v0.1.15-rc0", "0.1.0"), "--fast")
    finding = next(f for f in doc["findings"] if f["id"] == "aiter-rocm-compiler")
    assert finding["severity"] == "fail"
    assert "aiter_meta/csrc/kernels/mhc_kernels.cu:" in finding["detail"]
    assert "reads lanes outside its guard (aiter #3396, before #3417)" in finding["detail"]
    assert doc["facts"]["aiter"]["fixes"]["big-fuse-rms"] == "absent"


def test_a_replay_keeps_what_the_code_told_and_a_what_if_can_state_a_fix(tmp_path):
    machine = machine_with(tmp_path, MI300X, "v0.1.15-rc0", "0.1.0")
    doc, _ = check_json(machine, "--fast")
    report = tmp_path / "report.json"
    report.write_text(json.dumps(doc))
    replay = doctor.run("explain", "--from", str(report), "--model", "deepseek-v4-pro", "--json", cwd=tmp_path)
    assert replay.returncode == 3
    assert "aiter-rocm-compiler" in {f["id"] for f in json.loads(replay.stdout)["findings"]}
    fixed = doctor.run(
        "explain", "--from", str(report), "--model", "deepseek-v4-pro", "--json", "--aiter-fix",
        "big-fuse-rms=present", cwd=tmp_path,
    )  # fmt: skip
    explained = json.loads(fixed.stdout)
    assert {f["id"] for f in explained["findings"]} & BUG_FINDINGS == set()
    assert explained["facts"]["aiter"]["fixes"]["big-fuse-rms"] == "present"


def test_an_old_report_without_the_fix_states_loads_and_is_judged_by_its_version(tmp_path):
    doc, _ = check_json(machine_with(tmp_path, MI300X, "v0.1.15-rc0", "0.1.15"), "--fast")
    for key in ("fixes", "fix_evidence"):
        del doc["facts"]["aiter"][key]
    report = tmp_path / "old.json"
    report.write_text(json.dumps(doc))
    replay = doctor.run("explain", "--from", str(report), "--model", "deepseek-v4-pro", "--json", cwd=tmp_path)
    finding = next(f for f in json.loads(replay.stdout)["findings"] if f["id"] == "aiter-rocm-compiler")
    assert "Judged by the version label (the code at aiter's tag v0.1.15)" in finding["detail"]


def test_fixed_code_given_as_such_under_a_main_build_label_does_not_fail(sysroot_env):
    proc = doctor.run(
        "explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.12.post2.dev5",
        "--aiter-fix", "present", "--tilelang", "none", "--hidden", "7168", "--vllm", "0.25.0",
        env=sysroot_env(),
    )  # fmt: skip
    doc = proc.json()
    assert (proc.returncode, doc["verdict"], doc["findings"]) == (0, "ok", [])
    assert doc["facts"]["aiter"]["fixes"]["post-race"] == "present", "#2963 is a git ancestor of #3033 on main"


def test_without_the_statement_a_main_build_label_is_unknown_not_failed(sysroot_env):
    proc = doctor.run(
        "explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.12.post2.dev5",
        "--tilelang", "none", "--hidden", "7168", "--vllm", "0.25.0",
        env=sysroot_env(),
    )  # fmt: skip
    doc = proc.json()
    assert proc.returncode == 1
    assert {f["id"] for f in doc["findings"]} == {"aiter-sqrsum-unknown", "aiter-fix-unknown"}


@pytest.mark.parametrize("value", ["maybe", "sqrsum=maybe", "big-fuse=present", "sqrsum=present,\x1b[31m=absent"])
def test_a_bad_aiter_fix_is_one_line_and_exit_2(sysroot_env, value):
    args = ("explain", "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.16", "--aiter-fix", value)
    proc = doctor.run(*args, env=sysroot_env())
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--aiter-fix takes" in proc.stderr
    assert "\x1b" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("aiter", "norm_args", "too_old"),
    [
        ("0.1.14.post1", False, True),  # the tag's aiter/ops/mhc.py: no norm arguments
        ("0.1.14rc1.dev3", None, False),  # a build of main between v0.1.14-rc0 and v0.1.16: #3396 may be in it
        ("0.1.17.dev4", True, False),  # past v0.1.16, which has them: every later build of main has them
    ],
)
def test_the_api_by_version_follows_the_code_at_the_tags_and_git_ancestry(sysroot_env, aiter, norm_args, too_old):
    proc = doctor.run(
        "explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--aiter", aiter, "--aiter-fix", "present",
        "--tilelang", "none", "--model", "deepseek-v4-pro", "--vllm", "0.29.0",
        env=sysroot_env(),
    )  # fmt: skip
    doc = proc.json()
    assert doc["facts"]["aiter"]["mhc_pre_norm_args"] is norm_args
    assert ("aiter-api-too-old" in {f["id"] for f in doc["findings"]}) is too_old


def test_diff_shows_two_nodes_with_one_aiter_label_holding_different_code(tmp_path):
    reports = []
    for code in ("v0.1.15-rc0", "v0.1.16"):
        (tmp_path / code).mkdir()
        doc, _ = check_json(machine_with(tmp_path / code, MI300X, code, "0.1.15"), "--fast")
        reports.append(tmp_path / f"{code}.json")
        reports[-1].write_text(json.dumps(doc))
    proc = doctor.run("diff", *map(str, reports), cwd=tmp_path)
    facts = proc.stdout.split("[facts]")[1].splitlines()
    assert facts[1].strip() == "aiter.fixes", "the first fact that differs: same version, other code"
    assert "'big-fuse-rms': 'absent'" in facts[2] and "'big-fuse-rms': 'present'" in facts[3]


def test_a_built_module_mhc_so_is_named_as_what_the_code_cannot_tell(tmp_path):
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, MI300X])
    fakes.aiter(machine.site, version="0.1.0", code="v0.1.15-rc0", module_mhc_so=tmp_path / "home" / ".aiter" / "jit")
    fakes.library(machine.site, "vllm", "0.25.0")
    env = {**machine.env(), "HOME": str(tmp_path / "home")}
    proc = doctor.run("check", "--python", str(machine.python), "--fast", "--json", env=env, cwd=tmp_path)
    detail = next(f for f in json.loads(proc.stdout)["findings"] if f["id"] == "aiter-rocm-compiler")["detail"]
    assert detail.endswith(
        f"aiter loads the built {tmp_path}/home/.aiter/jit/module_mhc.so, whose source cannot be read back from it."
    )


def test_aiter_fix_states_an_api_feature_too(sysroot_env):
    args = ("explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.16", "--tilelang", "none")
    args += ("--model", "deepseek-v4-pro", "--vllm", "0.29.0")
    assert "aiter-api-too-old" not in {f["id"] for f in doctor.run(*args, env=sysroot_env()).json()["findings"]}
    proc = doctor.run(*args, "--aiter-fix", "fused-op=absent", env=sysroot_env())
    assert proc.json()["facts"]["aiter"]["has_fused_post_pre"] is False
    assert "aiter-api-too-old" in {f["id"] for f in proc.json()["findings"]} and proc.returncode == 3
