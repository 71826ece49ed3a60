"""Which of vLLM's function and op names the plugin records as which op and path (names read from each release's
kernels/mhc/*.py, layers/mhc.py and the NVIDIA model's imports, 0.20–0.34)."""

from __future__ import annotations

import pytest

from mhcdoctor.vllm_plugin.hooks import classify


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mhc_pre", ("mhc_pre", "tilelang")),  # 0.20–0.21 layers/mhc.py: tilelang was the only path
        ("hc_head_fused_kernel", ("hc_head", "tilelang")),  # 0.21
        ("mhc_pre_tilelang", ("mhc_pre", "tilelang")),
        ("mhc_pre_broadcast_tilelang", ("mhc_pre", "tilelang")),  # 0.30+ NVIDIA model, the model-entry broadcast
        ("mhc_pre_delayed_aiter", ("mhc_pre", "aiter")),  # 0.30+
        ("mhc_fused_post_pre_tilelang_reuse_residual", ("mhc_fused_post_pre", "tilelang")),  # 0.34 NVIDIA model
        ("mhc_fused_post_pre_delayed_rms_norm_aiter", ("mhc_fused_post_pre", "aiter")),  # 0.34
        ("hc_head_fused_kernel_tilelang", ("hc_head", "tilelang")),
        ("hc_head_triton", ("hc_head", "triton")),  # 0.22+: forward_hip without tilelang
        ("mhc_post_torch", ("mhc_post", "torch")),
        ("mhc_pre_cpu", ("mhc_pre", "cpu")),  # 0.30+ kernels/mhc/cpu.py
        ("hc_collapse_triton", None),  # helpers and kernel builders: not an op
        ("compute_num_split", None),
        ("hc_head_reduce_triton_kernel", None),
        ("mhc_pre_big_fuse", None),
        ("mhc_post_tilelang_kernel", None),
    ],
)
def test_names(name, expected):
    assert classify(name) == expected
