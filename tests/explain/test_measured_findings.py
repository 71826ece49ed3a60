"""What `explain` says of the findings the H200 measured on 2026-12-04 (docs/known-bugs.md, "Measured on a GPU"):
vLLM 0.22–0.26's block-M prenorm GEMM by tilelang version; vLLM 0.33–0.34's fused post+pre under a newer tilelang."""

from __future__ import annotations

import doctor
import pytest

# An A100 (sm_80: no DeepGEMM), so tilelang's own prenorm GEMM runs, block-M from 1024 tokens.
A100_024 = ["--platform", "cuda", "--arch", "sm_80", "--vllm", "0.24.0"]
BLOCK_M = "tilelang-prenorm-block-m: vLLM 0.22–0.26's block-M prenorm GEMM (1024+ tokens) is wrong under tilelang 0.1.9"


def finding_line(stdout: str, finding: str) -> str | None:
    return next((x.strip() for x in stdout.splitlines() if f"] {finding}:" in x), None)


@pytest.mark.parametrize(
    "tilelang, line, verdict, code",
    [("0.1.9", f"✗ [fail] {BLOCK_M} (from 1024 tokens: prefill)", "✗ verdict: fail", 3),
     ("0.1.11", f"! [warn] {BLOCK_M} (from 1024 tokens: prefill)", "! verdict: degraded", 1),
     ("0.1.12", None, "✓ verdict: ok", 0),
     ("0.1.15", None, "✓ verdict: ok", 0)],
)  # fmt: skip
def test_block_m_is_fail_under_the_tilelang_measured_wrong_and_gone_under_the_one_measured_right(
    sysroot_env, tilelang, line, verdict, code
):
    result = doctor.run("explain", *A100_024, "--tilelang", tilelang, env=sysroot_env())
    assert finding_line(result.stdout, "tilelang-prenorm-block-m") == line
    assert (result.stdout.rstrip().splitlines()[-1], result.returncode) == (verdict, code)
    if line and "fail" in line:
        assert "tilelang 0.1.9 lowers it wrong" in result.stdout and "post_mix off by up to 1.58" in result.stdout
    elif line:
        assert "Not measured with tilelang 0.1.11" in result.stdout


def test_vllm_034s_fused_post_pre_under_a_newer_tilelang_warns_with_the_measured_figures(sysroot_env):
    result = doctor.run(
        "explain",
        "--platform",
        "cuda",
        "--arch",
        "sm_90",
        "--vllm",
        "0.34.0",
        "--tilelang",
        "0.1.15",
        env=sysroot_env(),
    )
    assert finding_line(result.stdout, "tilelang-fused-post-pre-slow") == (
        "! [warn] tilelang-fused-post-pre-slow: vLLM 0.33–0.34's fused post+pre is 5x slower per decode call under a "
        "tilelang newer than its pin"
    )
    text = " ".join(result.stdout.split())
    assert "0.0480 ms per call under tilelang 0.1.15 against 0.0091 ms under 0.1.12" in text
    assert "Measured on an H200 only" in text and "about 4.7 ms more per step" in text
    assert "fix: pip install 'tilelang==0.1.12' # vLLM 0.34.0's pin" in text and result.returncode == 1
    pinned = doctor.run(
        "explain",
        "--platform",
        "cuda",
        "--arch",
        "sm_90",
        "--vllm",
        "0.34.0",
        "--tilelang",
        "0.1.12",
        env=sysroot_env(),
    )
    assert finding_line(pinned.stdout, "tilelang-fused-post-pre-slow") is None and pinned.returncode == 0


STAGES = "tilelang-pre-norm-stages: vLLM 0.22.0's mhc_pre with the RMSNorm folded in writes a wrong layer input"


@pytest.mark.parametrize(
    "release, arch, hidden, tilelang, line, verdict",
    [("0.22.0", "sm_90", "7168", "0.1.9", f"✗ [fail] {STAGES}", "✗ verdict: fail"),  # stock V4-Pro, DeepGEMM on
     ("0.22.1", "sm_90", "2048", "0.1.9", f"✗ [fail] {STAGES}", "✗ verdict: fail"),  # 0.22.1: the same kernel file
     ("0.22.0", "sm_90", "4096", "0.1.9", None, "✓ verdict: ok"),  # V4-Flash: measured right at 1-16384 tokens
     ("0.22.0", "sm_90", "6144", "0.1.9", f"! [warn] {STAGES}", "! verdict: degraded"),  # right at 1-200 only
     ("0.22.0", "sm_90", "7168", "0.1.11", f"! [warn] {STAGES}", "! verdict: degraded"),  # not measured
     ("0.23.0", "sm_90", "7168", "0.1.9", None, "✓ verdict: ok")],  # 0.23.0 pipelines in 2 stages: right
)  # fmt: skip
def test_vllm_022s_three_stage_pre_fails_where_the_h200_measured_it_wrong(
    sysroot_env, release, arch, hidden, tilelang, line, verdict
):
    options = ["--platform", "cuda", "--arch", arch, "--vllm", release, "--tilelang", tilelang, "--hidden", hidden]
    result = doctor.run("explain", *options, env=sysroot_env())
    assert finding_line(result.stdout, "tilelang-pre-norm-stages") == line
    assert result.stdout.rstrip().splitlines()[-1] == verdict
    text = " ".join(result.stdout.split())
    if line and "fail" in line:
        assert f"At hidden {hidden} it was measured wrong at" in text
        assert "fix: pip install -U 'vllm>=0.23'" in text


DG_SHAPE = "deepgemm-prenorm-shape: DeepGEMM's tf32_hc_prenorm_gemm refuses an hc_mult other than 2 or 4"


@pytest.mark.parametrize(
    "release, deepgemm, hc_mult, line, fix",
    [("0.20.0", "2.5.0", "8", f"✗ [fail] {DG_SHAPE}", "Use hc_mult 2 or 4"),  # measured; no other GEMM in 0.20
     ("0.24.0", "2.5.0", "3", f"✗ [fail] {DG_SHAPE}", "VLLM_USE_DEEP_GEMM=0"),  # 15 mixes: not a multiple of 8
     ("0.34.0", "2.8.1", "8", f"! [warn] {DG_SHAPE}", "Use hc_mult 2 or 4"),  # 2.8.1 not measured
     ("0.24.0", "2.5.0", "2", None, None),  # 8 mixes: measured to run
     ("0.24.0", "2.5.0", "4", None, None)],  # the official configs
)  # fmt: skip
def test_deepgemm_refuses_more_than_32_mixes_where_vllm_calls_it(sysroot_env, release, deepgemm, hc_mult, line, fix):
    options = [
        "--platform",
        "cuda",
        "--arch",
        "sm_90",
        "--vllm",
        release,
        "--deepgemm",
        deepgemm,
        "--tilelang",
        "0.1.12",
    ]
    result = doctor.run("explain", *options, "--hidden", "4096", "--hc-mult", hc_mult, env=sysroot_env())
    assert finding_line(result.stdout, "deepgemm-prenorm-shape") == line
    if fix:
        text = " ".join(result.stdout.split())
        assert f"hc_mult {hc_mult} asks for" in text and f"fix: {fix}" in text
