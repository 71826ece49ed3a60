"""The triton path: this project's own @triton.jit kernels for hc_head and mhc_post.

vLLM falls back to triton for hc_head when tilelang is absent (`kernels/mhc/triton.py`, hc_head_triton); these
kernels are written here, not taken from vLLM, so that verify proves triton computes mHC-shaped work correctly on
this GPU. Each program handles one token and one block of the hidden axis; sums run in float32.
"""

from __future__ import annotations

from typing import Any

from mhcdoctor.kernels import PathImpl, PathUnavailable, Progress

_BLOCK_H = 512
_BLOCK_K = 1024


def load(name: str, device: str, progress: Progress) -> PathImpl:
    try:
        import triton
    except Exception as exc:  # a broken triton is a reason, not a crash
        raise PathUnavailable(f"triton does not import: {type(exc).__name__}: {exc}") from None
    if not device.startswith("cuda"):
        raise PathUnavailable("triton kernels need a GPU (pass --device N, not cpu)")
    kernels = _build()
    return PathImpl(
        name=name,
        ops={"mhc_post": kernels.mhc_post, "hc_head": kernels.hc_head},
        version=triton.__version__,
    )


def _build() -> Any:
    """Define the kernels (the decorators need triton, which the core install does not)."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def post_kernel(
        x_ptr, res_ptr, post_ptr, comb_ptr, out_ptr, H, HC: tl.constexpr, HC_P: tl.constexpr, BLOCK: tl.constexpr
    ):
        t = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        streams = tl.arange(0, HC_P)
        col_ok = cols < H
        stream_ok = streams < HC
        ok2 = stream_ok[:, None] & col_ok[None, :]
        res = tl.load(res_ptr + t * HC * H + streams[:, None] * H + cols[None, :], mask=ok2, other=0.0)
        x = tl.load(x_ptr + t * H + cols, mask=col_ok, other=0.0).to(tl.float32)
        post = tl.load(post_ptr + t * HC + streams, mask=stream_ok, other=0.0)
        # comb[t, i, j]: i (rows) the input stream, j (columns) the output stream
        comb = tl.load(
            comb_ptr + t * HC * HC + streams[:, None] * HC + streams[None, :],
            mask=stream_ok[:, None] & stream_ok[None, :],
            other=0.0,
        )
        mixed = tl.sum(comb[:, :, None] * res.to(tl.float32)[:, None, :], axis=0)
        out = mixed + post[:, None] * x[None, :]
        tl.store(out_ptr + t * HC * H + streams[:, None] * H + cols[None, :], out.to(tl.bfloat16), mask=ok2)

    @triton.jit
    def head_mix_kernel(
        res_ptr, fn_ptr, scale_ptr, base_ptr, pre_ptr, K: tl.constexpr, rms_eps, hc_eps,
        HC: tl.constexpr, HC_P: tl.constexpr, BLOCK: tl.constexpr,
    ):  # fmt: skip
        t = tl.program_id(0).to(tl.int64)
        rows = tl.arange(0, HC_P)
        row_ok = rows < HC
        acc = tl.zeros((HC_P, BLOCK), dtype=tl.float32)
        sq = tl.zeros((BLOCK,), dtype=tl.float32)
        for k0 in range(0, K, BLOCK):
            ks = k0 + tl.arange(0, BLOCK)
            k_ok = ks < K
            x = tl.load(res_ptr + t * K + ks, mask=k_ok, other=0.0).to(tl.float32)
            fn = tl.load(fn_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            acc += fn * x[None, :]
            sq += x * x
        inv_rms = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / K + rms_eps)
        mixes = tl.sum(acc, axis=1) * inv_rms
        scale = tl.load(scale_ptr)
        base = tl.load(base_ptr + rows, mask=row_ok, other=0.0)
        pre = tl.sigmoid(mixes * scale + base) + hc_eps
        tl.store(pre_ptr + t * HC + rows, pre, mask=row_ok)

    @triton.jit
    def head_sum_kernel(res_ptr, pre_ptr, out_ptr, H, HC: tl.constexpr, HC_P: tl.constexpr, BLOCK: tl.constexpr):
        t = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        streams = tl.arange(0, HC_P)
        col_ok = cols < H
        stream_ok = streams < HC
        res = tl.load(
            res_ptr + t * HC * H + streams[:, None] * H + cols[None, :],
            mask=stream_ok[:, None] & col_ok[None, :],
            other=0.0,
        )
        pre = tl.load(pre_ptr + t * HC + streams, mask=stream_ok, other=0.0)
        y = tl.sum(pre[:, None] * res.to(tl.float32), axis=0)
        tl.store(out_ptr + t * H + cols, y.to(tl.bfloat16), mask=col_ok)

    class Kernels:
        @staticmethod
        def mhc_post(x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
            hc, hidden = residual.shape[-2], residual.shape[-1]
            res = residual.reshape(-1, hc, hidden).contiguous()
            tokens = res.shape[0]
            out = torch.empty_like(res)
            if tokens:
                grid = (tokens, triton.cdiv(hidden, _BLOCK_H))
                post_kernel[grid](
                    x.reshape(tokens, hidden).contiguous(),
                    res,
                    post_layer_mix.reshape(tokens, hc).float().contiguous(),
                    comb_res_mix.reshape(tokens, hc, hc).float().contiguous(),
                    out,
                    hidden,
                    HC=hc,
                    HC_P=triton.next_power_of_2(hc),
                    BLOCK=_BLOCK_H,
                )
            return out.view(residual.shape)

        @staticmethod
        def hc_head(residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_eps: float) -> Any:
            hc, hidden = residual.shape[-2], residual.shape[-1]
            res = residual.reshape(-1, hc, hidden).contiguous()
            tokens = res.shape[0]
            out = torch.empty(tokens, hidden, dtype=torch.bfloat16, device=res.device)
            pre = torch.empty(tokens, hc, dtype=torch.float32, device=res.device)
            if tokens:
                hc_p = triton.next_power_of_2(hc)
                head_mix_kernel[(tokens,)](
                    res, fn.float().contiguous(), hc_scale.float(), hc_base.float().contiguous(), pre,
                    hc * hidden, rms_eps, hc_eps, HC=hc, HC_P=hc_p, BLOCK=_BLOCK_K,
                )  # fmt: skip
                head_sum_kernel[(tokens, triton.cdiv(hidden, _BLOCK_H))](
                    res, pre, out, hidden, HC=hc, HC_P=hc_p, BLOCK=_BLOCK_H
                )
            return out.view(*residual.shape[:-2], hidden)

    return Kernels
