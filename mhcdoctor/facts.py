"""Facts: the plain, serialisable data that rules decide from.

A fact that was probed on this machine, one given on the command line (`--arch gfx942`) and one read back from
a saved report are the same type; `Facts.sources` records where each came from, keyed by the fact's dotted
name (``"aiter.version"``), with values such as ``"probe:aiter"``, ``"user:--arch"``, ``"report:r.json"``.

``None`` always means *unknown*: an unknown fact raises no finding by itself.

The facts the rules read carry `RULES_READ` in their field metadata; `rules_view(facts, ...)` projects them into
the `facts` part of the explain/1 document, declared by documents.explain.RulesFactsDocument: a new fact the rules
read is marked here and added there (tests/explain/test_facts_document.py fails until it is).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mhcdoctor.documents.check import (
    AiterDocument,
    AiterJitDocument,
    CacheDocument,
    CompilerDocument,
    DeepGemmDocument,
    DeviceDocument,
    FactsDocument,
    FixState,
    PackageDocument,
    Platform,
    TorchBuild,
    TorchDocument,
    VllmDocument,
    VllmSelfCheckDocument,
)
from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.explain import RulesFactsDocument
from mhcdoctor.documents.vocabulary import JsonValue
from mhcdoctor.errors import InputError
from mhcdoctor.userfiles import mismatch

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


# What a vLLM wheel was built for: setup.py appends +cpu, +xpu, +rocmNNN (or +cuNNN) to the version.
VLLM_BUILDS: tuple[str, ...] = ("cuda", "rocm", "xpu", "cpu")


def torch_build_of(version: str | None, cuda: str | None, hip: str | None, xpu: str | None) -> TorchBuild | None:
    """torch/version.py's `hip` → rocm, `cuda` → cuda, `xpu` (or a +xpu version) → xpu, else cpu; None without a
    version (torch/version.py was not read)."""
    if not version:
        return None
    return "rocm" if hip else "cuda" if cuda else "xpu" if xpu or "+xpu" in version else "cpu"


# Field metadata: the rules read this fact (explain/1 shows it in its `facts` part).
RULES_READ: Mapping[str, bool] = {"rules_read": True}
# explain/1's published key order for the facts it has shown since its first version; a fact marked later follows
# them, in declaration order.
_PUBLISHED_ORDER = (
    "version", "sqrsum_fix", "present", "genuine", "imports", "mhc_pre_norm_args", "has_fused_post_pre",
    "has_mhc_ops", "distribution",
)  # fmt: skip


class FactsError(InputError):
    """A facts document (a saved report, or its `facts` part) is malformed."""


@dataclass
class Device:
    index: int
    vendor: Literal["amd", "nvidia", "intel"]
    arch: str | None = None  # "gfx942", "sm_90"
    name: str | None = None  # "AMD Instinct MI300X", "NVIDIA H200"
    memory_bytes: int | None = None
    driver: str | None = None
    source: str = ""  # "kfd", "nvml", "amdsmi", "torch", "proc"


@dataclass
class PackageFacts:
    """A Python package as vLLM would see it: `find_spec` presence, metadata version, and whether it imports."""

    present: bool | None = field(default=None, metadata=RULES_READ)  # importlib.util.find_spec(name) is not None
    version: str | None = field(default=None, metadata=RULES_READ)
    imports: bool | None = field(default=None, metadata=RULES_READ)  # None: not tried (check --fast, or replayed)
    import_error: str | None = None
    location: str | None = None


@dataclass
class AiterFacts(PackageFacts):
    genuine: bool | None = field(default=None, metadata=RULES_READ)  # AMD's aiter (amd-aiter), not PyPI's `aiter`
    distribution: str | None = field(default=None, metadata=RULES_READ)  # the distribution owning `aiter`
    sqrsum_fix: FixState = field(default="unknown", metadata=RULES_READ)  # aiter #3033: sqrsum kernel store guard
    sqrsum_fix_evidence: str | None = None
    has_mhc_ops: bool | None = field(default=None, metadata=RULES_READ)  # aiter/ops/mhc.py exists
    # mhc_pre takes norm_weight / norm_eps (aiter 0.1.15+)
    mhc_pre_norm_args: bool | None = field(default=None, metadata=RULES_READ)
    # aiter.ops.mhc.mhc_fused_post_pre exists (aiter 0.1.16+)
    has_fused_post_pre: bool | None = field(default=None, metadata=RULES_READ)
    # aiter/ops/triton/fusions/mhc_fused_post_pre_delayed_rmsnorm.py exists: the module vLLM 0.32+ imports for
    # DeepSeek-V4.1's seams on gfx950 (no tag up to v0.1.20.post1 has it)
    has_seam_rmsnorm: bool | None = field(default=None, metadata=RULES_READ)
    module_mhc_so: str | None = None  # a JIT-built module_mhc.so, where found
    # Per fix of aiter_code.FIXES but the sqrsum one (sqrsum_fix): what the installed code (or the version) tells;
    # a fix not here (a report from before this member) is judged by the version
    fixes: dict[str, FixState] = field(default_factory=dict, metadata=RULES_READ)
    fix_evidence: dict[str, str] = field(default_factory=dict)  # per fix: file:line and the form, or the rule


@dataclass
class DeepGemmFacts(PackageFacts):
    """DeepGEMM as vLLM's utils/deep_gemm.py finds it: the standalone `deep_gemm`, else the copy vLLM vendors as
    `vllm.third_party.deep_gemm`."""

    vendored: bool | None = field(default=None, metadata=RULES_READ)  # the copy found is vLLM's vendored one
    # `tf32_hc_prenorm_gemm` is defined by it: the GEMM vLLM's CUDA mhc_pre calls (read from its files, or imported)
    has_prenorm_gemm: bool | None = field(default=None, metadata=RULES_READ)
    # the archs its compiled library has a smNN_tf32_hc_prenorm_gemm kernel for ("sm_90", "sm_100", "sm_120"); None:
    # not read (no library, or a what-if: the release's record then says)
    prenorm_archs: list[str] | None = field(default=None, metadata=RULES_READ)


@dataclass
class TorchFacts(PackageFacts):
    cuda: str | None = None  # torch.version.cuda, e.g. "13.0"
    hip: str | None = None  # torch.version.hip, e.g. "7.0.51831"
    xpu: str | None = None  # torch.version.xpu: set in torch's XPU builds (Intel GPUs)
    build: TorchBuild | None = None  # torch_build_of(...); None: unknown (not probed, or forgotten by a what-if)
    gpus_visible: int | None = None  # torch.cuda.device_count() once it imported and initialised (full check only)


@dataclass
class VllmSelfCheck:
    """What the installed vLLM itself reports for the values its mHC dispatch reads (full check, in a child).

    None: vLLM did not report it (the release has no such value, or the step failed)."""

    platform: str | None = None  # current_platform's class name: CudaPlatform, RocmPlatform, CpuPlatform, ...
    forward: str | None = (
        None  # the CustomOp method dispatch_forward picks: forward_cuda, forward_hip, forward_cpu, ...
    )
    has_tilelang: bool | None = None  # vllm.utils.import_utils.has_tilelang()
    has_tilelang_mhc: bool | None = None  # layers/mhc.py HAS_TILELANG_MHC (0.24+)
    has_aiter_mhc: bool | None = None  # layers/mhc.py HAS_AITER_MHC (0.25+)
    aiter_fused: bool | None = None  # layers/mhc.py HAS_AITER_MHC_FUSED (0.30+)
    aiter_pre_norm: bool | None = None  # layers/mhc.py HAS_AITER_MHC_PRE_NORM (0.30+)
    fused: dict[str, str] | None = None  # the model's use_fused_mhc per "HIDDENxHC_MULT": "true" | "false"
    model_module: str | None = None  # the DeepSeek-V4 model module vLLM picked for its platform
    error: str | None = None  # the first step that failed, if any


@dataclass
class VllmFacts(PackageFacts):
    build: str | None = None  # cuda | rocm | xpu | cpu (VLLM_BUILDS); None: not established
    build_evidence: str | None = None  # the local version label or the extension modules that say so
    # the release whose mHC files the install holds ("0.26.0"; knowledge/vllm_code.py), "new" when none; None: unread
    code: str | None = field(default=None, metadata=RULES_READ)
    code_evidence: str | None = None  # what the files are, as the user reads it
    selfcheck: VllmSelfCheck | None = None  # full check only, when vLLM imports


@dataclass
class CompilerFacts:
    found: bool | None = None
    path: str | None = None
    version: str | None = None


@dataclass
class CacheFacts:
    """tilelang's kernel cache (TILELANG_CACHE_DIR, default ~/.tilelang/cache) as far as vLLM's mHC kernels go."""

    path: str | None = None
    exists: bool | None = None
    entries: int | None = None  # cached kernels of any kind
    mhc_entries: int | None = None  # cached kernels whose source names vLLM's mHC kernels
    arch_entries: int | None = None  # of those, built for this machine's GPU arch


@dataclass
class AiterJitFacts:
    """aiter's JIT product for the mHC ops (module_mhc.so; aiter keys it by module name only)."""

    path: str
    targets: list[str] | None = None  # the gfx offload targets in its .hip_fatbin (None: unreadable)
    mtime: float | None = None
    aiter_mtime: float | None = None  # the installed aiter's metadata (when it was installed)
    torch_mtime: float | None = None  # the installed torch's metadata
    # the installed aiter/jit/core.py's get_module rebuilds a .so that lacks this GPU's arch (aiter #3849, v0.1.17+);
    # False: it loads it by name; None: unread
    arch_rebuild: bool | None = None


