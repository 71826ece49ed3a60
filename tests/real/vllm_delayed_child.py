"""Run by tests/real/test_vllm_delayed.py inside a real vLLM install (CPU torch) on a stand-in ROCm MI300X (gfx942:
tests/fakes.amdsmi; gfx950 with `norm`, see NORM) with aiter at a tag (tests/fakes.tagged_aiter: the tag's real
aiter/ops/mhc.py and torch_guard.py, a stand-in pybind module that checks arguments and computes nothing).

Builds vLLM's MHCPreDelayedOp under a vLLM config and calls it through its CustomOp dispatch (forward_hip) as
models/deepseek_v41/amd/model.py does at a seam after the first layer (0.34.0 :442-451, the attention seam; :471-485,
the FFN seam): norm_weight None (HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM is gfx950's), x None, with the
preceding post folded in (sublayer_out, post_layer_mix, comb_res_mix) and without it (the Engram seam, :429-435).
The one change to vLLM on this CPU is the platform's dispatch_key (see vllm_platform_child.py).
Each call that raises is logged as vLLM's engine core logs a failed start (v1/engine/core.py: "EngineCore failed to
start.", logger.exception). Prints one JSON document on the last line of stdout: each call's outcome.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from typing import Any

import torch
import vllm.logger
import vllm.plugins

HIDDEN, HC = int(sys.argv[1]), 4
# "norm": the seam passes norm_weight, as the model does where HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM (gfx950,
# 0.32+; models/deepseek_v41/amd/model.py:301 and :484 at 0.34.0), which takes forward_hip's first branch
NORM = sys.argv[2:] == ["norm"]
if not logging.getLogger("vllm").handlers:
    vllm.logger._configure_vllm_root_logger()
vllm.plugins.load_general_plugins()

from vllm.platforms import current_platform  # noqa: E402

assert current_platform.is_rocm(), type(current_platform).__name__
current_platform.dispatch_key = "CPU"

import vllm.model_executor.layers.mhc as layers  # noqa: E402
from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config  # noqa: E402

logger = vllm.logger.init_logger("vllm.v1.engine.core")
with set_current_vllm_config(VllmConfig(device_config=DeviceConfig(device="cpu"))):
    delayed = layers.MHCPreDelayedOp()

g = torch.Generator().manual_seed(0)
MIX = HC * (HC + 2)


def outcome(tokens: int, fold_post: bool) -> dict[str, Any]:
    residual = torch.randn(tokens, HC, HIDDEN, generator=g).bfloat16()
    fn = torch.randn(MIX, HC * HIDDEN, generator=g) * 0.01
    post: dict[str, Any] = {}
    if fold_post:
        post = {
            "sublayer_out": torch.randn(tokens, HIDDEN, generator=g).bfloat16(),
            "post_layer_mix": torch.rand(tokens, HC, 1, generator=g),
            "comb_res_mix": torch.rand(tokens, HC, HC, generator=g) / HC,
        }
    try:
        delayed(
            residual, fn, torch.ones(3), torch.randn(MIX, generator=g) * 0.1, 1e-6, 1e-6, 1e-6, 2.0, 20,
            pre_mix=torch.rand(tokens, HC, generator=g), norm_weight=torch.ones(HIDDEN).bfloat16() if NORM else None,
            norm_eps=1e-6, **post,
        )  # fmt: skip
    except Exception as error:
        logger.exception("EngineCore failed to start.")
        frames = traceback.extract_tb(error.__traceback__)
        where = [f"{f.filename.rsplit('/site-packages/', 1)[-1].split('==', 1)[-1]}:{f.name}" for f in frames]
        return {"raised": type(error).__name__, "message": str(error)[:300], "frames": where}
    return {"returned": True}


results = {f"{'post' if fold else 'plain'}@{tokens}": outcome(tokens, fold) for fold in (True, False) for tokens in
           (1, 20, 200)}  # fmt: skip
flags = {name: value for name, value in vars(layers).items() if name.startswith("HAS_") and isinstance(value, bool)}
print(json.dumps({"vllm": vllm.__version__, "flags": flags, "results": results}))
