"""vLLM's own mHC ops, when vLLM imports: the kernels vLLM will really run, each backend its own row.

tilelang (every NVIDIA release): the functions of `vllm/model_executor/kernels/mhc/tilelang.py` that the DeepSeek-V4
model imports and calls (`models/deepseek_v4/nvidia/model.py`, 0.22-0.34): `mhc_pre_tilelang`,
`mhc_post_tilelang`, `mhc_fused_post_pre_tilelang`, `hc_head_fused_kernel_tilelang` (0.22:
`_hc_head_fused_kernel_tilelang`, which fills a given `out`); in 0.20-0.21 the functions of
`vllm/model_executor/layers/mhc.py` the model calls as torch.ops.vllm.mhc_pre, mhc_post, mhc_fused_post_pre (0.21)
and hc_head_fused_kernel (0.21). The model passes
`norm_weight`/`norm_eps` to the pre and the fused op, and 0.34 calls the fused op in its
`mhc_fused_post_pre_tilelang_reuse_residual` form (it may overwrite the residual): bench times those forms
(`as_model_calls`). The prenorm GEMM inside is DeepGEMM's `tf32_hc_prenorm_gemm` where vLLM's
`is_deep_gemm_supported()` says so, else vLLM's tilelang GEMM: vLLM decides, the notes say which.
Other backends: vLLM registers them as custom ops (`direct_register_custom_op`): torch.ops.vllm.mhc_pre_aiter,
mhc_post_aiter, mhc_fused_post_pre_aiter, and hc_head_triton (which fills a given `out`); the torch fallback is
plain functions in `kernels/mhc/torch.py`. Which exist depends on the release; a missing one is left out.

On ROCm the model calls the CustomOps of `vllm/model_executor/layers/mhc.py` (MHCPreOp, MHCPostOp, MHCFusedPostPreOp,
HCHeadOp; `models/deepseek_v4/amd/model.py`, 0.34), whose `forward_hip` picks aiter, tilelang or torch/triton per op
by vLLM's own flags: each vllm:<backend> path calls `forward_hip` for the ops that pick its backend (`_rocm`).
On XPU (`forward_xpu`: vllm-xpu-kernels' torch.ops._xpu_C) and CPU (`forward_cpu`: the +cpu build's vllm._cpu_ops)
the paths are unavailable with that reason: no machine this project runs on has either, and nothing is timed.
"""

from __future__ import annotations

import importlib
from typing import Any

from mhcdoctor.kernels import PathImpl, PathUnavailable, Progress

_MODULE = "vllm.model_executor.kernels.mhc"
_LAYER = "vllm.model_executor.layers.mhc"


def load(name: str, device: str, progress: Progress) -> PathImpl:
    backend = name.split(":", 1)[1]
    try:
        vllm = importlib.import_module("vllm")
    except Exception as exc:  # a broken install: a reason
        raise PathUnavailable(f"vllm does not import: {type(exc).__name__}: {exc}") from None
    version = getattr(vllm, "__version__", None)
    platform = _platform()
    rocm = _rocm(name, backend, version, progress) if platform == "rocm" else None
    if rocm is not None:
        return rocm
    if platform in _NOT_CALLED:
        raise PathUnavailable(_NOT_CALLED[platform])
    if backend == "tilelang" and _layers_kernels():
        return _layers_tilelang(name, vllm, version)
    progress(f"importing {_MODULE}.{backend}")
    try:
        module = importlib.import_module(f"{_MODULE}.{backend}")
    except Exception as exc:  # an old vLLM without this backend, or a broken install: a reason
        raise PathUnavailable(f"{_MODULE}.{backend} does not import: {type(exc).__name__}: {exc}") from None
    if backend == "tilelang" and hasattr(module, "mhc_pre_tilelang"):
        return _tilelang(name, module, version, bool(getattr(vllm, "MHCDOCTOR_KERNEL_FIXTURE", False)))
    ops = _torch_ops(module) if backend == "torch" else _custom_ops(backend)
    if not ops:
        raise PathUnavailable(f"this vLLM registers no mHC ops for {backend}")
    return PathImpl(name=name, ops=ops, version=version)


# Platforms whose mHC ops mhcdoctor does not call: what the model calls there, and why not (docs/bench.md).
_NOT_CALLED = {
    "xpu": "on XPU vLLM's model calls the CustomOps' forward_xpu (torch.ops._xpu_C from vllm-xpu-kernels): not"
    " called or timed by mhcdoctor, which has run on no XPU",
    "cpu": "on CPU vLLM's model calls the CustomOps' forward_cpu (vllm._cpu_ops of vLLM's +cpu build): not called"
    " or timed by mhcdoctor, which has run on no +cpu build",
}


