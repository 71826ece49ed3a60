"""A small wheel laid out as vLLM's (`vllm-X.dist-info/METADATA`, `vllm/model_executor/kernels/mhc/tilelang.py`)
whose kernel functions compute with mhcdoctor's torch reference, for the tests of tests/bench/vllm_fixture.py and of
bench on vLLM's kernels."""

from __future__ import annotations

import zipfile
from pathlib import Path

# What the synthetic release's tilelang.py holds: vLLM 0.34's names and keywords over mhcdoctor's reference.
KERNELS = """
import time

import torch

from mhcdoctor import reference
from vllm.platforms import current_platform  # the stand-ins these files need are the fixture's
from vllm.utils.deep_gemm import is_deep_gemm_supported
from vllm.utils.math_utils import cdiv
from vllm.utils.torch_utils import direct_register_custom_op

assert not current_platform.is_rocm() and cdiv(7, 2) == 4 and is_deep_gemm_supported() is False


def mhc_pre_tilelang(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value,
                     sinkhorn_repeat, n_splits=1, norm_weight=None, norm_eps=1e-6):
    return reference.mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                             hc_post_mult_value, sinkhorn_repeat, norm_weight=norm_weight, norm_eps=norm_eps)


def mhc_post_tilelang(x, residual, post_layer_mix, comb_res_mix):
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)


def mhc_fused_post_pre_tilelang(x, residual, *args, n_splits=1, tile_n=1, norm_weight=None, norm_eps=1e-6):
    time.sleep(0.5)  # slower than post then pre (about 0.05 s on a CPU): bench says so
    return reference.mhc_fused_post_pre(x, residual, *args, norm_weight=norm_weight, norm_eps=norm_eps)


def mhc_fused_post_pre_tilelang_reuse_residual(x, residual, *args, n_splits=1, tile_n=1, norm_weight=None,
                                               norm_eps=1e-6):
    out = mhc_fused_post_pre_tilelang(x, residual, *args, norm_weight=norm_weight, norm_eps=norm_eps)
    residual.fill_(7.0)  # it may overwrite its residual: a check on the overwritten input would fail
    return out


def hc_head_fused_kernel_tilelang(hs_flat, fn, hc_scale, hc_base, rms_eps, hc_eps):
    return reference.hc_head(hs_flat, fn, hc_scale, hc_base, rms_eps, hc_eps)


direct_register_custom_op(op_name="mhc_pre_tilelang", op_func=mhc_pre_tilelang)
"""


def make_wheel(folder: Path, version: str = "9.9.0") -> Path:
    wheel = folder / f"vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(
            f"vllm-{version}.dist-info/METADATA", f"Name: vllm\nVersion: {version}\nRequires-Dist: tilelang==0.1.12\n"
        )
        z.writestr("vllm/model_executor/kernels/mhc/tilelang.py", KERNELS)
        z.writestr("vllm/model_executor/kernels/mhc/tilelang_kernels.py", "# the kernels: not needed on the CPU\n")
        z.writestr("vllm/model_executor/kernels/mhc/torch.py", "raise ImportError('not copied by the fixture')\n")
    return wheel
