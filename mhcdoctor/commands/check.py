"""`mhcdoctor check`: probe this machine and say which mHC path each op takes for each DeepSeek-V4 model."""

from __future__ import annotations

import sys

import click

from mhcdoctor.checkreport import build_check
from mhcdoctor.commands.options import (
    exit_code,
    fail_on_option,
    given_timeout,
    json_option,
    model_from_options,
    model_options,
    python_option,
    timeout_option,
)
from mhcdoctor.models import BUILTIN_MODELS, ModelConfig
from mhcdoctor.probes import PROBES
from mhcdoctor.probes.target import probe_context
from mhcdoctor.progress import CheckProgress
from mhcdoctor.redact import Identity, mask_secrets
from mhcdoctor.render.check_text import render_check
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.term import Style


@click.command("check")
@click.option("--fast", is_flag=True, help="Read only files and metadata: no imports, no GPU initialisation.")
@click.option(
    "--verify",
    "run_verify",
    is_flag=True,
    help="Also run `verify` (at the first model's size) and fold its results into the verdict.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show every probe's evidence and timing.")
@model_options
@timeout_option
@python_option
@json_option
@fail_on_option
def command(
    fast: bool,
    run_verify: bool,
    verbose: bool,
    model: str | None,
    config_path: str | None,
    hidden: int | None,
    hc_mult: int | None,
    timeout: float,
    python: str | None,
    as_json: bool,
    fail_on: str | None,
) -> int:
    """Probe GPUs, runtimes, torch, aiter, tilelang, triton and vLLM; show the mHC path per op for each model."""
    models = selected_models(model, config_path, hidden, hc_mult)
    if run_verify and fast:
        raise click.UsageError("--verify runs kernels on the GPU; it cannot be combined with --fast")
    ctx = probe_context(fast=fast, timeout=timeout, python=python)
    shown = CheckProgress(len(PROBES))
    shown.status("probing this machine" + ("" if fast else " (imports run in child processes)"))
    on_probe = None if fast else lambda r: shown.probe_done(r.name, r.status, r.seconds)  # fast: under a second
    doc = build_check(
        ctx, models, verify=run_verify, progress=shown.status, on_probe=on_probe, verify_timeout=given_timeout(timeout)
    )
    doc = mask_secrets(doc, Identity.of_this_machine())
    shown.status(None)
    if as_json:
        click.echo(render_json(doc))
    else:
        click.echo(render_check(doc, Style.for_stream(sys.stdout), verbose=verbose), nl=False)
    return exit_code(doc["verdict"], fail_on)


def selected_models(
    model: str | None, config_path: str | None, hidden: int | None, hc_mult: int | None
) -> list[ModelConfig]:
    """The one model the options name, or every built-in when none is named."""
    if model or config_path or hidden is not None or hc_mult is not None:
        return [model_from_options(model, config_path, hidden, hc_mult)]
    return list(BUILTIN_MODELS.values())
