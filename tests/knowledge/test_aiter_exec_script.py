"""scripts/aiter-mhc-exec itself: the launches it computes from a recorded call (as mhc_kernels.cu's launchers of
v0.1.17+ do) and what HIP refuses, and its child executing an aiter/ops/mhc.py (here one written for the test, with
the same imports as aiter's) with the compiled ops recorded."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

SCRIPT = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "aiter-mhc-exec"), run_name="exec")


def _tensor(*shape: int) -> dict[str, Any]:
    return {"shape": list(shape), "stride": [], "dtype": "bfloat16"}


def _gemm(m: int, split_k: int, tile_k: int, hidden: int = 7168) -> dict[str, Any]:
    return {
        "op": "mhc_pre_gemm_sqrsum",
        "args": {
            "out": _tensor(split_k, m, 24),
            "x": _tensor(m, 4, hidden),
            "fn": _tensor(24, 4 * hidden),
            "tile_k": tile_k,
        },
    }


def test_one_token_on_mi300x_gets_split_k_blocks_of_256_threads_with_16_kib_of_lds():
    got = SCRIPT["launch"](_gemm(1, 112, 128), "gfx942", 304, 64, "v0.1.17")
    # 304 CUs > 1 m-block × 112 splits: tile_n 16, so 24 outputs take 2 n-blocks; s_fn is 16 × 128 × 2 floats
    assert got == {"kernel": "gemm_sqrsum<4,64,16,128>", "grid": [1, 2, 112], "block": 256, "lds": 16384}
    assert SCRIPT["limit_problems"](tuple(got["grid"]), got["block"], got["lds"], 64 * 1024) == []


def test_zero_tokens_would_launch_an_empty_grid_which_hip_calls_an_invalid_configuration():
    got = SCRIPT["launch"](_gemm(0, 1, 128), "gfx942", 304, 64, "v0.1.17")
    assert got["grid"][0] == 0
    assert SCRIPT["limit_problems"](tuple(got["grid"]), got["block"], got["lds"], 64 * 1024) == [
        "a grid or block dim is 0"
    ]


@pytest.mark.parametrize(
    ("grid", "block", "lds", "problem"),
    [((1, 1, 1), 1025, 0, "block 1025 > 1024"), ((1, 65536, 1), 64, 0, "grid.y or grid.z > 65535"),
     ((2**31, 1, 1), 256, 0, "grid.x × block.x > 2^32 - 1"), ((1, 1, 1), 64, 65537, "LDS 65537 > 65536")],
)  # fmt: skip
def test_each_limit_hip_enforces_is_named(grid, block, lds, problem):
    assert SCRIPT["limit_problems"](grid, block, lds, 64 * 1024) == [problem]


def test_a_tile_k_no_kernel_instance_exists_for_is_refused_not_launched():
    assert SCRIPT["launch"](_gemm(16, 1, 32), "gfx942", 304, 64, "v0.1.17")["refused"].startswith("no instance")


def test_the_rmsnorm_kernel_takes_nine_waves_on_wave32_only_where_the_tag_has_that_branch():
    call = {"op": "mhc_pre_big_fuse_rmsnorm", "args": {"residual": _tensor(16, 4, 7168)}}
    assert SCRIPT["launch"](call, "gfx1250", 256, 32, "v0.1.17", True)["block"] == 9 * 32  # v0.1.18+
    assert SCRIPT["launch"](call, "gfx1250", 256, 32, "v0.1.17", False)["block"] == 5 * 32  # v0.1.17


FAKE_MHC = """
import torch
from torch import Tensor
from aiter import dtypes
from ..jit.core import compile_ops
from ..jit.utils.chip_info import get_cu_num, get_gfx_runtime


@compile_ops("module_mhc")
def mhc_pre_gemm_sqrsum(out: Tensor, sqrsum: Tensor, x: Tensor, fn: Tensor, tile_k: int = 128) -> None: ...


def mhc_pre(residual, fn, hc_scale, hc_base, rms_eps=1e-6, hc_pre_eps=1e-6, hc_sinkhorn_eps=1e-6,
            hc_post_mult_value=1.0, sinkhorn_repeat=20):
    m = residual.size(0)
    split_k = get_cu_num() // 76 if get_gfx_runtime() == "gfx942" else 1
    out = torch.empty(split_k, m, 24, dtype=dtypes.fp32, device=residual.device)
    sqrsum = torch.empty(split_k, m, dtype=dtypes.fp32, device=residual.device)
    mhc_pre_gemm_sqrsum(out, sqrsum, residual, fn, 64 if m < 7 else 128)
    assert m < 65536, "too many tokens"
"""


@pytest.mark.slow
def test_the_child_runs_the_tags_python_with_the_arch_it_is_told_and_records_every_compiled_call():
    cases = SCRIPT["execute"](FAKE_MHC, "gfx942", 304)
    by = {(c["hidden"], c["tokens"]): c for c in cases if c["call"] == "mhc_pre"}
    assert len(by) == len(SCRIPT["HIDDEN"]) * len(SCRIPT["TOKENS"])
    (call,) = by[(7168, 2)]["calls"]
    assert call["op"] == "mhc_pre_gemm_sqrsum" and call["args"]["tile_k"] == 64
    assert call["args"]["out"]["shape"] == [4, 2, 24] and call["args"]["x"]["shape"] == [2, 4, 7168]
    assert by[(4096, 65536)]["error"] == "AssertionError: too many tokens"
    assert by[(4096, 65536)]["calls"][0]["args"]["tile_k"] == 128  # recorded before the Python side raised
