"""Does the installed tilelang import, and lower this project's own tilelang kernels for sm_90, with the installed
apache-tvm-ffi? CPU only: tilelang's passes (PreLowerSemanticCheck's NestedLoopChecker, where tile-ai/tvm #32's
`'_NestedLoopCheckVisitor' object has no attribute '_inst'` would be raised) and CUDA source codegen; no nvcc, no GPU.

Usage: PYTHONPATH=TILELANG_SITE:. python bench/tilelang_lower.py   (exit 0: imported and lowered; 1: a kernel failed)
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Any


def sm90_target(tvm: Any) -> Any:
    """The sm_90 CUDA target: a dict from tilelang 0.1.12's tvm on (its string form is gone), a string before."""
    try:
        return tvm.target.Target({"kind": "cuda", "arch": "sm_90"})
    except Exception:
        return tvm.target.Target("cuda -arch=sm_90")


def main() -> int:
    import tilelang
    from tilelang import tvm

    import mhcdoctor.kernels.tilelang_path as tp

    print("import tilelang: ok; tilelang", version("tilelang"), "apache-tvm-ffi", version("apache-tvm-ffi"))
    kernels = {
        "prenorm_gemm": lambda: tp._prenorm_gemm(4 * 7168, 24),
        "pre_fuse": lambda: tp._pre_fuse(7168, 4, 1e-6, 1e-6, 1e-6, 2.0, 20),
        "post": lambda: tp._post(7168, 4),
    }
    failed = 0
    target = sm90_target(tvm)
    for name, build in kernels.items():
        try:
            with target:
                lowered = tilelang.lower(build(), target=target)
            print(f"{name}: lowered, CUDA source {len(getattr(lowered, 'kernel_source', '') or '')} chars")
        except Exception as exc:  # the failure is the finding: say it and go on
            failed += 1
            print(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
