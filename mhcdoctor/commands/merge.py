"""`mhcdoctor merge FILES|DIR`: the fleet summary from reports gathered without Ray.

Gather one `mhcdoctor report --json` per node however the cluster runs jobs (docs/fleet.md has the Slurm and
kubectl recipes), then merge them: the same summary, views and exit code as `mhcdoctor fleet`.
"""

from __future__ import annotations

import click

from mhcdoctor.commands.fleet import emit
from mhcdoctor.commands.options import fail_on_option, force_option, json_option, refuse_together
from mhcdoctor.fleet.files import load_nodes, report_files
from mhcdoctor.fleet.summary import summarize
from mhcdoctor.outfiles import check_target


@click.command("merge")
@click.argument("inputs", nargs=-1, required=True, metavar="FILES|DIR")
@click.option("--markdown", is_flag=True, help="Markdown, to paste into an issue.")
@click.option(
    "--bundle", "bundle_path", default=None, metavar="FILE.tar.gz", help="Also write every report and the summary."
)
@force_option
@json_option
@fail_on_option
def command(
    inputs: tuple[str, ...], markdown: bool, bundle_path: str | None, force: bool, as_json: bool, fail_on: str | None
) -> int:
    """Merge saved reports (`report --json`, `--bundle` files or saved Markdown; a folder: all of them) into one
    fleet summary. Each node is named after its file."""
    refuse_together({"--json": as_json, "--markdown": markdown})
    if bundle_path:
        check_target(bundle_path, "bundle", force)
    files = report_files(list(inputs))
    nodes = load_nodes(files)
    summary = summarize(nodes, source="merge")
    node_files = {}
    if bundle_path:
        for node, path in zip(nodes, files, strict=True):
            suffix = ".tar.gz" if path.name.endswith((".tar.gz", ".tgz")) else path.suffix or ".json"
            node_files[f"{node.name}{suffix}"] = path.read_bytes()
    return emit(summary, as_json, markdown, bundle_path, force, node_files, fail_on)
