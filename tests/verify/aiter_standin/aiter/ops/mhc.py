"""aiter.ops.mhc as aiter 0.1.13 calls it, in torch code. AITER_STANDIN_RACE=1 plants aiter #3033's race;
AITER_STANDIN_FAULT=hang or crash makes mhc_post hang or abort.

Like aiter before 0.1.14 (#2916), outputs are allocated without device=, so they land on torch's default
device: callers must run it under a torch.device context, as mhcdoctor's aiter adapter does.
"""

import os
import time

import torch

from mhcdoctor import reference as ref


def mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value,
            sinkhorn_repeat):  # fmt: skip
    tokens, n, hidden = residual.shape
    mixes_raw, sqrsum = ref.prenorm_gemm(residual, fn)
    if os.environ.get("AITER_STANDIN_RACE") == "1":  # lanes 16-63 of a 64-row tile store into other rows
        rows = torch.arange(tokens, device=residual.device)
        sqrsum = sqrsum[torch.where(rows % 64 >= 16, rows - 16, rows)]
    mixes = ref.rms_scale(mixes_raw, sqrsum, n * hidden, rms_eps)
    pre, post, logits = ref.split_mixes(mixes, hc_scale, hc_base, n, hc_pre_eps, hc_post_mult_value)
    post_mix = torch.empty(tokens, n, 1, dtype=torch.float32)
    comb_mix = torch.empty(tokens, n, n, dtype=torch.float32)
    layer_input = torch.empty(tokens, hidden, dtype=torch.bfloat16)
    post_mix.copy_(post.unsqueeze(-1))
    comb_mix.copy_(ref.sinkhorn(logits, sinkhorn_repeat, hc_sinkhorn_eps))
    layer_input.copy_(ref.apply_pre(pre, residual))
    return post_mix, comb_mix, layer_input


def mhc_post(out, x, residual, post_layer_mix, comb_res_mix):
    if os.environ.get("AITER_STANDIN_FAULT") == "hang":
        time.sleep(3600)
    if os.environ.get("AITER_STANDIN_FAULT") == "crash":
        os.abort()
    out.copy_(ref.mhc_post(x, residual, post_layer_mix, comb_res_mix))
