"""Reading a vLLM server log: which mHC path each op evidently took, with the lines that prove it.

stream (bounded blocks of whole lines) → scan (one pass, bounded state; formats.py holds every format string with
its source) → analyse (pure: the log/1 document) → render (mhcdoctor/render/log_view.py). The command
(mhcdoctor/commands/log.py) redacts the document as `report` does before any view shows it.
"""

from __future__ import annotations

import re

from mhcdoctor.documents.log import LOG_SCHEMA, LogDocument
from mhcdoctor.redact import Identity
from mhcdoctor.vllmlog.analyse import analyse, compare
from mhcdoctor.vllmlog.scan import Scanner
from mhcdoctor.vllmlog.stream import blocks, open_log


def read_log(path: str) -> LogDocument:
    """The log/1 document of the log at `path` ("-": stdin; plain or gzip); InputError for what is not a log."""
    raw, source = open_log(path)
    scanner = Scanner()
    try:
        for block in blocks(raw, source):
            scanner.feed(block)
    finally:
        if path != "-":
            raw.close()
    return analyse(scanner.scan, source)


# A user's home folder in a path the log prints: /home/alice/.cache/..., /Users/alice/...
_HOME = re.compile(r"(?<![\w.~-])/(?:home|Users)/([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})(?=/|\s|$|['\"])")


def identity_in(document: LogDocument, identity: Identity) -> Identity:
    """`identity` (this machine's, as `report` takes it) with the users whose home folders the log's kept lines
    show: a log comes from another machine, so its own names must be redacted too."""
    users: set[str] = set()
    _walk(document, users)
    return Identity(
        homes=tuple(sorted(set(identity.homes) | {f"/home/{u}" for u in users} | {f"/Users/{u}" for u in users})),
        users=tuple(sorted(set(identity.users) | users)),
        hosts=identity.hosts,
        secret_values=identity.secret_values,
    )


def _walk(value: object, users: set[str]) -> None:
    if isinstance(value, str):
        users.update(_HOME.findall(value))
    elif isinstance(value, dict):
        for item in value.values():
            _walk(item, users)
    elif isinstance(value, list):
        for item in value:
            _walk(item, users)


__all__ = ["LOG_SCHEMA", "LogDocument", "analyse", "compare", "identity_in", "read_log"]
