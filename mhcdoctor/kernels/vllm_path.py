"""vLLM's own mHC ops, when vLLM imports: the kernels vLLM will really run, each backend its own row.

vLLM registers them as custom ops (`direct_register_custom_op` in `vllm/model_executor/kernels/mhc/*.py`):
torch.ops.vllm.mhc_pre_<backend>, mhc_post_<backend>, mhc_fused_post_pre_<backend> (tilelang, aiter),
hc_head_fused_kernel_tilelang, and hc_head_triton (which fills a given `out`). The torch fallback is plain
functions in `kernels/mhc/torch.py`. Which exist depends on the release; a missing one is left out, not failed.
"""

from __future__ import annotations

import importlib
from typing import Any

from mhcdoctor.kernels import PathImpl, PathUnavailable, Progress

_MODULE = "vllm.model_executor.kernels.mhc"


def load(name: str, device: str, progress: Progress) -> PathImpl:
    backend = name.split(":", 1)[1]
    progress(f"importing {_MODULE}.{backend}")
    try:
        vllm = importlib.import_module("vllm")
        module = importlib.import_module(f"{_MODULE}.{backend}")
    except Exception as exc:  # an old vLLM without this backend, or a broken install: a reason
        raise PathUnavailable(f"{_MODULE}.{backend} does not import: {type(exc).__name__}: {exc}") from None
    ops = _torch_ops(module) if backend == "torch" else _custom_ops(backend)
    if not ops:
        raise PathUnavailable(f"this vLLM registers no mHC ops for {backend}")
    return PathImpl(name=name, ops=ops, version=getattr(vllm, "__version__", None))


def _custom_ops(backend: str) -> dict[str, Any]:
    import torch

    namespace = torch.ops.vllm
    ops: dict[str, Any] = {}
    for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre"):
        if hasattr(namespace, f"{op}_{backend}"):
            ops[op] = _tuple_result(getattr(namespace, f"{op}_{backend}"))
    if backend == "tilelang" and hasattr(namespace, "hc_head_fused_kernel_tilelang"):
        ops["hc_head"] = namespace.hc_head_fused_kernel_tilelang
    if backend == "triton" and hasattr(namespace, "hc_head_triton"):
        ops["hc_head"] = _head_into_out(namespace.hc_head_triton)
    return ops


def _torch_ops(module: Any) -> dict[str, Any]:
    ops: dict[str, Any] = {}
    if hasattr(module, "mhc_pre_torch"):
        ops["mhc_pre"] = module.mhc_pre_torch
    if hasattr(module, "mhc_post_torch"):
        ops["mhc_post"] = module.mhc_post_torch
    return ops


def _tuple_result(op: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        result = op(*args, **kwargs)
        return tuple(result) if isinstance(result, (list, tuple)) else result

    return call


def _head_into_out(op: Any) -> Any:
    """hc_head_triton(hs_flat, fn, scale, base, out, hidden_size, rms_eps, hc_eps, hc_mult) fills `out`."""

    def hc_head(residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_eps: float) -> Any:
        import torch

        hc, hidden = residual.shape[-2], residual.shape[-1]
        out = torch.empty(residual.shape[0], hidden, dtype=torch.bfloat16, device=residual.device)
        op(residual, fn, hc_scale, hc_base, out, hidden, rms_eps, hc_eps, hc)
        return out

    return hc_head
