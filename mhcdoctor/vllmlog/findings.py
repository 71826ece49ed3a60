"""The findings a log can prove: their severity here, and their title, fix and references taken from the known-bugs
catalogue (rules/findings.py) by id, so a finding reads the same from `check`, `explain` and `log`.

`mhc-jit-while-serving` is the log's own: only a log shows kernels compiled after start-up. An id the catalogue
does not (yet) hold keeps the text given here.
"""

from __future__ import annotations

from dataclasses import dataclass

from mhcdoctor.rules.findings import CATALOGUE

VLLM = "https://github.com/vllm-project/vllm/"


@dataclass(frozen=True)
class LogFinding:
    id: str
    severity: str
    title: str  # used only where the catalogue has no entry of this id
    fix: str
    refs: tuple[str, ...]


_OWN: tuple[LogFinding, ...] = (
    LogFinding(
        "mhc-jit-while-serving",
        "warn",
        "mHC kernels were compiled while the server was serving",
        "Keep tilelang's kernel cache across restarts (TILELANG_CACHE_DIR, default ~/.tilelang/cache, on a "
        "persistent volume) so each shape compiles once; before opening the server to traffic, send one request per "
        "prompt-length range your users send; vLLM 0.26+ names each such compile in a 'JIT compilation during "
        "inference' warning",
        (VLLM + "issues/48809", VLLM + "pull/47807", VLLM + "issues/51790"),
    ),
    LogFinding(
        "tilelang-pdl-unsupported",
        "fail",
        "tilelang cannot lower vLLM's mHC kernels here: PDL is not supported",
        "Use a vLLM whose ROCm mHC kernels are built without PDL (vLLM #43679 added ENABLE_PDL=False on ROCm; 0.22+), "
        "or an image where aiter serves mHC (vLLM 0.25+ with AMD's aiter)",
        (VLLM + "issues/42876", VLLM + "pull/43679"),
    ),
    LogFinding(
        "tilelang-tvm-ffi-mismatch",
        "fail",
        "tilelang and apache-tvm-ffi do not fit: importing tilelang aborts",
        "pip install 'apache-tvm-ffi<0.1.12'  # or the apache-tvm-ffi your tilelang release was built with",
        ("https://github.com/sgl-project/sglang/issues/34858", VLLM + "pull/45169"),
    ),
    LogFinding(
        "aiter-mhc-pre-invalid-config",
        "fail",
        "aiter's mhc_pre fails to launch: invalid configuration argument",
        "Until aiter fixes #4633, make vLLM skip aiter's mHC ops (use a vLLM before 0.25 or an aiter build without "
        "mHC) so tilelang serves them; report your aiter commit on ROCm/aiter#4633",
        ("https://github.com/ROCm/aiter/issues/4633",),
    ),
    LogFinding(
        "deepgemm-prenorm-broken",
        "fail",
        "DeepGEMM's tf32_hc_prenorm_gemm failed where vLLM calls it for mhc_pre",
        "export VLLM_USE_DEEP_GEMM=0  # vLLM then runs tilelang's prenorm GEMM (_tilelang_hc_prenorm_gemm) instead",
        (VLLM + "blob/main/vllm/utils/deep_gemm.py", "https://github.com/deepseek-ai/DeepGEMM"),
    ),
    LogFinding(
        "tilelang-missing",
        "fail",
        "tilelang is required and cannot be imported",
        "pip install tilelang",
        (VLLM + "pull/43905",),
    ),
    LogFinding(
        "aiter-no-mhc",
        "fail",
        "vLLM calls aiter's mHC ops, and the installed aiter has none",
        "pip uninstall -y aiter amd-aiter, then install AMD's aiter from source (ROCm/aiter)",
        ("https://github.com/ROCm/aiter",),
    ),
    LogFinding(
        "aiter-jit-stale",
        "warn",
        "aiter's prebuilt module_mhc was built for another GPU arch and is rebuilt",
        "Rebuild aiter for this GPU (GPU_ARCHS=gfx942 or gfx950 when building) or clear its JIT folder once, so each "
        "start does not rebuild module_mhc",
        ("https://github.com/ROCm/aiter/blob/main/aiter/jit/core.py",),
    ),
    LogFinding(
        "tilelang-cache-cold",
        "info",
        "tilelang compiled vLLM's mHC kernels at start-up (its kernel cache was cold)",
        "Keep tilelang's kernel cache (TILELANG_CACHE_DIR, default ~/.tilelang/cache) across restarts to start faster",
        ("https://github.com/tile-ai/tilelang",),
    ),
)
OWN = {finding.id: finding for finding in _OWN}


@dataclass(frozen=True)
class Text:
    title: str
    fix: str
    refs: list[str]


def text_of(finding_id: str) -> Text:
    """A finding's title, fix and references: the catalogue's where it has the id, else the log's own."""
    for spec in CATALOGUE:
        if spec.id == finding_id:
            return Text(spec.title, spec.fix, list(spec.refs))
    own = OWN[finding_id]
    return Text(own.title, own.fix, list(own.refs))
