"""Skip marks for tests that need torch, matplotlib, Ray or a GPU, decided without importing what they ask about.

Every pytest-xdist worker collects every test module, and `import torch` costs about two seconds of CPU (Ray and
matplotlib a few tenths): a module that imported it only to decide whether to skip would cost each worker that much.
So a library's presence is `find_spec`, and torch is asked about a GPU only where a GPU device node exists.
"""

from __future__ import annotations

import glob
import importlib.util

import pytest

# The device nodes through which CUDA (/dev/nvidia0, ...; /dev/dxg under WSL) and ROCm (/dev/kfd) reach a GPU.
GPU_DEVICE_NODES = ("/dev/nvidia[0-9]*", "/dev/dxg", "/dev/kfd")


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def gpu_visible() -> bool:
    """Whether torch sees a CUDA or ROCm GPU; without any GPU device node it cannot, and torch is not imported."""
    if not any(glob.glob(pattern) for pattern in GPU_DEVICE_NODES) or not installed("torch"):
        return False
    import torch

    return bool(torch.cuda.is_available())


def library(module: str, why: str = "") -> pytest.MarkDecorator:
    return pytest.mark.skipif(not installed(module), reason=why or f"needs {module}")


def gpu(reason: str = "needs a CUDA or ROCm GPU") -> list[pytest.MarkDecorator]:
    """The marks of a GPU test: `-m gpu` selects it, `-m "not slow"` leaves it out, and it is skipped where torch
    sees no GPU (CI)."""
    return [pytest.mark.gpu, pytest.mark.slow, library("torch"), pytest.mark.skipif(not gpu_visible(), reason=reason)]
