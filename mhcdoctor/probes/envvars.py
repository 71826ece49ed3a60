"""The environment variables vLLM's mHC code, its DeepGEMM wrapper and the two kernel caches read (VLLM_ENV),
as set for this doctor: the values are what `vllm serve` started from this shell would see."""

from __future__ import annotations

from mhcdoctor.knowledge import vllm_releases
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext

NAME = "vllm.env"


def probe(ctx: ProbeContext) -> ProbeResult:
    found = {name: ctx.env[name] for name in vllm_releases.VLLM_ENV if name in ctx.env}
    evidence = [f"{name}={value}" for name, value in found.items()] or [
        f"none of {', '.join(vllm_releases.VLLM_ENV)} is set"
    ]
    return ProbeResult(NAME, "ok", {"vars": found}, evidence, "environment")
