"""What the line-by-line read of vLLM 0.30–0.34's mHC code changed in `explain` (knowledge/vllm_releases.py VLLM_AUDIT):
the tilelang prenorm GEMM's shape assert moved into tilelang_kernels.py and stayed, and DeepSeek-V4.1's delayed pre
imports an aiter Triton module on gfx950 from 0.32 with no probe; the AMD model warms none of its mHC kernels from
0.30."""

from __future__ import annotations

import doctor
import fakes
import pytest
from fakemachine import Machine


@pytest.fixture
def run_cli(sysroot_env):
    """explain on this test's empty sysroot: only what-if options speak."""
    return lambda *args: doctor.run(*args, env=sysroot_env())


def line(stdout: str, finding: str) -> str | None:
    return next((x.strip() for x in stdout.splitlines() if f"] {finding}:" in x), None)


@pytest.mark.parametrize(
    "vllm, where",
    [("0.30.0", "kernels/mhc/tilelang_kernels.py:1215"),
     ("0.32.0", "kernels/mhc/tilelang_kernels.py:1236"),
     ("0.34.0", "kernels/mhc/tilelang_kernels.py:1261")],
)  # fmt: skip
def test_the_tilelang_gemm_still_asserts_the_shape_in_030_to_034(run_cli, vllm, where):
    # an A100 (sm_80): no DeepGEMM, so the release's own tilelang GEMM computes mhc_pre's prenorm GEMM
    a100 = ["--platform", "cuda", "--arch", "sm_80", "--tilelang", "0.1.12", "--vllm", vllm]
    result = run_cli("explain", *a100, "--hidden", "2000")
    found = line(result.stdout, "tilelang-gemm-shape")
    assert found is not None and found.startswith("✗ [fail] tilelang-gemm-shape: vLLM 0.22–0.34's"), result.stdout
    assert f"asserts (hc_mult * hidden) % 512 == 0 ({where})" in result.stdout
    assert "8000 leaves 320: AssertionError at the first call" in result.stdout
    assert result.returncode == 3
    assert line(run_cli("explain", *a100, "--hidden", "2048").stdout, "tilelang-gemm-shape") is None


def test_rocm_without_aiter_runs_the_tilelang_gemm_and_asserts_on_031(run_cli):
    rocm = ["--platform", "rocm", "--arch", "gfx950", "--aiter", "none", "--tilelang", "0.1.12", "--vllm", "0.31.0"]
    result = run_cli("explain", *rocm, "--hidden", "2000")
    assert line(result.stdout, "tilelang-gemm-shape") is not None, result.stdout
    assert "(kernels/mhc/tilelang_kernels.py:1236)" in result.stdout


V41 = ["--model", "deepseek-v4.1-flash", "--platform", "rocm", "--aiter", "0.1.20.post1", "--tilelang", "0.1.12"]
SEAM = "aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm"


def test_deepseek_v41_on_gfx950_from_032_says_the_unprobed_aiter_import(run_cli):
    result = run_cli("explain", *V41, "--arch", "gfx950", "--vllm", "0.32.0")
    assert line(result.stdout, "model-v41-approximate") is not None, result.stdout
    lines = [x.strip() for x in result.stdout.splitlines()]
    detail = lines[lines.index(line(result.stdout, "model-v41-approximate")) + 1]
    assert SEAM in detail and "ModuleNotFoundError" not in detail
    # the crash itself is the fail finding's (tests/explain/test_v41_seam_rmsnorm.py)
    assert line(result.stdout, "aiter-seam-rmsnorm-missing") is not None and "raises ModuleNot" in result.stdout
    assert result.returncode == 3


@pytest.mark.parametrize("arch, vllm", [("gfx950", "0.31.0"), ("gfx942", "0.34.0")])
def test_deepseek_v41_before_032_or_off_gfx950_has_no_such_import(run_cli, arch, vllm):
    result = run_cli("explain", *V41, "--arch", arch, "--vllm", vllm)
    assert line(result.stdout, "model-v41-approximate") is not None, result.stdout
    assert SEAM not in result.stdout


def test_a_cold_tilelang_cache_on_rocm_030_to_034_warns_that_the_amd_model_warms_no_mhc_kernel(tmp_path):
    # 0.24-0.29's mHC warm-up finds the AMD decoder layer's hc_pre/hc_post; 0.30-0.34's AMD model registers none of
    # its mHC kernels with the JIT warm-up (models/deepseek_v4/amd/*.py), so they compile while serving
    machine = Machine(tmp_path)
    fakes.library(machine.site, "tilelang", "0.1.12")
    cache = tmp_path / "tlcache"
    fakes.write(cache / "0.1.12-x86_64" / "kernels" / "b" / "device_kernel.cu", "gemm_kernel")  # no mHC kernel
    env = {**machine.env(), "TILELANG_CACHE_DIR": str(cache)}
    rocm = ["--platform", "rocm", "--arch", "gfx950", "--aiter", "none", "--tilelang", "0.1.12"]

    def explain(vllm: str) -> str:
        args = ("explain", "--python", str(machine.python), *rocm, "--vllm", vllm)
        return doctor.run(*args, env=env, cwd=tmp_path).stdout

    stdout = explain("0.34.0")
    assert line(stdout, "tilelang-cache-cold") == (
        "! [warn] tilelang-cache-cold: tilelang's kernel cache holds none of vLLM's mHC kernels"
    )
    assert "vLLM 0.34.0's AMD model registers none of its mHC kernels with the JIT warm-up" in stdout
    assert "so this happens while serving requests" in stdout
    old = line(explain("0.29.0"), "tilelang-cache-cold")  # 0.29's warm-up compiles them at start-up: info
    assert old is not None and old.startswith("· [info] tilelang-cache-cold")
