"""The check/1 document (`check --json`, the report a bundle carries): the machine's facts, the probes' results, a
decision per model and, with --verify, the verify/1 document.

The check/1 document is a TypedDict, not a dataclass: it is read back from users' files (`explain --from`, `diff`,
`merge`), redacted as JSON, and rendered in that form, so its typed form is its JSON. Its `facts` part mirrors the
dataclasses of mhcdoctor.facts field for field (tests/test_facts.py holds them together).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from mhcdoctor.documents.explain import DecisionDocument, FindingDocument
from mhcdoctor.documents.vocabulary import FixState as FixState
from mhcdoctor.documents.vocabulary import JsonValue, NonNegative, Verdict
from mhcdoctor.documents.vocabulary import Platform as Platform

if TYPE_CHECKING:  # check --fast loads no verify module; a reader resolves it by name (userfiles.mismatch's namespace)
    from mhcdoctor.documents.verify import VerifyDocument

SCHEMA = "mhcdoctor.check/1"
REPLAY_NAME = "report.json"
# The title of the Markdown report's folded replay block (render.markdown writes it; reportfile finds it).
REPLAY_TITLE = f"{REPLAY_NAME} (save this block as report.json, then: mhcdoctor explain --from report.json)"

# vLLM's own platform follows from the machine's (Platform) and from vLLM's build (rules.dispatch.vllm_platform).
PLATFORMS: tuple[str, ...] = ("rocm", "cuda", "xpu", "cpu")
FIX_STATES: tuple[str, ...] = ("present", "absent", "unknown")
# What torch was built for, from torch/version.py (facts.torch_build_of); vLLM's builds are the same four.
TorchBuild = Literal["rocm", "cuda", "xpu", "cpu"]
TORCH_BUILDS: tuple[str, ...] = ("rocm", "cuda", "xpu", "cpu")
# A probe's outcome (probes.base.ProbeResult.status).
Status = Literal["ok", "missing", "error", "timeout", "crash", "skipped"]
STATUSES: tuple[Status, ...] = ("ok", "missing", "error", "timeout", "crash", "skipped")


# The JSON form of the facts (Facts.to_dict(), check/1's `facts` part), one TypedDict per dataclass of
# mhcdoctor.facts, with the same fields in the same order. A report read back is checked and written out in full by
# read_report_facts, so a FactsDocument always has every member.


class DeviceDocument(TypedDict):
    index: int
    vendor: Literal["amd", "nvidia", "intel"]
    arch: str | None
    name: str | None
    memory_bytes: int | None
    driver: str | None
    source: str


class PackageDocument(TypedDict):
    present: bool | None
    version: str | None
    imports: bool | None
    import_error: str | None
    location: str | None


class AiterDocument(PackageDocument):
    genuine: bool | None
    distribution: str | None
    sqrsum_fix: FixState
    sqrsum_fix_evidence: str | None
    has_mhc_ops: bool | None
    mhc_pre_norm_args: bool | None
    has_fused_post_pre: bool | None
    has_seam_rmsnorm: bool | None
    module_mhc_so: str | None
    fixes: dict[str, FixState]
    fix_evidence: dict[str, str]


class DeepGemmDocument(PackageDocument):
    vendored: bool | None
    has_prenorm_gemm: bool | None
    prenorm_archs: list[str] | None


class CacheDocument(TypedDict):
    path: str | None
    exists: bool | None
    entries: int | None
    mhc_entries: int | None
    arch_entries: int | None


class AiterJitDocument(TypedDict):
    path: str
    targets: list[str] | None
    mtime: float | None
    aiter_mtime: float | None
    torch_mtime: float | None
    arch_rebuild: bool | None


class TorchDocument(PackageDocument):
    cuda: str | None
    hip: str | None
    xpu: str | None
    build: TorchBuild | None
    gpus_visible: int | None


class VllmSelfCheckDocument(TypedDict):
    platform: str | None
    forward: str | None
    has_tilelang: bool | None
    has_tilelang_mhc: bool | None
    has_aiter_mhc: bool | None
    aiter_fused: bool | None
    aiter_pre_norm: bool | None
    fused: dict[str, str] | None
    model_module: str | None
    error: str | None


class VllmDocument(PackageDocument):
    build: TorchBuild | None  # what vLLM was built for (None: not established)
    build_evidence: str | None
    code: str | None  # the release whose mHC files are installed, "new" when none matches; null: not read
    code_evidence: str | None
    selfcheck: VllmSelfCheckDocument | None


class CompilerDocument(TypedDict):
    found: bool | None
    path: str | None
    version: str | None


class FactsDocument(TypedDict):
    platform: Platform
    arch: str | None
    devices: list[DeviceDocument] | None
    rocm_version: str | None
    cuda_driver_version: str | None
    nvidia_driver: str | None
    torch: TorchDocument
    nvcc: CompilerDocument
    hipcc: CompilerDocument
    aiter: AiterDocument
    tilelang: PackageDocument
    triton: PackageDocument
    vllm: VllmDocument
    xpu_kernels: PackageDocument
    vllm_pins: dict[str, str] | None
    tvm_ffi: PackageDocument
    deepgemm: DeepGemmDocument
    vllm_env: dict[str, str] | None
    tilelang_cache: CacheDocument | None
    aiter_jit: AiterJitDocument | None
    sources: dict[str, str]


class ProbeDocument(TypedDict):
    """A probe's result as JSON (check/1's `probes`); `data` is what the probe found, as the probe wrote it."""

    name: str
    status: Status
    data: dict[str, JsonValue]
    evidence: list[str]
    source: str
    seconds: NonNegative
    error: str | None


class _HostBase(TypedDict):
    hostname: str
    user: str
    python: str
    python_version: str
    os: str
    cwd: str


class HostDocument(_HostBase, total=False):
    """The machine, and the interpreter whose environment was probed (checkreport._host writes every member)."""

    doctor_python: str  # with --python: the interpreter mhcdoctor itself runs on


# The platform vLLM detects here (rules.dispatch.vllm_platform; vllm/platforms/__init__.py): one of its built-in
# plugins, none (unspecified) or more than one at once (conflict: vLLM raises).
VllmPlatform = Literal["cuda", "rocm", "xpu", "cpu", "unspecified", "conflict"]
VLLM_PLATFORMS: tuple[VllmPlatform, ...] = ("cuda", "rocm", "xpu", "cpu", "unspecified", "conflict")


class VllmPlatformDocument(TypedDict):
    """What the rules conclude from the facts about vLLM on this machine, the same for every model: the platform it
    detects (None: no rule set applies, as before 0.20) and whether it can start a DeepSeek-V4 model at all."""

    platform: VllmPlatform | None
    runs_here: bool
    blocked_by: list[str]  # the findings that stop it (rules.VLLM_CANNOT_RUN)


class _CheckBase(TypedDict):
    schema: str
    mhcdoctor_version: str
    created: str
    mode: Literal["fast", "full"]
    seconds: NonNegative
    host: HostDocument
    env: dict[str, str]
    facts: FactsDocument  # Facts.to_dict()
    probes: list[ProbeDocument]  # ProbeResult.to_dict() each
    models: list[DecisionDocument]  # Decision.to_json_dict() per model
    findings: list[FindingDocument]
    verdict: Verdict
    verify: VerifyDocument | None


class CheckDocument(_CheckBase, total=False):
    """The check/1 document (checkreport.build_check writes every member)."""

    vllm_platform: VllmPlatformDocument | None  # what vLLM detects here; absent from reports of earlier releases
