"""`mhcdoctor report`: the check, redacted, as Markdown to paste into a GitHub issue, and optionally a bundle.

Redaction is on unless --no-redact: only allowlisted environment variables, secrets masked, the home folder as
`~`, user and host names as stable hashes (mhcdoctor.redact). --preview prints exactly what would be shared
and writes nothing. A report never fails for a broken probe: hangs and crashes are in it as findings and evidence.
"""

from __future__ import annotations

import os
import sys

import click

from mhcdoctor.bundle import build_files, read_bundle, write_bundle
from mhcdoctor.checkreport import build_check
from mhcdoctor.commands.check import selected_models
from mhcdoctor.commands.options import (
    NAMED,
    force_option,
    given_timeout,
    json_option,
    model_options,
    python_option,
    refuse_together,
    timeout_option,
)
from mhcdoctor.documents.bundle import RedactionsDocument
from mhcdoctor.documents.explain import DecisionDocument
from mhcdoctor.errors import InputError
from mhcdoctor.outfiles import check_target
from mhcdoctor.probes.target import probe_context
from mhcdoctor.redact import Identity, not_redacted, redact
from mhcdoctor.render.decision_text import render_decision
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.markdown import render_markdown
from mhcdoctor.render.term import Style
from mhcdoctor.rules import vocabulary


@click.command("report")
@model_options
@click.option("--fast", is_flag=True, help="Read files only: no imports, no GPU initialisation.")
@click.option(
    "--verify", "run_verify", is_flag=True, help="Also run `verify` (as `check --verify` does) and include it."
)
@timeout_option
@python_option
@click.option(
    "--bundle", "bundle_path", type=NAMED, default=None, metavar="FILE.tar.gz", help="Also write a support bundle."
)
@force_option
@click.option(
    "--no-redact",
    is_flag=True,
    help="Share home paths, user and host names as they are (secrets and GPU UUIDs stay masked).",
)
@click.option("--preview", is_flag=True, help="Print exactly what would be shared; write nothing.")
@json_option
def command(
    model: str | None,
    config_path: str | None,
    hidden: int | None,
    hc_mult: int | None,
    fast: bool,
    run_verify: bool,
    timeout: float,
    python: str | None,
    bundle_path: str | None,
    force: bool,
    no_redact: bool,
    preview: bool,
    as_json: bool,
) -> int:
    """A redacted report of this machine: Markdown for a GitHub issue (or --json), and with --bundle a tar.gz
    holding the report, every probe's raw output and timing, a manifest of sha256 sums and what was redacted."""
    models = selected_models(model, config_path, hidden, hc_mult)
    refuse_together(
        {"--preview": preview, "--json": as_json},
        "--preview prints every file that would be shared under a header; report --json alone writes nothing "
        "but its one document",
    )
    if bundle_path and os.path.isdir(bundle_path):
        raise InputError(f"--bundle {bundle_path} is a folder; give a file name, e.g. {bundle_path}/report.tar.gz")
    if bundle_path and not preview:  # before the check runs, which can take a while
        try:
            check_target(bundle_path, "bundle", force)
        except InputError as refused:
            _show_kept(bundle_path, as_json, refused)
    if run_verify and fast:
        raise click.UsageError("--verify runs kernels on the GPU; it cannot be combined with --fast")
    ctx = probe_context(fast=fast, timeout=timeout, python=python)
    doc = build_check(ctx, models, verify=run_verify, verify_timeout=given_timeout(timeout))
    shared, record = redact(doc, Identity.of_this_machine(), identities=not no_redact, vocabulary=vocabulary())
    if no_redact:  # names kept; secrets and GPU UUIDs are masked all the same (no flag shares them)
        redactions, summary = not_redacted(), "names NOT redacted (--no-redact); secrets still masked"
    else:
        redactions, summary = record.to_dict(), record.summary()
    markdown = render_markdown(shared, trace=_trace, note=_note(redactions, bundle_path))
    main = render_json(shared) + "\n" if as_json else markdown
    files = build_files(shared, markdown, redactions) if bundle_path else {}
    if preview:
        _preview(markdown, files, redactions)
        return 0
    if bundle_path:
        size = write_bundle(bundle_path, files, replace=force)
        click.echo(f"mhcdoctor: wrote {bundle_path} ({size / 1024:.0f} KiB, {len(files)} files)", err=True)
    click.echo(f"mhcdoctor: {summary}; --preview shows everything that would be shared", err=True)
    click.echo(main, nl=False)
    return 0


def _show_kept(bundle_path: str, as_json: bool, refused: InputError) -> None:
    """Refuse to replace an existing bundle; when it is one of ours and stdout is not a terminal, print the report it
    holds again first. `report --bundle b.tar.gz > report.md` run twice: the shell empties report.md before the
    refusal, and the report written with the bundle is put back beside it instead of being lost."""
    if sys.stdout.isatty() or not os.path.isfile(bundle_path):
        raise refused
    try:
        kept = read_bundle(bundle_path).files.get("report.json" if as_json else "report.md")
    except InputError:
        raise refused from None
    if kept is None:
        raise refused
    click.echo(kept.decode("utf-8", "replace"), nl=False)
    raise InputError(f"{refused}; the report it holds was printed again, so it matches what stdout goes to")


def _trace(model_doc: DecisionDocument) -> str:
    return render_decision(model_doc, Style())


def _note(redactions: RedactionsDocument, bundle_path: str | None) -> str:
    redacted = (
        "redacted (home as ~, user and host hashed, env allowlisted)" if redactions["redacted"] else "NOT redacted"
    )
    replay = "replay: `mhcdoctor explain --from " + ("BUNDLE.tar.gz`" if bundle_path else "report.json`")
    return f"{redacted} · {replay}"


def _preview(markdown: str, files: dict[str, bytes], redactions: RedactionsDocument) -> None:
    """Every file that would be shared, each under a header, then the record of what was redacted."""
    if files:
        for name, data in sorted(files.items()):
            click.echo(f"==> {name} <==")
            click.echo(data.decode("utf-8", errors="replace"))
    else:
        click.echo("==> report.md (stdout) <==")
        click.echo(markdown)
        click.echo("==> what was redacted <==")
        click.echo(render_json(redactions))
    click.echo("mhcdoctor: preview only; nothing was written", err=True)