def _platform() -> str:
    """vLLM's own platform (vllm.platforms.current_platform): rocm, xpu, cpu, or cuda (anything else)."""
    try:
        from vllm.platforms import current_platform as cp
    except Exception:  # an old or broken release: the CUDA calls, as before
        return "cuda"
    for name in ("rocm", "xpu", "cpu"):
        check = getattr(cp, f"is_{name}", None)
        if callable(check) and check() is True:
            return name
    return "cuda"


# op -> the CustomOp of layers/mhc.py that the DeepSeek-V4 model calls for it on ROCm (vLLM 0.34)
_CUSTOM_OPS = {
    "mhc_pre": "MHCPreOp",
    "mhc_post": "MHCPostOp",
    "mhc_fused_post_pre": "MHCFusedPostPreOp",
    "hc_head": "HCHeadOp",
}
_AITER_NORM = {"mhc_pre": "HAS_AITER_MHC_PRE_NORM", "mhc_fused_post_pre": "HAS_AITER_MHC_FUSED_NORM"}


def hip_backend(layer: Any, op: str, norm: bool) -> str:
    """The backend `forward_hip` of layers/mhc.py (0.34) takes for `op` at DeepSeek-V4's shapes (hc_mult 4, hidden a
    multiple of 256: `_aiter_mhc_supported`), read from vLLM's own flags; `norm`: called with a norm weight."""
    aiter = bool(getattr(layer, "HAS_AITER_MHC", False))
    tilelang = bool(getattr(layer, "HAS_TILELANG_MHC", False))
    if op == "hc_head":  # HCHeadOp.forward_hip: tilelang, else hc_head_triton
        return "tilelang" if tilelang else "triton"
    fused_ok = op != "mhc_fused_post_pre" or bool(getattr(layer, "HAS_AITER_MHC_FUSED", False))
    norm_ok = not norm or op not in _AITER_NORM or bool(getattr(layer, _AITER_NORM[op], False))
    if aiter and fused_ok and norm_ok:
        return "aiter"
    return "tilelang" if tilelang else "torch"


def _rocm(name: str, backend: str, version: str | None, progress: Progress) -> PathImpl | None:
    """None where the release has no layers/mhc.py (before the CustomOps: its model calls the ops directly)."""
    import importlib.util
    import inspect

    progress(f"importing {_LAYER}")
    try:
        if importlib.util.find_spec(_LAYER) is None:
            return None
        layer = importlib.import_module(_LAYER)
    except Exception as exc:
        raise PathUnavailable(f"{_LAYER} does not import: {type(exc).__name__}: {exc}") from None
    classes = {
        op: getattr(layer, c) for op, c in _CUSTOM_OPS.items() if hasattr(getattr(layer, c, None), "forward_hip")
    }
    choice = {op: hip_backend(layer, op, norm=False) for op in classes}
    dispatch = ", ".join(f"{op}->{b}" for op, b in choice.items())
    ops = {op: _forward_hip(cls) for op, cls in classes.items() if choice[op] == backend}
    if not ops:
        raise PathUnavailable(f"on ROCm vLLM's model sends no mHC op to {backend} here (forward_hip: {dispatch})")
    norm = frozenset(
        op for op in ops if op in _AITER_NORM and hip_backend(layer, op, norm=True) == backend and
        "norm_weight" in inspect.signature(classes[op].forward_hip).parameters
    )  # fmt: skip
    notes = [
        f"ROCm: called as the DeepSeek-V4 model calls them, through {_LAYER}'s CustomOps' forward_hip;"
        f" vLLM's dispatch here: {dispatch}" + (f"; with norm_weight for {', '.join(sorted(norm))}" if norm else "")
    ]
    return PathImpl(name=name, ops=ops, version=version, notes=notes, norm_ops=norm)


def _forward_hip(cls: Any) -> Any:
    """`cls.forward_hip` on an instance made without `__init__` (a CustomOp's wants vLLM's config, which only
    chooses among forward_* methods; forward_hip reads module flags and `self.forward_native`)."""
    op = cls.__new__(cls)

    def call(*args: Any, **kwargs: Any) -> Any:
        result = cls.forward_hip(op, *args, **kwargs)
        return tuple(result) if isinstance(result, (list, tuple)) else result

    call.__name__ = f"{cls.__name__}.forward_hip"
    return call


def _layers_kernels() -> bool:
    """vLLM 0.20-0.21: no kernels/mhc package; layers/mhc.py holds the tilelang kernels and the functions the model
    calls (models/deepseek_v4.py: torch.ops.vllm.mhc_pre, mhc_post, mhc_fused_post_pre, hc_head_fused_kernel)."""
    import importlib.util

    try:
        wrapper = importlib.util.find_spec(f"{_MODULE}.tilelang")
    except ModuleNotFoundError:  # no kernels/mhc package at all
        wrapper = None
    except Exception:  # a broken vllm package: the usual import below says why
        return False
    try:
        return wrapper is None and importlib.util.find_spec(_LAYER) is not None
    except Exception:
        return False


