"""`explain` on the shapes a --config, --hidden or --hc-mult can give: vLLM 0.21–0.29's small-token fused post+pre
kernel rounds its tile and split down (kernels/mhc/tilelang.py, tilelang_kernels.py of those releases), so a hidden
size or hc_mult it does not divide leaves part of the output unwritten; 0.30 picks a tile and split that divide."""

from __future__ import annotations

import doctor
import pytest

H200 = ["--platform", "cuda", "--arch", "sm_90", "--tilelang", "0.1.9"]
TITLE = "tilelang-fused-shape: vLLM 0.21–0.29's fused post+pre skips part of a shape (hidden, hc_mult)"


@pytest.fixture
def run_cli(sysroot_env):
    """explain on this test's empty sysroot: only what-if options speak."""
    return lambda *args: doctor.run(*args, env=sysroot_env())


def finding(stdout: str) -> str | None:
    return next((x.strip() for x in stdout.splitlines() if "] tilelang-fused-shape:" in x), None)


@pytest.mark.parametrize(
    "shape, lost",
    [(["--hidden", "2560"], "1-7 tokens: 512 of 2560 hidden columns (split 8 x 256 threads); 8-16 tokens: 512 of "
      "2560 hidden columns (split 4 x 256 threads)"),
     (["--hidden", "3072"], "1-7 tokens: 1024 of 3072 hidden columns (split 8 x 256 threads)."),
     (["--hidden", "4096", "--hc-mult", "2"], "8-16 tokens: 2 of 8 mixes, the last of comb_mix (tile 3)")],
)  # fmt: skip
def test_a_shape_the_small_token_kernel_does_not_divide_fails_on_026(run_cli, shape, lost):
    result = run_cli("explain", *H200, "--vllm", "0.26.0", *shape)
    line = finding(result.stdout)
    assert line is not None and line.startswith(f"✗ [fail] {TITLE}"), result.stdout
    assert lost in result.stdout and "pip install -U 'vllm>=0.30'" in result.stdout
    assert (result.stdout.rstrip().splitlines()[-1], result.returncode) == ("✗ verdict: fail", 3)


@pytest.mark.parametrize(
    "args",
    [["--vllm", "0.26.0", "--hidden", "7168"],  # DeepSeek-V4-Pro divides
     ["--vllm", "0.26.0", "--hidden", "6144"],  # above 4096 the split is 4: 1536 = 6 x 256
     ["--vllm", "0.20.0", "--hidden", "2560"],  # 0.20 has no fused op
     ["--vllm", "0.30.0", "--hidden", "2560", "--tilelang", "0.1.12"]],  # 0.30 divides the shape
)  # fmt: skip
def test_no_finding_where_the_shape_divides_or_the_release_has_no_such_kernel(run_cli, args):
    result = run_cli("explain", *H200, *args)
    assert finding(result.stdout) is None, result.stdout


def test_the_json_names_the_fused_op(run_cli):
    import json

    doc = json.loads(run_cli("explain", *H200, "--vllm", "0.27.0", "--hidden", "2560", "--json").stdout)
    found = next(f for f in doc["findings"] if f["id"] == "tilelang-fused-shape")
    assert found["severity"] == "fail" and found["ops"] == ["mhc_fused_post_pre"]


def test_the_tilelang_gemm_asserts_where_hc_mult_times_hidden_is_no_multiple_of_512_and_deepgemm_is_off(run_cli):
    # an A100 (sm_80): no DeepGEMM, so vLLM 0.26.0's own tilelang GEMM runs mhc_pre's prenorm GEMM
    a100 = ["--platform", "cuda", "--arch", "sm_80", "--tilelang", "0.1.12", "--vllm", "0.26.0"]
    crash = run_cli("explain", *a100, "--hidden", "2000")
    assert "✗ [fail] tilelang-gemm-shape: vLLM 0.22–0.34's tilelang prenorm GEMM asserts on a shape" in crash.stdout
    assert "hc_mult 4 x hidden 2000 = 8000 leaves 320: AssertionError at the first call" in crash.stdout
    assert "tilelang-gemm-shape" not in run_cli("explain", *a100, "--hidden", "2048").stdout  # 8192 = 16 x 512
    # an H200: DeepGEMM computes the GEMM, the tilelang wrapper's assert is not reached
    h200 = ["--platform", "cuda", "--arch", "sm_90", "--tilelang", "0.1.12", "--vllm", "0.26.0", "--hidden", "2000"]
    assert "tilelang-gemm-shape" not in run_cli("explain", *h200).stdout