@dataclass
class Facts:
    platform: Platform = field(default="cpu", metadata=RULES_READ)
    arch: str | None = field(default=None, metadata=RULES_READ)  # the first GPU's arch; `devices` has them all
    devices: list[Device] | None = None  # None: unknown (e.g. the platform was replaced by a what-if)
    rocm_version: str | None = field(default=None, metadata=RULES_READ)
    cuda_driver_version: str | None = None  # the CUDA version the driver supports, e.g. "13.0"
    nvidia_driver: str | None = None  # e.g. "580.159.03"
    torch: TorchFacts = field(default_factory=TorchFacts)
    nvcc: CompilerFacts = field(default_factory=CompilerFacts)
    hipcc: CompilerFacts = field(default_factory=CompilerFacts)
    aiter: AiterFacts = field(default_factory=AiterFacts, metadata=RULES_READ)
    tilelang: PackageFacts = field(default_factory=PackageFacts, metadata=RULES_READ)
    triton: PackageFacts = field(default_factory=PackageFacts)
    vllm: VllmFacts = field(default_factory=VllmFacts)
    xpu_kernels: PackageFacts = field(
        default_factory=PackageFacts
    )  # vllm-xpu-kernels: vLLM's XPU ops (torch.ops._xpu_C)
    # What the installed vLLM's Requires-Dist pins among torch, tilelang, triton, amd-aiter: {"torch": "==2.14.0"}.
    vllm_pins: dict[str, str] | None = None
    # apache-tvm-ffi (import name tvm_ffi): tilelang's runtime; some pairs of the two abort at `import tilelang`
    tvm_ffi: PackageFacts = field(default_factory=PackageFacts, metadata=RULES_READ)
    deepgemm: DeepGemmFacts = field(default_factory=DeepGemmFacts, metadata=RULES_READ)
    # The environment variables vLLM's mHC and DeepGEMM code reads (vllm_releases.VLLM_ENV), as set here; None: unknown
    vllm_env: dict[str, str] | None = field(default=None, metadata=RULES_READ)
    # vLLM's mHC kernels in tilelang's kernel cache for this GPU and tilelang; None: not looked (or no tilelang)
    tilelang_cache: CacheFacts | None = None
    # aiter's JIT-built module_mhc.so: its offload targets and age against aiter and torch; None: not found
    aiter_jit: AiterJitFacts | None = None
    sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> FactsDocument:
        """The facts as JSON (check/1's `facts` part): every field, in declaration order. FactsDocument mirrors
        these dataclasses field for field (tests/test_facts.py holds them together)."""
        return as_document(self, FactsDocument)

    @classmethod
    def from_dict(cls, data: object) -> Facts:
        """Rebuild facts from `to_dict()` output; raises FactsError with one readable line when malformed."""
        if not isinstance(data, dict):
            raise FactsError("facts must be a JSON object")
        try:
            facts = _build(cls, data, "facts")
        except FactsError:
            raise
        except (TypeError, ValueError) as exc:  # a wrong type deep inside
            raise FactsError(f"facts: {exc}") from None
        if facts.vllm.build is not None and facts.vllm.build not in VLLM_BUILDS:
            raise FactsError(f"facts.vllm.build must be one of {', '.join(VLLM_BUILDS)} or null")
        recorded = data.get("torch")
        if isinstance(recorded, dict) and "build" not in recorded and {"cuda", "hip"} & recorded.keys():
            t = facts.torch  # a report from before torch.build: derived as the torch probe derives it
            t.build = torch_build_of(t.version, t.cuda, t.hip, t.xpu)
        return facts

    def set(self, dotted: str, value: object, source: str) -> None:
        """Replace one fact (``"aiter.version"``) and record where it came from."""
        target: object = self
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = getattr(target, part)
        if not hasattr(target, leaf):
            raise KeyError(dotted)
        setattr(target, leaf, value)
        self.sources[dotted] = source


