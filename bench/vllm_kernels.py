"""vLLM's own tilelang mHC kernels on this GPU: each op as the DeepSeek-V4 model calls it, checked against the
float64 oracle and timed eager and under a CUDA graph (mhcdoctor.bench.timing.time_case, bench's own timer).

Needs the `vllm` package importable: a real vLLM, or the kernel files of a wheel (tests/bench/vllm_fixture.py)
first on PYTHONPATH. One JSON line per (hidden, op, tokens) on stdout; a case that raises is a line with its error.
Usage: python bench/vllm_kernels.py [--hidden 7168,4096] [--hc-mult 4] [--tokens 1,7,80] [--check-only] [--label TEXT]
A hidden size and hc_mult that no built-in model has take DeepSeek-V4's other values (eps 1e-6, 20 Sinkhorn rounds):
the shapes a `--config` can give (shape limits).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from importlib import metadata


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", default="7168,4096")
    parser.add_argument("--hc-mult", default="4", help="comma-separated hc_mult values (DeepSeek-V4: 4)")
    parser.add_argument("--tokens", default="1,8,64,256,4096,16384")
    parser.add_argument("--ops", default="mhc_pre,mhc_post,mhc_fused_post_pre,hc_head")
    parser.add_argument("--check-only", action="store_true", help="3 runs, no CUDA graph: a correctness check")
    parser.add_argument("--label", default="")
    parser.add_argument("--graph-calls", type=int, default=10, help="calls captured in one CUDA graph (per-call time)")
    parser.add_argument("--device", default="cuda:0")
    a = parser.parse_args()

    from mhcdoctor.bench.timing import time_case
    from mhcdoctor.kernels import vllm_path
    from mhcdoctor.models import BUILTIN_MODELS
    from mhcdoctor.verify.cases import Params

    try:
        tl = metadata.version("tilelang")
    except metadata.PackageNotFoundError:
        tl = None
    start = time.perf_counter()
    try:
        impl = vllm_path.load("vllm:tilelang", a.device, lambda text: print(text, file=sys.stderr))
    except Exception as exc:
        print(
            json.dumps(
                {"label": a.label, "tilelang": tl, "status": "unavailable", "reason": f"{type(exc).__name__}: {exc}"}
            )
        )
        return 1
    print(json.dumps({"label": a.label, "tilelang": tl, "vllm": impl.version, "notes": impl.notes}), flush=True)
    options = (
        {"warmup": 1, "repeats": 3, "graph": 0}
        if a.check_only
        else {"warmup": 3, "repeats": 100, "budget_s": 1.0, "graph_calls": a.graph_calls}
    )
    models = {m.hidden_size: m for m in BUILTIN_MODELS.values()}
    shapes = [(int(h), int(m)) for h in a.hidden.split(",") for m in a.hc_mult.split(",")]
    for hidden, hc_mult in shapes:
        p = (
            Params.from_model(models[hidden])
            if hidden in models and models[hidden].hc_mult == hc_mult
            else Params(hidden, hc_mult, 1e-6, 1e-6, 1e-6, 2.0, 20)
        )
        for op in a.ops.split(","):
            for tokens in (int(t) for t in a.tokens.split(",")):
                row: dict[str, object] = {
                    "graph_calls": a.graph_calls,
                    "label": a.label,
                    "vllm": impl.version,
                    "tilelang": tl,
                    "hidden": hidden,
                    "hc_mult": hc_mult,
                    "op": op,
                    "tokens": tokens,
                }
                if op not in impl.ops:  # 0.20 has no fused op and no tilelang hc_head
                    print(json.dumps({**row, "status": "absent"}), flush=True)
                    continue
                t0 = time.perf_counter()
                try:
                    row.update(time_case(impl, op, tokens, p, a.device, options=options))
                except Exception as exc:
                    row.update(
                        status="error", reason=f"{type(exc).__name__}: {exc}", evidence=traceback.format_exc()[-1500:]
                    )
                row["seconds"] = round(time.perf_counter() - t0, 2)
                print(json.dumps(row), flush=True)
    print(json.dumps({"label": a.label, "done_s": round(time.perf_counter() - start, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
