"""DeepSeek's TileKernels (PyPI `tile-kernels`, github.com/deepseek-ai/TileKernels): its mHC kernels as a path.

Called through its public modules (tile-kernels 1.0.0, `tile_kernels/modeling/mhc/`), with shapes adapted to the
reference's signature:
- `ops.mhc_pre_big_fuse(residual, fn, mhc_scale, mhc_base, rms_eps, mhc_pre_eps, mhc_sinkhorn_eps,
  mhc_post_mult_value, sinkhorn_repeat)` returns (post_mix, comb_mix, layer_input); post_mix comes back as
  [..., n, 1] in 1.0.0 and as [T, n] in other versions, so it is reshaped to the reference's [..., n, 1]. It rounds
  fn to tf32 for the GEMM (`round_to_tf32`), which verify's tolerances allow for.
- `ops.mhc_post(x, residual, post_layer_mix, comb_res_mix)` takes a leading batch axis
  (`num_seqs, num_tokens, mhc, hidden = residual.shape` in `mhc/post_kernel.py`): the token axis gets one.
- `functional.mhc_head(residual, fn, scale, base, norm_eps=, pre_eps=)`: its mix kernel asserts a 3-D mix
  ([batch, tokens, n]), so the residual gets a leading batch axis too.
There is no fused post+pre op: the fused op is post, then pre, as a model without one runs them.
`import tile_kernels` imports every subpackage, and `tile_kernels/quant/common.py` imports
`tilelang.utils.target`; a tilelang where that moved fails the import: the path is unavailable with that reason.
"""

from __future__ import annotations

from typing import Any

from mhcdoctor.kernels import OpUnsupported, PathImpl, PathUnavailable, Progress

OPS = ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")


def load(name: str, device: str, progress: Progress) -> PathImpl:
    from importlib import metadata

    try:
        version: str | None = metadata.version("tile-kernels")
    except metadata.PackageNotFoundError:
        version = None
    progress("importing tile_kernels")
    try:
        from tile_kernels.modeling.mhc import functional, ops
    except Exception as exc:  # a tilelang API that moved, a missing CUDA runtime: a reason with its evidence
        tilelang = _tilelang_version()
        raise PathUnavailable(
            f"tile_kernels {version or '(version unknown)'} does not import with tilelang {tilelang}: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not device.startswith("cuda"):
        raise PathUnavailable("TileKernels' tilelang kernels need a GPU (pass --device N, not cpu)")
    return PathImpl(name=name, ops=_Ops(ops, functional).as_dict(), version=version)


def _tilelang_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tilelang")
    except metadata.PackageNotFoundError:
        return "(not installed)"


class _Ops:
    def __init__(self, ops: Any, functional: Any) -> None:
        self._ops = ops
        self._functional = functional

    def as_dict(self) -> dict[str, Any]:
        return {
            "mhc_pre": self.mhc_pre,
            "mhc_post": self.mhc_post,
            "mhc_fused_post_pre": self.mhc_fused_post_pre,
            "hc_head": self.hc_head,
        }

    @staticmethod
    def _check(residual: Any) -> None:
        import torch

        if residual.dtype != torch.bfloat16:
            raise OpUnsupported(f"TileKernels' mHC kernels take a bf16 residual, not {residual.dtype}")

    def mhc_pre(
        self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_pre_eps: float,
        hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any]:  # fmt: skip
        self._check(residual)
        hc, outer = residual.shape[-2], residual.shape[:-2]
        post, comb, layer_input = self._ops.mhc_pre_big_fuse(
            residual.contiguous(), fn.float().contiguous(), hc_scale.float().contiguous(),
            hc_base.float().contiguous(), rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat,
        )  # fmt: skip
        return post.reshape(*outer, hc, 1), comb.reshape(*outer, hc, hc), layer_input.reshape(*outer, -1)

    def mhc_post(self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
        self._check(residual)
        hc, hidden = residual.shape[-2], residual.shape[-1]
        out = self._ops.mhc_post(
            x.reshape(1, -1, hidden).contiguous(),
            residual.reshape(1, -1, hc, hidden).contiguous(),
            post_layer_mix.reshape(1, -1, hc, 1).float().contiguous(),
            comb_res_mix.reshape(1, -1, hc, hc).float().contiguous(),
        )
        return out.reshape(residual.shape)

    def mhc_fused_post_pre(
        self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any, fn: Any, hc_scale: Any, hc_base: Any,
        rms_eps: float, hc_pre_eps: float, hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any, Any]:  # fmt: skip
        new_residual = self.mhc_post(x, residual, post_layer_mix, comb_res_mix)
        pre = self.mhc_pre(new_residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                           hc_post_mult_value, sinkhorn_repeat)  # fmt: skip
        return (new_residual, *pre)

    def hc_head(self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_eps: float) -> Any:
        self._check(residual)
        hc, hidden = residual.shape[-2], residual.shape[-1]
        out = self._functional.mhc_head(
            residual.reshape(1, -1, hc, hidden).contiguous(), fn.float().contiguous(),
            hc_scale.float().reshape(1).contiguous(), hc_base.float().contiguous(),
            norm_eps=rms_eps, mhc_mult=hc, pre_eps=hc_eps,
        )  # fmt: skip
        return out.reshape(*residual.shape[:-2], hidden)
