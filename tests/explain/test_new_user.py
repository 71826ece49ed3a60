"""What a new user tripped over (issue 8 §6): fixes that follow the failed gate, usage errors, help, bundles."""

from __future__ import annotations

import json

import doctor
import pytest

ROCM = ["--platform", "rocm", "--vllm", "0.30.0"]


def _fix(sysroot_env, *args: str, finding: str = "torch-fallback") -> str:
    doc = doctor.run("explain", "--json", *ROCM, *args, env=sysroot_env()).json()
    return next(f["fix"] for f in doc["findings"] if f["id"] == finding)


def test_on_gfx942_with_tilelang_installed_the_fix_is_aiter_not_tilelang(sysroot_env):
    fix = _fix(sysroot_env, "--arch", "gfx942", "--tilelang", "0.1.12", "--aiter", "none")
    assert "pip install tilelang" not in fix and "github.com/ROCm/aiter" in fix


def test_when_aiter_refuses_the_shape_on_gfx942_nothing_is_to_install(sysroot_env):
    fix = _fix(sysroot_env, "--arch", "gfx942", "--aiter", "0.1.16", "--hidden", "7000", "--tilelang", "none")
    assert fix.startswith("Nothing to install") and "7000 is not a multiple of 256" in fix


def test_off_gfx942_a_missing_tilelang_is_the_fix(sysroot_env):
    assert _fix(sysroot_env, "--arch", "gfx950", "--aiter", "0.1.16", "--hidden", "7000", "--tilelang", "none") == (
        "pip install tilelang"
    )


def test_an_aiter_without_the_probed_api_is_told_to_upgrade(sysroot_env):
    fix = _fix(sysroot_env, "--arch", "gfx942", "--aiter", "0.1.14", "--tilelang", "0.1.12")
    assert fix.startswith("Build aiter 0.1.16 or later")


def test_a_config_without_mhc_is_one_line_and_exit_2(sysroot_env, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096}))
    result = doctor.run("explain", "--config", str(config), env=sysroot_env())
    assert result.returncode == 2 and result.stdout == ""
    expected = f"config {config} describes a llama model without mHC (no hc_eps, hc_mult, hc_sinkhorn_iters)"
    assert result.stderr == f"mhcdoctor: error: {expected}\n"


def test_bare_mhcdoctor_prints_its_help_and_exits_0(sysroot_env):
    result = doctor.run(env=sysroot_env())
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: mhcdoctor") and "explain" in result.stdout


@pytest.mark.parametrize(("option", "example"), [("--vllm", "0.30.0"), ("--aiter", "0.1.16"), ("--tilelang", "0.1.12")])
def test_a_bad_version_shows_an_example_of_that_options_version(sysroot_env, option, example):
    result = doctor.run("explain", option, "banana", env=sysroot_env())
    assert result.stderr == f"mhcdoctor: error: {option} 'banana' is not a version (e.g. {example}) or 'none'\n"


def test_report_bundle_refuses_to_replace_a_file_without_force(sysroot_env, tmp_path):
    bundle = tmp_path / "mine.tar.gz"
    bundle.write_text("something the user keeps\n")
    result = doctor.run("report", "--fast", "--bundle", str(bundle), env=sysroot_env())
    assert result.returncode == 2 and "exists (give --force" in result.stderr
    assert bundle.read_text() == "something the user keeps\n"
    assert doctor.run("report", "--fast", "--bundle", str(bundle), "--force", env=sysroot_env()).returncode == 0
    assert bundle.read_bytes()[:2] == b"\x1f\x8b"
