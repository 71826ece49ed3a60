"""The values the self-check asks the installed vLLM for (full `check`, probes/vllm_selfcheck.py's child), once.

The child's list of layers/mhc.py flags, the `rules-disagree-with-vllm` finding's names for them and the documents
are derived from this table; facts.VllmSelfCheck and documents.check.VllmSelfCheckDocument hold one member per key
(a test holds them together).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SelfCheckValue:
    key: str  # the member of facts.VllmSelfCheck
    name: str  # what vLLM's code calls it
    source: str  # where vLLM computes it
    since: str  # the first release that has it
    module_flag: bool  # a module-level bool of layers/mhc.py the child reads by name


VALUES: tuple[SelfCheckValue, ...] = (
    SelfCheckValue("platform", "current_platform", "vllm/platforms/__init__.py", "0.20.0", False),
    SelfCheckValue("forward", "CustomOp.dispatch_forward", "vllm/model_executor/custom_op.py", "0.20.0", False),
    SelfCheckValue("has_tilelang", "has_tilelang()", "vllm/utils/import_utils.py", "0.22.0", False),
    SelfCheckValue("has_tilelang_mhc", "HAS_TILELANG_MHC", "vllm/model_executor/layers/mhc.py", "0.24.0", True),
    SelfCheckValue("has_aiter_mhc", "HAS_AITER_MHC", "vllm/model_executor/layers/mhc.py", "0.25.0", True),
    SelfCheckValue("aiter_fused", "HAS_AITER_MHC_FUSED", "vllm/model_executor/layers/mhc.py", "0.30.0", True),
    SelfCheckValue("aiter_pre_norm", "HAS_AITER_MHC_PRE_NORM", "vllm/model_executor/layers/mhc.py", "0.30.0", True),
    SelfCheckValue("fused", "use_fused_mhc", "vllm/models/deepseek_v4/*/model.py", "0.20.0", False),
)

# The self-check's values by the name vLLM's code gives them (VllmSelfCheck member → vLLM's name).
GATES: dict[str, str] = {value.key: value.name for value in VALUES}
# (member, name) of the layers/mhc.py flags the child reads with getattr.
MODULE_FLAGS: tuple[tuple[str, str], ...] = tuple((v.key, v.name) for v in VALUES if v.module_flag)
