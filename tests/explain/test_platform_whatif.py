"""`explain --platform xpu|cpu`: replay an Intel GPU host or a CPU server; vLLM's build label decides the CPU case."""

from __future__ import annotations

import doctor
import pytest


def test_cpu_with_vllms_cpu_build_runs_every_op_on_its_cpu_ops(sysroot_env):
    result = doctor.run(
        "explain",
        "--model",
        "deepseek-v4-pro",
        "--platform",
        "cpu",
        "--vllm",
        "0.34.0+cpu",
        "--json",
        env=sysroot_env(),
    )
    doc = result.json()
    assert result.returncode == 0
    assert {op: d["path"] for op, d in doc["ops"].items()} == dict.fromkeys(doc["ops"], "cpu")
    assert doc["facts"]["vllm"]["build"] == "cpu" and doc["facts"]["vllm"]["runs_here"] is True


def test_cpu_with_pypis_wheel_says_no_platform(sysroot_env):
    result = doctor.run(
        "explain", "--model", "deepseek-v4-pro", "--platform", "cpu", "--vllm", "0.34.0", env=sysroot_env()
    )
    assert result.returncode == 3
    assert "UnspecifiedPlatform runs no model" in result.stdout
    assert "no-gpu" in result.stdout


def test_xpu_from_027_runs_vllm_xpu_kernels(sysroot_env):
    result = doctor.run(
        "explain", "--model", "deepseek-v4-pro", "--platform", "xpu", "--vllm", "0.27.0", "--json", env=sysroot_env()
    )
    doc = result.json()
    assert {d["path"] for d in doc["ops"].values()} == {"xpu"}
    assert doc["fused_post_pre"] is True and result.returncode == 0


@pytest.mark.parametrize("platform", ["tpu", "CPU-ONLY"])
def test_an_unknown_platform_is_a_usage_error(sysroot_env, platform):
    result = doctor.run("explain", "--platform", platform, env=sysroot_env())
    assert result.returncode == 2
    assert "--platform must be one of rocm, cuda, xpu, cpu" in result.stderr


ASSUMED = "assumed to fit the what-if's platform (unknown, not this machine's): "


def test_a_what_if_platform_says_which_of_this_machines_facts_it_assumes(sysroot_env):
    """This machine's torch is a CPU build; asked about an H200, the what-if takes torch's build as fitting it."""
    shown = doctor.run(
        "explain", "--platform", "cuda", "--arch", "sm_90", "--tilelang", "0.1.12", env=sysroot_env()
    ).stdout
    assumed = next(line for line in shown.splitlines() if ASSUMED in line)
    assert "torch's build" in assumed and "GPUs" in assumed


@pytest.mark.parametrize(
    ("platform", "assumed"), [("cpu", "vLLM's build (its CPU build)"), ("xpu", "vllm-xpu-kernels")]
)
def test_unknown_facts_are_assumed_to_fit_every_platform_alike(sysroot_env, platform, assumed):
    """Without vLLM installed, `--platform cpu` assumes vLLM's CPU build as `--platform xpu` assumes its XPU
    kernels: neither fails on a fact nobody established, and both say what they assumed."""
    result = doctor.run("explain", "--platform", platform, "--vllm", "none", env=sysroot_env())
    assert result.returncode == 0 and "✓ verdict: ok" in result.stdout
    assert assumed in next(line for line in result.stdout.splitlines() if ASSUMED in line)
