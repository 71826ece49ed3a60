"""vLLM's DeepSeek-V4 mHC dispatch, one rule set per range of releases, as data.

Each RuleSet says what one range of vLLM releases tests before it picks a path for the mHC ops; the single
interpreter in `mhcdoctor.rules.dispatch` turns a rule set, the facts and a model config into a decision.
Every entry was read from the released wheels (0.20.0 to 0.34.0; 0.21.0 from its sdist, though PyPI also has a
wheel for it, `vllm-0.21.0-1-…`): `vllm/model_executor/layers/mhc.py`, `vllm/models/deepseek_v4/{amd,nvidia}/model.py`,
`vllm/utils/import_utils.py` (has_tilelang), `vllm/_aiter_ops.py` (is_aiter_found_and_supported) and
`vllm/platforms/rocm.py` (on_mi3xx, get_cdna_version); for Intel GPUs and CPUs `vllm/models/deepseek_v4/__init__.py`
(which model module each platform imports), `vllm/models/deepseek_v4/{xpu,cpu}/model.py`, the `forward_xpu` and
`forward_cpu` methods in `layers/mhc.py`, `vllm/model_executor/kernels/mhc/cpu.py`, `vllm/model_executor/custom_op.py`
(dispatch_forward) and `vllm/platforms/__init__.py` (platform detection). An entry's `notes` say what is subtle
or only inferred. Each set is written as its predecessor with what changed (`RuleSet.changed`).
`python -m mhcdoctor.docsgen` writes docs/rules.md from them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from mhcdoctor.knowledge.versions import Version, release_key

PR = "https://github.com/vllm-project/vllm/pull/"
ISSUE = "https://github.com/vllm-project/vllm/issues/"

HasTilelang = Literal["find_spec", "import"]
# How the ROCm model reaches its mHC ops:
#   tilelang-module: layers/mhc.py imports tilelang on any CUDA-alike platform (ImportError without it);
#   torch-inline:    as tilelang-module, but mhc_pre/mhc_post/hc_head branch to inline torch on ROCm;
#   custom-op:       MHCPreOp & co. (CustomOp.forward_hip) choose a kernel per op.
RocmStyle = Literal["tilelang-module", "torch-inline", "custom-op"]
XpuStyle = Literal["none", "torch", "kernels"]
AiterArch = Literal["none", "mi3xx", "cdna3+"]
AiterFused = Literal["none", "unprobed", "probed"]
# When the ROCm model runs the fused post+pre op between sublayers.
RocmFused = Literal["never", "always", "has_tilelang", "tilelang_mhc", "tilelang_not_aiter", "aiter_or_tilelang"]


@dataclass(frozen=True)
class RuleSet:
    id: str
    first: str  # first release the set covers
    last: str  # last release it covers
    summary: str
    refs: tuple[str, ...]  # the PRs and issues this set follows
    has_tilelang: HasTilelang  # `find_spec` only, or a trial import (a broken tilelang counts as absent)
    tilelang_skips_gfx1250: bool  # has_tilelang() is False on ROCm gfx1250 (0.27+)
    tilelang_mhc_skips_gfx942: bool  # HAS_TILELANG_MHC: no tilelang mHC on gfx942 (0.24+, vLLM #45931)
    rocm_style: RocmStyle
    aiter_arch: AiterArch  # HAS_AITER_MHC's arch test; "none": no aiter mHC path
    aiter_hc4: bool  # the aiter gate also tests hc_mult == 4 (0.29+)
    aiter_fused: AiterFused  # aiter's mhc_fused_post_pre: not used / used without a probe / probed first
    aiter_probes_norm: bool  # aiter serves a folded RMSNorm only where its signature takes norm_weight (0.30+)
    fused_op: Literal["none", "tilelang", "tilelang-or-torch"]  # the fused op's non-aiter dispatch on ROCm
    rocm_fused: RocmFused
    hc_head: Literal["torch", "tilelang"]  # 0.20.0 computes hc_head in torch; later releases call kernels
    cuda_first_pre_deepgemm: bool  # CUDA's first-layer pre calls DeepGEMM with no tilelang fallback
    deepgemm_sm120: bool  # DeepGEMM supported on sm_12x too (0.24+: support_deep_gemm)
    # Intel GPUs (vLLM's XPUPlatform): "none": no models/deepseek_v4/xpu/ (the CUDA model is imported and needs CUDA
    # kernels); "torch": the XPU model with forward_xpu = forward_native for pre/post/fused and triton hc_head;
    # "kernels": forward_xpu calls torch.ops._xpu_C (the vllm-xpu-kernels package) for all four ops.
    xpu: XpuStyle
    xpu_fused: bool  # the XPU model runs the fused post+pre op between sublayers (0.24+)
    cpu_model: bool  # models/deepseek_v4/cpu/ with forward_cpu on every mHC op (0.30+)
    notes: tuple[str, ...] = ()

    def changed(
        self, *, id: str, first: str, last: str, summary: str, refs: tuple[str, ...], notes: tuple[str, ...] = (),
        **changes: Any,
    ) -> RuleSet:  # fmt: skip
        """The rule set of the next range of releases: this one with `changes`; id, range, summary, refs and notes
        are the new set's own."""
        return dataclasses.replace(
            self, id=id, first=first, last=last, summary=summary, refs=refs, notes=notes, **changes
        )


