"""The aiter path: AMD's aiter.ops.mhc kernels, called the way the installed version expects.

aiter (ROCm/aiter `aiter/ops/mhc.py`): `mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps,
hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat)` returns (post_mix, comb_mix, layer_input);
`mhc_post(out, x, residual, post_layer_mix, comb_res_mix)` writes into `out`; `mhc_fused_post_pre` (0.1.16+)
returns (post_mix, comb_mix, layer_input, next_residual). Before 0.1.14 aiter allocates its outputs without
`device=` (the fix is #2916), so every call runs under a `torch.device` context, which newer versions ignore.
No AMD GPU exists where mhcdoctor is developed: this path is exercised there only through a stand-in package.
"""

from __future__ import annotations

from typing import Any

from mhcdoctor.kernels import PathImpl, PathUnavailable, Progress


def load(name: str, device: str, progress: Progress) -> PathImpl:
    from importlib import metadata

    try:
        version = metadata.version("amd-aiter")
    except metadata.PackageNotFoundError:
        version = None
    progress("importing aiter.ops.mhc")
    try:
        from aiter.ops import mhc
    except Exception as exc:  # PyPI's unrelated `aiter`, a missing HIP runtime, a failed JIT: a reason
        raise PathUnavailable(f"aiter.ops.mhc does not import: {type(exc).__name__}: {exc}") from None
    if version is None:
        raise PathUnavailable("the importable `aiter` is not AMD's aiter (no amd-aiter distribution)")
    ops: dict[str, Any] = {"mhc_pre": _pre(mhc, device), "mhc_post": _post(mhc, device)}
    if hasattr(mhc, "mhc_fused_post_pre"):
        ops["mhc_fused_post_pre"] = _fused(mhc, device)
    notes = [] if "mhc_fused_post_pre" in ops else ["aiter.ops.mhc has no mhc_fused_post_pre (before 0.1.16)"]
    return PathImpl(name=name, ops=ops, version=version, notes=notes)


def _pre(mhc: Any, device: str) -> Any:
    def mhc_pre(residual: Any, *args: Any) -> tuple[Any, Any, Any]:
        import torch

        with torch.device(device):
            return tuple(mhc.mhc_pre(residual, *args))

    return mhc_pre


def _post(mhc: Any, device: str) -> Any:
    def mhc_post(x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
        import torch

        out = torch.empty_like(residual)
        with torch.device(device):
            mhc.mhc_post(out, x, residual, post_layer_mix, comb_res_mix)
        return out

    return mhc_post


def _fused(mhc: Any, device: str) -> Any:
    def mhc_fused_post_pre(x: Any, residual: Any, *args: Any) -> tuple[Any, Any, Any, Any]:
        import torch

        with torch.device(device):
            post, comb, layer_input, new_residual = mhc.mhc_fused_post_pre(x, residual, *args)
        return new_residual, post, comb, layer_input

    return mhc_fused_post_pre
