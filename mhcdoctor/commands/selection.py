"""Which path the rules select for each op on this machine: what verify and bench hold their rows against."""

from __future__ import annotations

from dataclasses import dataclass

from mhcdoctor.models import ModelConfig
from mhcdoctor.probes import facts_from_probes, run_probes
from mhcdoctor.probes.target import probe_context
from mhcdoctor.rules import decide


@dataclass(frozen=True)
class Selection:
    paths: dict[str, str] | None  # op -> the selected path; None when no op has a runnable path
    fused_post_pre: bool  # the model runs the fused post+pre op here


def selected_here(model: ModelConfig, python: str | None = None) -> Selection:
    """The rules' pick for `model` from fast probes (no imports, no GPU initialisation), through the probe context
    every command uses: MHCDOCTOR_SYSROOT's tree and `python`'s environment are the machine looked at."""
    decision = decide(facts_from_probes(run_probes(probe_context(fast=True, python=python))), model)
    picked = {op: str(d.path) for op, d in decision.ops.items()}
    runnable = any(path != "unavailable" for path in picked.values())
    return Selection(picked if runnable else None, decision.fused_post_pre)
