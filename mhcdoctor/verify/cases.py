"""What verify runs: the shapes, and deterministic inputs at realistic scales that make row mix-ups show.

Every token row of the residual gets its own scale (2^u, u uniform in [-2, 2]), so a kernel that reads another
row's RMS factor (aiter's sqrsum race, ROCm/aiter#3033) moves that row's mixes by the ratio of the two scales, up
to 16x. Token row 3 is all zeros when there are enough rows: a padded token whose RMS factor only the epsilon keeps
finite. Comb logits are spread wide (std √10 ≈ 3.2: mixes of unit variance times hc_scale 3, plus a unit-variance
base), where 20 Sinkhorn iterations have not converged, so a missing iteration changes the result.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.verify import ParamsDocument
from mhcdoctor.models import ModelConfig

if TYPE_CHECKING:  # torch is imported where the cases run, in the path children
    import torch

DEFAULT_TOKENS: tuple[int, ...] = (1, 7, 80)  # 80 > 64 + 16: crosses the 16-row boundary of aiter's race
# 512: tilelang's default prenorm GEMM (128–1023 tokens); 1025: its block-M variant from 1024, with an odd last block;
# 4096 and 16384: prefill sizes where row races show (known.TOKEN_TRIGGERS lists the trigger points).
STRESS_TOKENS: tuple[int, ...] = (512, 1025, 4096, 16384)
HC_POST_MULT_VALUE = 2.0  # vLLM's model hard-codes it (self.hc_post_alpha = 2.0)
ZERO_ROW = 3
# Above this many tokens the oracle checks a deterministic sample of rows (every row is independent).
FULL_CHECK_TOKENS = 512
# Small token counts run twice with fresh inputs, so values left over from the first call show in the second.
REPEAT_BELOW_TOKENS = 64


@dataclass(frozen=True)
class Params:
    """The scalar arguments of the ops, from the model config as vLLM passes them (v0.34.0's
    `vllm/models/deepseek_v4/nvidia/model.py`: rms_eps = rms_norm_eps, hc_pre_eps = hc_sinkhorn_eps = hc_eps,
    sinkhorn_repeat = hc_sinkhorn_iters, hc_post_mult_value = hc_post_alpha = 2.0)."""

    hidden: int
    hc_mult: int
    rms_eps: float
    hc_pre_eps: float
    hc_sinkhorn_eps: float
    hc_post_mult_value: float
    sinkhorn_repeat: int

    @classmethod
    def from_model(cls, model: ModelConfig) -> Params:
        return cls(
            hidden=model.hidden_size,
            hc_mult=model.hc_mult,
            rms_eps=model.rms_norm_eps,
            hc_pre_eps=model.hc_eps,
            hc_sinkhorn_eps=model.hc_eps,
            hc_post_mult_value=HC_POST_MULT_VALUE,
            sinkhorn_repeat=model.hc_sinkhorn_iters,
        )

    def to_dict(self) -> ParamsDocument:
        return as_document(self, ParamsDocument)


def case_seed(op: str, tokens: int, round_: int, seed: int = 0) -> int:
    return zlib.crc32(f"{op}/{tokens}/{round_}/{seed}".encode()) & 0x7FFFFFFF


def rounds_for(tokens: int) -> int:
    return 2 if tokens < REPEAT_BELOW_TOKENS else 1


def rows_to_check(tokens: int) -> list[int]:
    """All rows for small counts; else the first and last 128 and every 37th between (37 is prime to 64 and 16,
    so every position inside a tile is sampled)."""
    if tokens <= FULL_CHECK_TOKENS:
        return list(range(tokens))
    picked = set(range(128)) | set(range(tokens - 128, tokens)) | set(range(128, tokens - 128, 37))
    return sorted(picked)


Scalar = float | int  # the ops' scalar arguments (epsilons, the post multiplier, the Sinkhorn repeat)


def least_bytes(tokens: int, hidden: int, hc_mult: int) -> int:
    """Memory one case holds at once on its device, at the least (`make_inputs` and the op's outputs): the residual
    T·n·H made in float32 and scaled (8 bytes an element) then cast to bf16 (2) and the op's new residual (2); x and
    layer_input T·H likewise; fn n(n+2)·n·H float32, made and divided (8)."""
    t, n, h = tokens, hc_mult, hidden
    return t * n * h * 12 + t * h * 12 + n * (n + 2) * n * h * 8


def make_inputs(op: str, tokens: int, p: Params, seed: int, device: str) -> dict[str, torch.Tensor]:
    """The op's tensor arguments, in the reference's argument order (scalars come from Params)."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    n, h = p.hc_mult, p.hidden
    m = n * (n + 2)

    def normal(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32).to(dtype)

    def row_scales(count: int) -> torch.Tensor:
        u = torch.rand(count, generator=gen, device=device) * 4.0 - 2.0
        scales = torch.exp2(u)
        if count > ZERO_ROW:
            scales[ZERO_ROW] = 0.0
        return scales

    residual = (normal(tokens, n, h) * row_scales(tokens).view(-1, 1, 1)).to(torch.bfloat16)
    if op == "hc_head":
        return {
            "residual": residual,
            "fn": normal(n, n * h) / (n * h) ** 0.5,
            "hc_scale": torch.tensor([1.0], device=device),
            "hc_base": normal(n) * 0.5,
        }
    pre_args = {
        "fn": normal(m, n * h) / (n * h) ** 0.5,
        "hc_scale": torch.tensor([1.0, 1.0, 3.0], device=device),
        "hc_base": torch.cat([normal(2 * n) * 0.5, normal(n * n)]),
    }
    if op == "mhc_pre":
        return {"residual": residual, **pre_args}
    comb = torch.softmax(normal(tokens, n, n) * 2.0, dim=-1)
    post_args = {
        "x": (normal(tokens, h) * row_scales(tokens).view(-1, 1)).to(torch.bfloat16),
        "residual": residual,
        "post_layer_mix": torch.sigmoid(normal(tokens, n, 1)) * p.hc_post_mult_value,
        "comb_res_mix": comb / comb.sum(dim=-2, keepdim=True),
    }
    if op == "mhc_post":
        return post_args
    return {**post_args, **pre_args}


def scalar_args(op: str, p: Params) -> dict[str, Scalar]:
    if op == "mhc_post":
        return {}
    if op == "hc_head":
        return {"rms_eps": p.rms_eps, "hc_eps": p.hc_pre_eps}
    return {
        "rms_eps": p.rms_eps,
        "hc_pre_eps": p.hc_pre_eps,
        "hc_sinkhorn_eps": p.hc_sinkhorn_eps,
        "hc_post_mult_value": p.hc_post_mult_value,
        "sinkhorn_repeat": p.sinkhorn_repeat,
    }


# The inputs with a token axis first: the oracle gets only the checked rows of these, the others whole.
TOKEN_INPUTS = frozenset({"residual", "x", "post_layer_mix", "comb_res_mix"})

# The names of each op's outputs, in the order the op returns them.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "mhc_pre": ("post_mix", "comb_mix", "layer_input"),
    "mhc_post": ("residual_out",),
    "mhc_fused_post_pre": ("residual_out", "post_mix", "comb_mix", "layer_input"),
    "hc_head": ("output",),
}
