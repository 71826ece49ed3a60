"""The interpreter: a rule set (releases.py), the facts and a model config → a path per op, with every gate.

Pure: no I/O and no imports of GPU libraries. Each gate is one test vLLM makes (or, marked so in its text, a
condition its kernels need without testing it), with what was observed. Gates of one candidate path are
recorded up to the first that fails, as vLLM's `and` stops there. An unknown fact fails its gate ("not
established") where it must hold (the arch is MI3xx) and passes where it only excludes (not gfx942), and the gate
says which; it raises no finding by itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from mhcdoctor.decision import Gate, OpDecision
from mhcdoctor.documents.vocabulary import OPS, PathName
from mhcdoctor.facts import Facts
from mhcdoctor.knowledge import aiter_releases, versions, vllm_releases
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules.releases import RuleSet

# vLLM 0.29+ models/deepseek_v4/amd/model.py: _AITER_MHC_FUSED_RMSNORM_SIZES, where aiter folds the RMSNorm.
AITER_FOLD_SIZES = frozenset({1280, 2560, 4096, 7168})
# The archs HAS_AITER_MHC admits: on_mi3xx() (0.25–0.26), get_cdna_version() > 2 (0.27+).
AITER_ARCHS = {"none": (), "mi3xx": ("gfx942", "gfx950"), "cdna3+": ("gfx942", "gfx950", "gfx1250")}

Candidate = tuple[str, list[Gate]]
DispatchValue = bool | str | None  # a value vLLM's dispatch code computes: a flag, a class or function name


@dataclass
class Dispatch:
    ops: dict[str, OpDecision]
    fused_post_pre: bool
    tilelang_required: bool  # without tilelang the model cannot be built or its kernels cannot run
    platform: str = "cuda"  # vLLM's platform (vllm_platform): cuda, rocm, xpu, cpu, unspecified, conflict
    # The values vLLM's own code computes on the way, as the rules predict them (keys of VllmSelfCheck), for the
    # self-check against the installed vLLM; a key is absent where this release has no such value.
    values: dict[str, DispatchValue] = field(default_factory=dict)


def arch_has(facts: Facts, *names: str) -> bool | None:
    """vLLM's own test: a substring of the GCN arch name (`"gfx942" in _GCN_ARCH`); None when the arch is unknown."""
    if facts.arch is None:
        return None
    arch = facts.arch.lower()
    return any(name in arch for name in names)


def aiter_version(facts: Facts) -> versions.Version | None:
    return versions.parse(facts.aiter.version)


def aiter_feature(facts: Facts, name: str) -> bool | None:
    """An aiter API feature: the probe's answer, else what AMD's aiter has at that version; None when unknown."""
    value = getattr(facts.aiter, name)
    if value is not None:
        return bool(value)
    if facts.aiter.genuine is False or facts.aiter.present is False or facts.aiter.has_mhc_ops is False:
        return False
    known = aiter_releases.release(facts.aiter.version) if facts.aiter.genuine and facts.aiter.version else None
    return getattr(known, name) if known is not None else None


def choose(lead: list[Gate], candidates: Iterable[Candidate]) -> OpDecision:
    """The first candidate whose gates all pass wins; each candidate's gates are kept up to its first failure."""
    why = list(lead)
    for path, gates in candidates:
        for gate in gates:
            why.append(gate)
            if not gate.passed:
                break
        else:
            return OpDecision(path=path, why=why)  # type: ignore[arg-type]
    return OpDecision(path="unavailable", why=why)


def _fallback(path: str, text: str) -> Candidate:
    return path, [Gate(path, "fallback", "always", True, text)]


def _unknown(what: str) -> str:
    return f"{what} is unknown (not established), so this gate does not pass"


def preferred_path(rule_set: RuleSet, facts: Facts, op: str, platform: str | None = None) -> PathName:
    """The best path a release offers an op on this machine: on ROCm aiter where it has an aiter path, else
    tilelang; on CUDA tilelang.

    Where the release itself rules a kernel out, the next path is the best on offer and counts as preferred:
    0.20.0 computes hc_head in torch, 0.21 runs ROCm's pre/post/hc_head in inline torch, and from 0.24 tilelang
    mHC is off on gfx942 (from 0.27 on gfx1250 too), where hc_head's best is triton and the others' is torch;
    aiter's arch test leaves gfx90a and RDNA out, where tilelang is the best. On vLLM's CPU platform the best is its
    CPU ops; on XPU the vllm-xpu-kernels ops (0.27+), before that torch (and triton for hc_head). `platform` is vLLM's
    platform (vllm_platform); by default the machine's.
    """
    platform = platform or facts.platform
    if platform == "cpu":
        return "cpu"
    if platform == "xpu":
        if rule_set.xpu == "kernels":
            return "xpu"
        return "triton" if op == "hc_head" else "torch"
    if op == "hc_head" and rule_set.hc_head == "torch":
        return "torch"
    if platform != "rocm":
        return "tilelang"
    if rule_set.rocm_style == "torch-inline" and op != "mhc_fused_post_pre":
        return "torch"
    aiter_arch = arch_has(facts, *AITER_ARCHS[rule_set.aiter_arch]) is not False  # unknown: can't rule aiter out
    if op in ("mhc_pre", "mhc_post") and rule_set.aiter_arch != "none" and aiter_arch:
        return "aiter"
    if op == "mhc_fused_post_pre" and rule_set.aiter_fused != "none" and aiter_arch:
        return "aiter"
    no_tilelang = (rule_set.tilelang_mhc_skips_gfx942 and arch_has(facts, "gfx942")) or (
        rule_set.tilelang_skips_gfx1250 and arch_has(facts, "gfx1250")
    )
    if no_tilelang:
        return "triton" if op == "hc_head" else "torch"
    return "tilelang"


