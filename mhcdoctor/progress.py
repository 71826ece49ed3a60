"""Progress of long work (verify's and bench's path children) on stderr, never on stdout, which `--json` keeps for
its one document: a line per message, or on a terminal one status line redrawn in place with a bar for each case."""

from __future__ import annotations

import os
import sys
import threading

_BAR = 20  # characters of the bar


class Step(str):
    """A progress message that is the `done`-th of `total` cases: a terminal shows it as a bar."""

    done: int
    total: int

    def __new__(cls, text: str, done: int, total: int) -> Step:
        step = super().__new__(cls, text)
        step.done, step.total = done, max(total, 1)
        return step


class StderrProgress:
    """`say(text)` for long work: `prefix: text` lines on stderr; on a terminal, Steps redraw one status line."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.redraw = tty and os.environ.get("TERM") != "dumb"
        self.drawn = False  # a status line is on screen, not yet ended by a newline

    def __call__(self, text: str) -> None:
        if self.redraw and isinstance(text, Step):
            filled = round(_BAR * min(text.done, text.total) / text.total)
            bar = "#" * filled + "." * (_BAR - filled)
            sys.stderr.write(f"\r\033[K{self.prefix}: [{bar}] {text}")
            sys.stderr.flush()
            self.drawn = True
            return
        self.close()
        print(f"{self.prefix}: {text}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """End the status line, so what follows starts on a line of its own."""
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.drawn = False


class CheckProgress:
    """A check's progress on stderr, as `flutter doctor` shows it: each probe as it finishes, with its time.

    On a terminal, one status line redrawn in place (a bar, how many probes are done, the last one and its time);
    with TERM=dumb, a plain line per message and probe, no escape codes; not on a terminal (a pipe, a CI log),
    nothing. `probe_done` is called from the probes' threads."""

    def __init__(self, total: int) -> None:
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.mode = None if not tty else "lines" if os.environ.get("TERM") == "dumb" else "redraw"
        self.total, self.done = max(total, 1), 0
        self.lock = threading.Lock()

    def status(self, text: str | None) -> None:
        """A message (None: clear the status line, before the report is printed)."""
        with self.lock:
            if self.mode == "redraw":
                sys.stderr.write("\r\033[K" + (f"mhcdoctor: {text}…" if text else ""))
            elif self.mode == "lines" and text:
                sys.stderr.write(f"mhcdoctor: {text}\n")
            sys.stderr.flush()

    def probe_done(self, name: str, status: str, seconds: float) -> None:
        with self.lock:
            self.done += 1
            what = f"{self.done}/{self.total} probes; {name} {status} in {seconds:.1f} s"
            if self.mode == "redraw":
                filled = round(_BAR * min(self.done, self.total) / self.total)
                sys.stderr.write(f"\r\033[Kmhcdoctor: [{'#' * filled}{'.' * (_BAR - filled)}] {what}")
            elif self.mode == "lines":
                sys.stderr.write(f"mhcdoctor: {what}\n")
            sys.stderr.flush()
