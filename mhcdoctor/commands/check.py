"""`mhcdoctor check` (placeholder until the probes land)."""

import click


@click.command("check")
def command() -> int:
    """Not built yet."""
    raise click.ClickException("'check' is not built yet")
