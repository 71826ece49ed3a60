"""Run inside a child by scripts/aiter-mhc-exec: import a tag's real aiter/ops/mhc.py and call it as vLLM does.

The folder on sys.path holds `aiter/ops/mhc.py` from `git show TAG:aiter/ops/mhc.py` and stand-ins for the few
modules it imports: `aiter.jit.core.compile_ops` records each call of a compiled op instead of running it,
`aiter.jit.utils.chip_info` answers MHCEXEC_ARCH and MHCEXEC_CUS, `torch_compile_guard` returns the function, and
`aiter.dtypes` names torch's dtypes. Prints one JSON document: per case, the compiled-op calls (tensor shapes and
strides, every scalar) or the Python exception the call raised.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from typing import Any

import torch

CALLS: list[dict[str, Any]] = []
HIDDEN = [int(h) for h in os.environ["MHCEXEC_HIDDEN"].split(",")]
TOKENS = [int(t) for t in os.environ["MHCEXEC_TOKENS"].split(",")]
HC_MULT = 4
# vLLM's DeepSeek-V4 values (rms_eps, hc_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat)
EPS = (1e-6, 1e-6, 1e-6, 2.0, 20)


def describe(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "stride": list(value.stride()), "dtype": str(value.dtype)[6:]}
    return value


def recorder(name: str, func: Any) -> Any:
    signature = inspect.signature(func)

    def record(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        CALLS.append({"op": name, "args": {k: describe(v) for k, v in bound.arguments.items()}})

    return record


def tensors(m: int, hidden: int) -> dict[str, torch.Tensor]:
    """vLLM's inputs on the CPU: torch.empty allocates without touching pages, so 65536 tokens cost no memory."""
    hc3 = HC_MULT * 2 + HC_MULT * HC_MULT
    return {
        "residual": torch.empty(m, HC_MULT, hidden, dtype=torch.bfloat16),
        "x": torch.empty(m, hidden, dtype=torch.bfloat16),
        "fn": torch.empty(hc3, HC_MULT * hidden, dtype=torch.float32),
        "hc_scale": torch.empty(3, dtype=torch.float32),
        "hc_base": torch.empty(hc3, dtype=torch.float32),
        "post": torch.empty(m, HC_MULT, 1, dtype=torch.float32),
        "comb": torch.empty(m, HC_MULT, HC_MULT, dtype=torch.float32),
        "norm_weight": torch.empty(hidden, dtype=torch.bfloat16),
    }


def cases(mhc: Any) -> dict[str, Any]:
    """vLLM 0.34.0's vllm/_aiter_ops.py call forms (0.30.0's are the same): mhc_pre :4758 (norm_weight and
    norm_eps appended when set, 0.29+; without them in 0.24-0.28 and for hc_head), mhc_post :5135, mhc_fused_post_pre
    :5158, and mhc_pre_delayed :4865, whose two branches call aiter's split-K or config getter and its GEMM directly
    (:4990 without the post, :4973 with it)."""
    params = inspect.signature(mhc.mhc_pre).parameters

    def pre(t: dict[str, torch.Tensor], norm: bool) -> None:
        args = (t["residual"], t["fn"], t["hc_scale"], t["hc_base"], *EPS)
        mhc.mhc_pre(*args, t["norm_weight"], 1e-6) if norm else mhc.mhc_pre(*args)

    def post(t: dict[str, torch.Tensor]) -> None:
        mhc.mhc_post(torch.empty_like(t["residual"]), t["x"], t["residual"], t["post"], t["comb"])

    def fused(t: dict[str, torch.Tensor], norm: bool) -> None:
        args = (t["x"], t["residual"], t["post"], t["comb"], t["fn"], t["hc_scale"], t["hc_base"], *EPS)
        mhc.mhc_fused_post_pre(*args, t["norm_weight"], 1e-6) if norm else mhc.mhc_fused_post_pre(*args)

    def delayed_unfused(t: dict[str, torch.Tensor]) -> None:
        m, hidden = t["x"].shape
        splitk, tile_k = mhc.get_mhc_pre_splitk(m, HC_MULT * hidden)
        hc3 = t["fn"].shape[0]
        gemm_out = torch.empty(splitk, m, (hc3 + 31) // 32 * 32, dtype=torch.float32)[:, :, :hc3]
        sqrsum = torch.empty(splitk, m, dtype=torch.float32)
        mhc.mhc_pre_gemm_sqrsum(gemm_out, sqrsum, t["residual"], t["fn"], tile_k, 0)

    def delayed(t: dict[str, torch.Tensor]) -> None:
        m, hidden = t["x"].shape
        splitk, tile_m, tile_n, tile_k = mhc.get_mhc_fused_post_pre_config(m, hidden)
        hc3 = t["fn"].shape[0]
        gemm_out = torch.empty(splitk, m, (hc3 + 31) // 32 * 32, dtype=torch.float32)[:, :, :hc3]
        sqrsum = torch.empty(splitk, m, dtype=torch.float32)
        mhc.mhc_fused_post_pre_gemm_sqrsum(
            gemm_out, sqrsum, torch.empty_like(t["residual"]), t["x"], t["residual"],
            t["post"].view(-1, HC_MULT, 1).squeeze(-1), t["comb"], t["fn"], tile_m, tile_n, tile_k, 0,
        )  # fmt: skip

    ops: dict[str, Any] = {"mhc_pre": lambda t: pre(t, False)}
    if "norm_weight" in params:
        ops["mhc_pre+norm"] = lambda t: pre(t, True)
    if hasattr(mhc, "mhc_post"):
        ops["mhc_post"] = post
    if hasattr(mhc, "get_mhc_pre_splitk"):
        ops["mhc_pre_delayed"] = delayed_unfused
    if hasattr(mhc, "mhc_fused_post_pre"):
        ops["mhc_fused_post_pre"] = lambda t: fused(t, False)
        ops["mhc_fused_post_pre+norm"] = lambda t: fused(t, True)
        ops["mhc_pre_delayed+post"] = delayed
    return ops


def main() -> None:
    import aiter.jit.core as core

    core.RECORD = recorder
    from aiter.ops import mhc

    out: list[dict[str, Any]] = []
    for hidden in HIDDEN:
        for m in TOKENS:
            t = tensors(m, hidden)
            with torch.device("cpu"):  # vLLM runs aiter's wrappers under the residual's device
                for name, call in cases(mhc).items():
                    CALLS.clear()
                    try:
                        call(t)
                        out.append({"hidden": hidden, "tokens": m, "call": name, "calls": list(CALLS)})
                    except Exception as exc:  # the Python side's own refusal (an assert, a KeyError): the result
                        error = f"{type(exc).__name__}: {str(exc)[:200]}"
                        out.append({"hidden": hidden, "tokens": m, "call": name, "calls": list(CALLS), "error": error})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
