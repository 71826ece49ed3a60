"""The bytes each mHC op must move: every input read once and every output written once, at its dtype.

The residual streams, x, layer_input and the outputs that replace the residual are bf16 (2 bytes); the mixing
coefficients (post_mix, comb_mix), fn, hc_scale and hc_base are float32 (4 bytes), as vLLM passes them
(docs/bench.md has the table). This is the least traffic the op can cause: a kernel that
reads the residual twice (once for the GEMM, once to apply the mix) moves more, and its fraction of peak
bandwidth shows that. For T tokens, n = hc_mult streams, hidden H, m = n(n+2):
- mhc_pre reads residual T·n·H bf16, fn m·n·H f32, hc_scale 3 f32, hc_base m f32; writes post_mix T·n f32,
  comb_mix T·n² f32, layer_input T·H bf16.
- mhc_post reads x T·H bf16, residual T·n·H bf16, post_mix T·n f32, comb_mix T·n² f32; writes the new residual.
- mhc_fused_post_pre reads what mhc_post reads and fn, hc_scale, hc_base; writes the new residual and what mhc_pre
  writes (the new residual is not read back: that is what fusing saves).
- hc_head reads residual T·n·H bf16, fn n·n·H f32, hc_scale 1 f32, hc_base n f32; writes the output T·H bf16.
"""

from __future__ import annotations

BF16 = 2
F32 = 4


def op_bytes(op: str, tokens: int, hidden: int, hc_mult: int) -> dict[str, int]:
    """{"read": bytes, "written": bytes} for one call of `op` on `tokens` tokens."""
    t, n, h = tokens, hc_mult, hidden
    m = n * (n + 2)
    residual = t * n * h * BF16
    mixes_out = t * n * F32 + t * n * n * F32  # post_mix, comb_mix
    pre_weights = m * n * h * F32 + 3 * F32 + m * F32  # fn, hc_scale, hc_base
    post_in = t * h * BF16 + residual + mixes_out  # x, residual, post_layer_mix, comb_res_mix
    if op == "mhc_pre":
        return {"read": residual + pre_weights, "written": mixes_out + t * h * BF16}
    if op == "mhc_post":
        return {"read": post_in, "written": residual}
    if op == "mhc_fused_post_pre":
        return {"read": post_in + pre_weights, "written": residual + mixes_out + t * h * BF16}
    if op == "hc_head":
        return {"read": residual + n * n * h * F32 + F32 + n * F32, "written": t * h * BF16}
    raise ValueError(f"unknown op {op!r}")


def total_bytes(op: str, tokens: int, hidden: int, hc_mult: int) -> int:
    moved = op_bytes(op, tokens, hidden, hc_mult)
    return moved["read"] + moved["written"]
