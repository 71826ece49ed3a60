"""Run by tests/real/test_vllm_plugin.py inside a real vLLM install (CPU torch) that believes it runs on `argv[1]`:

- `rocm`: the site holds a stand-in `amdsmi` (tests/fakes.amdsmi) answering for one GPU of the test's arch, so vLLM's
  own rocm_platform_plugin (vllm/platforms/__init__.py) makes RocmPlatform `current_platform` and rocm.py sets its
  _ON_GFX* flags from it; a stand-in aiter whose ops compute with mhcdoctor.reference (fakes.computing_aiter) and/or a
  tilelang that only imports (fakes.library). layers/mhc.py then computes HAS_AITER_MHC* and HAS_TILELANG_MHC itself.
  One change to vLLM on this CPU: the platform's `dispatch_key` is set to CPU before the kernel modules register
  their torch.ops.vllm ops (a ROCm build registers them for CUDA, the key HIP tensors carry; CPU tensors need CPU).
- `cpu`: VLLM_TARGET_DEVICE=cpu makes vLLM's real CpuPlatform current. The CUDA wheel has no CPU `_C` library, so
  the `torch.ops._C` ops kernels/mhc/cpu.py calls (hc_pre_fused_cpu, hc_post_fused_cpu, hc_head_fused_cpu) are
  registered here through torch.library, computing with mhcdoctor.reference.

Each call goes through the CustomOp's own dispatch (`op(...)`: forward_hip on ROCm, forward_cpu on CPU) under a vLLM
config. Prints one JSON document on the last line of stdout: vLLM's flags, each call's outcome (compared with
mhcdoctor.reference, or the error it raised and the vLLM files in its traceback) and the plugin's records.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from types import SimpleNamespace
from typing import Any

import torch
import vllm.logger
import vllm.plugins
from mhc_call_inputs import SCALARS, inputs

from mhcdoctor import reference

SCENARIO = sys.argv[1]  # rocm | cpu; argv[2]: the model's hidden size
if not logging.getLogger("vllm").handlers:  # 0.34 configures logging in its entry points, not at import
    vllm.logger._configure_vllm_root_logger()
vllm.plugins.load_general_plugins()

from vllm.platforms import current_platform  # noqa: E402  (resolved here, by vLLM's own plugins)

if SCENARIO == "rocm":
    assert current_platform.is_rocm(), type(current_platform).__name__
    current_platform.dispatch_key = "CPU"
elif SCENARIO == "cpu":
    assert current_platform.is_cpu(), type(current_platform).__name__
    # the schemas vllm/_cpu_ops.py calls them with (0.34 lines 1135-1196; vllm/_custom_ops.py in 0.30)
    lib = torch.library.Library("_C", "FRAGMENT")
    lib.define(
        "hc_pre_fused_cpu(Tensor x, Tensor hc_fn, Tensor hc_scale, Tensor hc_base, int hc_mult, int sinkhorn_iters, "
        "float rms_eps, float hc_eps) -> (Tensor, Tensor, Tensor)"
    )
    lib.define("hc_post_fused_cpu(Tensor x, Tensor residual, Tensor post, Tensor comb) -> Tensor")
    lib.define(
        "hc_head_fused_cpu(Tensor x, Tensor hc_fn, Tensor hc_scale, Tensor hc_base, float hc_eps, float norm_eps) "
        "-> Tensor"
    )

    def hc_pre(x, fn, scale, base, hc_mult, iters, rms_eps, hc_eps):  # type: ignore[no-untyped-def]
        # one merged hc_eps and a post multiplier of 2.0 (kernels/mhc/cpu.py mhc_pre_cpu's docstring)
        post, comb, y = reference.mhc_pre(x, fn, scale, base, rms_eps, hc_eps, hc_eps, 2.0, iters)
        return y, post.reshape(x.shape[0], hc_mult), comb

    lib.impl("hc_pre_fused_cpu", hc_pre, "CPU")
    lib.impl("hc_post_fused_cpu", lambda x, r, p, c: reference.mhc_post(x, r, p, c), "CPU")
    lib.impl(
        "hc_head_fused_cpu",
        lambda x, fn, scale, base, hc_eps, eps: reference.hc_head(x, fn, scale, base, eps, hc_eps),
        "CPU",
    )

import vllm.model_executor.layers.mhc as layers  # noqa: E402
from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config  # noqa: E402

HIDDEN, HC = int(sys.argv[2]), 4
if SCENARIO == "cpu":  # 0.34's CpuPlatform wants triton-cpu on x86 (platforms/cpu.py:242), which a CPU build ships
    import vllm.triton_utils  # and this CUDA wheel lacks: said present for the config's check only

    has_triton, vllm.triton_utils.HAS_TRITON = vllm.triton_utils.HAS_TRITON, True
config = VllmConfig(device_config=DeviceConfig(device="cpu"))
if SCENARIO == "cpu":
    vllm.triton_utils.HAS_TRITON = has_triton
# the model's config as vLLM's DeepSeek-V4 config carries it (hidden_size, hc_mult): the start-up line reads these
object.__setattr__(config, "model_config", SimpleNamespace(hf_config=SimpleNamespace(hidden_size=HIDDEN, hc_mult=HC)))
with set_current_vllm_config(config):  # strict refuses here, at the first CustomOp, as in vLLM's model build
    pre, post, fused, head = layers.MHCPreOp(), layers.MHCPostOp(), layers.MHCFusedPostPreOp(), layers.HCHeadOp()

g = torch.Generator().manual_seed(0)


def outcome(op: Any, args: tuple[Any, ...], expected: Any) -> dict[str, Any]:
    """What vLLM's dispatch of `op` returned, against mhcdoctor.reference; or what it raised and where."""
    try:
        got = op(*args)
    except Exception as error:
        files = [
            f.filename.split("/vllm/", 1)[-1]
            for f in traceback.extract_tb(error.__traceback__)
            if "/vllm/" in f.filename
        ]
        return {"raised": f"{type(error).__name__}: {str(error)[:200]}", "files": files}
    got = [got] if isinstance(got, torch.Tensor) else list(got)
    want = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    shapes = [tuple(a.shape) == tuple(b.shape) for a, b in zip(got, want, strict=True)]
    worst = max(float((a.float() - b.float()).abs().max()) for a, b in zip(got, want, strict=True))
    return {"shapes": all(shapes), "max_error": worst}


