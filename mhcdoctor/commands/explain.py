"""`mhcdoctor explain` (placeholder until its issue lands)."""

import click


@click.command("explain")
def command() -> int:
    """Not built yet."""
    raise click.ClickException("'explain' is not built yet")
