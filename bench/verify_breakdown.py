"""Where one verify path child's time goes, step by step, in one process (run on the GPU machine, caches warm).

    python3 bench/verify_breakdown.py tilelang      # or triton, torch, tilekernels, ...

Prints the seconds since start after each step: import torch, the path's library, the CUDA context, cuBLAS,
mhcdoctor's own imports, loading the path, then each of verify's default cases. Run it with the environment the
doctor gives its children to see their figures: `PYTHONPYCACHEPREFIX=~/.cache/mhcdoctor/pycache` where torch ships
no bytecode (mhcdoctor/bytecode.py).
"""

from __future__ import annotations

import sys
import time

START = time.perf_counter()


def mark(label: str) -> None:
    print(f"  {label:<44}{time.perf_counter() - START:8.3f} s", flush=True)


def main(path: str, model: str = "deepseek-v4-pro") -> int:
    import torch

    mark("import torch")
    library = {"tilelang": "tilelang", "triton": "triton", "tilekernels": "tile_kernels"}.get(path)
    if library:
        __import__(library)
        mark(f"import {library}")
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    mark("CUDA context")
    torch.ones(8, 8, device="cuda") @ torch.ones(8, 8, device="cuda")
    torch.cuda.synchronize()
    mark("cuBLAS")
    from mhcdoctor.documents.vocabulary import OPS
    from mhcdoctor.kernels import REGISTRY
    from mhcdoctor.models import builtin
    from mhcdoctor.verify import cases, worker

    mark("mhcdoctor's imports")
    impl = REGISTRY[path].load("cuda:0", lambda text: None)
    mark("load the path")
    params = cases.Params.from_model(builtin(model))
    for op in OPS:
        if op in impl.ops:
            for tokens in cases.DEFAULT_TOKENS:
                row = worker.check_case(impl, op, tokens, params, "cuda:0")
                mark(f"{op} at {tokens} tokens: {row['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
