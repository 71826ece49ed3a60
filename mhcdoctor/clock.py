"""The time every published document carries in `created`: UTC, to the second, as `2026-12-04T16:42:42Z`."""

from __future__ import annotations

import datetime as _dt

CREATED_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def created_now() -> str:
    """This moment in UTC, as documents write it in `created`."""
    return _dt.datetime.now(_dt.timezone.utc).strftime(CREATED_FORMAT)
