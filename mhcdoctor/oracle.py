"""The independent oracle: the mHC ops in float64 NumPy, written apart from the torch reference.

Every path is judged against this, the torch reference included, so a mistake shared by the reference and a
kernel cannot hide. It follows the same sources (vLLM `kernels/mhc/torch.py`, DeepSeek TileKernels
`tile_kernels/torch/mhc.py`, vLLM `models/deepseek_v4.py` hc_head) but computes in float64 from the exact
bf16/float32 input values. Each op returns float64 arrays; where an op's result is a bf16 tensor that a later
stage reads (the fused op's new residual), it is rounded to bf16 here too, as the kernels must.

Inputs are NumPy arrays of any float dtype (bf16 inputs arrive as their exact float32 values).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

F64 = np.float64
# An op's oracle: its inputs as arrays, then its scalars (by name) → its outputs by name, float64.
Oracle = Callable[..., dict[str, np.ndarray]]


def round_bf16(a: np.ndarray) -> np.ndarray:
    """Round to the nearest bf16 (ties to even), returned as float64: float32 bits with the low 16 rounded away.

    In uint32: a finite float32's bits plus 0x8000 at most stay below 2**32 (0xFF7FFFFF + 0x8000), and the rest
    (inf, NaN) are put back as they were."""
    a32 = np.asarray(a, dtype=np.float32)
    bits = a32.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    out: np.ndarray = rounded.view(np.float32).astype(F64)
    finite = np.isfinite(a32)
    if not finite.all():
        out = np.where(finite, out, a32.astype(F64))
    return out


def _sigmoid(z: np.ndarray) -> np.ndarray:
    s: np.ndarray = 1.0 / (1.0 + np.exp(-z))
    return s


def _normed_mixes(residual: np.ndarray, fn: np.ndarray, rms_eps: float) -> np.ndarray:
    """[T, n, H] → [T, m]: (x · fn_k) / sqrt(mean(x²) + eps), x the row flattened over all n*H values."""
    t = residual.shape[0]
    x = residual.reshape(t, -1).astype(F64)
    dots = x @ fn.astype(F64).T  # float64 BLAS
    mean_sq = np.square(x).sum(axis=1) / x.shape[1]
    mixes: np.ndarray = dots / np.sqrt(mean_sq + rms_eps)[:, None]
    return mixes


def _sinkhorn(logits: np.ndarray, repeat: int, eps: float) -> np.ndarray:
    """[T, n, n]: row softmax + eps; divide by column sums (+eps); then repeat-1 times rows, then columns."""
    shifted = np.exp(logits - logits.max(axis=2, keepdims=True))
    c: np.ndarray = shifted / shifted.sum(axis=2, keepdims=True) + eps
    c = c / (c.sum(axis=1, keepdims=True) + eps)
    for _ in range(repeat - 1):
        c = c / (c.sum(axis=2, keepdims=True) + eps)
        c = c / (c.sum(axis=1, keepdims=True) + eps)
    return c


def _weighted_streams(weights: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """[T, n] weights, [T, n, H] streams → [T, H] = Σ_i w_i · R_i."""
    y: np.ndarray = np.matmul(weights.astype(F64)[:, None, :], residual.astype(F64))[:, 0, :]
    return y


def mhc_pre(
    residual: np.ndarray,
    fn: np.ndarray,
    hc_scale: np.ndarray,
    hc_base: np.ndarray,
    rms_eps: float,
    hc_pre_eps: float,
    hc_sinkhorn_eps: float,
    hc_post_mult_value: float,
    sinkhorn_repeat: int,
    *,
    norm_weight: np.ndarray | None = None,
    norm_eps: float = 1e-6,
    mixes_of: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """residual [T, n, H] → post_mix [T, n, 1], comb_mix [T, n, n], layer_input [T, H] (float64, unrounded).

    With `norm_weight`: layer_input is RMS-normalised (mean of its squares + norm_eps) and scaled by the weight as
    the bf16 tensor the kernels hold. With `mixes_of`: the mixes (and so every coefficient) come from that tensor,
    the weighted sum from `residual` (the fused op's pre from its new residual before it is rounded).
    """
    t, n, _ = residual.shape
    scale = hc_scale.astype(F64)
    base = hc_base.astype(F64)
    mixes = _normed_mixes(residual if mixes_of is None else mixes_of, fn, rms_eps)
    pre = _sigmoid(mixes[:, :n] * scale[0] + base[:n]) + hc_pre_eps
    post = _sigmoid(mixes[:, n : 2 * n] * scale[1] + base[n : 2 * n]) * hc_post_mult_value
    logits = mixes[:, 2 * n :].reshape(t, n, n) * scale[2] + base[2 * n :].reshape(1, n, n)
    comb = _sinkhorn(logits, sinkhorn_repeat, hc_sinkhorn_eps)
    return {
        "post_mix": post.reshape(t, n, 1),
        "comb_mix": comb,
        "layer_input": _rms_norm(_weighted_streams(pre, residual), norm_weight, norm_eps),
    }


def _rms_norm(y: np.ndarray, weight: np.ndarray | None, eps: float) -> np.ndarray:
    if weight is None:
        return y
    normed: np.ndarray = y / np.sqrt(np.square(y).mean(axis=1, keepdims=True) + eps) * round_bf16(weight)[None, :]
    return normed


def mhc_post(
    x: np.ndarray, residual: np.ndarray, post_layer_mix: np.ndarray, comb_res_mix: np.ndarray
) -> dict[str, np.ndarray]:
    """out[t, j, :] = post[t, j] · x[t] + Σ_i comb[t, i, j] · R[t, i]  (i indexes the input stream)."""
    t, n, _ = residual.shape
    post = post_layer_mix.reshape(t, n, 1).astype(F64)
    mixed = np.matmul(comb_res_mix.astype(F64).transpose(0, 2, 1), residual.astype(F64))  # [t, j, h] = Σ_i c_ij R_i
    return {"residual_out": mixed + post * x.astype(F64)[:, None, :]}


def mhc_fused_post_pre(
    x: np.ndarray,
    residual: np.ndarray,
    post_layer_mix: np.ndarray,
    comb_res_mix: np.ndarray,
    fn: np.ndarray,
    hc_scale: np.ndarray,
    hc_base: np.ndarray,
    rms_eps: float,
    hc_pre_eps: float,
    hc_sinkhorn_eps: float,
    hc_post_mult_value: float,
    sinkhorn_repeat: int,
    *,
    norm_weight: np.ndarray | None = None,
    norm_eps: float = 1e-6,
    pre_from_rounded: bool = True,
) -> dict[str, np.ndarray]:
    """mhc_post, rounded to bf16 (the new residual is a bf16 tensor), then mhc_pre on it.

    The op's contract allows either order for the pre's mixes: from the bf16 residual it returns (DeepSeek's
    reference, DeepSeek-V4 `inference/model.py`: hc_post returns `y.type_as(x)` and the next hc_pre reads it;
    TileKernels has no fused op, its `mhc_post_ref` returns `.bfloat16()`), or from the float32 sum before it is
    rounded (`pre_from_rounded=False`: vLLM's single-kernel `mhc_fused_tilelang`, its fused op at 1-32 tokens, in
    kernels/mhc/tilelang_kernels.py, feeds its float32 `new_r` to the prenorm GEMM and the sum of squares).
    layer_input is the weighted sum of the bf16 residual either way (vLLM's next kernel reads `residual_out`).
    """
    new_residual = mhc_post(x, residual, post_layer_mix, comb_res_mix)["residual_out"]
    pre = mhc_pre(
        round_bf16(new_residual),
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
        mixes_of=None if pre_from_rounded else new_residual,
    )
    return {"residual_out": new_residual, **pre}


def hc_head(
    residual: np.ndarray, fn: np.ndarray, hc_scale: np.ndarray, hc_base: np.ndarray, rms_eps: float, hc_eps: float
) -> dict[str, np.ndarray]:
    """y[t] = Σ_i (sigmoid(mix_i · s + b_i) + eps) · R[t, i]: the pre half of mhc_pre, no Sinkhorn."""
    mixes = _normed_mixes(residual, fn, rms_eps)
    pre = _sigmoid(mixes * float(np.asarray(hc_scale, dtype=F64).reshape(-1)[0]) + hc_base.astype(F64)) + hc_eps
    return {"output": _weighted_streams(pre, residual)}


# The fused op's two orders (`pre_from_rounded`), as verify's rows name them (an output verdict's `pre_from`).
PRE_FROM = {True: "bf16 residual", False: "float32 residual"}

BY_OP: dict[str, Oracle] = {
    "mhc_pre": mhc_pre,
    "mhc_post": mhc_post,
    "mhc_fused_post_pre": mhc_fused_post_pre,
    "hc_head": hc_head,
}
