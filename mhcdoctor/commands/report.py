"""`mhcdoctor report` (placeholder until its issue lands)."""

import click


@click.command("report")
def command() -> int:
    """Not built yet."""
    raise click.ClickException("'report' is not built yet")
