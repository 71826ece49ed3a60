"""`mhcdoctor explain` and `mhcdoctor models` as a user runs them: real subprocesses, real probes, real files."""

from __future__ import annotations

import json
from importlib import resources

import doctor
import jsonschema
import pytest

ROCM_030 = ["--platform", "rocm", "--arch", "gfx950", "--tilelang", "0.1.12", "--vllm", "0.30.0"]


def schema() -> dict:
    return json.loads(resources.files("mhcdoctor").joinpath("schemas/explain.schema.json").read_text())


def test_explain_on_a_machine_without_gpu_says_no_gpu(sysroot_env):
    result = doctor.run("explain", "--hidden", "7168", env=sysroot_env())
    assert result.returncode == 3
    assert "no-gpu" in result.stdout
    assert "verdict: fail" in result.stdout


def test_text_gives_the_answer_first_then_the_trace_then_findings(sysroot_env):
    rocm_031 = [*ROCM_030[:-1], "0.31.0"]  # 0.30's tilelang pre with the norm folded is wrong on gfx950 (a fail)
    result = doctor.run("explain", "--model", "deepseek-v4-pro", *rocm_031, "--aiter", "0.1.14", env=sysroot_env())
    lines = result.stdout.splitlines()
    answer = next(i for i, line in enumerate(lines) if line.strip().split()[1:2] == ["mhc_pre"])
    trace = lines.index("Trace (every gate, in vLLM's order)")
    findings = next(i for i, line in enumerate(lines) if line.startswith("Findings"))
    assert answer < trace < findings
    assert lines[answer].split()[2] == "tilelang"  # aiter 0.1.14 lacks the norm arguments 0.30 probes for
    assert "aiter-api-fallback" in result.stdout
    assert result.returncode == 1


def test_json_is_one_document_that_matches_the_schema(sysroot_env):
    result = doctor.run("explain", "--json", *ROCM_030, "--aiter", "0.1.16", env=sysroot_env())
    document = result.json()
    jsonschema.validate(document, schema())
    assert document["schema"] == "mhcdoctor.explain/1"
    assert {op: d["path"] for op, d in document["ops"].items()} == {
        "mhc_pre": "aiter",
        "mhc_post": "aiter",
        "mhc_fused_post_pre": "aiter",
        "hc_head": "tilelang",
    }
    assert (document["fused_post_pre"], document["verdict"], result.returncode) == (True, "ok", 0)


def test_what_ifs_are_recorded_as_the_source_of_their_facts(sysroot_env):
    document = doctor.run("explain", "--json", *ROCM_030, "--aiter", "0.1.16", env=sysroot_env()).json()
    assert document["sources"]["aiter.version"] == "user:--aiter"
    assert document["sources"]["arch"] == "user:--arch"


def test_changing_the_platform_forgets_this_machines_compilers(sysroot_env):
    document = doctor.run("explain", "--json", *ROCM_030, "--aiter", "0.1.16", env=sysroot_env()).json()
    assert document["facts"]["compilers"] == {"nvcc": None, "hipcc": None}


def test_probed_amd_machine_is_used_when_nothing_is_given(sysroot_env, amd_machine):
    machine = amd_machine("mi300x")
    document = doctor.run(
        "explain", "--json", "--vllm", "0.23.0", "--tilelang", "0.1.12", env=sysroot_env(root=machine)
    ).json()
    assert (document["facts"]["platform"], document["facts"]["arch"]) == ("rocm", "gfx942")
    assert "tilelang-wrong-arch" in {f["id"] for f in document["findings"]}


def test_trial_import_release_imports_the_installed_tilelang_and_falls_back(sysroot_env, broken_tilelang):
    result = doctor.run(
        "explain",
        "--json",
        "--vllm",
        "0.23.0",
        "--platform",
        "rocm",
        "--arch",
        "gfx950",
        env=sysroot_env(site=broken_tilelang),
    )
    document = result.json()
    assert document["ops"]["mhc_pre"]["path"] == "torch"
    assert "libnvrtc" in document["ops"]["mhc_pre"]["why"][1]["text"]
    assert {"tilelang-import-ignored", "torch-fallback"} <= {f["id"] for f in document["findings"]}


