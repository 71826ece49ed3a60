"""The self-check: ask the installed vLLM itself, in a child, for the values its mHC dispatch reads.

The child imports vLLM (never the doctor's own process; never with --fast) and reports, step by step so that a
hang keeps what came before: the platform class vllm/platforms/__init__.py resolves, the CustomOp method
dispatch_forward picks for MHCPreOp, has_tilelang(), layers/mhc.py's HAS_TILELANG_MHC, HAS_AITER_MHC,
HAS_AITER_MHC_FUSED and HAS_AITER_MHC_PRE_NORM (where the release has them), and the DeepSeek-V4 model's
use_fused_mhc for each model size asked about. use_fused_mhc is an attribute set in the decoder layer's __init__,
so the child evaluates the assignments of that __init__ in order, in the model module's namespace, with a stand-in
`self` that holds only hidden_size and hc_mult (a statement that needs anything else is skipped); where the
model has no such attribute the value is not reported. The `rules-disagree-with-vllm` finding compares these
values with the rules' trace.

Importing vLLM costs seconds of CPU (about 10 s on a real install), so a full check imports it once: this child's
first step is `import vllm`, and `import_result` gives the `vllm.import` probe's result from it (checkreport runs
the probes without their own vLLM import child).
"""

from __future__ import annotations

import dataclasses

from mhcdoctor.knowledge import selfcheck
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import find_package
from mhcdoctor.probes.probe_child import run_probe_child, skipped

NAME = "vllm.selfcheck"
SOURCE = "child: import vllm; its dispatch values"

CODE = """
import ast, inspect, sys, types
SIZES = {sizes!r}
out = {{}}
def step(key, fn):
    try:
        out[key] = fn()
    except BaseException as exc:
        out.setdefault("error", (key + ": " + type(exc).__name__ + ": " + str(exc)).splitlines()[0][:500])
    report(out)
try:
    import vllm
except BaseException as exc:  # what the vllm.import probe would have seen (import_result reads it back)
    report(failure(exc, imported=False))
    raise SystemExit(0)
version = getattr(vllm, "__version__", None)
out.update(imported=True, version=str(version) if version is not None else None, file=getattr(vllm, "__file__", None))
report(out)
try:
    from vllm.platforms import current_platform
    out["platform"] = type(current_platform).__name__
except BaseException as exc:
    report(failure(exc))
    raise SystemExit(0)
report(out)

def forward():
    try:
        from vllm.model_executor.layers.mhc import MHCPreOp
        return MHCPreOp()._forward_method.__name__
    except BaseException:  # no config context: the same chain dispatch_forward walks, on vLLM's platform object
        p = current_platform
        for test, name in (("is_rocm", "forward_hip"), ("is_cpu", "forward_cpu"), ("is_tpu", "forward_tpu"),
                           ("is_xpu", "forward_xpu"), ("is_out_of_tree", "forward_oot")):
            if getattr(p, test)():
                return name
        return "forward_cuda"

def has_tilelang():
    from vllm.utils.import_utils import has_tilelang
    return bool(has_tilelang())

def module_flag(name):
    import vllm.model_executor.layers.mhc as mhc
    value = getattr(mhc, name, None)
    return None if value is None else bool(value)

step("has_tilelang", has_tilelang)
for key, name in {module_flags!r}:
    step(key, lambda name=name: module_flag(name))
step("forward", forward)

def fused_flags():
    import vllm.models.deepseek_v4 as package
    module = sys.modules[package.DeepseekV4ForCausalLM.__module__]
    out["model_module"] = module.__name__
    tree = ast.parse(inspect.getsource(module))
    init = None
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
            if "self.use_fused_mhc" in ast.unparse(fn):
                init = fn
    if init is None:
        return None
    flags = {{}}
    for hidden, hc in SIZES:
        self = types.SimpleNamespace(hidden_size=hidden, hc_mult=hc)
        local = {{"self": self}}
        for stmt in init.body:
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0]
            try:
                value = eval(compile(ast.Expression(stmt.value), "<init>", "eval"), vars(module), local)
            except Exception:
                continue
            if isinstance(target, ast.Name):
                local[target.id] = value
            elif ast.unparse(target) == "self.use_fused_mhc":
                flags[f"{{hidden}}x{{hc}}"] = "true" if value else "false"
                break
    return flags

step("fused", fused_flags)
"""


IMPORT_NAME = "vllm.import"
_IMPORT_KEYS = ("imported", "version", "file")


def import_result(selfcheck: ProbeResult) -> ProbeResult:
    """The vllm.import probe's result, read from the self-check child (which imported vLLM first): imported, with
    its version, when that step finished, even if a later step failed or hung; else the child's failure."""
    source = "child: import vllm (the self-check's first step)"
    data = {k: selfcheck.data[k] for k in _IMPORT_KEYS if k in selfcheck.data}
    if data.get("imported") is True:
        return ProbeResult(IMPORT_NAME, "ok", data, [], source, selfcheck.seconds)
    if selfcheck.status == "ok":  # an answer without the import's step: an older child, or a bug
        return ProbeResult(IMPORT_NAME, "error", {"imported": False}, [], source, selfcheck.seconds, "no answer")
    evidence = list(selfcheck.evidence)
    return ProbeResult(IMPORT_NAME, selfcheck.status, {"imported": False}, evidence, source, selfcheck.seconds,
                       selfcheck.error)  # fmt: skip


def probe(ctx: ProbeContext, sizes: list[tuple[int, int]]) -> ProbeResult:
    """The installed vLLM's own dispatch values for these model sizes (hidden_size, hc_mult)."""
    if ctx.fast:
        return skipped(NAME, SOURCE)
    if find_package("vllm", ctx.search_path) is None:
        return ProbeResult(NAME, "missing", {}, [], SOURCE, error="vllm is not installed")
    quiet = dataclasses.replace(ctx, env={**ctx.env, "VLLM_LOGGING_LEVEL": ctx.env.get("VLLM_LOGGING_LEVEL", "ERROR")})
    code = CODE.format(sizes=[list(s) for s in sizes], module_flags=selfcheck.MODULE_FLAGS)
    return run_probe_child(NAME, code, quiet, SOURCE)
