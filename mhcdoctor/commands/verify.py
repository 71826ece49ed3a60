"""`mhcdoctor verify`: run the mHC ops on each available path, on the GPU, and check them against the oracle."""

from __future__ import annotations

import json

import click

from mhcdoctor.commands.options import (
    exit_code,
    fail_on_option,
    json_option,
    kernel_option,
    kernels_from_options,
    model_from_options,
    model_options,
)
from mhcdoctor.errors import InputError
from mhcdoctor.kernels import REGISTRY
from mhcdoctor.models import ModelConfig
from mhcdoctor.probes import facts_from_probes, run_probes
from mhcdoctor.probes.base import ProbeContext
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


def _tokens(value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        counts = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--tokens takes comma-separated positive integers, not {value!r}") from None
    if not counts or any(c < 1 for c in counts):
        raise InputError(f"--tokens takes comma-separated positive integers, not {value!r}")
    return counts


@click.command("verify")
@model_options
@click.option("--tokens", default=None, help="Comma-separated token counts (default 1,7,80).")
@click.option("--stress", is_flag=True, help="Add thousands of tokens (4096, 16384), where row races show.")
@click.option(
    "--path",
    "paths",
    multiple=True,
    type=click.Choice(REGISTRY.names()),
    help="Verify only this path (repeatable). Default: every path that is installed (only `user` with --kernel).",
)
@click.option(
    "--device", default="auto", show_default=True, help="GPU to run on: auto (the first), N, cuda:N, all, cpu."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds allowed for each path's child process (JIT compiles included).",
)
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
    counts = _tokens(tokens)
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
    click.echo(json.dumps(doc, indent=2) if as_json else render_text(doc))
    return exit_code(doc["verdict"], fail_on)
