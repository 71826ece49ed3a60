"""Reading a vLLM server log: which mHC path each op evidently took, with the lines that prove it.

stream (bounded blocks of whole lines) → scan (one pass, bounded state; formats.py holds every format string with
its source) → analyse (pure: the log/1 document) → render (mhcdoctor/render/log_view.py). The command
(mhcdoctor/commands/log.py) redacts the document as `report` does before any view shows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mhcdoctor.documents.log import LOG_SCHEMA, LogDocument
from mhcdoctor.errors import InputError
from mhcdoctor.redact import Identity
from mhcdoctor.vllmlog.analyse import analyse, compare
from mhcdoctor.vllmlog.scan import Scan, Scanner
from mhcdoctor.vllmlog.stream import FIFO_WAIT, Source, blocks, open_log


def read_log(
    path: str,
    follow: bool = False,
    progress: Callable[[Scan, Source], None] | None = None,
    wait: float | None = FIFO_WAIT,
) -> LogDocument:
    """The log/1 document of the log at `path` ("-": stdin; plain or gzip); InputError for what is not a log.

    `progress` is called with the scan so far after each block; `follow` reads a regular file on as it grows. Ctrl-C
    (KeyboardInterrupt) ends the reading: the document is of what was read, and says so.
    """
    try:
        raw, source = open_log(path, wait)
    except KeyboardInterrupt:  # --follow on a FIFO no process has opened yet
        raise InputError(f"log {path}: interrupted (Ctrl-C) before any process wrote to it") from None
    scanner = Scanner()
    try:
        for block in blocks(raw, source, follow):
            scanner.feed(block)
            if progress is not None:
                progress(scanner.scan, source)
    except KeyboardInterrupt:
        source.ended_early = f"interrupted (Ctrl-C) after {source.lines:,} lines: this is what was read up to there"
    finally:
        if path != "-":
            raw.close()
    scan = scanner.finish()
    if scan.vllm_format is None and not (scan.recognised or scan.fatal or scan.engine_death):
        raise InputError(_no_log_line(source))
    return analyse(scan, source)


def _no_log_line(source: Source) -> str:
    """Why the input is no vLLM log, in one line (exit 2, whatever --fail-on says: a CI gate must not pass on it)."""
    label = source.label
    if not source.bytes_read:
        return f"log {label} is empty: no vLLM line here (did the command that wrote it, e.g. kubectl logs, fail?)"
    if source.head.lstrip().startswith(b"{") and b'"schema": "mhcdoctor.' in source.head:
        return (
            f"log {label} is an mhcdoctor JSON report, not a log: no vLLM line here (a check --json report goes "
            "with --from: mhcdoctor log vllm.log --from report.json)"
        )
    lines = f"{source.lines:,} line{'s' if source.lines != 1 else ''}"
    return (
        f"log {label}: no vLLM line here ({lines}, none written by vLLM, tilelang or aiter): give the output of "
        "`vllm serve` or of its container"
    )


# A user's home folder in a path the log prints: /home/alice/.cache/..., /Users/alice/...
_HOME = re.compile(r"(?<![\w.~-])/(?:home|Users)/([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})(?=/|\s|$|['\"])")


def identity_in(document: LogDocument, identity: Identity) -> Identity:
    """`identity` (this machine's, as `report` takes it) with the users whose home folders the log's kept lines
    show: a log comes from another machine, so its own names must be redacted too."""
    users: set[str] = set()
    _walk(document, users)
    return identity.joined(users)


def _walk(value: object, users: set[str]) -> None:
    if isinstance(value, str):
        users.update(_HOME.findall(value))
    elif isinstance(value, dict):
        for item in value.values():
            _walk(item, users)
    elif isinstance(value, list):
        for item in value:
            _walk(item, users)


__all__ = ["LOG_SCHEMA", "LogDocument", "Scan", "Source", "analyse", "compare", "identity_in", "read_log"]
