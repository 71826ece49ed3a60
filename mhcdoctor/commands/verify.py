"""`mhcdoctor verify` (placeholder until its issue lands)."""

import click


@click.command("verify")
def command() -> int:
    """Not built yet."""
    raise click.ClickException("'verify' is not built yet")