@pytest.mark.slow
def test_find_spec_release_selects_a_broken_tilelang_and_deep_shows_it_fails(sysroot_env, broken_tilelang):
    args = ("explain", "--json", "--vllm", "0.28.0", "--platform", "rocm", "--arch", "gfx950")
    fast = doctor.run(*args, env=sysroot_env(site=broken_tilelang)).json()
    assert fast["ops"]["mhc_pre"]["path"] == "tilelang"  # vLLM 0.28 only asks find_spec, and so does --fast
    deep = doctor.run(*args, "--deep", env=sysroot_env(site=broken_tilelang))
    assert deep.json()["ops"]["mhc_pre"]["path"] == "tilelang"
    assert "tilelang-import-broken" in {f["id"] for f in deep.json()["findings"]}
    assert deep.returncode == 3


@pytest.fixture
def user_report(sysroot_env, amd_machine, tmp_path):
    """A user's saved `check --json` from an MI300X with the racy aiter 0.1.13 and vLLM 0.25.0."""
    machine = amd_machine("user-mi300x")
    report = doctor.run("check", "--fast", "--json", env=sysroot_env(root=machine)).json()
    aiter = report["facts"]["aiter"]
    aiter.update(present=True, genuine=True, version="0.1.13", sqrsum_fix="absent", distribution="amd-aiter")
    report["facts"]["vllm"].update(present=True, version="0.25.0")
    path = tmp_path / "user-report.json"
    path.write_text(json.dumps(report))
    return path


def test_replaying_a_report_finds_the_race_and_an_aiter_upgrade_clears_it(sysroot_env, user_report):
    before = doctor.run("explain", "--json", "--from", str(user_report), env=sysroot_env())
    assert before.returncode == 3
    assert "aiter-sqrsum-race" in {f["id"] for f in before.json()["findings"]}
    after = doctor.run("explain", "--json", "--from", str(user_report), "--aiter", "0.1.16", env=sysroot_env())
    assert after.json()["ops"]["mhc_pre"]["path"] == "aiter"
    assert "aiter-sqrsum-race" not in {f["id"] for f in after.json()["findings"]}
    assert after.json()["sources"]["arch"] == f"report:{user_report}"


def test_check_json_replayed_by_explain_gives_the_same_decision_as_a_live_explain(sysroot_env, amd_machine, tmp_path):
    machine = amd_machine("mi355x", 90500)
    check = doctor.run("check", "--fast", "--json", env=sysroot_env(root=machine))
    report = tmp_path / "check.json"
    report.write_text(check.stdout)
    replay = doctor.run(
        "explain", "--json", "--model", "deepseek-v4-flash", "--from", str(report), env=sysroot_env(root=machine)
    ).json()
    live = doctor.run("explain", "--json", "--model", "deepseek-v4-flash", env=sysroot_env(root=machine)).json()
    in_check = next(m for m in check.json()["models"] if m["model"]["name"] == "deepseek-v4-flash")
    keys = ("rules", "ops", "fused_post_pre", "findings", "verdict")
    assert {k: replay[k] for k in keys} == {k: live[k] for k in keys} == {k: in_check[k] for k in keys}


def test_facts_a_report_never_recorded_stay_unknown_and_are_never_this_machines(sysroot_env, tmp_path):
    report = tmp_path / "old-report.json"
    report.write_text(json.dumps({"schema": "mhcdoctor.check/1", "facts": {"platform": "rocm", "arch": "gfx950"}}))
    document = doctor.run("explain", "--json", "--from", str(report), env=sysroot_env()).json()
    assert (document["facts"]["platform"], document["sources"]["platform"]) == ("rocm", f"report:{report}")
    assert document["sources"]["tilelang"] == f"unknown: not in report {report}"
    assert not any(source.startswith("probe:") for source in document["sources"].values())
    assert "torch-build-mismatch" not in [f["id"] for f in document["findings"]]


