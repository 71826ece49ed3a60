"""vLLM's own mHC kernel files, taken from a released wheel, importable without vLLM.

vLLM's tilelang mHC kernels are pure Python (`vllm/model_executor/kernels/mhc/tilelang.py` and `tilelang_kernels.py` in
0.23+; the same wrapper over `vllm/_tilelang_ops.py` in 0.22; the functions and kernels of
`vllm/model_executor/layers/mhc.py` in 0.20-0.21), so a machine that cannot install vLLM (the GPU machine: no package
index, 64 MiB carried) can still run them: `build(wheel, folder)` copies those files, and the few vLLM modules they
import that are pure Python too (`vllm/tilelang_utils`, `vllm/utils/math_utils.py`, the JIT warm-up helpers of 0.30+),
out of the wheel, and writes small stand-ins for the rest (`vllm.platforms.current_platform` from torch,
`vllm.utils.deep_gemm` from a standalone `deep_gemm` when one imports, `direct_register_custom_op` that registers
nothing). With the folder first on PYTHONPATH, mhcdoctor's `vllm:tilelang` path (bench and verify) runs these kernels as
vLLM's model calls them. `vllm.__version__` is the wheel's; `vllm.MHCDOCTOR_KERNEL_FIXTURE` says that this is not a vLLM
install.

Usage: python tests/bench/vllm_fixture.py WHEEL OUT_FOLDER   (a wheel from `pip download --no-deps vllm==X`)
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

# Copied from the wheel where the release has them (0.20-0.27 have no tilelang_utils, 0.20-0.29 no warm-up helpers;
# 0.22 keeps its kernels in _tilelang_ops.py, 0.23+ in tilelang_kernels.py).
COPIED = (
    "vllm/model_executor/kernels/mhc/tilelang.py",
    "vllm/model_executor/kernels/mhc/tilelang_kernels.py",
    "vllm/_tilelang_ops.py",
    "vllm/model_executor/kernels/mhc/warmup.py",
    "vllm/tilelang_utils/__init__.py",
    "vllm/model_executor/warmup/jit_warmup.py",
    "vllm/model_executor/warmup/jit_warmup_tilelang_helper.py",
    "vllm/utils/math_utils.py",
)
# The kernels of each layout: the tilelang wrapper (0.22+), or 0.20-0.21's layers/mhc.py, which holds the kernels and
# the functions the model calls (torch.ops.vllm.mhc_pre etc.); from 0.22 that file is CustomOps, not copied.
WRAPPER = "vllm/model_executor/kernels/mhc/tilelang.py"
LAYERS_MHC = "vllm/model_executor/layers/mhc.py"

_PLATFORMS = '''"""Stand-in for vllm.platforms: CUDA or ROCm as torch sees it (vllm/platforms/interface.py, cuda.py)."""
from typing import NamedTuple

import torch


class DeviceCapability(NamedTuple):
    major: int
    minor: int

    def to_int(self) -> int:
        return self.major * 10 + self.minor


class _Platform:
    device_type = "cuda"

    def is_rocm(self) -> bool:
        return torch.version.hip is not None

    def is_cuda(self) -> bool:
        return torch.version.cuda is not None and not self.is_rocm()

    def is_cuda_alike(self) -> bool:
        return self.is_cuda() or self.is_rocm()

    def is_xpu(self) -> bool:
        return False

    def is_cpu(self) -> bool:
        return False

    def get_device_capability(self, device_id: int = 0) -> "DeviceCapability | None":
        try:
            return DeviceCapability(*torch.cuda.get_device_capability(device_id))
        except Exception:
            return None

    def has_device_capability(self, capability, device_id: int = 0) -> bool:
        current = self.get_device_capability(device_id)
        if current is None:
            return False
        return current >= capability if isinstance(capability, tuple) else current.to_int() >= capability

    def is_device_capability(self, capability, device_id: int = 0) -> bool:
        current = self.get_device_capability(device_id)
        if current is None:
            return False
        return current == capability if isinstance(capability, tuple) else current.to_int() == capability

    def is_arch_support_pdl(self) -> bool:  # CudaPlatformBase: compute capability major >= 9
        current = self.get_device_capability()
        return self.is_cuda() and current is not None and current.major >= 9


current_platform = _Platform()
'''

_DEEP_GEMM = '''"""Stand-in for vllm.utils.deep_gemm: a standalone deep_gemm when it imports (vLLM uses it
on sm_90/sm_10x) and VLLM_USE_DEEP_GEMM is not "0" (vllm/envs.py), else DeepGEMM is off and vLLM's
kernels take their tilelang prenorm GEMM (0.22+; 0.20-0.21's mhc_pre has no other GEMM and raises)."""
import functools
import os


@functools.cache
def _deep_gemm():
    if os.environ.get("VLLM_USE_DEEP_GEMM", "1") == "0":
        return None
    try:
        import deep_gemm
    except Exception:
        return None
    return deep_gemm if hasattr(deep_gemm, "tf32_hc_prenorm_gemm") else None


def is_deep_gemm_supported() -> bool:
    from vllm.platforms import current_platform

    supported = current_platform.is_device_capability(90) or current_platform.is_device_capability(100)
    return bool(supported and _deep_gemm() is not None)


def tf32_hc_prenorm_gemm(x, fn, out, sqrsum, num_split):
    if _deep_gemm() is None:
        raise RuntimeError("DeepGEMM is not installed (mhcdoctor's vLLM kernel fixture)")
    return _deep_gemm().tf32_hc_prenorm_gemm(x, fn, out, sqrsum, num_split)
'''

_STANDINS = {
    "vllm/__init__.py": "",  # written with the version by build()
    "vllm/platforms/__init__.py": _PLATFORMS,
    "vllm/utils/__init__.py": "",
    "vllm/utils/deep_gemm.py": _DEEP_GEMM,
    "vllm/utils/import_utils.py": (
        '"""Stand-in: has_tilelang as vLLM 0.28+ has it (find_spec)."""\n'
        "import importlib.util\n\n\n"
        "def has_tilelang() -> bool:\n"
        '    return importlib.util.find_spec("tilelang") is not None\n'
    ),
    "vllm/utils/torch_utils.py": (
        '"""Stand-in: vLLM registers its mHC functions as torch custom ops; mhcdoctor calls the functions."""\n\n\n'
        "def direct_register_custom_op(*args, **kwargs) -> None:\n"
        "    return None\n"
    ),
    "vllm/logger.py": "import logging\n\n\ndef init_logger(name):\n    return logging.getLogger(name)\n",
    "vllm/distributed/__init__.py": "def is_global_first_rank() -> bool:\n    return True\n",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/kernels/__init__.py": "",
    "vllm/model_executor/kernels/mhc/__init__.py": "",  # vLLM's imports every backend; the tilelang module suffices
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/warmup/__init__.py": "",
    "vllm/tilelang_utils/__init__.py": "",  # replaced by the wheel's where it has one
    "vllm/utils/math_utils.py": (
        "def cdiv(a: int, b: int) -> int:\n    return -(a // -b)\n\n\n"
        "def round_up(x: int, y: int) -> int:\n    return ((x + y - 1) // y) * y\n"
    ),
}


def wheel_version(names: list[str]) -> str:
    for name in names:
        if name.startswith("vllm-") and name.endswith(".dist-info/METADATA"):
            return name.split("/")[0][len("vllm-") : -len(".dist-info")]
    raise ValueError("not a vLLM wheel: no vllm-*.dist-info/METADATA")


def build(wheel: Path, out: Path) -> str:
    """Write the fixture for `wheel` into `out` (out/vllm/...); returns the wheel's vLLM version."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        version = wheel_version(names)
        copied = [n for n in COPIED if n in names]
        if WRAPPER not in names:
            if LAYERS_MHC not in names:
                raise ValueError(f"vLLM {version} has no {WRAPPER} and no {LAYERS_MHC}")
            copied.append(LAYERS_MHC)
        for name, text in _STANDINS.items():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        for name in copied:
            (out / name).write_bytes(z.read(name))
        metadata = z.read(f"vllm-{version}.dist-info/METADATA").decode()
    pins = [
        line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist: tilelang")
    ]
    (out / "vllm/__init__.py").write_text(
        f'"""mhcdoctor\'s stand-in vLLM: the mHC kernel files of vLLM {version}\'s wheel '
        '(tests/bench/vllm_fixture.py)."""\n'
        f"__version__ = {version!r}\nMHCDOCTOR_KERNEL_FIXTURE = True\nTILELANG_PIN = {(pins[0] if pins else None)!r}\n"
    )
    return version


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.rsplit("Usage: ", 1)[1].strip())
    print(build(Path(sys.argv[1]), Path(sys.argv[2])))
