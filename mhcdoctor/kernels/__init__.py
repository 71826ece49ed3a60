"""The mHC paths verify and bench can run: a registry of small typed objects, one per path, in report order.

A path is a `KernelPath`. What it is, is known without importing anything heavy: its `name`, the `ops` it
implements, the top-level package it `requires`, and whether it runs only when named (`on_request`).
`health(device, search_path)` says from the search path alone why it cannot run here (None: start it), and
`load(device, progress)`, in the verify child, imports its library and returns its ops behind the reference's
call signature, or raises `PathUnavailable` with a one-line reason for what only the import shows (a broken
library, an unusable version, GPU-only kernels asked for the CPU).

Every path here is an `AdapterPath`: one registry entry naming an adapter module (`mhcdoctor.kernels.*_path`),
imported only by `load`, which checks that the module provides `load(name, device, progress) -> PathImpl`. The
adapter modules import their library only inside that function, so importing this package, or asking a path its
ops or its health, imports no GPU library.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Protocol, TypeAlias, cast

from mhcdoctor.documents.vocabulary import OPS

if TYPE_CHECKING:  # torch is imported by the path children only; mypy reads its types
    from torch import Tensor

ALL_OPS: tuple[str, ...] = OPS  # every mHC op, in the decision's order

Progress = Callable[[str], None]
# What an op returns: its output tensors in the reference's order (mhcdoctor.reference), one or a tuple.
OpOutput: TypeAlias = "Tensor | tuple[Tensor, ...]"
# An op: called positionally with its tensors and then its scalars, as `verify.cases` builds them.
Op: TypeAlias = "Callable[..., OpOutput]"


class PathUnavailable(Exception):
    """This path cannot run here; the message says why in one line."""


class OpUnsupported(Exception):
    """This path's kernel does not take these arguments (a shape or dtype it was not written for): a skip."""


@dataclass
class PathImpl:
    name: str  # "tilelang", "vllm:aiter"
    ops: dict[str, Op]  # op name -> callable with the reference's signature and return
    version: str | None = None
    notes: list[str] = field(default_factory=list)
    # bench times these instead of `ops` where given: the op as the release's model calls it (vLLM 0.34's fused op
    # in its `_reuse_residual` form, say), same positional arguments, checked against the oracle like `ops`
    as_model_calls: dict[str, Op] = field(default_factory=dict)
    norm_ops: frozenset[str] = frozenset()  # ops of as_model_calls that the model calls with norm_weight, norm_eps
    mutates: frozenset[str] = frozenset()  # ops of as_model_calls that may overwrite their residual argument
    torch_pieces: frozenset[str] = frozenset()  # ops that run a piece on torch here (a stand-in's missing GEMM)


class KernelPath(Protocol):
    """One path verify and bench can run."""

    @property
    def name(self) -> str: ...

    @property
    def ops(self) -> tuple[str, ...]:
        """The ops it implements (a subset of documents.vocabulary.OPS), known without importing its library."""
        ...

    @property
    def requires(self) -> str:
        """The top-level package it imports ("tilelang", "vllm")."""
        ...

    @property
    def on_request(self) -> bool:
        """Run only when named (--path): no vLLM release selects it, or it is the user's."""
        ...

    @property
    def probe(self) -> bool:
        """This project's own kernels: they prove a library compiles and computes mHC here, not what vLLM runs."""
        ...

    def health(self, device: str, search_path: Sequence[str]) -> str | None:
        """Why it cannot run on `device` with packages looked up on `search_path` (the children's), in one line;
        None when it is worth starting. Cheap: nothing is imported."""
        ...

    def load(self, device: str, progress: Progress) -> PathImpl:
        """Import its library (in the verify child) and return its ops; PathUnavailable with the reason if not."""
        ...


# What every path's child imports besides the path's own package: verify's cases and device checks are torch code,
# the oracle and the comparison NumPy (verify/worker.py). The `verify` extra installs both.
WORKER_REQUIRES = ("torch", "numpy")
VERIFY_EXTRA = "pip install 'mhcdoctor[verify]'"


def package_present(package: str, search_path: Sequence[str]) -> bool:
    """Whether `import package` would find something on `search_path`, importing nothing."""
    return PathFinder.find_spec(package, [p for p in search_path if p]) is not None


# An adapter module's entry point: `load(name, device, progress) -> PathImpl` (the name tells vLLM's backends apart).
_ADAPTER_PARAMETERS = ("name", "device", "progress")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
AdapterLoad = Callable[[str, str, Progress], PathImpl]


def adapter_load(module_name: str) -> AdapterLoad:
    """Import an adapter module and return its `load`, checked to be `load(name, device, progress) -> PathImpl`;
    TypeError (a bug in mhcdoctor, not a reason to skip) when it is not."""
    module = importlib.import_module(module_name)
    load = getattr(module, "load", None)
    if not callable(load):
        raise TypeError(f"{module_name} has no function load(name, device, progress)")
    signature = inspect.signature(load)
    parameters = tuple(signature.parameters.values())
    if tuple(p.name for p in parameters) != _ADAPTER_PARAMETERS or any(p.kind not in _POSITIONAL for p in parameters):
        raise TypeError(f"{module_name}.load{signature} is not load(name, device, progress)")
    if signature.return_annotation not in (PathImpl, "PathImpl"):
        raise TypeError(f"{module_name}.load{signature} does not return PathImpl")
    return cast(AdapterLoad, load)