# --- tilelang --------------------------------------------------------------------------------------------------


def has_tilelang_gate(rs: RuleSet, f: Facts) -> Gate:
    tl = f.tilelang
    version = f" {tl.version}" if tl.version else ""
    if rs.has_tilelang == "find_spec":
        if tl.present is None:
            return Gate(
                "tilelang", "has_tilelang() [find_spec]", None, False, _unknown("tilelang's presence"), kind="package"
            )
        text = (
            f"find_spec('tilelang') finds tilelang{version}; vLLM does not import it to check"
            if tl.present
            else "tilelang is not installed"
        )
        return Gate("tilelang", "has_tilelang() [find_spec]", tl.present, bool(tl.present), text, kind="package")
    observed = {"present": tl.present, "imports": tl.imports}
    if tl.present is None:
        return Gate(
            "tilelang",
            "has_tilelang() [trial import]",
            observed,
            False,
            _unknown("tilelang's presence"),
            kind="package",
        )
    if not tl.present:
        return Gate(
            "tilelang", "has_tilelang() [trial import]", observed, False, "tilelang is not installed", kind="package"
        )
    if tl.imports is False:
        error = f" ({tl.import_error})" if tl.import_error else ""
        text = f"tilelang{version} is installed but fails to import{error}: this release counts it as absent"
        return Gate("tilelang", "has_tilelang() [trial import]", observed, False, text, kind="package")
    if tl.imports is None:
        text = f"tilelang{version} is installed; its import was not tried (explain --deep tries it): assumed to import"
        return Gate("tilelang", "has_tilelang() [trial import]", observed, True, text, kind="package")
    return Gate(
        "tilelang", "has_tilelang() [trial import]", observed, True, f"tilelang{version} imports", kind="package"
    )


def tilelang_gates(rs: RuleSet, f: Facts) -> list[Gate]:
    """HAS_TILELANG (0.22–0.23) or HAS_TILELANG_MHC (0.24+) on ROCm."""
    gates = [has_tilelang_gate(rs, f)]
    if rs.tilelang_skips_gfx1250:
        gates.append(_not_arch_gate(f, "gfx1250", "not on_gfx1250()", "tilelang is disabled on gfx1250"))
    if rs.tilelang_mhc_skips_gfx942:
        gates.append(
            _not_arch_gate(
                f,
                "gfx942",
                "HAS_TILELANG_MHC: not on_gfx942()",
                "tilelang mHC computes wrong results on gfx942, so HAS_TILELANG_MHC is False (vLLM #45931)",
            )
        )
    return gates


def _not_arch_gate(f: Facts, arch: str, gate: str, why_not: str) -> Gate:
    """An exclusion: an unknown arch is assumed not to be the excluded one (and the text says so)."""
    on = arch_has(f, arch)
    if on is None:
        return Gate("tilelang", gate, None, True, f"the arch is unknown: assumed not {arch}")
    return Gate("tilelang", gate, f.arch, not on, f"arch {f.arch}: " + (why_not if on else f"not {arch}"))


def tilelang_installed_gate(f: Facts, why: str) -> Gate:
    """Not a vLLM test: the kernels import tilelang when first called, so without it the op cannot run."""
    present = f.tilelang.present
    if present is None:
        return Gate("tilelang", "tilelang installed", None, False, _unknown("tilelang's presence"))
    text = f"{why}; " + ("tilelang is installed" if present else "tilelang is not installed: the call fails")
    return Gate("tilelang", "tilelang installed", present, bool(present), text)


# --- aiter -----------------------------------------------------------------------------------------------------