# Each range of releases is its predecessor with what changed.
VLLM_0_20_0 = RuleSet(
    id="vllm-0.20.0",
    first="0.20.0",
    last="0.20.0",
    summary="DeepSeek-V4 arrives: tilelang mhc_pre/mhc_post on every CUDA-alike platform, hc_head in torch.",
    refs=(PR + "40760",),
    has_tilelang="find_spec",
    tilelang_skips_gfx1250=False,
    tilelang_mhc_skips_gfx942=False,
    rocm_style="tilelang-module",
    aiter_arch="none",
    aiter_hc4=False,
    aiter_fused="none",
    aiter_probes_norm=False,
    fused_op="none",
    rocm_fused="never",
    hc_head="torch",
    cuda_first_pre_deepgemm=True,
    deepgemm_sm120=False,
    xpu="none",
    xpu_fused=False,
    cpu_model=False,
    notes=(
        "layers/mhc.py raises ImportError on CUDA and ROCm alike when find_spec('tilelang') is None.",
        "mhc_pre always calls DeepGEMM's tf32_hc_prenorm_gemm, which has no ROCm build: ROCm cannot run it "
        "(DeepGEMM is CUDA-only; inferred from the code, not run).",
    ),
)

VLLM_0_20_1_0_20_2 = VLLM_0_20_0.changed(
    id="vllm-0.20.1-0.20.2",
    first="0.20.1",
    last="0.20.2",
    summary="As 0.20.0, and hc_head becomes the tilelang hc_head_fuse kernel.",
    refs=(PR + "40760",),
    hc_head="tilelang",
    notes=("DeepGEMM is still called by mhc_pre on every platform: ROCm cannot run it (inferred).",),
)

VLLM_0_21 = VLLM_0_20_1_0_20_2.changed(
    id="vllm-0.21",
    first="0.21.0",
    last="0.21.0",
    summary="The fused post+pre op appears and always runs; on ROCm mhc_pre, mhc_post and hc_head "
    "switch to inline torch while the fused op stays tilelang.",
    refs=(PR + "40760", ISSUE + "42876"),
    rocm_style="torch-inline",
    fused_op="tilelang",
    rocm_fused="always",
    notes=(
        "Read from the 0.21.0 sdist: ROCm branches "
        "to torch inside mhc_pre, mhc_post and hc_head, but the fused post+pre op (tilelang, DeepGEMM past 16 "
        "tokens) runs between every pair of sublayers.",
        "vLLM #42876: the v0.21.0 ROCm image fails on MI350X in mhc_post_tilelang ('PDL is not supported').",
    ),
)

VLLM_0_22 = VLLM_0_21.changed(
    id="vllm-0.22",
    first="0.22.0",
    last="0.22.1",
    summary="mHC ops become CustomOps: ROCm takes tilelang if has_tilelang() (find_spec) else torch; the "
    "aiter branch is commented out (sqrsum race).",
    refs=(PR + "41946", PR + "43679", PR + "43905"),
    rocm_style="custom-op",
    rocm_fused="has_tilelang",
    cuda_first_pre_deepgemm=False,
    notes=("gfx942 is not excluded: tilelang mHC runs there and computes wrong results (vLLM #45698).",),
)

VLLM_0_23 = VLLM_0_22.changed(
    id="vllm-0.23",
    first="0.23.0",
    last="0.23.0",
    summary="As 0.22, but has_tilelang() is a trial import: a tilelang that fails to import counts as absent.",
    refs=(PR + "44035",),
    has_tilelang="import",
    xpu="torch",
)

VLLM_0_24 = VLLM_0_23.changed(
    id="vllm-0.24",
    first="0.24.0",
    last="0.24.0",
    summary="HAS_TILELANG_MHC: no tilelang mHC on gfx942; the fused op gains a torch fallback.",
    refs=(PR + "45931", ISSUE + "45698"),
    tilelang_mhc_skips_gfx942=True,
    fused_op="tilelang-or-torch",
    rocm_fused="tilelang_mhc",
    deepgemm_sm120=True,
    xpu_fused=True,
    notes=(
        "has_tilelang() is still a trial import here (0.24.0's vllm/utils/import_utils.py), as in 0.23 and 0.25–0.27.",
    ),
)

