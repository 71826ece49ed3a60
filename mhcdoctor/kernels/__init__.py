"""The mHC paths verify can run, one module per path, each behind the reference's call signature.

Every path module has `OPS` (the ops it implements, known without importing anything heavy) and
`load(device, progress) -> PathImpl`, which imports its library and raises `PathUnavailable` with a one-line
reason when the path cannot run here (not installed, no GPU, an unusable version). Importing this package
imports no GPU library: the modules are imported by name, in the verify child process, only when asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Progress = Callable[[str], None]


class PathUnavailable(Exception):
    """This path cannot run here; the message says why in one line."""


class OpUnsupported(Exception):
    """This path's kernel does not take these arguments (a shape or dtype it was not written for): a skip."""


@dataclass
class PathImpl:
    name: str  # "tilelang", "vllm:aiter"
    ops: dict[str, Callable[..., Any]]  # op name -> callable with the reference's signature and return
    version: str | None = None
    notes: list[str] = field(default_factory=list)


# Peers' kernels no vLLM release selects: verify runs them when named (--path tilekernels), bench whenever installed.
# (TileKernels' `import tile_kernels` imports every subpackage and tilelang: seconds a default verify would wait for.)
ON_REQUEST: frozenset[str] = frozenset({"tilekernels"})

# Path name -> (module, the top-level package it needs). Order: the order rows are reported in.
PATHS: dict[str, tuple[str, str]] = {
    "aiter": ("mhcdoctor.kernels.aiter_path", "aiter"),
    "tilelang": ("mhcdoctor.kernels.tilelang_path", "tilelang"),
    "tilekernels": ("mhcdoctor.kernels.tilekernels_path", "tile_kernels"),
    "triton": ("mhcdoctor.kernels.triton_path", "triton"),
    "torch": ("mhcdoctor.kernels.torch_path", "torch"),
    "vllm:aiter": ("mhcdoctor.kernels.vllm_path", "vllm"),
    "vllm:tilelang": ("mhcdoctor.kernels.vllm_path", "vllm"),
    "vllm:triton": ("mhcdoctor.kernels.vllm_path", "vllm"),
    "vllm:torch": ("mhcdoctor.kernels.vllm_path", "vllm"),
}


# The user's own kernels (`--kernel OP=MODULE:FUNC`): not run by default; the specs travel to the child in this
# environment variable, as JSON {op: "module:func"}.
USER_PATH = "user"
USER_KERNELS_ENV = "MHCDOCTOR_USER_KERNELS"


def _module_name(name: str) -> str:
    return "mhcdoctor.kernels.user_path" if name == USER_PATH else PATHS[name][0]


def path_ops(name: str) -> tuple[str, ...]:
    """The ops a path implements, without importing its library."""
    module = importlib.import_module(_module_name(name))
    ops = module.OPS
    return tuple(ops[name] if isinstance(ops, dict) else ops)


def load(name: str, device: str, progress: Progress) -> PathImpl:
    module = importlib.import_module(_module_name(name))
    impl: PathImpl = module.load(name, device, progress)
    return impl
