"""What a new user tripped over (issue 8 §6): fixes that follow the failed gate, usage errors, help, bundles."""

from __future__ import annotations

import json

import pytest

ROCM = ["--platform", "rocm", "--vllm", "0.30.0"]


def _fix(run_cli, *args: str, finding: str = "torch-fallback") -> str:
    doc = run_cli("explain", "--json", *ROCM, *args).json()
    return next(f["fix"] for f in doc["findings"] if f["id"] == finding)


def test_on_gfx942_with_tilelang_installed_the_fix_is_aiter_not_tilelang(run_cli):
    fix = _fix(run_cli, "--arch", "gfx942", "--tilelang", "0.1.12", "--aiter", "none")
    assert "pip install tilelang" not in fix and "github.com/ROCm/aiter" in fix


def test_when_aiter_refuses_the_shape_on_gfx942_nothing_is_to_install(run_cli):
    fix = _fix(run_cli, "--arch", "gfx942", "--aiter", "0.1.16", "--hidden", "7000", "--tilelang", "none")
    assert fix.startswith("Nothing to install") and "7000 is not a multiple of 256" in fix


def test_off_gfx942_a_missing_tilelang_is_the_fix(run_cli):
    assert _fix(run_cli, "--arch", "gfx950", "--aiter", "0.1.16", "--hidden", "7000", "--tilelang", "none") == (
        "pip install tilelang"
    )


def test_an_aiter_without_the_probed_api_is_told_to_upgrade(run_cli):
    fix = _fix(run_cli, "--arch", "gfx942", "--aiter", "0.1.14", "--tilelang", "0.1.12")
    assert fix.startswith("Build aiter 0.1.16 or later")


def test_a_config_without_mhc_is_one_line_and_exit_2(run_cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096}))
    result = run_cli("explain", "--config", str(config))
    assert result.returncode == 2 and result.stdout == ""
    expected = f"config {config} describes a llama model without mHC (no hc_eps, hc_mult, hc_sinkhorn_iters)"
    assert result.stderr == f"mhcdoctor: error: {expected}\n"


def test_bare_mhcdoctor_prints_its_help_and_exits_0(run_cli):
    result = run_cli()
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: mhcdoctor") and "explain" in result.stdout


@pytest.mark.parametrize(("option", "example"), [("--vllm", "0.30.0"), ("--aiter", "0.1.16"), ("--tilelang", "0.1.12")])
def test_a_bad_version_shows_an_example_of_that_options_version(run_cli, option, example):
    result = run_cli("explain", option, "banana")
    assert result.stderr == f"mhcdoctor: error: {option} 'banana' is not a version (e.g. {example}) or 'none'\n"


def test_report_bundle_refuses_to_replace_a_file_without_force(run_cli, tmp_path):
    bundle = tmp_path / "mine.tar.gz"
    bundle.write_text("something the user keeps\n")
    result = run_cli("report", "--fast", "--bundle", str(bundle))
    assert result.returncode == 2 and "exists (give --force" in result.stderr
    assert bundle.read_text() == "something the user keeps\n"
    assert run_cli("report", "--fast", "--bundle", str(bundle), "--force").returncode == 0
    assert bundle.read_bytes()[:2] == b"\x1f\x8b"