def has_aiter_mhc_gates(rs: RuleSet, f: Facts) -> list[Gate]:
    """HAS_AITER_MHC = is_aiter_found_and_supported(): ROCm, find_spec('aiter'), and the arch test."""
    a = f.aiter
    if a.present is None:
        found = Gate("aiter", "find_spec('aiter')", None, False, _unknown("aiter's presence"), kind="package")
    elif a.present:
        version = f" {a.version}" if a.version else ""
        if a.genuine is False:  # the version is the impostor's own, not an aiter version
            who = f"{a.distribution or 'a package'}{version}, which is importable as aiter but is not AMD's aiter"
        else:
            who = ("AMD's aiter" if a.genuine else "a package named aiter") + version
        found = Gate(
            "aiter",
            "find_spec('aiter')",
            True,
            True,
            f"finds {who} (vLLM checks neither its origin nor its version)",
            kind="package",
        )
    else:
        found = Gate("aiter", "find_spec('aiter')", False, False, "no package named aiter is installed", kind="package")
    if rs.aiter_arch == "mi3xx":
        on = arch_has(f, *AITER_ARCHS["mi3xx"])
        text = (
            _unknown("the arch")
            if on is None
            else f"arch {f.arch} is " + ("MI3xx" if on else "not MI3xx (gfx942/gfx950)")
        )
        arch = Gate("aiter", "on_mi3xx()", f.arch, bool(on), text)
    else:
        on = arch_has(f, *AITER_ARCHS["cdna3+"])
        text = (
            _unknown("the arch")
            if on is None
            else f"arch {f.arch} is " + ("CDNA3 or newer" if on else "not CDNA3+ (gfx942, gfx950, gfx1250)")
        )
        arch = Gate("aiter", "get_cdna_version() > 2", f.arch, bool(on), text)
    return [found, arch]


def aiter_shape_gates(rs: RuleSet, model: ModelConfig) -> list[Gate]:
    h, n = model.hidden_size, model.hc_mult
    gates = [
        Gate(
            "aiter",
            "hidden_size % 256 == 0",
            h,
            h % 256 == 0,
            f"hidden size {h} is " + ("" if h % 256 == 0 else "not ") + "a multiple of 256",
        ),
    ]
    if rs.aiter_hc4:
        gates.append(Gate("aiter", "hc_mult == 4", n, n == 4, f"hc_mult is {n}"))
    return gates


# vLLM 0.30+ layers/mhc.py probes: HAS_AITER_MHC_PRE_NORM (inspect.signature) and HAS_AITER_MHC_FUSED (import).
_API_GATES = {
    "mhc_pre_norm_args": (
        "mhc_pre accepts norm_weight/norm_eps",
        "the RMSNorm folds here and aiter's mhc_pre takes norm_weight/norm_eps",
        "the RMSNorm folds here, but aiter's mhc_pre takes no norm_weight/norm_eps (aiter before 0.1.15)",
    ),
    "has_fused_post_pre": (
        "aiter.ops.mhc.mhc_fused_post_pre imports",
        "aiter has mhc_fused_post_pre (with norm_weight/norm_eps)",
        "aiter has no mhc_fused_post_pre (aiter before 0.1.16)",
    ),
}


def aiter_api_gate(f: Facts, feature: str) -> Gate:
    """vLLM 0.30+ imports aiter.ops.mhc at start-up and inspects it; an aiter that fails to import fails it."""
    gate, yes, no = _API_GATES[feature]
    value = aiter_feature(f, feature)
    if f.aiter.imports is False:
        text = "aiter fails to import, so vLLM's probe of aiter.ops.mhc fails"
        return Gate("aiter", gate, False, False, text, kind="aiter-api")
    if f.aiter.genuine is False:  # PyPI's `aiter` has no version of AMD's to be "before"
        text = "the installed `aiter` is not AMD's aiter and has no aiter.ops.mhc, so vLLM's probe of it fails"
        return Gate("aiter", gate, False, False, text, kind="aiter-api")
    if value is None:
        return Gate("aiter", gate, None, False, _unknown(f"whether {yes.split(' and ')[-1]}"), kind="aiter-api")
    return Gate("aiter", gate, value, value, yes if value else no, kind="aiter-api")


# --- the decision ------------------------------------------------------------------------------------------------


def dispatch(
    rs: RuleSet, f: Facts, model: ModelConfig, vllm_version: str | None = None, release: str | None = None
) -> Dispatch:
    """The path per op. `vllm_version` is the release asked about (default: the installed one's version); `release`,
    where given, the release whose mHC code is installed, whose knowledge applies."""
    platform, platform_gate = vllm_platform(f, vllm_version if vllm_version is not None else f.vllm.version)
    if platform == "cpu":
        result = _cpu(rs, platform_gate)
    elif platform == "xpu":
        result = _xpu(rs, f, platform_gate)
    elif platform not in ("cuda", "rocm"):
        result = _no_platform(platform_gate)
    elif platform == "cuda":
        result = _cuda(rs, f)
    elif rs.rocm_style == "custom-op":
        result = _rocm_custom_op(rs, f, model)
    else:
        result = _rocm_module(rs, f)
    if platform in ("cuda", "rocm"):
        version = release or (vllm_version if vllm_version is not None else f.vllm.version)
        add_prenorm_gates(result, rs, f, model, platform, version)
    result.platform = platform
    if platform not in ("cuda", "rocm"):  # layers/mhc.py still computes its flags: False off CUDA and ROCm
        flags = _module_values(rs, f, has_tilelang=None, aiter=False)
        if "has_tilelang_mhc" in flags:
            flags["has_tilelang_mhc"] = False
        result.values = {**flags, **result.values}
    result.values = {"platform": _PLATFORM_CLASSES[platform], "forward": _FORWARD.get(platform), **result.values}
    if rs.rocm_style == "custom-op" or platform in ("cpu", "xpu"):
        result.values["fused"] = result.fused_post_pre
    return result


