"""`mhcdoctor help [COMMAND]`: what `mhcdoctor --help` or `mhcdoctor COMMAND --help` shows, for users of git and pip."""

from __future__ import annotations

import click


@click.command("help")
@click.argument("name", required=False)
@click.pass_context
def command(ctx: click.Context, name: str | None) -> int:
    """Show the list of commands, or one command's help (`mhcdoctor help check` is `mhcdoctor check --help`)."""
    parent = ctx.parent
    assert parent is not None and isinstance(parent.command, click.Group)  # run as a subcommand of the cli group
    if name is None:
        click.echo(parent.command.get_help(parent))
        return 0
    sub = parent.command.get_command(parent, name)
    if sub is None:
        known = ", ".join(parent.command.list_commands(parent))
        raise click.UsageError(f"no command {name!r}; the commands are {known}")
    with click.Context(sub, info_name=name, parent=parent) as sub_ctx:
        click.echo(sub.get_help(sub_ctx))
    return 0
