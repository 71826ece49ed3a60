"""Which of vLLM's function and op names the plugin records as which op and path (names read from each release's
kernels/mhc/*.py, layers/mhc.py and the NVIDIA model's imports, 0.20–0.34)."""

from __future__ import annotations

import sys
import types

import pytest

from mhcdoctor.vllm_plugin import hooks
from mhcdoctor.vllm_plugin.hooks import classify


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mhc_pre", ("mhc_pre", "tilelang")),  # 0.20–0.21 layers/mhc.py (0.21 on ROCm: below)
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


class _Platform:
    def __init__(self, rocm: bool) -> None:
        self.rocm = rocm

    def is_rocm(self) -> bool:
        return self.rocm


current_platform = _Platform(False)


def mhc_pre(residual):  # 0.21's layers/mhc.py shape: inline torch on ROCm, tilelang elsewhere
    if current_platform.is_rocm():
        return "torch"
    return "tilelang"


def mhc_fused_post_pre(residual):  # 0.21: the fused op has no ROCm branch
    return "tilelang"


@pytest.mark.parametrize(("rocm", "pre_path"), [(True, "torch"), (False, "tilelang")])
def test_an_unsuffixed_op_that_branches_on_rocm_is_recorded_as_the_branch_taken(monkeypatch, rocm, pre_path):
    monkeypatch.setitem(sys.modules, "vllm.platforms", types.SimpleNamespace(current_platform=_Platform(rocm)))
    registered: dict[str, object] = {}
    torch_utils = types.ModuleType("torch_utils")
    torch_utils.direct_register_custom_op = lambda op_name, op_func, *a, **k: registered.setdefault(op_name, op_func)
    monkeypatch.setattr(hooks, "observe", lambda func, op, path, name: (op, path))
    assert hooks.patch_torch_utils(torch_utils) == 1
    torch_utils.direct_register_custom_op("mhc_pre", mhc_pre)
    torch_utils.direct_register_custom_op("mhc_fused_post_pre", mhc_fused_post_pre)
    assert registered == {"mhc_pre": ("mhc_pre", pre_path), "mhc_fused_post_pre": ("mhc_fused_post_pre", "tilelang")}
