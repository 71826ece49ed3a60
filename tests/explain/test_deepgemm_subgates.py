"""explain on CUDA shows what runs inside the tilelang path: which GEMM computes mhc_pre's prenorm mixes, the first
layer's DeepGEMM call and the token ranges of tilelang's own GEMM; `--deepgemm VERSION|none` asks "what if"."""

from __future__ import annotations

import doctor
import pytest

H200_026 = ["--json", "--platform", "cuda", "--arch", "sm_90", "--tilelang", "0.1.12", "--vllm", "0.26.0"]


def gates(doc: dict, op: str = "mhc_pre") -> dict[str, object]:
    return {g["gate"]: g["observed"] for g in doc["ops"][op]["why"]}


def test_a_vllm_release_brings_its_vendored_deepgemm_and_mhc_pre_uses_it(sysroot_env):
    doc = doctor.run("explain", *H200_026, env=sysroot_env()).json()
    assert gates(doc)["prenorm GEMM: is_deep_gemm_supported()"] == "DeepGEMM"
    assert gates(doc)["first layer's pre (broadcast)"] == "DeepGEMM"
    assert "hc_prenorm_gemm by tokens" not in gates(doc)  # DeepGEMM computes it at every token count
    assert doc["verdict"] == "ok"


@pytest.mark.parametrize(
    "deepgemm, detail",
    [("2.1.1", "standalone deep_gemm 2.1.1 has no tf32_hc_prenorm_gemm"), ("none", "neither the standalone")],
)
def test_a_deepgemm_without_the_prenorm_gemm_breaks_the_first_layer(sysroot_env, deepgemm, detail):
    result = doctor.run("explain", *H200_026, "--deepgemm", deepgemm, env=sysroot_env())
    doc = result.json()
    broken = next(f for f in doc["findings"] if f["id"] == "deepgemm-prenorm-broken")
    assert detail in broken["detail"] and result.returncode == 3
    assert doc["facts"]["deepgemm"]["vendored"] is (False if deepgemm != "none" else None)


def test_without_deepgemm_the_tilelang_gemm_and_its_token_ranges_show(sysroot_env):
    doc = doctor.run(
        "explain", *H200_026[:-1], "0.25.0", "--deepgemm", "none", env=sysroot_env()
    ).json()  # 0.25: falls back to tilelang
    assert gates(doc)["prenorm GEMM: is_deep_gemm_supported()"] == "tilelang"
    why = next(g for g in doc["ops"]["mhc_pre"]["why"] if g["gate"] == "hc_prenorm_gemm by tokens")
    assert "< 128 tokens" in why["text"] and ">= 1024 tokens (prefill)" in why["text"]
    assert "tilelang-prenorm-block-m" not in {f["id"] for f in doc["findings"]}  # 0.1.12: measured right
    under_011 = doctor.run(
        "explain", *H200_026[:-1], "0.25.0", "--deepgemm", "none", "--tilelang", "0.1.11", env=sysroot_env()
    ).json()
    block_m = next(f for f in under_011["findings"] if f["id"] == "tilelang-prenorm-block-m")
    assert block_m["severity"] == "warn" and "from 1024 tokens (prefill)" in block_m["detail"]  # 0.1.11: unmeasured


def test_a_bad_deepgemm_version_is_one_line_and_exit_2(sysroot_env):
    result = doctor.run("explain", "--deepgemm", "x.y", env=sysroot_env())
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0 and "--deepgemm" in result.stderr
