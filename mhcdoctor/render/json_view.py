"""The JSON view of a document (check/1, explain/1, verify/1, bench/1, diff/1, fleet/1, ...): one way to print them."""

from __future__ import annotations

import json


def render_json(document: object) -> str:
    """Indented JSON, ASCII-escaped; a value JSON has no type for (a path, an exception) is written as its str()."""
    return json.dumps(document, indent=2, default=str)
