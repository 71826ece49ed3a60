"""`mhcdoctor fleet`: check every node of a running Ray cluster (and with --verify every GPU), then summarise.

Needs the `fleet` extra (Ray). Each node runs `python -m mhcdoctor report --json` in its own Python, so its
report is redacted there as `report` does (unless --no-redact); see mhcdoctor/fleet/ray_runner.py.
"""

from __future__ import annotations

import sys

import click

from mhcdoctor.bundle import write_bundle
from mhcdoctor.commands.options import (
    NAMED,
    exit_code,
    fail_on_option,
    force_option,
    json_option,
    model_args,
    model_options,
    refuse_together,
    timeout_option_with,
)
from mhcdoctor.documents.fleet import FleetDocument
from mhcdoctor.fleet.files import BUNDLE_ROOT, bundle_files
from mhcdoctor.fleet.summary import summarize
from mhcdoctor.outfiles import check_target
from mhcdoctor.render.fleet import render_markdown, render_text
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.term import Style


@click.command("fleet")
@click.option("--address", default=None, help="The Ray cluster (default: $RAY_ADDRESS, else 'auto').")
@click.option("--verify", "run_verify", is_flag=True, help="Also run `verify` on every GPU, one task per GPU.")
@click.option("--fast", is_flag=True, help="Each node's check reads files only (no imports, no GPU initialisation).")
@timeout_option_with(
    300.0,
    "Seconds allowed for each node's check (and each GPU's verify); past it the node is reported as timeout.",
    minimum=1,
)
@click.option("--gpu-nodes-only", is_flag=True, help="Leave out nodes that offer Ray no GPU (e.g. a CPU-only head).")
@model_options
@click.option("--no-redact", is_flag=True, help="Nodes share home paths, user and host names as they are.")
@click.option("--markdown", is_flag=True, help="Markdown, to paste into an issue.")
@click.option(
    "--bundle",
    "bundle_path",
    default=None,
    type=NAMED,
    metavar="FILE.tar.gz",
    help="Also write every node's bundle and the summary.",
)
@force_option
@json_option
@fail_on_option
def command(
    address: str | None,
    run_verify: bool,
    fast: bool,
    timeout: float,
    gpu_nodes_only: bool,
    model: str | None,
    config_path: str | None,
    hidden: int | None,
    hc_mult: int | None,
    no_redact: bool,
    markdown: bool,
    bundle_path: str | None,
    force: bool,
    as_json: bool,
    fail_on: str | None,
) -> int:
    """One check per node of a Ray cluster, pinned to it, all in parallel; the summary names the nodes that differ.
    Exit code: the worst node's verdict; a node that could not be checked counts as fail."""
    from mhcdoctor.fleet.ray_runner import default_address, run_fleet

    refuse_together({"--json": as_json, "--markdown": markdown})
    if bundle_path:  # before the nodes are checked, which can take minutes
        check_target(bundle_path, "bundle", force)

    node_model_args = model_args(model, config_path, hidden, hc_mult)
    check_args = ["report", "--json", "--timeout", f"{min(20.0, timeout):g}", *node_model_args]
    check_args += ["--fast"] if fast else []
    check_args += ["--no-redact"] if no_redact else []
    verify_args = ["verify", "--json", "--device", "0", *node_model_args] if run_verify else None
    runs = run_fleet(
        address or default_address(),
        check_args,
        timeout,
        verify_args,
        bool(bundle_path),
        lambda line: click.echo(f"mhcdoctor: {line}", err=True),
        gpu_nodes_only=gpu_nodes_only,
    )
    summary = summarize([r.result for r in runs], source="ray")
    node_files: dict[str, bytes] = {}
    for run in runs:
        if run.bundle is not None:
            node_files[f"{run.result.name}.tar.gz"] = run.bundle
        elif run.result.report is not None:
            node_files[f"{run.result.name}.json"] = (render_json(run.result.report) + "\n").encode()
        else:
            node_files[f"{run.result.name}.error.txt"] = f"{run.result.status}: {run.result.error}\n".encode()
    return emit(summary, as_json, markdown, bundle_path, force, node_files, fail_on)


def emit(
    summary: FleetDocument,
    as_json: bool,
    markdown: bool,
    bundle_path: str | None,
    force: bool,
    node_files: dict[str, bytes],
    fail_on: str | None,
) -> int:
    """Print the summary in the view asked for, write the bundle if asked, and return the exit code."""
    md = render_markdown(summary)
    if bundle_path:
        files = bundle_files(summary, md, node_files)
        size = write_bundle(bundle_path, files, root=BUNDLE_ROOT, replace=force)
        click.echo(f"mhcdoctor: wrote {bundle_path} ({size / 1024:.0f} KiB, {len(files)} files)", err=True)
    if as_json:
        click.echo(render_json(summary))
    elif markdown:
        click.echo(md, nl=False)
    else:
        click.echo(render_text(summary, Style.for_stream(sys.stdout)), nl=False)
    return exit_code(summary["verdict"], fail_on)