# vllm/platforms/__init__.py resolves one of these classes; CustomOp.dispatch_forward picks the method.
_PLATFORM_CLASSES = {
    "cuda": "CudaPlatform",
    "rocm": "RocmPlatform",
    "xpu": "XPUPlatform",
    "cpu": "CpuPlatform",
    "unspecified": "UnspecifiedPlatform",
    "conflict": None,
}
# UnspecifiedPlatform is none of rocm/cpu/tpu/xpu/out-of-tree, so dispatch_forward falls through to forward_cuda.
_FORWARD = {
    "cuda": "forward_cuda",
    "rocm": "forward_hip",
    "xpu": "forward_xpu",
    "cpu": "forward_cpu",
    "unspecified": "forward_cuda",
}


def vllm_platform(f: Facts, version: str | None) -> tuple[str, Gate]:
    """The platform vLLM would detect (vllm/platforms/__init__.py, the same in 0.20–0.34), from the facts.

    Each built-in plugin is tried: cuda (NVML counts GPUs and "cpu" is not in vLLM's version), rocm (amdsmi sees
    GPUs), xpu (torch.xpu.is_available(): an Intel GPU and an XPU build of torch), cpu ("cpu" in vLLM's version, as
    its CPU build's `+cpu` label says). None active: UnspecifiedPlatform; more than one: vLLM raises RuntimeError.
    """
    v = version or ""
    machine = f.platform
    # A what-if's platform (--platform cpu) takes what is unknown as fitting it, as torch's XPU build is for xpu.
    assumed_cpu = version is None and machine == "cpu" and f.sources.get("platform", "").startswith("user:")
    cpu_build = "cpu" in v or assumed_cpu
    active = []
    if machine == "cuda" and not cpu_build:
        active.append("cuda")
    if machine == "rocm":
        active.append("rocm")
    torch_xpu = torch_has_xpu(f)
    if machine == "xpu" and torch_xpu is not False:
        active.append("xpu")
    if cpu_build:
        active.append("cpu")
    name = "vllm/platforms/__init__.py"
    if len(active) > 1:
        text = (
            f"both the {active[0]} and the cpu platform plugins detect (vLLM {v} is a CPU build on a machine with "
            f"{machine.upper()} GPUs): vLLM raises 'Only one platform plugin can be activated'"
        )
        return "conflict", Gate("dispatch", name, active, False, text)
    if active:
        platform = active[0]
        why = {
            "cuda": "NVML sees NVIDIA GPUs and vLLM's version has no 'cpu'",
            "rocm": "amdsmi sees AMD GPUs",
            "xpu": "torch.xpu.is_available(): an Intel GPU and torch's XPU build"
            + (" (torch's build not established: assumed)" if torch_xpu is None else ""),
            "cpu": (
                "vLLM's build not established: assumed its CPU build, as the what-if's platform asks"
                if assumed_cpu
                else f"vLLM {v} is a CPU build ('cpu' in its version)"
            )
            + (f"; its {machine.upper()} GPUs go unused" if machine != "cpu" else ""),
        }[platform]
        return platform, Gate("dispatch", name, platform, True, f"{why}: {_PLATFORM_CLASSES[platform]}")
    if machine == "xpu":
        text = f"an Intel GPU, but torch {f.torch.version} has no XPU build, so torch.xpu.is_available() is False"
    elif version is None:
        text = "no GPU, and vLLM's build is not established (its CPU build has 'cpu' in its version, e.g. 0.34.0+cpu)"
    else:
        text = f"no GPU, and vLLM {v} is not a CPU build (no 'cpu' in its version; PyPI's wheel is the CUDA build)"
    return "unspecified", Gate("dispatch", name, "unspecified", False, text + ": UnspecifiedPlatform runs no model")


def torch_has_xpu(f: Facts) -> bool | None:
    """Whether torch is an XPU build (torch/version.py's `xpu`, or a +xpu version); None when unknown."""
    t = f.torch
    if t.build is not None:
        return t.build == "xpu"
    return True if t.xpu or "+xpu" in (t.version or "") else None


def _no_platform(gate: Gate) -> Dispatch:
    ops: dict[str, OpDecision] = {op: OpDecision("unavailable", [gate]) for op in OPS}
    return Dispatch(ops, False, False)