VLLM_0_25 = VLLM_0_24.changed(
    id="vllm-0.25",
    first="0.25.0",
    last="0.25.1",
    summary="aiter mhc_pre/mhc_post become the ROCm default where HAS_AITER_MHC (find_spec + MI3xx) and "
    "hidden_size % 256 == 0; the model then runs post and pre separately.",
    refs=(PR + "43950",),
    aiter_arch="mi3xx",
    rocm_fused="tilelang_not_aiter",
    notes=(
        "vLLM never checks aiter's version: an aiter without the sqrsum fix (aiter #3033) is selected.",
        "hc_mult is not tested: a model with hc_mult != 4 reaches aiter's C++ check and fails.",
    ),
)

VLLM_0_26 = VLLM_0_25.changed(
    id="vllm-0.26",
    first="0.26.0",
    last="0.26.0",
    summary="As 0.25; on CUDA the first layer's broadcast pre calls DeepGEMM with no tilelang fallback.",
    refs=(PR + "43950",),
    cuda_first_pre_deepgemm=True,
)

VLLM_0_27 = VLLM_0_26.changed(
    id="vllm-0.27",
    first="0.27.0",
    last="0.27.1",
    summary="HAS_AITER_MHC tests get_cdna_version() > 2 (gfx942, gfx950, gfx1250); has_tilelang() is False on gfx1250.",
    refs=(PR + "43950",),
    tilelang_skips_gfx1250=True,
    aiter_arch="cdna3+",
    xpu="kernels",
)

VLLM_0_28 = VLLM_0_27.changed(
    id="vllm-0.28",
    first="0.28.0",
    last="0.28.0",
    summary="As 0.27, but has_tilelang() is find_spec again: a broken tilelang is still selected.",
    refs=(PR + "51159", ISSUE + "51162"),
    has_tilelang="find_spec",
)

VLLM_0_29 = VLLM_0_28.changed(
    id="vllm-0.29",
    first="0.29.0",
    last="0.29.0",
    summary="aiter also serves the fused post+pre op and the RMSNorm folds into mhc_pre (hidden 1280, 2560, "
    "4096, 7168); every aiter gate adds hc_mult == 4. aiter's API is not probed.",
    refs=(PR + "52737",),
    aiter_hc4=True,
    aiter_fused="unprobed",
    rocm_fused="aiter_or_tilelang",
    notes=(
        "rocm_aiter_ops.mhc_pre passes norm_weight and norm_eps positionally on every call, folded or not: an "
        "aiter whose mhc_pre lacks them (before 0.1.15) raises TypeError at the first call, not only when the "
        "norm folds (read from 0.29.0's vllm/_aiter_ops.py).",
    ),
)

VLLM_0_30_0_34 = VLLM_0_29.changed(
    id="vllm-0.30-0.34",
    first="0.30.0",
    last="0.34.0",
    summary="aiter's API is probed at import: mhc_fused_post_pre must import, and a folded RMSNorm needs "
    "norm_weight/norm_eps in aiter's signature; otherwise that op falls back to tilelang or torch.",
    refs=(PR + "52737",),
    aiter_fused="probed",
    aiter_probes_norm=True,
    cpu_model=True,
    notes=(
        "The probes import aiter.ops.mhc: an aiter that does not import, or PyPI's unrelated `aiter`, fails "
        "them, so mhc_pre (with a folded norm) and the fused op fall back while mhc_post still calls aiter.",
        "mhc_post is gated with supports_norm=True: only HAS_AITER_MHC, hidden % 256 and hc_mult == 4 count.",
        "The opt-in --monokernel decode layer (0.33+) and DeepSeek-V4.1's separate model (0.30+, "
        "mhc_pre_delayed) are not modelled.",
        "Read line by line for 0.31–0.34: the V4 ops' paths do not change; 0.32 sends V4.1's delayed pre on gfx950 "
        "to aiter's Triton mhc_fused_post_pre_delayed_rmsnorm, unprobed (layers/mhc.py:62-76; "
        "model-v41-approximate); 0.33 gives the tilelang fused post+pre a single-pass config at 1-4 tokens, hidden "
        "4096, on sm_100+ only (tilelang_kernels.py:65-98); 0.34's NVIDIA model runs its unfused post in place "
        "(reuse_residual).",
    ),
)

RULE_SETS: tuple[RuleSet, ...] = (
    VLLM_0_20_0,
    VLLM_0_20_1_0_20_2,
    VLLM_0_21,
    VLLM_0_22,
    VLLM_0_23,
    VLLM_0_24,
    VLLM_0_25,
    VLLM_0_26,
    VLLM_0_27,
    VLLM_0_28,
    VLLM_0_29,
    VLLM_0_30_0_34,
)

FIRST_DSV4 = Version(RULE_SETS[0].first)
NEWEST = RULE_SETS[-1]


def rules_for_vllm(version: str) -> RuleSet | None:
    """The rule set for an installed vLLM version; None before 0.20.0 (no DeepSeek-V4). Newer: the newest set."""
    key = release_key(version)
    if key < FIRST_DSV4:
        return None
    for rule_set in RULE_SETS:
        if key <= Version(rule_set.last):
            return rule_set
    return NEWEST


def is_newer_than_known(version: str) -> bool:
    return release_key(version) > Version(NEWEST.last)
