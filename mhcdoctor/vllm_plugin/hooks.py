"""Where the plugin hooks vLLM, and what it records (MHCDOCTOR_VLLM=observe|strict).

The hooks hold from vLLM 0.20 to 0.34 (read release by release from /work/cache/vllm-files/X/):
- vllm.utils.torch_utils.direct_register_custom_op: the mHC kernel modules register their `torch.ops.vllm.*` ops
  through it when they import (kernels/mhc/{tilelang,aiter,triton}.py from 0.22, layers/mhc.py in 0.20–0.21); the
  function each registers is wrapped first, so an eager call through torch.ops is seen.
- the kernel modules' functions (kernels/mhc/*.py, 0.22+): the NVIDIA model imports tilelang's by name
  (models/deepseek_v4/nvidia/model.py, 0.25+), and layers/mhc.py calls the package's torch and CPU functions.
- layers/mhc.py's CustomOps (0.22+): forward_native (torch), forward_cpu and forward_xpu, which ROCm, CPU and XPU
  dispatch to (forward_hip falls back to forward_native); forward_cuda and forward_hip call the registered ops.
- vllm.utils.deep_gemm.tf32_hc_prenorm_gemm: whether a tilelang pre op's prenorm GEMM was DeepGEMM's.
- vllm.model_executor.custom_op.CustomOp.__init__: the first CustomOp built under a DeepSeek-V4 config is where
  this process builds the model: the start-up line (startup.py), then the original __init__ is put back.
A module already imported when the plugin loads is patched at once; one that imports later is patched as its
import finishes (an import hook on sys.meta_path). Where a target is missing, one warning, and nothing there.

A wrapper records after the call returns (a path that raised did not run), only at the outermost mHC call (the
torch fused op's inner post and pre are the fused op's path), never while torch.compile traces (the compiled
graph calls the registered op, which records at run time), and reads only shapes (no GPU sync). Under CUDA-graph
capture the call is recorded as `graph=capture`; a replay runs no Python, so it records nothing and costs nothing.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from mhcdoctor.vllm_plugin import DIR_ENV, MODES
from mhcdoctor.vllmlog.observed import Record, bucket, observed_document

LOGGER = "vllm.mhcdoctor"  # under vllm.: vLLM's handler, format and worker prefix apply
MAX_RECORDS = 512  # per process: ops × paths × buckets × graph states stay far below this
MAX_EXACT = 1 << 16  # exact call sizes remembered, so that a seen size skips the bucket and the key
MARKER = "__mhcdoctor_observed__"

KERNELS = "vllm.model_executor.kernels.mhc"
LAYERS = "vllm.model_executor.layers.mhc"
TORCH_UTILS = "vllm.utils.torch_utils"
DEEP_GEMM = "vllm.utils.deep_gemm"
CUSTOM_OP = "vllm.model_executor.custom_op"
# kernels/mhc/*.py and their functions: mhc_pre_tilelang, mhc_pre_delayed_aiter, mhc_fused_post_pre_tilelang_reuse_
# residual, hc_head_fused_kernel_tilelang, hc_head_triton, mhc_post_torch, mhc_pre_cpu (vLLM 0.22–0.34). The package
# re-exports some of them in some releases only, so it is patched where it has them and never warned about.
KERNEL_MODULES = tuple(f"{KERNELS}.{name}" for name in ("tilelang", "aiter", "triton", "torch", "cpu"))
_KERNEL_NAME = re.compile(
    r"^(?P<op>mhc_fused_post_pre|mhc_pre|mhc_post|hc_head)\w*?_(?P<path>tilelang|aiter|triton|torch|cpu)"
    r"(?:_reuse_residual)?$"  # 0.34's NVIDIA model imports mhc_fused_post_pre_tilelang_reuse_residual by name
)
# layers/mhc.py of 0.20–0.21 registers its ops without a suffix: tilelang, but inline torch for 0.21 on ROCm (below).
_UNSUFFIXED = {
    "mhc_pre": "mhc_pre",
    "mhc_post": "mhc_post",
    "mhc_fused_post_pre": "mhc_fused_post_pre",
    "hc_head_fused_kernel": "hc_head",
}
# layers/mhc.py's CustomOps (0.22+) and the path each forward_* stands for.
CUSTOM_OPS = {
    "MHCPreOp": "mhc_pre",
    "MHCPreDelayedOp": "mhc_pre",
    "MHCPostOp": "mhc_post",
    "MHCFusedPostPreOp": "mhc_fused_post_pre",
    "HCHeadOp": "hc_head",
}
FORWARD_PATHS = {"forward_native": "torch", "forward_cpu": "cpu", "forward_xpu": "xpu"}
PRENORM_OPS = ("mhc_pre", "mhc_fused_post_pre")  # the ops whose tilelang kernels run the prenorm GEMM


def classify(name: str) -> tuple[str, str] | None:
    """(op, path) of a kernel function or registered op name, or None for a helper."""
    if name in _UNSUFFIXED:
        return _UNSUFFIXED[name], "tilelang"
    m = _KERNEL_NAME.match(name)
    return (m.group("op"), m.group("path")) if m else None


class Recorder:
    """This process's records: once per (op, path, kernel, bucket, prenorm, graph); lines, and the JSON file."""

    def __init__(self, mode: str, folder: str | None) -> None:
        self.mode = mode
        self.folder = folder
        self.log = logging.getLogger(LOGGER)
        self.seen: set[tuple[str, str, str, str, str | None, str]] = set()
        self.records: list[Record] = []
        self.dropped = 0
        self.depth = 0  # mHC calls open on this thread's stack (only the outermost records)
        self.deepgemm = 0  # calls of DeepGEMM's prenorm GEMM so far
        self.startup: str | None = None
        self.vllm: str | None = None
        self.warned: set[str] = set()
        self.lock = threading.Lock()
        self.exact: set[tuple[str, str, str, int, str | None, str]] = set()
        self.cuda: Any = None  # torch.cuda, once a call needed it

    def warn_once(self, key: str, text: str) -> None:
        if key not in self.warned:
            self.warned.add(key)
            self.log.warning("mhcdoctor: %s", text)

    def capturing(self) -> bool:
        """Whether the current CUDA (or HIP) stream is capturing a graph; False where CUDA never started."""
        cuda = self.cuda
        if cuda is None:
            import torch

            cuda = self.cuda = torch.cuda
        started = getattr(cuda, "_initialized", None)  # torch's own flag: a µs less than is_initialized()
        if not (cuda.is_initialized() if started is None else started):
            return False  # never ask a CUDA that has not started: asking could start it
        return bool(cuda.is_current_stream_capturing())

    def seen_call(self, op: str, path: str, kernel: str, args: Sequence[Any], prenorm: str | None) -> None:
        try:
            tokens = _tokens(args)
            graph = "capture" if self.capturing() else "eager"
            exact = (op, path, kernel, tokens, prenorm, graph)
            if exact in self.exact:  # a call of this exact size was seen: the common case while serving
                return
            if len(self.exact) < MAX_EXACT:
                self.exact.add(exact)
            key = (op, path, kernel, bucket(tokens) if tokens else "0", prenorm, graph)
            if key in self.seen:
                return
            with self.lock:
                if key in self.seen:
                    return
                self.seen.add(key)
                record = Record(op, path, key[3], kernel, prenorm, graph)
                full = len(self.records) >= MAX_RECORDS
                if full:
                    self.dropped += 1  # each key once (it is in seen now): the file's count stays exact
                else:
                    self.records.append(record)
            if not full:
                self.log.info("%s", record.line())
            self.write()
        except Exception as error:  # observing must never break the model
            self.warn_once("record", f"a record could not be written: {type(error).__name__}: {error}")

    def write(self) -> None:
        """The process's JSON file, replaced whole: written beside it, then renamed into place."""
        if not self.folder:
            return
        import json

        document = observed_document(os.getpid(), _rank(), self.vllm, self.startup, self.records, self.dropped)
        target = os.path.join(self.folder, f"mhcdoctor-observed-{os.getpid()}.json")
        try:
            os.makedirs(self.folder, exist_ok=True)
            temporary = f"{target}.{threading.get_ident()}.tmp"
            with open(temporary, "w", encoding="utf-8") as out:
                json.dump(document, out, indent=1)
                out.write("\n")
            os.replace(temporary, target)
        except OSError as error:
            self.warn_once("dir", f"cannot write {target}: {error}")