def _no_model(gate: Gate, what: str, since: str) -> Dispatch:
    """A platform vLLM detects but whose DeepSeek-V4 model this release lacks: it imports the CUDA model instead."""
    missing = Gate(
        "dispatch",
        f"models/deepseek_v4/{what}/",
        False,
        False,
        f"this release has no DeepSeek-V4 {what.upper()} model (it arrives in {since}): "
        "vLLM imports its CUDA model instead, whose kernels need an NVIDIA GPU",
    )
    ops: dict[str, OpDecision] = {op: OpDecision("unavailable", [gate, missing]) for op in OPS}
    return Dispatch(ops, False, False)


# vllm/model_executor/kernels/mhc/cpu.py: the wrappers forward_cpu calls, and the CPU build's ops behind them.
_CPU_OPS = {
    "mhc_pre": "mhc_pre_cpu → hc_pre_fused_cpu",
    "mhc_post": "mhc_post_cpu → hc_post_fused_cpu",
    "mhc_fused_post_pre": "mhc_post_cpu, then mhc_pre_cpu",
    "hc_head": "hc_head_fused_cpu",
}


def _cpu(rs: RuleSet, platform_gate: Gate) -> Dispatch:
    """vLLM's CPU platform: models/deepseek_v4/cpu/ (0.30+), each mHC op's forward_cpu calls the CPU build's ops."""
    if not rs.cpu_model:
        return _no_model(platform_gate, "cpu", "0.30.0")
    # cpu/model.py: use_fused_mhc = HAS_TILELANG_MHC and not (...); HAS_TILELANG_MHC is False off CUDA and ROCm.
    fused = Gate(
        "model",
        "model runs fused post+pre",
        {"tilelang_mhc": False},
        False,
        "HAS_TILELANG_MHC is False off CUDA and ROCm → no: post and pre run separately",
    )
    ops = {}
    for op, calls in _CPU_OPS.items():
        kernel = Gate("cpu", "CustomOp.forward_cpu", "forward_cpu", True, f"{calls} (vLLM's CPU build: torch.ops._C)")
        lead = [platform_gate, fused] if op == "mhc_fused_post_pre" else [platform_gate]
        ops[op] = choose(lead, [("cpu", [kernel])])
    return Dispatch(ops, False, False)


def _xpu(rs: RuleSet, f: Facts, platform_gate: Gate) -> Dispatch:
    """vLLM's XPU platform (Intel GPUs): models/deepseek_v4/xpu/ from 0.23; vllm_xpu_kernels ops from 0.27."""
    if rs.xpu == "none":
        return _no_model(platform_gate, "xpu", "0.23.0")
    present = f.xpu_kernels.present
    kernels_text = "vllm/platforms/xpu.py imports vllm_xpu_kernels._C, ._moe_C and ._xpu_C when the platform loads"
    if present is None:
        installed = Gate("xpu", "vllm_xpu_kernels installed", None, True, f"{kernels_text}; not established: assumed")
    else:
        version = f" {f.xpu_kernels.version}" if f.xpu_kernels.version else ""
        text = f"{kernels_text}; " + (f"vllm-xpu-kernels{version} is installed" if present else "it is not installed")
        installed = Gate("xpu", "vllm_xpu_kernels installed", present, present, text)
    fused_gate = Gate(
        "model",
        "model runs fused post+pre",
        rs.xpu_fused,
        rs.xpu_fused,
        "xpu/model.py runs mhc_fused_post_pre between sublayers"
        if rs.xpu_fused
        else "xpu/model.py runs mhc_pre and mhc_post separately",
    )
    ops: dict[str, OpDecision] = {}
    for op in OPS:
        lead = [platform_gate, fused_gate] if op == "mhc_fused_post_pre" else [platform_gate]
        if rs.xpu == "kernels":
            call = Gate("xpu", "CustomOp.forward_xpu", "forward_xpu", True, f"torch.ops._xpu_C.{_XPU_OPS[op]}")
            ops[op] = choose(lead, [("xpu", [installed, call])])
        elif op == "hc_head":
            call = Gate("triton", "CustomOp.forward_xpu", "forward_xpu", True, "the triton hc_head kernel")
            ops[op] = choose(lead, [("triton", [installed, call])])
        else:
            call = Gate("torch", "CustomOp.forward_xpu", "forward_xpu", True, "forward_native: the torch reference")
            ops[op] = choose(lead, [("torch", [installed, call])])
    return Dispatch(ops, rs.xpu_fused, False)


_XPU_OPS = {
    "mhc_pre": "mhc_pre",
    "mhc_post": "mhc_post",
    "mhc_fused_post_pre": "mhc_fused_post_pre",
    "hc_head": "hc_head_fused",
}


def _module_gate(rs: RuleSet, f: Facts) -> Gate:
    """0.20–0.21: on any CUDA-alike platform layers/mhc.py tests has_tilelang() (find_spec), then imports tilelang."""
    name = "has_tilelang(); import tilelang (layers/mhc.py)"
    tl = f.tilelang
    gate = has_tilelang_gate(rs, f)
    if gate.passed and tl.imports is False:
        error = f" ({tl.import_error})" if tl.import_error else ""
        text = f"find_spec finds tilelang, but layers/mhc.py's `import tilelang` fails{error}: the model is not built"
        return Gate("tilelang", name, {"present": True, "imports": False}, False, text, kind="package")
    if not gate.passed:
        gate.text += ": layers/mhc.py raises ImportError and the model is not built"
    elif tl.imports is None:
        gate.text += "; layers/mhc.py imports it (not tried here: assumed to import)"
    gate.gate = name
    return gate