# Each dataclass and its JSON form (Facts.to_dict(), check/1's `facts` part): one TypedDict of documents.check per
# dataclass here, with the same fields in the same order, held together by a test. A report read back is checked
# and written out in full by read_report_facts, so a FactsDocument always has every member.
DOCUMENTS: Mapping[str, type] = {
    "Facts": FactsDocument,
    "Device": DeviceDocument,
    "PackageFacts": PackageDocument,
    "AiterFacts": AiterDocument,
    "TorchFacts": TorchDocument,
    "VllmSelfCheck": VllmSelfCheckDocument,
    "VllmFacts": VllmDocument,
    "CompilerFacts": CompilerDocument,
    "DeepGemmFacts": DeepGemmDocument,
    "CacheFacts": CacheDocument,
    "AiterJitFacts": AiterJitDocument,
}


@dataclass
class ReportFacts:
    """A saved report's facts, read once, and the top-level members it did not hold (an older mhcdoctor never
    recorded them): those stand at their unknown values and say nothing of the machine that wrote the report."""

    facts: Facts
    absent: frozenset[str]


def read_report_facts(data: object) -> ReportFacts:
    """The facts of a user's file, checked (FactsError when malformed); members it lacks are unknown and named in
    `absent`, members this release does not know are left out."""
    facts = Facts.from_dict(data)
    recorded = data if isinstance(data, dict) else {}
    absent = frozenset(f.name for f in dataclasses.fields(Facts) if f.name != "sources" and f.name not in recorded)
    return ReportFacts(facts, absent)


