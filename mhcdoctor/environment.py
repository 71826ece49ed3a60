"""Which environment variables a report records: the allowlist `check` collects by and `report` redacts by."""

from __future__ import annotations

from collections.abc import Mapping

# Environment variables worth reporting: they change what ROCm/CUDA, torch, aiter, tilelang, triton and vLLM do.
ENV_PREFIXES: tuple[str, ...] = (
    "ROCM_",
    "ROCR_",
    "HIP_",
    "HSA_",
    "HCC_",
    "AMD_",
    "CUDA_",
    "NVIDIA_",
    "AITER_",
    "TILELANG_",
    "TRITON_",
    "VLLM_",
    "TORCH_",
    "PYTORCH_",
)
ENV_SUFFIXES: tuple[str, ...] = ("_VISIBLE_DEVICES",)  # ROCR_, HIP_, CUDA_, GPU_ ... which devices a process sees
# Where compilers (nvcc, hipcc) and shared libraries are found, and which Python packages shadow which.
# DeepGEMM's JIT cache folder and nvcc as vLLM passes them (vllm/utils/deep_gemm.py; DJ_ is vLLM 0.34's misspelling):
# these three exact names, no other DG_ variable.
ENV_NAMES: frozenset[str] = frozenset(
    {"PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "GPU_DEVICE_ORDINAL"}
    | {"DG_JIT_CACHE_DIR", "DG_JIT_NVCC_COMPILER", "DJ_JIT_NVCC_COMPILER"}
)


def relevant_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables a report keeps (names on the allowlist), sorted by name, values unchanged."""
    return {name: environ[name] for name in sorted(environ) if is_relevant_env(name)}


def is_relevant_env(name: str) -> bool:
    upper = name.upper()
    return upper in ENV_NAMES or upper.startswith(ENV_PREFIXES) or upper.endswith(ENV_SUFFIXES)