results = {}
# hidden sizes: the model's (aiter's gate holds at a multiple of 256 with hc_mult 4), one that is not a multiple of
# 256, and the model's with hc_mult 2 (layers/mhc.py's aiter gate tests hc_mult == 4 from 0.29; 0.25 does not)
for label, tokens, hc, hidden in (
    ("model", 20, HC, HIDDEN),
    ("model", 1, HC, HIDDEN),
    ("hidden640", 5, HC, 640),
    ("hc2", 100, 2, HIDDEN),
):  # token counts in buckets of their own (1, 2-8, 17-64, 65-256): each shape's records stand apart
    t = inputs(tokens, hc, hidden, g)
    pre_args = (t["residual"], t["fn"], t["scale"], t["base"], *SCALARS)
    key = f"{label}@{tokens}"
    results[f"mhc_pre.{key}"] = outcome(pre, pre_args, reference.mhc_pre(*pre_args))
    post_args = (t["x"], t["residual"], t["post"], t["comb"])
    results[f"mhc_post.{key}"] = outcome(post, post_args, reference.mhc_post(*post_args))
    fused_args = (t["x"], t["residual"], t["post"], t["comb"], t["fn"], t["scale"], t["base"], *SCALARS)
    results[f"mhc_fused_post_pre.{key}"] = outcome(fused, fused_args, reference.mhc_fused_post_pre(*fused_args))
    head_args = (t["residual"], t["head_fn"], t["head_scale"], t["head_base"], 1e-6, 1e-6)
    results[f"hc_head.{key}"] = outcome(head, head_args, reference.hc_head(*head_args))
    if label == "model" and tokens == 1:  # HCHeadOp.forward_native, which no platform dispatches to by default
        results["hc_head.forward_native"] = outcome(head.forward_native, head_args, reference.hc_head(*head_args))

from mhcdoctor.vllm_plugin import hooks  # noqa: E402

recorder = hooks.RECORDER
flags = {name: value for name, value in vars(layers).items() if name.startswith("HAS_") and isinstance(value, bool)}
print(
    json.dumps(
        {
            "vllm": vllm.__version__,
            "platform": type(current_platform).__name__,
            "flags": flags,
            "results": results,
            "records": [r.line() for r in recorder.records] if recorder else [],
            "startup": recorder.startup if recorder else None,
        }
    )
)
