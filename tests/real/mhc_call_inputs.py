"""The mHC ops' inputs as vLLM's DeepSeek-V4 model passes them, for the children that call real vLLM CustomOps
(vllm_plugin_child.py, vllm_platform_child.py): each child's run with and without the plugin draws the same values."""

from __future__ import annotations

import torch

# rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat
SCALARS = (1e-6, 1e-6, 1e-6, 2.0, 3)


def inputs(tokens: int, hc: int, hidden: int, g: torch.Generator) -> dict[str, torch.Tensor]:
    mix = hc * (hc + 2)
    return {
        "residual": torch.randn(tokens, hc, hidden, generator=g).bfloat16(),
        "x": torch.randn(tokens, hidden, generator=g).bfloat16(),
        "fn": torch.randn(mix, hc * hidden, generator=g) * 0.01,
        "scale": torch.ones(3),
        "base": torch.randn(mix, generator=g) * 0.1,
        "post": torch.rand(tokens, hc, 1, generator=g),
        "comb": torch.rand(tokens, hc, hc, generator=g) / hc,
        "head_fn": torch.randn(hc, hc * hidden, generator=g) * 0.01,
        "head_scale": torch.ones(1),
        "head_base": torch.randn(hc, generator=g) * 0.1,
    }