def rules_view(facts: Facts, vllm: Mapping[str, JsonValue]) -> RulesFactsDocument:
    """explain/1's `facts` part: every fact marked RULES_READ (of a package, its marked fields), then `vllm` (what
    the decision made of vLLM: its version, build, platform, whether it runs here) and whether each compiler
    (nvcc, hipcc) was found."""
    view = _marked(facts)
    view["vllm"] = dict(vllm)
    view["compilers"] = {
        f.name: getattr(facts, f.name).found for f in dataclasses.fields(Facts) if f.type == "CompilerFacts"
    }
    return typing.cast(RulesFactsDocument, view)  # its members, by RULES_READ: tests/explain/test_facts_document.py


def _marked(obj: DataclassInstance) -> dict[str, JsonValue]:
    marked = [f for f in dataclasses.fields(obj) if f.metadata.get("rules_read")]
    if not isinstance(obj, Facts):  # a package's facts: the published order first
        marked.sort(
            key=lambda f: _PUBLISHED_ORDER.index(f.name) if f.name in _PUBLISHED_ORDER else len(_PUBLISHED_ORDER)
        )
    view: dict[str, JsonValue] = {}
    for f in marked:
        value = getattr(obj, f.name)
        view[f.name] = _marked(value) if isinstance(value, PackageFacts) else value
    return view


_D = TypeVar("_D", bound="DataclassInstance")


def from_json(cls: type[_D], data: Mapping[str, JsonValue], where: str) -> _D:
    """Facts dataclass `cls` from JSON a probe or a report holds, each field checked for its type (FactsError names
    the first that is not); members `cls` does not have are ignored."""
    return _build(cls, dict(data), where)


def _build(cls: type[_D], data: dict[str, Any], where: str) -> _D:
    """Dataclass `cls` from a dict checked against its document type (DOCUMENTS) by userfiles.mismatch, the one
    check of JSON that comes in; unknown keys are ignored (forward compat), absent ones keep their defaults."""
    wrong = mismatch(data, DOCUMENTS[cls.__name__], where)
    if wrong is not None:
        raise FactsError(wrong)
    return _from_document(cls, data)


def _from_document(cls: type[_D], data: Mapping[str, Any]) -> _D:
    types_ = _field_types(cls)
    return cls(**{f.name: _value(types_[f.name], data[f.name]) for f in dataclasses.fields(cls) if f.name in data})


def _value(hint: object, value: Any) -> Any:
    """A checked JSON value as the field's type holds it: nested dataclasses built, whole numbers of float fields
    made floats."""
    if value is None:
        return None
    options = [a for a in typing.get_args(hint) if a is not type(None)] if _is_union(hint) else [hint]
    kind = options[0]
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _from_document(kind, value)
    if typing.get_origin(kind) is list:
        return [_value(typing.get_args(kind)[0], v) for v in value]
    if typing.get_origin(kind) is dict:
        return dict(value)
    return float(value) if kind is float else value


def _is_union(hint: object) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


@functools.cache
def _field_types(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)