@dataclass(frozen=True)
class AdapterPath:
    """A KernelPath whose library is reached through one adapter module, imported only by `load`."""

    name: str
    ops: tuple[str, ...]
    requires: str
    module: str  # the adapter: mhcdoctor.kernels.<x>_path
    on_request: bool = False
    probe: bool = False

    def __post_init__(self) -> None:
        unknown = [op for op in self.ops if op not in ALL_OPS]
        if unknown:
            raise ValueError(f"path {self.name}: unknown ops {unknown}")

    def health(self, device: str, search_path: Sequence[str]) -> str | None:
        # What the device rules out is for `load` to say, after the import: a broken library is then reported as
        # broken even when the CPU was asked for (and `--device auto` learns there is no GPU only in the child).
        for package in dict.fromkeys((self.requires, *WORKER_REQUIRES)):
            if not package_present(package, search_path):
                hint = f"; {VERIFY_EXTRA} installs torch and numpy" if package in WORKER_REQUIRES else ""
                return f"{package} is not installed (No module named {package!r} on the search path){hint}"
        return None

    def load(self, device: str, progress: Progress) -> PathImpl:
        impl = adapter_load(self.module)(self.name, device, progress)
        if not isinstance(impl, PathImpl):
            raise TypeError(f"{self.module}.load returned {type(impl).__name__}, not PathImpl")
        return impl  # an op it has beyond `ops` (a vLLM registering more) is not run: verify asks for `ops` only


class Registry:
    """The paths in report order, looked up by name; `unlisted` ones (the user's) are found by name only."""

    def __init__(self, paths: Sequence[KernelPath], unlisted: Sequence[KernelPath] = ()) -> None:
        self._listed = tuple(paths)
        self._by_name: dict[str, KernelPath] = {}
        for path in (*paths, *unlisted):
            if path.name in self._by_name:
                raise ValueError(f"two paths named {path.name!r}")
            self._by_name[path.name] = path

    def __iter__(self) -> Iterator[KernelPath]:
        return iter(self._listed)

    def __len__(self) -> int:
        return len(self._listed)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> KernelPath:
        return self._by_name[name]

    def names(self) -> list[str]:
        """The listed paths' names, in report order (what --path accepts)."""
        return [p.name for p in self._listed]

    def default(self, peers: bool = False) -> list[str]:
        """What runs when no --path is given: every listed path, those run on request only with `peers`."""
        return [p.name for p in self._listed if peers or not p.on_request]


_VLLM = "mhcdoctor.kernels.vllm_path"

# The user's own kernels (`--kernel OP=MODULE:FUNC`): run when given, never listed; the specs travel to the child in
# this environment variable, as JSON {op: "module:func"}.
USER_PATH = "user"
USER_KERNELS_ENV = "MHCDOCTOR_USER_KERNELS"
# The folder the user's modules are imported from (the working folder of `verify --kernel`): never on the child's
# PYTHONPATH, where its sitecustomize.py would run before any mhcdoctor code; added to sys.path at the import.
USER_FOLDER_ENV = "MHCDOCTOR_USER_KERNELS_FOLDER"
USER = AdapterPath(USER_PATH, ALL_OPS, "torch", "mhcdoctor.kernels.user_path", on_request=True)

REGISTRY = Registry(
    [
        AdapterPath("aiter", ("mhc_pre", "mhc_post", "mhc_fused_post_pre"), "aiter", "mhcdoctor.kernels.aiter_path"),
        AdapterPath(
            "tilelang",
            ("mhc_pre", "mhc_post", "mhc_fused_post_pre"),
            "tilelang",
            "mhcdoctor.kernels.tilelang_path",
            probe=True,
        ),
        # A peer's kernels no vLLM release selects, whose `import tile_kernels` imports every subpackage and
        # tilelang (seconds a default verify would wait for): verify runs it when named, bench whenever installed.
        AdapterPath("tilekernels", ALL_OPS, "tile_kernels", "mhcdoctor.kernels.tilekernels_path", on_request=True),
        AdapterPath("triton", ("mhc_post", "hc_head"), "triton", "mhcdoctor.kernels.triton_path", probe=True),
        AdapterPath("torch", ALL_OPS, "torch", "mhcdoctor.kernels.torch_path"),
        AdapterPath("vllm:aiter", ("mhc_pre", "mhc_post", "mhc_fused_post_pre"), "vllm", _VLLM),
        AdapterPath("vllm:tilelang", ALL_OPS, "vllm", _VLLM),
        AdapterPath("vllm:triton", ("hc_head",), "vllm", _VLLM),
        AdapterPath("vllm:torch", ("mhc_pre", "mhc_post"), "vllm", _VLLM),
    ],
    unlisted=[USER],
)


def ops_of(path: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The ops `path` runs: the user's, those given with --kernel (USER_KERNELS_ENV in the children's `env`)."""
    if path == USER_PATH:
        try:
            specs = json.loads(env.get(USER_KERNELS_ENV, "{}"))
        except ValueError:
            specs = {}
        if isinstance(specs, dict):
            return tuple(op for op in ALL_OPS if op in specs)
    return REGISTRY[path].ops
