"""Known fatal texts in a vLLM log, each mapped to the finding that explains it (ids agreed with the catalogue).

A signature matches one line (the error's own text), and where the text alone is ambiguous, also the frames of the
traceback the same process printed just before it (`invalid configuration argument` is aiter #4633 only when
aiter/ops/mhc.py is on the stack).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


class _Line(Protocol):
    text: str


@dataclass(frozen=True)
class Signature:
    finding: str
    text: re.Pattern[str]
    frames: re.Pattern[str] | None = None  # also needed on the stack (the line itself counts as part of it)
    op: str | None = None  # the mHC op that fails, where the text alone names it
    unless: re.Pattern[str] | None = None  # on the stack, it is another failure than the finding's

    def matches(self, line: str, frames: Iterable[_Line]) -> bool:
        if self.text.search(line) is None:
            return False
        if self.unless is not None and any(self.unless.search(f.text) for f in frames):
            return False
        if self.frames is None:
            return True
        return self.frames.search(line) is not None or any(self.frames.search(f.text) for f in frames)


FATAL_SIGNATURES: tuple[Signature, ...] = (
    # tilelang's TVM lowering: "Check failed: (!mutator.has_trigger_launch_ && !mutator.has_grid_sync_) is false: PDL
    # is not supported" (vLLM #42876: mhc_post_tilelang on MI350X, vllm-openai-rocm:v0.21.0).
    Signature("tilelang-pdl-unsupported", re.compile(r"PDL is not supported")),
    # vLLM layers/mhc.py (0.20–0.21), _tilelang_ops.py (0.22), kernels/mhc/tilelang_kernels.py (0.23–0.27),
    # tilelang_utils/__init__.py (0.28+): ImportError "tilelang is required for mhc but is not installed. ..."
    Signature("tilelang-missing", re.compile(r"tilelang is required for mhc but is not installed")),
    # DeepGEMM's tf32_hc_prenorm_gemm (mhc_pre's prenorm GEMM, vLLM utils/deep_gemm.py) on an arch it has no kernel
    # for: csrc/apis/hyperconnection.hpp:56 "Unsupported architecture" (DeepGEMM #317: sm90 and sm100 only; vLLM
    # #40778 on L20, #41027 on A100, #43477 on SM120), whether or not the stack shows tf32_hc_prenorm_gemm.
    Signature(
        "deepgemm-prenorm-broken",
        re.compile(r"hyperconnection\.hpp(?::\d+)?\)?:? ?Unsupported architecture"),
        op="mhc_pre",
    ),
    # A C++ tvm::ffi::Error that nothing caught aborts the process: the tilelang/apache-tvm-ffi pair (tilelang #2367,
    # vLLM #45169, sglang #34858 print "terminate called after throwing an instance of 'tvm::ffi::Error'").
    Signature("tilelang-tvm-ffi-mismatch", re.compile(r"throwing an instance of '?tvm::ffi::Error")),
    # apache-tvm-ffi newer than tilelang's bundled TVM: "TypeAttr `__ffi_repr__` is already registered"
    # (tvm::ffi::Error), sglang #34858, ktransformers #2045.
    Signature(
        "tilelang-tvm-ffi-mismatch",
        re.compile(r"already registered"),
        frames=re.compile(r"__ffi_|tvm[_:.]|tvm_ffi|TVMFFI|tilelang"),
    ),
    # aiter #4633: aiter/ops/mhc.py mhc_pre: "torch.AcceleratorError: CUDA error: invalid configuration argument".
    Signature(
        "aiter-mhc-pre-invalid-config",
        re.compile(r"invalid configuration argument"),
        frames=re.compile(r"aiter/ops/mhc\.py|mhc_pre_aiter|aiter\.ops\.mhc"),
        op="mhc_pre",
    ),
    # An aiter without its mHC ops (PyPI's amd-aiter 0.1.7.post2.dev18 has aiter/ops but no ops/mhc.py): vLLM 0.25+
    # selects it by find_spec("aiter") and the call imports aiter.ops.mhc.
    Signature(
        "aiter-no-mhc",
        re.compile(r"No module named '?aiter\.ops\.mhc'?|cannot import name '(?:mhc_\w+)' from 'aiter"),
    ),
    # No aiter.ops at all: the package named aiter is not AMD's (PyPI's unrelated async-iterator `aiter`).
    Signature("aiter-impostor", re.compile(r"No module named '?aiter\.ops'?(?![.\w])")),
    # vLLM's DeepGEMM prenorm GEMM for mhc_pre (utils/deep_gemm.py tf32_hc_prenorm_gemm) failing where it is called.
    Signature(
        "deepgemm-prenorm-broken",
        re.compile(r"(?:Error|error|failed|Assertion)"),
        frames=re.compile(r"tf32_hc_prenorm_gemm"),
        op="mhc_pre",
        # a fork's Triton stand-in for DeepGEMM's GEMM (vLLM #41834's sm12x_deep_gemm_fallbacks.py calls
        # tf32_hc_prenorm_gemm_triton): its failure is not DeepGEMM's
        unless=re.compile(r"tf32_hc_prenorm_gemm_triton|_tf32_hc_prenorm_gemm_kernel\["),
    ),
)
