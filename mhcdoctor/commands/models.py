"""`mhcdoctor models`: the built-in DeepSeek-V4 configs (name, hidden size, hc_mult, layers, and how sure)."""

from __future__ import annotations

import click

from mhcdoctor.commands.options import json_option
from mhcdoctor.documents.models import SCHEMA, ModelsDocument
from mhcdoctor.models import BUILTIN_MODELS, DEFAULT_MODEL
from mhcdoctor.render.json_view import render_json


@click.command("models")
@json_option
def command(as_json: bool) -> int:
    """List the built-in model configs that --model accepts."""
    if as_json:
        doc: ModelsDocument = {
            "schema": SCHEMA,
            "default": DEFAULT_MODEL,
            "models": [config.to_dict() for config in BUILTIN_MODELS.values()],
        }
        click.echo(render_json(doc))
        return 0
    click.echo(f"{'model':<22} {'hidden':>6} {'hc_mult':>7} {'layers':>6}  note")
    for name, config in BUILTIN_MODELS.items():
        layers = str(config.num_layers) if config.num_layers is not None else "?"
        default = " (default)" if name == DEFAULT_MODEL else ""
        note = (config.note or "") + default
        click.echo(f"{name:<22} {config.hidden_size:>6} {config.hc_mult:>7} {layers:>6}  {note.strip()}".rstrip())
    return 0
