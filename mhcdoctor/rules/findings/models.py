"""Findings about the model: DeepSeek-V4.1 in vLLM."""

from __future__ import annotations

from mhcdoctor.knowledge import aiter_code, aiter_releases, bugs, versions
from mhcdoctor.models import ModelConfig
from mhcdoctor.rules.dispatch import arch_has
from mhcdoctor.rules.findings.aiter import _told
from mhcdoctor.rules.findings.base import (
    FindingContext,
    FindingSpec,
    Found,
    bug_spec,
)
from mhcdoctor.rules.releases import PR

V41_SINCE = versions.Version("0.30.0")  # models/deepseek_v41 and DeepseekV41ForCausalLM first ship in vLLM 0.30.0


def _is_v41(model: ModelConfig) -> bool:
    """DeepSeek-V4.1 by name: the built-in, or a config.json whose name or model_type says v4.1 / deepseek_v41."""
    name = (model.name or "").lower().replace("_", "-")
    return "v4.1" in name or "v41" in name


def _decide_v41_unsupported(c: FindingContext) -> Found | None:
    if not _is_v41(c.model) or c.rules is None or versions.parse_strict(c.rules.first) >= V41_SINCE:
        return None
    return Found(
        f"vLLM {c.vllm_version} registers no DeepseekV41ForCausalLM (models/deepseek_v41 first "
        "ships in 0.30.0), so the checkpoint does not load."
    )


# vLLM 0.32.0 layers/mhc.py:62-76 and :402-432: on gfx950, where aiter is found, the V4.1 delayed pre folds its
# RMSNorm into aiter's Triton mhc_fused_post_pre_delayed_rmsnorm, imported at the call (_aiter_ops.py:4518) with no
# probe; no ROCm/aiter tag up to v0.1.20.post1 (nor main at e4048607a5) has aiter/ops/triton/fusions/ that holds it.
V41_AITER_SEAM_SINCE = versions.Version("0.32.0")


def _v41_aiter_seam(c: FindingContext) -> str:
    release = versions.public(c.release)
    if c.facts.platform != "rocm" or c.facts.arch != "gfx950" or release is None or release < V41_AITER_SEAM_SINCE:
        return ""
    return (
        f" On gfx950, vLLM {c.release}'s delayed pre (with aiter found) instead folds the RMSNorm into aiter's Triton "
        "kernel aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm, imported at the first call with no "
        "probe (layers/mhc.py:62-76, _aiter_ops.py:4518 in 0.32.0)."
    )


def _decide_v41_approximate(c: FindingContext) -> Found | None:
    if not _is_v41(c.model) or c.rules is None or versions.parse_strict(c.rules.first) < V41_SINCE:
        return None
    return Found(
        "vLLM serves DeepSeek-V4.1 with models/deepseek_v41, whose delayed pre op tests the same "
        "HAS_AITER_MHC / HAS_TILELANG_MHC gates but folds no RMSNorm and folds mhc_post into the next pre; this "
        "trace follows the V4 model with the same hidden size." + _v41_aiter_seam(c)
    )


def _decide_v41_delayed_api(c: FindingContext) -> Found | None:
    """The V4.1 model's seams call rocm_aiter_ops.mhc_pre_delayed (vllm/_aiter_ops.py:3697 at 0.30.0, :4865 at
    0.34.0) where mhc_pre runs on aiter: it fails where aiter/ops/mhc.py lacks the API (else the version says so)."""
    a, bug, release = c.facts.aiter, bugs.DELAYED_API_TOO_OLD, versions.public(c.release)
    if not _is_v41(c.model) or c.facts.platform not in bug.platforms or release is None:
        return None
    if versions.within(c.release, bug.vllm or "") is not True or "mhc_pre" not in c.ops_on("aiter"):
        return None
    if c.facts.arch == "gfx950" and release >= V41_AITER_SEAM_SINCE:
        return None  # every seam there passes norm_weight and takes aiter's Triton kernel (_v41_aiter_seam)
    if a.genuine is False or a.has_mhc_ops is False:
        return None  # aiter-impostor / aiter-no-mhc say what fails first
    state, told = aiter_code.fix_state(a, aiter_code.DELAYED_API.id)
    if state != "absent":
        return None
    detail = f"aiter {a.version or '(version unknown)'} serves mhc_pre in vLLM {c.release}: {bug.explanation}"
    return Found(detail + _told(c, told, "aiter/ops/mhc.py"), ["mhc_pre"])


