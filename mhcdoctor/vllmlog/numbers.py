"""Numbers in a log line are text anyone could have written: a pid or line number of 5000 digits, a cost of
`1.2.3s` or of 400 nines. Each format reads its numbers through this module, so no line can make int() or float()
raise (Python refuses to convert more than 4300 digits) or make a view print `Infinity`, which is not JSON."""

from __future__ import annotations

import math
import re

# A pid, line number or count as a pattern: at most 18 digits (any 64-bit value a logger prints); a longer run of
# digits is not that field, so the line does not match that format.
NUMBER = r"\d{1,18}"
# A duration as loggers print it (`%.1f`, `%.2f`): digits with at most one point, nothing longer than 18 characters.
_SECONDS = re.compile(r"\d{1,12}(?:\.\d{1,6})?")


def seconds(text: str) -> float | None:
    """A logged duration in seconds, or None when `text` is not one (`1.2.3`, 400 nines, inf)."""
    if _SECONDS.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) else None