def _cuda(rs: RuleSet, f: Facts) -> Dispatch:
    lead = [Gate("dispatch", "platform", "cuda", True, "CUDA: vLLM calls the tilelang kernels with no other path")]
    if rs.rocm_style != "custom-op":  # 0.20–0.21: tilelang is tested once, when the module is imported
        module = [_module_gate(rs, f)]
        tilelang = ("tilelang", [*module, Gate("tilelang", "tilelang kernels", True, True, "layers/mhc.py's kernels")])
    else:
        module = []
        tilelang = ("tilelang", [tilelang_installed_gate(f, "not tested by vLLM: the kernels import it")])
    head_torch = ("torch", [*module, *_hc_head_torch()[1]])
    ops = {
        "mhc_pre": choose(lead, [tilelang]),
        "mhc_post": choose(lead, [tilelang]),
        "hc_head": choose(lead, [head_torch if rs.hc_head == "torch" else tilelang]),
    }
    if rs.fused_op == "none":
        ops["mhc_fused_post_pre"] = choose(lead, [("tilelang", [_no_fused_op()])])
    else:
        ops["mhc_fused_post_pre"] = choose(
            [*lead, Gate("model", "model runs fused post+pre", True, True, "the CUDA model runs it between sublayers")],
            [tilelang],
        )
    return Dispatch(ops, rs.fused_op != "none", True, values=_module_values(rs, f, has_tilelang=None, aiter=False))


def _module_values(rs: RuleSet, f: Facts, has_tilelang: bool | None, aiter: bool | None) -> dict[str, DispatchValue]:
    """layers/mhc.py's module-level values as the rules predict them (CustomOp releases, 0.22+).

    has_tilelang None: computed here from the has_tilelang() gate (CUDA, where nothing else counts)."""
    if rs.rocm_style != "custom-op":
        return {}
    if has_tilelang is None:
        has_tilelang = has_tilelang_gate(rs, f).passed if f.tilelang.present is not None else None
    values: dict[str, DispatchValue] = {"has_tilelang": has_tilelang}
    if rs.tilelang_mhc_skips_gfx942:  # HAS_TILELANG_MHC exists from 0.24
        values["has_tilelang_mhc"] = has_tilelang
    if rs.aiter_arch != "none":
        values["has_aiter_mhc"] = aiter
    if rs.aiter_probes_norm:
        values["aiter_fused"] = False
        values["aiter_pre_norm"] = False
    return values


def _hc_head_torch() -> Candidate:
    return "torch", [
        Gate("torch", "hc_head in torch", True, True, "0.20.0 computes hc_head with a torch.compile function")
    ]


def _no_fused_op() -> Gate:
    return Gate("model", "fused post+pre op exists", False, False, "this release has no fused post+pre op")


def _rocm_module(rs: RuleSet, f: Facts) -> Dispatch:
    """0.20–0.21 on ROCm: the CUDA module runs as is (0.20), or branches to inline torch (0.21)."""
    lead = [Gate("dispatch", "platform", "rocm", True, "ROCm counts as CUDA-alike: layers/mhc.py needs tilelang")]
    module = _module_gate(rs, f)
    kernels = Gate("tilelang", "tilelang kernels", True, True, "the CUDA tilelang kernels (and DeepGEMM) run as is")
    tilelang = ("tilelang", [module, kernels])
    if rs.rocm_style == "torch-inline":
        torch = ("torch", [module, Gate("torch", "current_platform.is_rocm()", True, True, "ROCm branches to torch")])
        ops = {"mhc_pre": choose(lead, [torch]), "mhc_post": choose(lead, [torch]), "hc_head": choose(lead, [torch])}
    else:
        head_torch = ("torch", [module, *_hc_head_torch()[1]])
        ops = {
            "mhc_pre": choose(lead, [tilelang]),
            "mhc_post": choose(lead, [tilelang]),
            "hc_head": choose(lead, [head_torch if rs.hc_head == "torch" else tilelang]),
        }
    if rs.fused_op == "none":
        ops["mhc_fused_post_pre"] = choose(lead, [("tilelang", [_no_fused_op()])])
    else:
        always = Gate("model", "model runs fused post+pre", True, True, "this release runs it between all sublayers")
        ops["mhc_fused_post_pre"] = choose([*lead, always], [tilelang])
    return Dispatch(ops, rs.rocm_fused == "always", True)


