"""Stand-in kernels for the mutation suite: the torch reference with one planted bug each, and correct variants.

Each bug is one that a real mHC kernel had or could have, planted where it shows:
- sqrsum-race: aiter #3033; rows 16-63 of each 64-row tile read another row's sum of squares (only > 16 tokens).
- layer-input-sqrt2: vLLM #56342; a 32-lane split on 64-lane wavefronts halves a sum, layer_input √2 too large.
- comb-transposed: mhc_post reads comb[t, j, i] instead of comb[t, i, j].
- sinkhorn-short: one Sinkhorn iteration short.
- dropped-eps: the RMS epsilon dropped, so an all-zero token row divides by zero.
- stale-padding: the output buffer is reused between calls and the rows of the last partial 8-row group are
  taken for padding and not written, so they keep the previous call's values.
Correct variants: `reference` itself, `tf32`, which rounds fn to tf32 for the GEMM as production kernels do, and
`unrounded`, whose fused op computes its pre's mixes from the new residual before rounding it to bf16 (vLLM's
single-kernel `mhc_fused_tilelang` does: its float32 `new_r` feeds the prenorm GEMM).
`unrounded-sinkhorn-short` is that order with one Sinkhorn iteration short: a wrong kernel in the other order.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from mhcdoctor import reference as ref
from mhcdoctor.kernels import PathImpl

Tensor = torch.Tensor
TILE, RACE_LANES = 64, 16


def _pre(
    residual: Tensor, fn: Tensor, hc_scale: Tensor, hc_base: Tensor, rms_eps: float, hc_pre_eps: float,
    hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int, *, bug: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    n, hidden = residual.shape[-2], residual.shape[-1]
    flat = residual.reshape(-1, n, hidden)
    mixes_raw, sqrsum = ref.prenorm_gemm(flat, _tf32(fn) if bug == "tf32" else fn)
    if bug == "sqrsum-race":
        rows = torch.arange(flat.shape[0], device=flat.device)
        donor = torch.where(rows % TILE >= RACE_LANES, rows - RACE_LANES, rows)
        sqrsum = sqrsum[donor]
    mixes = ref.rms_scale(mixes_raw, sqrsum, n * hidden, 0.0 if bug == "dropped-eps" else rms_eps)
    pre, post, logits = ref.split_mixes(mixes, hc_scale, hc_base, n, hc_pre_eps, hc_post_mult_value)
    comb = ref.sinkhorn(logits, sinkhorn_repeat - (bug == "sinkhorn-short"), hc_sinkhorn_eps)
    layer_input = ref.apply_pre(pre, flat)
    if bug == "layer-input-sqrt2":
        layer_input = (layer_input.float() * math.sqrt(2.0)).to(torch.bfloat16)
    outer = residual.shape[:-2]
    return post.view(*outer, n, 1), comb.view(*outer, n, n), layer_input.view(*outer, hidden)


def _tf32(t: Tensor) -> Tensor:
    """Round float32 to tf32 (10 explicit mantissa bits, nearest): what the tensor cores read."""
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


class _StalePost:
    """mhc_post into a buffer kept between calls, skipping the rows of the last partial group of 8."""

    def __init__(self) -> None:
        self.buffers: dict[tuple[Any, ...], Tensor] = {}

    def __call__(self, x: Tensor, residual: Tensor, post_layer_mix: Tensor, comb_res_mix: Tensor) -> Tensor:
        key = (tuple(residual.shape), residual.device)
        out = self.buffers.setdefault(key, torch.zeros_like(residual))
        written = residual.shape[0] // 8 * 8
        out[:written] = ref.mhc_post(x[:written], residual[:written], post_layer_mix[:written], comb_res_mix[:written])
        return out


def _fused_unrounded(
    x: Tensor, residual: Tensor, post_layer_mix: Tensor, comb_res_mix: Tensor, fn: Tensor, hc_scale: Tensor,
    hc_base: Tensor, rms_eps: float, hc_pre_eps: float, hc_sinkhorn_eps: float, hc_post_mult_value: float,
    sinkhorn_repeat: int, *, bug: str,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:  # fmt: skip
    """The fused op as vLLM's single kernel orders it: the mixes from the float32 new residual, the weighted sum
    from the bf16 one it returns."""
    n, hidden = residual.shape[-2], residual.shape[-1]
    mixed = torch.einsum("tij,tih->tjh", comb_res_mix.float(), residual.float())
    new_f32 = mixed + post_layer_mix.float().view(-1, n, 1) * x.float().unsqueeze(-2)
    new_residual = new_f32.to(torch.bfloat16)
    mixes = ref.rms_scale(*ref.prenorm_gemm(new_f32, fn), n * hidden, rms_eps)
    pre, post, logits = ref.split_mixes(mixes, hc_scale, hc_base, n, hc_pre_eps, hc_post_mult_value)
    comb = ref.sinkhorn(logits, sinkhorn_repeat - (bug == "sinkhorn-short"), hc_sinkhorn_eps)
    return new_residual, post.view(-1, n, 1), comb, ref.apply_pre(pre, new_residual)


def mutant(bug: str) -> PathImpl:
    """The reference with `bug` planted in every op it touches ("tf32" and "reference" are correct)."""

    def pre(*args: Any, **scalars: Any) -> tuple[Tensor, Tensor, Tensor]:
        return _pre(*args, **scalars, bug=bug)

    post = _StalePost() if bug == "stale-padding" else ref.mhc_post
    if bug == "comb-transposed":

        def post(x: Tensor, residual: Tensor, post_layer_mix: Tensor, comb_res_mix: Tensor) -> Tensor:
            return ref.mhc_post(x, residual, post_layer_mix, comb_res_mix.transpose(-1, -2))

    def fused(x: Tensor, residual: Tensor, post_layer_mix: Tensor, comb_res_mix: Tensor, *args: Any, **kw: Any) -> Any:
        if bug.startswith("unrounded"):
            return _fused_unrounded(
                x, residual, post_layer_mix, comb_res_mix, *args, bug=bug.removeprefix("unrounded-")
            )
        new_residual = post(x, residual, post_layer_mix, comb_res_mix)
        return (new_residual, *pre(new_residual, *args, **kw))

    def head(residual: Tensor, fn: Tensor, hc_scale: Tensor, hc_base: Tensor, rms_eps: float, hc_eps: float) -> Any:
        return ref.hc_head(residual, fn, hc_scale, hc_base, 0.0 if bug == "dropped-eps" else rms_eps, hc_eps)

    return PathImpl(
        name=f"mutant:{bug}",
        ops={"mhc_pre": pre, "mhc_post": post, "mhc_fused_post_pre": fused, "hc_head": head},
    )


BUGS = ("sqrsum-race", "layer-input-sqrt2", "comb-transposed", "sinkhorn-short", "dropped-eps", "stale-padding")
