"""The torch reference of the mHC ops: what every path must compute, written as plainly as the sources.

Sources, checked line by line: vLLM `vllm/model_executor/kernels/mhc/torch.py` (mhc_pre_torch, mhc_post_torch),
vLLM `vllm/model_executor/models/deepseek_v4.py` (hc_head), deepseek-ai/TileKernels `tile_kernels/torch/mhc.py`
(sinkhorn_normalize_ref, mhc_post_ref). Argument order follows vLLM and aiter, so a path's kernel and this
reference are called alike. Runs on any torch device; `mhcdoctor verify` runs it on the GPU as the `torch` path.

mhc_pre is split into its stages (prenorm GEMM, split mixes, Sinkhorn, weighted sum) so that the mutation suite
can replace one stage with a planted bug and leave the rest as it is.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def prenorm_gemm(residual_flat: Tensor, fn: Tensor) -> tuple[Tensor, Tensor]:
    """x = residual as [T, hc*H] float32 → (x @ fn.T [T, m], sum(x^2) [T, 1]); the RMS factor is applied later."""
    x = residual_flat.reshape(residual_flat.shape[0], -1).to(torch.float32)
    return x @ fn.t(), x.square().sum(dim=-1, keepdim=True)


def rms_scale(mixes_raw: Tensor, sqrsum: Tensor, numel: int, rms_eps: float) -> Tensor:
    # vLLM mhc_pre_torch: mixes * rsqrt(sqrsum / (hc_mult * hidden_size) + rms_eps)
    return mixes_raw * torch.rsqrt(sqrsum / numel + rms_eps)


def split_mixes(
    mixes: Tensor, hc_scale: Tensor, hc_base: Tensor, hc_mult: int, hc_pre_eps: float, hc_post_mult_value: float
) -> tuple[Tensor, Tensor, Tensor]:
    """[T, m] mixes → pre [T, n] (sigmoid + eps), post [T, n] (sigmoid * mult), comb logits [T, n, n]."""
    n = hc_mult
    pre = torch.sigmoid(mixes[:, :n] * hc_scale[0] + hc_base[:n]) + hc_pre_eps
    post = torch.sigmoid(mixes[:, n : 2 * n] * hc_scale[1] + hc_base[n : 2 * n]) * hc_post_mult_value
    comb = mixes[:, 2 * n :].view(-1, n, n) * hc_scale[2] + hc_base[2 * n :].view(1, n, n)
    return pre, post, comb


def sinkhorn(comb_logits: Tensor, repeat: int, eps: float) -> Tensor:
    # TileKernels sinkhorn_normalize_ref: softmax over the last axis + eps, a column normalisation, then
    # repeat-1 times rows then columns; it ends on a column normalisation.
    c = torch.softmax(comb_logits, dim=-1) + eps
    c = c / (c.sum(dim=-2, keepdim=True) + eps)
    for _ in range(repeat - 1):
        c = c / (c.sum(dim=-1, keepdim=True) + eps)
        c = c / (c.sum(dim=-2, keepdim=True) + eps)
    return c


def apply_pre(pre: Tensor, residual_flat: Tensor, norm_weight: Tensor | None = None, norm_eps: float = 1e-6) -> Tensor:
    """layer_input[t] = sum_i pre[t, i] * residual[t, i, :], in float32, stored as bf16.

    With `norm_weight`, the RMSNorm that vLLM 0.29+ folds into mhc_pre (vLLM kernels/mhc/torch.py
    `_finalize_layer_input`): the bf16 sum times rsqrt(mean of the float32 sum squared + norm_eps) times the weight
    rounded to bf16.
    """
    summed = torch.sum(pre.unsqueeze(-1) * residual_flat.to(torch.float32), dim=1)
    layer_input = summed.to(torch.bfloat16)
    if norm_weight is None:
        return layer_input
    variance = summed.square().mean(dim=-1, keepdim=True)
    weight = norm_weight.to(torch.bfloat16).to(torch.float32)
    return (layer_input.to(torch.float32) * torch.rsqrt(variance + norm_eps) * weight).to(torch.bfloat16)


def mhc_pre(
    residual: Tensor,
    fn: Tensor,
    hc_scale: Tensor,
    hc_base: Tensor,
    rms_eps: float,
    hc_pre_eps: float,
    hc_sinkhorn_eps: float,
    hc_post_mult_value: float,
    sinkhorn_repeat: int,
    *,
    norm_weight: Tensor | None = None,
    norm_eps: float = 1e-6,
) -> tuple[Tensor, Tensor, Tensor]:
    """residual [..., n, H] bf16 → (post_mix [..., n, 1] f32, comb_mix [..., n, n] f32, layer_input [..., H] bf16).

    `norm_weight` [H] / `norm_eps` (keyword only): the RMSNorm folded into layer_input by newer vLLM and aiter 0.1.15+.
    """
    n, hidden = residual.shape[-2], residual.shape[-1]
    outer = residual.shape[:-2]
    flat = residual.reshape(-1, n, hidden)
    mixes_raw, sqrsum = prenorm_gemm(flat, fn)
    mixes = rms_scale(mixes_raw, sqrsum, n * hidden, rms_eps)
    pre, post, comb_logits = split_mixes(mixes, hc_scale, hc_base, n, hc_pre_eps, hc_post_mult_value)
    comb = sinkhorn(comb_logits, sinkhorn_repeat, hc_sinkhorn_eps)
    layer_input = apply_pre(pre, flat, norm_weight, norm_eps)
    return post.view(*outer, n, 1), comb.view(*outer, n, n), layer_input.view(*outer, hidden)


def mhc_post(x: Tensor, residual: Tensor, post_layer_mix: Tensor, comb_res_mix: Tensor) -> Tensor:
    """out[t, j] = post[t, j] * x[t] + sum_i comb[t, i, j] * residual[t, i]: comb is read transposed (i = input)."""
    mixed = torch.einsum("...ij,...ih->...jh", comb_res_mix.to(torch.float32), residual.to(torch.float32))
    post = post_layer_mix.to(torch.float32).reshape(*residual.shape[:-1], 1)
    return (mixed + post * x.unsqueeze(-2).to(torch.float32)).to(residual.dtype)


def mhc_fused_post_pre(
    x: Tensor,
    residual: Tensor,
    post_layer_mix: Tensor,
    comb_res_mix: Tensor,
    fn: Tensor,
    hc_scale: Tensor,
    hc_base: Tensor,
    rms_eps: float,
    hc_pre_eps: float,
    hc_sinkhorn_eps: float,
    hc_post_mult_value: float,
    sinkhorn_repeat: int,
    *,
    norm_weight: Tensor | None = None,
    norm_eps: float = 1e-6,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """mhc_post then the next mhc_pre on its bf16 result: (residual', post', comb', layer_input'), as vLLM's op."""
    new_residual = mhc_post(x, residual, post_layer_mix, comb_res_mix)
    post, comb, layer_input = mhc_pre(
        new_residual,
        fn,
        hc_scale,
        hc_base,
        rms_eps,
        hc_pre_eps,
        hc_sinkhorn_eps,
        hc_post_mult_value,
        sinkhorn_repeat,
        norm_weight=norm_weight,
        norm_eps=norm_eps,
    )
    return new_residual, post, comb, layer_input


def hc_head(residual: Tensor, fn: Tensor, hc_scale: Tensor, hc_base: Tensor, rms_eps: float, hc_eps: float) -> Tensor:
    """residual [..., n, H] bf16, fn [n, n*H], hc_scale [1], hc_base [n] → [..., H] bf16; no Sinkhorn."""
    n, hidden = residual.shape[-2], residual.shape[-1]
    outer = residual.shape[:-2]
    flat = residual.reshape(-1, n, hidden)
    mixes_raw, sqrsum = prenorm_gemm(flat, fn)
    mixes = rms_scale(mixes_raw, sqrsum, n * hidden, rms_eps)
    pre = torch.sigmoid(mixes * hc_scale + hc_base) + hc_eps
    return apply_pre(pre, flat).view(*outer, hidden)