def _rocm_custom_op(rs: RuleSet, f: Facts, model: ModelConfig) -> Dispatch:
    h = model.hidden_size
    lead = [Gate("dispatch", "platform", "rocm", True, "ROCm: CustomOp.forward_hip chooses the kernel")]
    tl = tilelang_gates(rs, f)
    tl_ok = all(g.passed for g in tl)
    has_aiter = rs.aiter_arch != "none"
    aiter_base = has_aiter_mhc_gates(rs, f) + aiter_shape_gates(rs, model) if has_aiter else []
    has_aiter_mhc = has_aiter and all(g.passed for g in aiter_base[:2])
    use_aiter = has_aiter and all(g.passed for g in aiter_base)
    fused, fused_why = _rocm_fused(rs, f, h, tl, has_aiter_mhc, use_aiter)
    fold = rs.aiter_hc4 and (h in AITER_FOLD_SIZES if use_aiter else tl_ok and fused)
    if rs.aiter_hc4:  # 0.29+: whether the model hands mhc_pre (and the fused op) its RMSNorm weight
        fold_why = "aiter folds it for hidden 1280, 2560, 4096, 7168" if use_aiter else "tilelang folds it when fused"
        lead_pre = [
            *lead,
            Gate("model", "RMSNorm folded into mhc_pre", fold, fold, f"{fold_why} → {'yes' if fold else 'no'}"),
        ]
    else:
        lead_pre = lead

    torch = _fallback("torch", "the torch reference (forward_native)")
    pre_aiter = list(aiter_base)
    if fold and rs.aiter_probes_norm:
        pre_aiter.append(aiter_api_gate(f, "mhc_pre_norm_args"))
    aiter = [("aiter", pre_aiter)] if has_aiter else []
    ops = {
        "mhc_pre": choose(lead_pre, [*aiter, ("tilelang", tl), torch]),
        "mhc_post": choose(lead, [*([("aiter", list(aiter_base))] if has_aiter else []), ("tilelang", tl), torch]),
        "hc_head": choose(lead, [("tilelang", tl), _fallback("triton", "the triton hc_head kernel")]),
    }
    fused_candidates: list[Candidate] = []
    if rs.aiter_fused != "none":
        fused_aiter = list(aiter_base)
        if rs.aiter_fused == "probed":
            fused_aiter.append(aiter_api_gate(f, "has_fused_post_pre"))
        fused_candidates.append(("aiter", fused_aiter))
    if rs.fused_op == "tilelang":
        fused_candidates.append(
            ("tilelang", [tilelang_installed_gate(f, "forward_hip calls tilelang without testing it")])
        )
    else:
        fused_candidates += [("tilelang", tl), torch]
    ops["mhc_fused_post_pre"] = choose([*lead_pre, fused_why], fused_candidates)
    has_tl = tl[0].passed and (not rs.tilelang_skips_gfx1250 or tl[1].passed)
    values = _module_values(rs, f, has_tl, has_aiter_mhc if has_aiter else None)
    if "has_tilelang_mhc" in values:
        values["has_tilelang_mhc"] = tl_ok
    if rs.aiter_probes_norm:  # HAS_AITER_MHC_FUSED and HAS_AITER_MHC_PRE_NORM: HAS_AITER_MHC and the API probe
        values["aiter_fused"] = has_aiter_mhc and aiter_api_gate(f, "has_fused_post_pre").passed
        values["aiter_pre_norm"] = has_aiter_mhc and aiter_api_gate(f, "mhc_pre_norm_args").passed
    return Dispatch(ops, fused, False, values=values)


def _rocm_fused(
    rs: RuleSet, f: Facts, h: int, tl: list[Gate], has_aiter_mhc: bool, use_aiter: bool
) -> tuple[bool, Gate]:
    """Whether the AMD model runs the fused post+pre op between sublayers, and the gate that says why."""
    tl_ok = all(g.passed for g in tl)
    rule = rs.rocm_fused
    if rule == "has_tilelang":
        value, text = tl_ok, "the model fuses post+pre when has_tilelang()"
    elif rule == "tilelang_mhc":
        value, text = tl_ok, "the model fuses post+pre when HAS_TILELANG_MHC"
    elif rule == "tilelang_not_aiter":
        aiter_serves = has_aiter_mhc and h % 256 == 0
        value = tl_ok and not aiter_serves
        text = "HAS_TILELANG_MHC and not (HAS_AITER_MHC and hidden % 256 == 0)" + (
            ": aiter serves pre/post separately" if aiter_serves else ""
        )
    elif rule == "aiter_or_tilelang":
        value, text = use_aiter or tl_ok, "use_aiter_mhc or HAS_TILELANG_MHC"
    else:
        value, text = rule == "always", "fixed by this release"
    observed = {"tilelang": tl_ok, "aiter": use_aiter} if rule != "has_tilelang" else {"tilelang": tl_ok}
    return value, Gate(
        "model",
        "model runs fused post+pre",
        observed,
        value,
        f"{text} → {'yes' if value else 'no: post and pre run separately'}",
    )


# --- what runs inside the tilelang path: the prenorm GEMM and its token-range variants (explain's sub-gates) --------