def test_config_folder_sets_the_hidden_size_and_hidden_overrides_it(sysroot_env, tmp_path):
    folder = tmp_path / "DeepSeek-V4-Flash"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "deepseek_v4", "hidden_size": 4096, "hc_mult": 4}))
    assert (
        doctor.run("explain", "--json", "--config", str(folder), env=sysroot_env()).json()["model"]["hidden_size"]
        == 4096
    )
    overridden = doctor.run("explain", "--json", "--config", str(folder), "--hidden", "2048", env=sysroot_env()).json()
    assert overridden["model"]["hidden_size"] == 2048


def test_fail_on_never_keeps_ci_green(sysroot_env):
    assert doctor.run("explain", "--hidden", "7168", "--fail-on", "never", env=sysroot_env()).returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--hidden", "0"],
        ["--hc-mult", "-1"],
        ["--model", "deepseek-v9"],
        ["--vllm", "banana"],
        ["--aiter", "new"],
        ["--tilelang", "1..2"],
        ["--rocm", "seven"],
        ["--arch", "pentium"],
        ["--platform", "tpu"],
        ["--aiter-fix", "maybe"],
        ["--platform", "cuda", "--arch", "gfx942"],
        ["--model", "deepseek-v4-pro", "--config", "config.json"],
    ],
)
def test_bad_option_is_one_line_and_exit_2(sysroot_env, args):
    result = doctor.run("explain", *args, env=sysroot_env())
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("mhcdoctor: error: ")


@pytest.mark.parametrize(
    "name, content",
    [
        ("missing.json", None),
        ("garbage.json", "{not json"),
        ("list.json", "[1, 2]"),
        ("explain.json", json.dumps({"schema": "mhcdoctor.explain/1", "facts": {}})),
        ("bad-facts.json", json.dumps({"schema": "mhcdoctor.check/1", "facts": {"platform": "tpu"}})),
        ("no-facts.json", json.dumps({"schema": "mhcdoctor.check/1"})),
    ],
)
def test_bad_report_is_one_line_and_exit_2(sysroot_env, tmp_path, name, content):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    result = doctor.run("explain", "--from", str(path), env=sysroot_env())
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_malformed_config_is_one_line_and_exit_2(sysroot_env, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": "big"}))
    result = doctor.run("explain", "--config", str(path), env=sysroot_env())
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_models_lists_the_builtins(sysroot_env):
    result = doctor.run("models", env=sysroot_env())
    rows = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()[1:]}
    assert rows == {"deepseek-v4-pro": "7168", "deepseek-v4-flash": "4096", "deepseek-v4.1-flash": "5120"}
    assert "less certain" in result.stdout


def test_models_json(sysroot_env):
    document = doctor.run("models", "--json", env=sysroot_env()).json()
    assert {m["name"]: m["hidden_size"] for m in document["models"]}["deepseek-v4-flash"] == 4096
    schema = json.loads(resources.files("mhcdoctor").joinpath("schemas/models.schema.json").read_text())
    jsonschema.validate(document, schema)  # published, as every --json document's is


@pytest.mark.parametrize(
    "given, platform, arch",
    [("gfx942:sramecc+:xnack-", "rocm", "gfx942"), ("SM90", "cuda", "sm_90"), ("GFX950", "rocm", "gfx950")],
)
def test_arch_is_accepted_as_torch_and_users_spell_it(sysroot_env, given, platform, arch):
    """torch's gcnArchName carries feature flags; people write SM90: both mean the plain arch."""
    document = doctor.run(
        "explain", "--json", "--arch", given, "--tilelang", "0.1.12", "--vllm", "0.30.0", env=sysroot_env()
    ).json()
    assert (document["facts"]["platform"], document["facts"]["arch"]) == (platform, arch)
