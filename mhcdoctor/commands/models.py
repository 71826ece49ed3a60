"""`mhcdoctor models` (placeholder until its issue lands)."""

import click


@click.command("models")
def command() -> int:
    """Not built yet."""
    raise click.ClickException("'models' is not built yet")
