"""The torch path: mhcdoctor's own reference, run on the GPU (vLLM's ROCm fallback computes the same)."""

from __future__ import annotations

from mhcdoctor.kernels import ALL_OPS, PathImpl, PathUnavailable, Progress


def load(name: str, device: str, progress: Progress) -> PathImpl:
    try:
        import torch
    except ImportError as exc:
        raise PathUnavailable(f"torch does not import: {exc}") from None
    from mhcdoctor import reference

    return PathImpl(
        name=name,
        ops={op: getattr(reference, op) for op in ALL_OPS},
        version=torch.__version__,
    )
