"""Run by tests/real/test_vllm_plugin.py inside a real vLLM install (CPU torch): vLLM loads its general plugins,
then builds layers/mhc.py's CustomOps under a vLLM config and calls them as ROCm, CPU and XPU dispatch would reach
the torch path: forward_native, and forward_hip with vLLM's own flags (no aiter, no tilelang: its torch fallback).
Prints one JSON document on the last line of stdout: what was patched, a digest of what each call returned, and
the plugin's records.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from types import SimpleNamespace

import torch
import vllm.logger
import vllm.plugins
from mhc_call_inputs import SCALARS, inputs

if not logging.getLogger("vllm").handlers:  # 0.34 configures logging in its entry points, not at import
    vllm.logger._configure_vllm_root_logger()
vllm.plugins.load_general_plugins()

import vllm.model_executor.layers.mhc as layers  # noqa: E402
from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config  # noqa: E402

HIDDEN, HC = 256, 4
config = VllmConfig(device_config=DeviceConfig(device="cpu"))
# the model's config as vLLM's DeepSeek-V4 config carries it (hidden_size, hc_mult): the start-up line reads these
object.__setattr__(config, "model_config", SimpleNamespace(hf_config=SimpleNamespace(hidden_size=HIDDEN, hc_mult=HC)))
with set_current_vllm_config(config):
    pre, post, fused = layers.MHCPreOp(), layers.MHCPostOp(), layers.MHCFusedPostPreOp()

g = torch.Generator().manual_seed(0)


def digest(value: object) -> str:
    """The output's bytes, hashed: the test compares a run with the plugin against one without it."""
    tensors = [value] if isinstance(value, torch.Tensor) else list(value)  # type: ignore[call-overload]
    h = hashlib.sha256()
    for t in tensors:
        h.update(str((t.dtype, tuple(t.shape))).encode())
        h.update(t.contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def call(op: object, method: str, *args: object) -> str:
    """The CustomOp's method as vLLM's dispatch calls it (with neither aiter nor tilelang, forward_hip's fallback
    is forward_native)."""
    return digest(getattr(op, method)(*args))


results = {}
for tokens in (20, 1):
    t = inputs(tokens, HC, HIDDEN, g)
    pre_args = (t["residual"], t["fn"], t["scale"], t["base"], *SCALARS)
    results[f"pre.forward_native@{tokens}"] = call(pre, "forward_native", *pre_args)
    results[f"pre.forward_hip@{tokens}"] = call(pre, "forward_hip", *pre_args)
    results[f"post.forward_hip@{tokens}"] = call(post, "forward_hip", t["x"], t["residual"], t["post"], t["comb"])
    fused_args = (t["x"], t["residual"], t["post"], t["comb"], t["fn"], t["scale"], t["base"], *SCALARS)
    results[f"fused.forward_native@{tokens}"] = call(fused, "forward_native", *fused_args)

from mhcdoctor.vllm_plugin import hooks  # noqa: E402

recorder = hooks.RECORDER
print(
    json.dumps(
        {
            "vllm": vllm.__version__,
            "flags": {"HAS_TILELANG_MHC": layers.HAS_TILELANG_MHC, "HAS_AITER_MHC": layers.HAS_AITER_MHC},
            "patched": bool(getattr(layers.MHCPreOp.forward_native, hooks.MARKER, False)),
            "finder": any(isinstance(f, hooks.Finder) for f in sys.meta_path),
            "results": results,
            "records": [r.line() for r in recorder.records] if recorder else [],
            "startup": recorder.startup if recorder else None,
        }
    )
)
