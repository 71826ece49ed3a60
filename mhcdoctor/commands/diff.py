"""`mhcdoctor diff` (placeholder until its issue lands)."""

import click


@click.command("diff")
def command() -> int:
    """Not built yet."""
    raise click.ClickException("'diff' is not built yet")