RECORDER: Recorder | None = None


def _tokens(args: Sequence[Any]) -> int:
    """Tokens of a call from its first tensor's shape (metadata: no GPU sync): [T, hc, H] or [T, H]."""
    for arg in args:
        shape = getattr(arg, "shape", None)
        if shape is None:
            continue
        if len(shape) >= 3:
            inner = shape[-1] * shape[-2]
            return int(shape.numel() // inner) if inner else 0
        return int(shape[0]) if len(shape) else 1
    return 0


def _rank() -> str | None:
    for name in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(name)
        if value and value.isdigit():
            return value
    return None


def observe(fn: Callable[..., Any], op: str, path: str, kernel: str) -> Callable[..., Any]:
    """`fn` wrapped to record its (op, path) at run time; `fn` itself where it is wrapped already."""
    if getattr(fn, MARKER, False):
        return fn
    recorder = RECORDER
    assert recorder is not None
    import torch

    compiling = torch.compiler.is_compiling
    prenorm_op = path == "tilelang" and op in PRENORM_OPS

    def observed(*args: Any, **kwargs: Any) -> Any:
        if compiling():  # dynamo folds this to True while tracing: the branch below is not in the graph
            return fn(*args, **kwargs)
        recorder.depth += 1
        before = recorder.deepgemm
        try:
            result = fn(*args, **kwargs)
        finally:
            recorder.depth -= 1
        if recorder.depth == 0:
            prenorm = ("deepgemm" if recorder.deepgemm != before else "tilelang") if prenorm_op else None
            recorder.seen_call(op, path, kernel, args or tuple(kwargs.values()), prenorm)
        return result

    functools.update_wrapper(observed, fn)
    setattr(observed, MARKER, True)
    return observed


# --- the targets ---------------------------------------------------------------------------------------------------


def patch_torch_utils(module: ModuleType) -> int:
    original = getattr(module, "direct_register_custom_op", None)
    if original is None or getattr(original, MARKER, False):
        return 0 if original is None else 1

    def direct_register_custom_op(op_name: str, op_func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        found = classify(op_name)
        if found is not None and op_name in _UNSUFFIXED and _torch_on_rocm(op_func):
            found = (found[0], "torch")
        if found is not None and inspect.isfunction(op_func):
            op_func = observe(op_func, found[0], found[1], op_name)
        return original(op_name, op_func, *args, **kwargs)

    functools.update_wrapper(direct_register_custom_op, original)
    setattr(direct_register_custom_op, MARKER, True)
    module.direct_register_custom_op = direct_register_custom_op  # type: ignore[attr-defined]
    return 1


def _torch_on_rocm(op_func: Callable[..., Any]) -> bool:
    """Whether an unsuffixed op of layers/mhc.py runs inline torch here: 0.21's mhc_pre, mhc_post and
    _hc_head_fused_kernel branch on `current_platform.is_rocm()` (layers/mhc.py lines 237, 575, 995; the fused op does
    not), 0.20's never do. Read once per op, at its registration."""
    code = getattr(op_func, "__code__", None)
    if code is None or "is_rocm" not in code.co_names:
        return False
    platforms = sys.modules.get("vllm.platforms")  # imported by layers/mhc.py before it registers its ops
    try:
        return bool(platforms is not None and platforms.current_platform.is_rocm())
    except Exception:  # a platform that cannot say: the op's own default, tilelang
        return False


def patch_kernels(module: ModuleType) -> int:
    """The kernel functions a module defines (or, for the package, re-exports): wrapped in place."""
    count = 0
    for name, value in list(vars(module).items()):
        found = classify(name) if name not in _UNSUFFIXED else None
        if found is None:
            continue
        if getattr(value, MARKER, False):
            count += 1
        elif inspect.isfunction(value) and value.__module__ in KERNEL_MODULES:  # not tilelang_kernels' builders
            setattr(module, name, observe(value, found[0], found[1], name))
            count += 1
    return count


def patch_layers(module: ModuleType) -> int:
    count = 0
    for class_name, op in CUSTOM_OPS.items():
        cls = getattr(module, class_name, None)
        if not isinstance(cls, type):
            continue
        for method, path in FORWARD_PATHS.items():
            fn = cls.__dict__.get(method)
            if inspect.isfunction(fn):
                setattr(cls, method, observe(fn, op, path, f"{class_name}.{method}"))
                count += 1
    if any(name in vars(module) for name in _UNSUFFIXED):  # 0.20–0.21: the ops registered here
        count += 1
    return count


def patch_deep_gemm(module: ModuleType) -> int:
    original = getattr(module, "tf32_hc_prenorm_gemm", None)
    if original is None or not callable(original):
        return 0
    if getattr(original, MARKER, False):
        return 1
    recorder = RECORDER
    assert recorder is not None

    def tf32_hc_prenorm_gemm(*args: Any, **kwargs: Any) -> Any:
        recorder.deepgemm += 1
        return original(*args, **kwargs)

    functools.update_wrapper(tf32_hc_prenorm_gemm, original)
    setattr(tf32_hc_prenorm_gemm, MARKER, True)
    module.tf32_hc_prenorm_gemm = tf32_hc_prenorm_gemm  # type: ignore[attr-defined]
    return 1


def patch_custom_op(module: ModuleType) -> int:
    from mhcdoctor.vllm_plugin.startup import hook_custom_op

    return hook_custom_op(module, RECORDER)


PATCHES: dict[str, Callable[[ModuleType], int]] = {
    TORCH_UTILS: patch_torch_utils,
    DEEP_GEMM: patch_deep_gemm,
    CUSTOM_OP: patch_custom_op,
    LAYERS: patch_layers,
    KERNELS: patch_kernels,
    **{name: patch_kernels for name in KERNEL_MODULES},
}
# A module missing in a release is no loss where another release holds the op (kernels/mhc/ is 0.22+; cpu.py
# 0.30+); these must be found in every release, and warn once where not.
REQUIRED = (TORCH_UTILS, CUSTOM_OP, LAYERS)


def apply(name: str, module: ModuleType) -> None:
    try:
        found = PATCHES[name](module)
    except Exception as error:
        found = 0
        if RECORDER is not None:
            RECORDER.warn_once(name, f"could not hook {name}: {type(error).__name__}: {error}")
    if not found and RECORDER is not None and name in REQUIRED:
        RECORDER.warn_once(name, f"{name} has none of the mHC targets this plugin knows: its ops are not observed")


class _Loader(importlib.abc.Loader):
    """The module's own loader, with a patch after its code ran."""

    def __init__(self, inner: importlib.abc.Loader, name: str) -> None:
        self.inner = inner
        self.name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        apply(self.name, module)

    def __getattr__(self, attr: str) -> Any:  # get_source, get_filename, ...: the real loader's
        return getattr(self.inner, attr)


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, fullname)
        return spec


def install(mode: str) -> None:
    """Hook every target: the imported ones now, the rest as they import."""
    global RECORDER
    if mode not in MODES:  # register() said so already
        return
    if RECORDER is not None:  # vLLM may load plugins more than once in a process
        return
    RECORDER = Recorder(mode, os.environ.get(DIR_ENV) or None)
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, Finder())
    early = [name for name in (LAYERS, KERNELS, *KERNEL_MODULES) if name in sys.modules]
    # the torch.ops registration first: a kernel module imported before it registered unwrapped functions
    for name in (TORCH_UTILS, DEEP_GEMM, CUSTOM_OP, KERNELS, *KERNEL_MODULES, LAYERS):
        module = sys.modules.get(name)
        if module is not None:
            apply(name, module)
    if early:
        RECORDER.warn_once(
            "early",
            f"{', '.join(early)} imported before the plugin loaded: calls through torch.ops.vllm are not observed",
        )