def _decide_v41_seam_rmsnorm(c: FindingContext) -> Found | None:
    """On gfx950, vLLM 0.32-0.34's V4.1 seams import aiter's Triton mhc_fused_post_pre_delayed_rmsnorm wherever
    HAS_AITER_MHC, hidden % 256 == 0 and hc_mult == 4 (layers/mhc.py:62-91, :406-415 in 0.32.0): it fails where the
    installed aiter (else the version) lacks the module."""
    a, bug = c.facts.aiter, bugs.SEAM_RMSNORM_MISSING
    if not _is_v41(c.model) or c.facts.platform not in bug.platforms or arch_has(c.facts, *bug.archs) is not True:
        return None  # vLLM's on_gfx950() is a substring test of the GCN arch name
    if versions.within(c.release, bug.vllm or "") is not True or c.dispatch is None:
        return None
    if c.dispatch.values.get("has_aiter_mhc") is not True or not bug.fits(c.model.hidden_size, c.model.hc_mult):
        return None
    if c.model.hidden_size % 256 != 0:  # _aiter_mhc_supported: else the seam takes vLLM's own kernels
        return None
    if a.genuine is False or a.has_mhc_ops is False:
        return None  # aiter-impostor / aiter-no-mhc say what fails first
    has, source = a.has_seam_rmsnorm, c.facts.sources.get("aiter.has_seam_rmsnorm", "")
    if source.startswith("user:--aiter-fix"):  # stated unknown stays unknown
        told = f" As stated: --aiter-fix seam-rmsnorm={'present' if has else 'absent'}."
    elif has is None:
        has, rule = aiter_releases.seam_rmsnorm_from_version(a.version)
        told = f" Judged by the version label ({rule}): the installed aiter's files were not read."
    elif source.startswith("user:--aiter"):
        told = f" Judged by the version label ({aiter_releases.seam_rmsnorm_from_version(a.version)[1]})."
    else:
        told = f" {a.location or 'aiter'}: no {aiter_releases.SEAM_RMSNORM.removeprefix('aiter/')} in it."
    if has is not False:
        return None
    detail = f"aiter {a.version or '(version unknown)'} with vLLM {c.release} on gfx950: {bug.explanation}"
    return Found(detail + told, ["mhc_pre"])


MODELS: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="model-v41-unsupported",
        severity="fail",
        title="This vLLM has no DeepSeek-V4.1 model",
        summary="The model is DeepSeek-V4.1 and the vLLM release is older than 0.30.0, where deepseek_v41 arrives.",
        decide=_decide_v41_unsupported,
        fix="pip install -U 'vllm>=0.30'",
        refs=(PR + "56503",),
    ),
    FindingSpec(
        id="model-v41-approximate",
        severity="info",
        title="DeepSeek-V4.1 runs through its own model in vLLM",
        summary="The model is DeepSeek-V4.1: vLLM 0.30+ serves it with models/deepseek_v41 (mhc_pre_delayed, no "
        "learned hc_head); the trace follows the V4 model's gates.",
        decide=_decide_v41_approximate,
        fix="mhcdoctor explain --hidden 5120  # the V4 model at V4.1-Flash's hidden size",
        refs=(PR + "56503", PR + "56513"),
    ),
    bug_spec(bugs.DELAYED_API_TOO_OLD, _decide_v41_delayed_api),
    bug_spec(bugs.SEAM_RMSNORM_MISSING, _decide_v41_seam_rmsnorm),
)
