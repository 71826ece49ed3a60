"""`mhcdoctor help [COMMAND | FINDING-ID | findings]`: a command's help (as `mhcdoctor COMMAND --help`), or a
finding's documentation (docs/findings.md's section of it), which a pip-installed user reads offline."""

from __future__ import annotations

import difflib

import click

from mhcdoctor.commands.options import json_option

_MOST_SHOWN = 80  # characters of an unknown name the error line repeats: an argument may be any length


_EPILOG = "A finding's documentation: mhcdoctor help FINDING-ID (mhcdoctor help findings lists them)."


@click.command("help", epilog=_EPILOG)
@click.argument("name", required=False)
@json_option
@click.pass_context
def command(ctx: click.Context, name: str | None, as_json: bool) -> int:
    """Show the list of commands, one command's help (`mhcdoctor help check` is `mhcdoctor check --help`), or a
    finding's documentation (`mhcdoctor help aiter-sqrsum-race`; `--json`: as one JSON document)."""
    parent = ctx.parent
    assert parent is not None and isinstance(parent.command, click.Group)  # run as a subcommand of the cli group
    commands = parent.command.list_commands(parent)
    sub = parent.command.get_command(parent, name) if name is not None and name != "findings" else None
    if name is None or sub is not None or name == "findings":
        if as_json:
            raise click.UsageError("--json shows a finding's documentation: mhcdoctor help FINDING-ID --json")
        if sub is not None:
            with click.Context(sub, info_name=name, parent=parent) as sub_ctx:
                click.echo(sub.get_help(sub_ctx))
        elif name == "findings":
            click.echo(_finding_list())
        else:
            click.echo(parent.command.get_help(parent))
        return 0
    from mhcdoctor.render.json_view import render_json
    from mhcdoctor.rules import finding_docs  # the catalogue: imported only for a finding

    spec = finding_docs.spec_of(name)
    if spec is None:
        near = difflib.get_close_matches(name, commands, n=1, cutoff=0.6) + finding_docs.closest(name)
        shown = repr(name[:_MOST_SHOWN] + ("…" if len(name) > _MOST_SHOWN else ""))
        hint = f"did you mean {', '.join(near)}?" if near else "the commands are " + ", ".join(commands) + ";"
        raise click.UsageError(f"no command or finding {shown}; {hint} mhcdoctor help findings lists the findings")
    if as_json:
        click.echo(render_json(finding_docs.document(spec)))
    else:
        click.echo("\n".join(finding_docs.section(spec)).rstrip())
    return 0


def _finding_list() -> str:
    from mhcdoctor.rules import finding_docs
    from mhcdoctor.rules.findings import CATALOGUE

    width = max(len(spec.id) for spec in CATALOGUE)
    rows = [f"{spec.id:<{width}}  {finding_docs.severity_text(spec):<13}  {spec.title}" for spec in CATALOGUE]
    return "\n".join([f"{'finding':<{width}}  {'severity':<13}  title", *rows])
