"""`mhcdoctor log FILE|-`: what a vLLM server log shows about mHC: the path each op took, with the lines that prove
it, kernels compiled while serving, the fatal error and its finding, and what the log cannot tell.

The log is a stranger's: it is streamed (plain, gzip or stdin) in bounded memory, control characters are shown, and
what is printed is redacted as `mhcdoctor report` redacts (home as ~, user and host names hashed, secrets masked).
"""

from __future__ import annotations

import sys

import click

from mhcdoctor.commands.options import exit_code, fail_on_option, json_option
from mhcdoctor.redact import Identity, redact
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.log_view import render_markdown, render_text
from mhcdoctor.render.term import Style
from mhcdoctor.reportfile import load_report
from mhcdoctor.rules import vocabulary
from mhcdoctor.vllmlog import compare, identity_in, read_log
from mhcdoctor.vllmlog.findings import OWN

EXAMPLES = """\b
Examples:
  mhcdoctor log vllm.log                      the path per op, compiles while serving, the fatal error
  kubectl logs pod/vllm-0 | mhcdoctor log -   from stdin
  mhcdoctor log vllm.log.gz --markdown        for a GitHub issue
  mhcdoctor log vllm.log --from report.json   the check's prediction against what the log shows
\b
What each line means: docs/log.md."""


@click.command("log", epilog=EXAMPLES)
@click.argument("path", metavar="FILE|-")
@click.option(
    "--from",
    "from_path",
    default=None,
    metavar="REPORT.json",
    help="Set a saved check --json's prediction against the log.",
)
@click.option("--markdown", "as_markdown", is_flag=True, help="Markdown for a GitHub issue.")
@click.option(
    "--no-redact",
    is_flag=True,
    help="Show home paths, user and host names as they are (secrets and GPU UUIDs stay masked).",
)
@json_option
@fail_on_option
def command(
    path: str, from_path: str | None, as_markdown: bool, no_redact: bool, as_json: bool, fail_on: str | None
) -> int:
    """Which mHC path vLLM took, read from its server log (plain, gzip, or - for stdin)."""
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown are two views; give one")
    report = load_report(from_path) if from_path is not None else None
    document = read_log(path)
    if report is not None:
        document = compare(document, report, "stdin" if from_path == "-" else str(from_path))
    identity = identity_in(document, Identity.of_this_machine())
    # the doctor's own words (finding ids, op names) are replaced only where they stand as an identity, as report does
    words = vocabulary() | {word for finding in OWN for word in (finding, *finding.split("-"))}
    shared, _ = redact(document, identity, identities=not no_redact, vocabulary=words)
    if as_json:
        click.echo(render_json(shared))
    elif as_markdown:
        click.echo(render_markdown(shared), nl=False)
    else:
        click.echo(render_text(shared, Style.for_stream(sys.stdout)), nl=False)
    return exit_code(shared["verdict"], fail_on)
