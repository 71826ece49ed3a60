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
from mhcdoctor.commands.selection import selected_here
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.term import Style
from mhcdoctor.render.verify_text import render_text
from mhcdoctor.verify import DEFAULT_TIMEOUT, run_verify


@click.command("verify")
@model_options
@tokens_option("1,7,80")
@click.option(
    "--stress",
    is_flag=True,
    help="Add 512, 1025, 4096 and 16384 tokens: every known trigger point (block-M from 1024) and row races.",
)
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
        selected=lambda: selected_here(cfg).paths,  # None: no runnable path, so every failing path is a fail
        kernels=user,
    )
    click.echo(render_json(doc) if as_json else render_text(doc, Style.for_stream(sys.stdout)))
    return exit_code(doc["verdict"], fail_on)
