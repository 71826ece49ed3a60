"""`mhcdoctor verify`: run the mHC ops on each available path, on the GPU, and check them against the oracle."""

from __future__ import annotations

import sys

import click

from mhcdoctor.commands.options import (
    device_option,
    exit_code,
    fail_on_option,
    json_option,
    kernel_option,
    kernels_from_options,
    model_from_options,
    model_options,
    path_timeout_option,
    paths_option,
    tokens_from_option,
    tokens_option,
)
from mhcdoctor.models import ModelConfig
from mhcdoctor.probes import facts_from_probes, run_probes
from mhcdoctor.probes.base import ProbeContext
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.term import Style
from mhcdoctor.render.verify_text import render_text
from mhcdoctor.rules import decide
from mhcdoctor.verify import DEFAULT_TIMEOUT, run_verify


def _selected_paths(model: ModelConfig) -> dict[str, str] | None:
    """The path the rules pick for each op on this machine (fast probes: no imports, no GPU initialisation).

    None when the rules pick no runnable path for any op: then every failing path counts as a fail.
    """
    facts = facts_from_probes(run_probes(ProbeContext(fast=True)))
    picked: dict[str, str] = {op: str(d.path) for op, d in decide(facts, model).ops.items()}
    return picked if any(path != "unavailable" for path in picked.values()) else None


@click.command("verify")
@model_options
@tokens_option("1,7,80")
@click.option("--stress", is_flag=True, help="Add thousands of tokens (4096, 16384), where row races show.")
@paths_option("Verify only this path (repeatable). Default: every path that is installed (only `user` with --kernel).")
@device_option("GPU to run on: auto (the first), N, cuda:N, all, cpu.")
@path_timeout_option(DEFAULT_TIMEOUT)
@kernel_option
@json_option
@fail_on_option
def command(
    model: str | None,
    config_path: str | None,
    hidden: int | None,
    hc_mult: int | None,
    tokens: str | None,
    stress: bool,
    paths: tuple[str, ...],
    device: str,
    timeout: float,
    kernels: tuple[str, ...],
    as_json: bool,
    fail_on: str | None,
) -> int:
    """Run a small mHC call on each available path and compare it with an independent float64 oracle."""
    cfg = model_from_options(model, config_path, hidden, hc_mult)
    counts = tokens_from_option(tokens)
    user = kernels_from_options(kernels)
    doc = run_verify(
        cfg,
        paths=list(paths) or None,
        tokens=counts,
        stress=stress,
        device=device,
        timeout=timeout,
        selected=lambda: _selected_paths(cfg),
        kernels=user,
    )
    click.echo(render_json(doc) if as_json else render_text(doc, Style.for_stream(sys.stdout)))
    return exit_code(doc["verdict"], fail_on)
