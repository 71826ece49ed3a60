"""`mhcdoctor diff A B`: what differs between two saved reports (check --json, report --json, or bundles)."""

from __future__ import annotations

import sys

import click

from mhcdoctor.commands.options import NAMED, json_option
from mhcdoctor.diffing import diff_reports, to_document
from mhcdoctor.errors import InputError
from mhcdoctor.render.diff_text import render_text
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.term import Style
from mhcdoctor.reportfile import load_report


@click.command("diff")
@click.argument("a", metavar="A", type=NAMED)
@click.argument("b", metavar="B", type=NAMED)
@json_option
def command(a: str, b: str, as_json: bool) -> int:
    """Show the facts and decisions that differ between reports A and B, most important first.

    A and B are saved `check --json` / `report --json` documents, `report --bundle` files, or saved `report`
    Markdown (an issue body). Exit 0 when they are the same, 1 when they differ, 2 when one cannot be read.
    """
    if a == b == "-":
        raise InputError("diff reads stdin (-) for one report only; give a file for the other")
    doc_a, doc_b = load_report(a), load_report(b)
    differences = diff_reports(doc_a, doc_b)
    document = to_document(differences, doc_a, doc_b, (a, b))
    if as_json:
        click.echo(render_json(document))
    else:
        click.echo(render_text(document, Style.for_stream(sys.stdout)), nl=False)
    return 1 if differences else 0
