"""`mhcdoctor bench`: time each mHC path on this device, against the device's peak memory bandwidth."""

from __future__ import annotations

import click

from mhcdoctor.bench import DEFAULT_TIMEOUT, run_bench
from mhcdoctor.bench.plot import plot, require_matplotlib
from mhcdoctor.commands.options import (
    NAMED,
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
from mhcdoctor.errors import InputError
from mhcdoctor.outfiles import check_target
from mhcdoctor.render.bench_text import render_text
from mhcdoctor.render.json_view import render_json


@click.command("bench")
@model_options
@tokens_option("1,8,64,256 and 4096,16384; on the CPU 1,8,64,256")
@paths_option("Time only this path (repeatable). Default: every path that is installed.")
@device_option("Device to time on: auto (the first GPU), N, cuda:N, cpu.")
@path_timeout_option(DEFAULT_TIMEOUT)
@click.option(
    "--repeats", type=click.IntRange(min=3), default=50, show_default=True, help="Timed runs per case, at most."
)
@click.option(
    "--plot", "plot_file", type=NAMED, default=None, metavar="FILE.png", help="Also draw bandwidth against tokens."
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
    paths: tuple[str, ...],
    device: str,
    timeout: float,
    repeats: int,
    plot_file: str | None,
    kernels: tuple[str, ...],
    as_json: bool,
    fail_on: str | None,
) -> int:
    """Time each op on each available path (decode and prefill token counts), with bandwidth and cost per step."""
    cfg = model_from_options(model, config_path, hidden, hc_mult)
    counts = tokens_from_option(tokens)
    user = kernels_from_options(kernels)
    if plot_file is not None:
        require_matplotlib()
        check_target(plot_file, "--plot", replace=True)  # before anything is timed
    selection = selected_here(cfg)
    doc = run_bench(
        cfg,
        paths=list(paths) or None,
        tokens=counts,
        device=device,
        timeout=timeout,
        selected=selection.paths,
        fused=selection.fused_post_pre,
        kernels=user,
        options={"repeats": repeats},
    )
    if plot_file is not None:
        try:
            doc["plot"] = plot(doc, plot_file)
        except OSError as exc:
            raise InputError(f"--plot {plot_file}: cannot write it: {exc.strerror or exc}") from None
    click.echo(render_json(doc) if as_json else render_text(doc))
    return exit_code(doc["verdict"], fail_on)