def deepgemm_arch(f: Facts, rs: RuleSet) -> bool | None:
    """vLLM's CudaPlatform.support_deep_gemm: is_device_capability(90) or family(100) [or family(120), 0.24+]."""
    digits = re.match(r"^sm_?(\d{2,3})a?$", (f.arch or "").lower())
    if digits is None:
        return None
    major, minor = int(digits.group(1)[:-1]), int(digits.group(1)[-1])
    return (major, minor) == (9, 0) or major == 10 or (rs.deepgemm_sm120 and major == 12)


def deepgemm_supported(rs: RuleSet, f: Facts, version: str | None) -> tuple[bool | None, str]:
    """vllm/utils/deep_gemm.py is_deep_gemm_supported() on CUDA, with the first test that fails: a DeepGEMM arch,
    VLLM_USE_DEEP_GEMM not "0", deep_gemm importable (standalone or vLLM's vendored copy) and, from 0.34, nvcc 12.9+
    found. None where a fact it needs is unknown."""
    if (f.vllm_env or {}).get("VLLM_USE_DEEP_GEMM") == "0":
        return False, "VLLM_USE_DEEP_GEMM=0"
    arch = deepgemm_arch(f, rs)
    if arch is False:
        return False, f"{f.arch} is not a DeepGEMM arch (sm_90, sm_10x{', sm_12x' if rs.deepgemm_sm120 else ''})"
    if f.deepgemm.present is False:
        return False, "no deep_gemm (standalone or vendored by vLLM)"
    if versions.within(version or rs.last, vllm_releases.VLLM_NVCC_GATE_RELEASES):
        nvcc = versions.public(f.nvcc.version)
        if f.nvcc.found is False:
            return False, "no nvcc found (0.34 checks)"
        if nvcc is not None and nvcc.release[:2] < vllm_releases.VLLM_NVCC_GATE:
            return False, f"nvcc {f.nvcc.version} < 12.9 (0.34 checks)"
    if arch is None:
        return None, "the GPU arch is unknown"
    return True, f"{f.arch}, deep_gemm {f.deepgemm.version or '(vendored or unknown version)'}"


def add_prenorm_gates(result: Dispatch, rs: RuleSet, f: Facts, model: ModelConfig, platform: str,
                      version: str | None) -> None:  # fmt: skip
    """Append to mhc_pre (and the fused post+pre op) where tilelang runs them: which GEMM computes the prenorm mixes
    (DeepGEMM's tf32_hc_prenorm_gemm or tilelang's hc_prenorm_gemm) and which tilelang variant each token range takes.
    They describe the chosen path, so they pass."""
    for op in ("mhc_pre", "mhc_fused_post_pre"):
        decision = result.ops.get(op)
        if decision is None or decision.path != "tilelang":
            continue
        decision.why.extend(prenorm_gates(rs, f, model, platform, version, first_layer=op == "mhc_pre"))


def prenorm_gates(rs: RuleSet, f: Facts, model: ModelConfig, platform: str, version: str | None,
                  first_layer: bool) -> list[Gate]:  # fmt: skip
    if platform == "cuda" and rs.rocm_style != "custom-op":  # 0.20–0.21: layers/mhc.py calls it unconditionally
        return [Gate("deepgemm", "prenorm GEMM", "DeepGEMM", True, "0.20–0.21 call tf32_hc_prenorm_gemm always")]
    if platform == "rocm" and rs.rocm_style != "custom-op":
        return [Gate("deepgemm", "prenorm GEMM", "DeepGEMM", True, "0.20–0.21 call it on ROCm too (no ROCm build)")]
    gates = []
    if platform == "cuda":
        supported, why = deepgemm_supported(rs, f, version)
        observed = "DeepGEMM" if supported else "tilelang" if supported is False else "unknown"
        gates.append(Gate("deepgemm", "prenorm GEMM: is_deep_gemm_supported()", observed, True, why))
        if first_layer and rs.cuda_first_pre_deepgemm:
            gates.append(
                Gate("deepgemm", "first layer's pre (broadcast)", "DeepGEMM", True,
                     "mhc_pre_broadcast_tilelang calls tf32_hc_prenorm_gemm with no tilelang fallback")
            )  # fmt: skip
        if supported is True:
            return gates
    else:
        gates.append(Gate("deepgemm", "prenorm GEMM", "tilelang", True, "DeepGEMM is CUDA-only: tilelang's GEMM"))
    small = (model.hc_mult * model.hidden_size) % 1024 == 0
    variants = ("< 128 tokens: 1024 threads x 4 outputs; " if small else "") + (
        "128–1023: 512 threads x 12 outputs" if small else "< 1024 tokens: 512 threads x 12 outputs"
    )
    gates.append(
        Gate("tilelang", "hc_prenorm_gemm by tokens", "<1024 | >=1024", True,
             f"{variants}; >= 1024 tokens (prefill): hc_prenorm_gemm_block_m_tilelang, 2 tokens per block")
    )  # fmt: skip
    return gates
