"""`mhcdoctor merge FILES|DIR`: the fleet summary from reports gathered without Ray.

Gather one `mhcdoctor report --json` per node however the cluster runs jobs (docs/fleet.md has the Slurm and
kubectl recipes), then merge them: the same summary, views and exit code as `mhcdoctor fleet`.

With --bundle, what the bundle carries is what merge read, redacted as `report` redacts (a report saved with
`check --json` is not): each node's report as checked, or the line saying why it could not be read; never a file's
raw bytes, so a link planted among the reports (to /proc/self/environ, to a key) ships nothing.
"""

from __future__ import annotations

import dataclasses

import click

from mhcdoctor.commands.fleet import emit
from mhcdoctor.commands.options import NAMED, fail_on_option, force_option, json_option, refuse_together
from mhcdoctor.fleet.files import load_nodes, report_files
from mhcdoctor.fleet.summary import NodeResult, summarize
from mhcdoctor.outfiles import check_target
from mhcdoctor.redact import Identity, new_salt, redact, redact_text
from mhcdoctor.render.json_view import render_json
from mhcdoctor.rules import vocabulary


@click.command("merge")
@click.argument("inputs", nargs=-1, required=True, metavar="FILES|DIR", type=NAMED)
@click.option("--markdown", is_flag=True, help="Markdown, to paste into an issue.")
@click.option(
    "--bundle",
    "bundle_path",
    default=None,
    type=NAMED,
    metavar="FILE.tar.gz",
    help="Also write every report (redacted) and the summary.",
)
@click.option(
    "--no-redact", is_flag=True, help="With --bundle: keep home paths, user and host names (secrets stay masked)."
)
@force_option
@json_option
@fail_on_option
def command(
    inputs: tuple[str, ...],
    markdown: bool,
    bundle_path: str | None,
    no_redact: bool,
    force: bool,
    as_json: bool,
    fail_on: str | None,
) -> int:
    """Merge saved reports (`report --json`, `--bundle` files or saved Markdown; a folder: all of them) into one
    fleet summary. Each node is named after its file."""
    refuse_together({"--json": as_json, "--markdown": markdown})
    if bundle_path:  # before the reports are read
        check_target(bundle_path, "bundle", force)
    nodes = load_nodes(report_files(list(inputs)))
    node_files: dict[str, bytes] = {}
    if bundle_path:
        nodes = _redacted(nodes, identities=not no_redact)
        for node in nodes:
            if node.report is not None:
                node_files[f"{node.name}.json"] = (render_json(node.report) + "\n").encode()
            else:
                node_files[f"{node.name}.error.txt"] = f"{node.status}: {node.error}\n".encode()
    return emit(summarize(nodes, source="merge"), as_json, markdown, bundle_path, force, node_files, fail_on)


def _redacted(nodes: list[NodeResult], identities: bool) -> list[NodeResult]:
    """Every node's report, error and file name redacted, with one salt: a host has one pseudonym in the bundle."""
    identity, salt, words = Identity.of_this_machine(), new_salt(), vocabulary()

    def text(value: str | None) -> str | None:
        return None if value is None else redact_text(value, identity, salt, identities=identities, vocabulary=words)

    out = []
    for node in nodes:
        report = (
            None
            if node.report is None
            else redact(node.report, identity, identities=identities, salt=salt, vocabulary=words)[0]
        )
        out.append(dataclasses.replace(node, report=report, error=text(node.error), source=text(node.source)))
    return out