# op -> the function of 0.20-0.21's layers/mhc.py that the model calls for it (0.20 has no fused op, and its hc_head
# is plain torch under torch.compile in models/deepseek_v4.py: not a tilelang op)
_LAYERS = {
    "mhc_pre": "mhc_pre",
    "mhc_post": "mhc_post",
    "mhc_fused_post_pre": "mhc_fused_post_pre",
    "hc_head": "_hc_head_fused_kernel",
}


def _layers_tilelang(name: str, vllm: Any, version: str | None) -> PathImpl:
    try:
        module = importlib.import_module(_LAYER)
    except Exception as exc:
        raise PathUnavailable(f"{_LAYER} does not import: {type(exc).__name__}: {exc}") from None
    ops = {op: getattr(module, f) for op, f in _LAYERS.items() if callable(getattr(module, f, None))}
    if "hc_head" in ops:
        ops["hc_head"] = _head_into_out(ops["hc_head"])
    notes = [
        "called as the DeepSeek-V4 model calls them (vLLM 0.20-0.21: layers/mhc.py's "
        + ", ".join(_LAYERS[op] for op in ops)
        + "); their mhc_pre and fused op have no prenorm GEMM but DeepGEMM's tf32_hc_prenorm_gemm",
        f"prenorm GEMM: {_prenorm_gemm()}",
    ]
    if getattr(vllm, "MHCDOCTOR_KERNEL_FIXTURE", False):
        notes.append(
            f"vLLM is not installed: vLLM {version}'s kernel files from its wheel, with stand-ins for the rest"
        )
    return PathImpl(name=name, ops=ops, version=version, notes=notes)


# op -> the function of kernels/mhc/tilelang.py the model calls for it (vLLM 0.23-0.34; 0.22's hc_head below)
_TILELANG = {
    "mhc_pre": "mhc_pre_tilelang",
    "mhc_post": "mhc_post_tilelang",
    "mhc_fused_post_pre": "mhc_fused_post_pre_tilelang",
    "hc_head": "hc_head_fused_kernel_tilelang",
}
# 0.22: hc_head fills a given `out` (HCHeadOp.forward_cuda in layers/mhc.py allocates it), as hc_head_triton does
_HEAD_INTO_OUT = "_hc_head_fused_kernel_tilelang"
_REUSE = "mhc_fused_post_pre_tilelang_reuse_residual"  # 0.34: DeepseekV4Model.forward passes reuse_residual=True


def _tilelang(name: str, module: Any, version: str | None, fixture: bool) -> PathImpl:
    import inspect

    ops = {op: getattr(module, f) for op, f in _TILELANG.items() if callable(getattr(module, f, None))}
    if "hc_head" not in ops and callable(getattr(module, _HEAD_INTO_OUT, None)):
        ops["hc_head"] = _head_into_out(getattr(module, _HEAD_INTO_OUT))
    model = dict(ops)
    if callable(getattr(module, _REUSE, None)):
        model["mhc_fused_post_pre"] = getattr(module, _REUSE)
    norm = frozenset(
        op for op in ("mhc_pre", "mhc_fused_post_pre") if op in model and
        "norm_weight" in inspect.signature(model[op]).parameters
    )  # fmt: skip
    notes = [
        "called as the DeepSeek-V4 model calls them: "
        + ", ".join(f"{op}={getattr(f, '__name__', op)}" for op, f in model.items())
        + (f"; with norm_weight for {', '.join(sorted(norm))}" if norm else "")
        + "; the first layer's pre (mhc_pre_broadcast_tilelang in 0.26+, DeepGEMM only) is timed as mhc_pre",
        f"prenorm GEMM: {_prenorm_gemm()}",
    ]
    if fixture:
        notes.append(
            f"vLLM is not installed: vLLM {version}'s kernel files from its wheel, with stand-ins for the rest"
        )
    mutates = frozenset(
        {"mhc_fused_post_pre"} if model.get("mhc_fused_post_pre") is not ops.get("mhc_fused_post_pre") else ()
    )
    return PathImpl(
        name=name, ops=ops, version=version, notes=notes, as_model_calls=model, norm_ops=norm, mutates=mutates
    )


def _prenorm_gemm() -> str:
    """Which prenorm GEMM vLLM's tilelang ops run here (`_hc_prenorm_gemm_outputs` in kernels/mhc/tilelang.py)."""
    try:
        from vllm.utils.deep_gemm import is_deep_gemm_supported

        on = bool(is_deep_gemm_supported())
    except Exception as exc:  # an old release, a broken DeepGEMM: vLLM's own check fails the same way
        return f"unknown (vllm.utils.deep_gemm.is_deep_gemm_supported: {type(exc).__name__}: {exc})"
    return "DeepGEMM tf32_hc_prenorm_gemm" if on else "vLLM's tilelang GEMM (DeepGEMM is off here)"


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
