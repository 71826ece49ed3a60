"""What a new user reads: no doubled spaces, a model named once, help that says what it takes."""

from __future__ import annotations

import doctor

GFX942 = ["--platform", "rocm", "--arch", "gfx942", "--model", "deepseek-v4-pro"]


def test_a_finding_about_an_unknown_vllm_version_has_no_double_space(sysroot_env) -> None:
    doc = doctor.run("explain", "--json", *GFX942, "--aiter", "0.1.7", "--vllm", "none", env=sysroot_env()).json()
    detail = next(f["detail"] for f in doc["findings"] if f["id"] == "aiter-no-mhc")
    assert "vLLM tests only find_spec('aiter')" in detail and "  " not in detail


def test_a_built_in_model_with_another_hidden_size_is_titled_once(sysroot_env) -> None:
    shown = doctor.run("explain", "--hidden", "7168", "--model", "deepseek-v4-flash", env=sysroot_env()).stdout
    assert "mHC paths for deepseek-v4-flash (hidden 7168, hc_mult 4)" in shown


def test_the_pro_size_alone_is_called_deepseek_v4_pro_not_a_custom_config(sysroot_env) -> None:
    assert (
        "mHC paths for deepseek-v4-pro (hidden 7168, hc_mult 4)"
        in doctor.run("explain", "--hidden", "7168", env=sysroot_env()).stdout
    )
    assert (
        "mHC paths for custom config (hidden 7000, hc_mult 4)"
        in doctor.run("explain", "--hidden", "7000", env=sysroot_env()).stdout
    )


def test_explain_help_says_from_reads_every_kind_of_saved_report() -> None:
    shown = " ".join(doctor.run("explain", "--help").stdout.split())
    assert "a saved report: check --json or report --json, a report --bundle, or a saved report's Markdown" in shown


def test_the_models_table_has_no_trailing_spaces() -> None:
    lines = doctor.run("models").stdout.splitlines()
    assert len(lines) > 3 and [line for line in lines if line != line.rstrip()] == []


def test_without_gpu_or_vllm_both_fixes_name_the_cpu_build(sysroot_env) -> None:
    """PyPI's vllm is the CUDA build: telling a CPU-only machine to `pip install vllm` contradicts no-gpu."""
    doc = doctor.run("explain", "--json", env=sysroot_env()).json()
    fixes = {f["id"]: f["fix"] for f in doc["findings"]}
    assert "vLLM's CPU build (0.30+" in fixes["no-gpu"] and "vLLM's CPU build (0.30+" in fixes["vllm-not-installed"]
    assert "pip install vllm" not in fixes["vllm-not-installed"]


def test_an_arch_no_gpu_has_is_refused(sysroot_env) -> None:
    result = doctor.run("explain", "--arch", "gfx9999", env=sysroot_env())
    assert (result.returncode, result.stdout) == (2, "")
    assert "--arch 'gfx9999' is no GPU arch known to mhcdoctor" in result.stderr
