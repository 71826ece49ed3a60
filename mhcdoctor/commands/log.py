"""`mhcdoctor log FILE|-`: what a vLLM server log shows about mHC: the path each op took, with the lines that prove
it, kernels compiled while serving, the fatal error and its finding, and what the log cannot tell.

The log is a stranger's: it is streamed (plain, gzip or stdin) in bounded memory, control characters are shown, and
what is printed is redacted as `mhcdoctor report` redacts (home as ~, user and host names hashed, secrets masked).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import threading
from collections.abc import Iterator

import click

from mhcdoctor.commands.options import NAMED, exit_code, fail_on_option, json_option
from mhcdoctor.redact import Identity, redact
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.log_view import render_markdown, render_text
from mhcdoctor.render.term import Style
from mhcdoctor.reportfile import load_report
from mhcdoctor.rules import vocabulary
from mhcdoctor.vllmlog import Scan, Source, analyse, compare, identity_in, read_log
from mhcdoctor.vllmlog.findings import OWN
from mhcdoctor.vllmlog.stream import FIFO_WAIT

EXAMPLES = """\b
Examples:
  mhcdoctor log vllm.log                      the path per op, compiles while serving, the fatal error
  kubectl logs pod/vllm-0 | mhcdoctor log -   from stdin
  mhcdoctor log vllm.log.gz --markdown        for a GitHub issue
  mhcdoctor log vllm.log --from report.json   the check's prediction against what the log shows
  kubectl logs -f pod/vllm-0 | mhcdoctor log --follow -
                                              errors and findings as they appear; all of it at the end or Ctrl-C
\b
What each line means: docs/log.md."""


@click.command("log", epilog=EXAMPLES)
@click.argument("path", metavar="FILE|-", type=NAMED)
@click.option(
    "--from",
    "from_path",
    default=None,
    type=NAMED,
    metavar="REPORT.json",
    help="Set a saved check --json's prediction against the log.",
)
@click.option("--markdown", "as_markdown", is_flag=True, help="Markdown for a GitHub issue.")
@click.option(
    "--no-redact",
    is_flag=True,
    help="Show home paths, user and host names as they are (secrets and GPU UUIDs stay masked).",
)
@click.option(
    "--follow",
    is_flag=True,
    help="Read a live log: print each error and finding on stderr as it appears, wait at a file's end for more, and "
    "print the whole report at the end or on Ctrl-C. A pipe into a terminal gets the live lines without it.",
)
@json_option
@fail_on_option
def command(
    path: str,
    from_path: str | None,
    as_markdown: bool,
    no_redact: bool,
    follow: bool,
    as_json: bool,
    fail_on: str | None,
) -> int:
    """Which mHC path vLLM took, read from its server log (plain, gzip, or - for stdin)."""
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown are two views; give one")
    report = load_report(from_path) if from_path is not None else None
    live = _Live(Identity.of_this_machine(), no_redact) if follow or _live_pipe(path) else None
    with _interruptible():
        document = read_log(path, follow, live.progress if live else None, None if follow else FIFO_WAIT)
    if report is not None:
        document = compare(document, report, "stdin" if from_path == "-" else str(from_path))
    identity = identity_in(document, Identity.of_this_machine())
    shared, _ = redact(document, identity, identities=not no_redact, vocabulary=_words())
    if as_json:
        click.echo(render_json(shared))
    elif as_markdown:
        click.echo(render_markdown(shared), nl=False)
    else:
        click.echo(render_text(shared, Style.for_stream(sys.stdout)), nl=False)
    return exit_code(shared["verdict"], fail_on)


def _words() -> frozenset[str]:
    """The doctor's own words (finding ids, op names): replaced only where they stand as an identity, as report does."""
    return frozenset(vocabulary() | {word for finding in OWN for word in (finding, *finding.split("-"))})


def _live_pipe(path: str) -> bool:
    """stdin is a pipe (kubectl logs -f, tail -f) and a person watches stderr: show what appears as it appears."""
    if path != "-" or sys.stdin is None or not sys.stderr.isatty():
        return False
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C ends the reading, not the doctor: `log` starts no child, so what was read is still reported (the
    doctor's own handler, which stops everything at once, is put back after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class _Live:
    """Each new error, engine death and finding, one line on stderr as the log shows it (redacted as the report)."""

    def __init__(self, identity: Identity, no_redact: bool) -> None:
        self._identity, self._no_redact = identity, no_redact
        self._shown: set[str] = set()
        self._seen: tuple[int, ...] = ()
        self._words = _words()  # the same words the final report keeps

    def progress(self, scan: Scan, source: Source) -> None:
        # analysed again only when what a finding or an error comes from has changed, not per block
        seen = (
            len(scan.fatal),
            len(scan.engine_death),
            scan.during_inference_count,
            len(scan.aiter_wrong_arch),
            sum(int(v[0]) for v in scan.compile_totals.values()),
        )
        if seen == self._seen:
            return
        self._seen = seen
        document = analyse(scan, source)
        shared, _ = redact(
            document, identity_in(document, self._identity), identities=not self._no_redact, vocabulary=self._words
        )
        lines = [f"line {f['line']}  {f['process']}: {f['text']}" for f in shared["fatal"]]
        lines += [f"line {k['line']}  {k['process']}: {k['text']}" for k in shared["engine_death"]]
        lines += [f"{f['severity']} {f['id']}: {f['title']}" for f in shared["findings"]]
        for line in lines:
            if line not in self._shown:
                self._shown.add(line)
                click.echo(f"mhcdoctor log: {line}", err=True)
