"""The `mhcdoctor` command line: a click group; each subcommand lives in mhcdoctor/commands/."""

from __future__ import annotations

import contextlib
import errno
import importlib
import io
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO

import click

from mhcdoctor import __version__, childproc
from mhcdoctor.documents.vocabulary import ExitStatus
from mhcdoctor.errors import InputError
from mhcdoctor.text import plural, visible

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

# Subcommand -> its one-line summary, as pip's commands_dict: `mhcdoctor --help` lists them from here, and each
# command's module (mhcdoctor/commands/NAME.py) is imported only when it runs or shows its own help, so neither the
# list nor `check --fast` pays for the verifier's or the bundler's imports.
COMMANDS: dict[str, str] = {
    "check": "Probe this machine and show the mHC path each op takes for each model.",
    "explain": "Which path vLLM takes for each mHC op, every gate on the way, and what will go wrong.",
    "verify": "Run a small mHC call on each path and compare it with a float64 oracle.",
    "bench": "Time each op on each path, with bandwidth and cost per decode step.",
    "report": "A redacted report of this machine for a GitHub issue (--bundle: a tar.gz).",
    "diff": "Show the facts and decisions that differ between two reports.",
    "models": "List the built-in model configs that --model accepts.",
    "fleet": "One check per node of a Ray cluster; the summary names the nodes that differ.",
    "merge": "Merge saved reports into one fleet summary.",
    "log": "Which mHC path vLLM took, read from its server log.",
    "help": "Show this list, one command's help, or a finding's documentation (help FINDING-ID).",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        command: click.Command = importlib.import_module(f"mhcdoctor.commands.{cmd_name}").command
        command.short_help = COMMANDS[cmd_name]
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the table, importing none of them."""
        with formatter.section("Commands"):
            formatter.write_dl(list(COMMANDS.items()))


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, param, value: _show_version(ctx, value),
    help="Show the version (and the git commit, run from a checkout) and exit.",
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """A doctor for DeepSeek-V4's mHC kernels in vLLM: which path runs, why, and whether it is right."""
    if ctx.invoked_subcommand is None:  # bare `mhcdoctor`: the help, as asked for, not as an error
        click.echo(ctx.get_help())


_stopping = False


def _show_version(ctx: click.Context, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    commit = git_commit(Path(__file__).resolve().parent.parent)
    click.echo(f"mhcdoctor {__version__}" + (f" (git {commit})" if commit else ""))
    ctx.exit()


def git_commit(folder: Path) -> str | None:
    """The commit checked out in `folder` (a clone or a worktree of one), read from .git's files, not by running
    git; None when it is no checkout (an installed wheel) or the files say nothing usable."""
    try:
        git = folder / ".git"
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = Path(git.read_text(encoding="utf-8").removeprefix("gitdir:").strip())
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head[:12] or None  # detached: the commit itself
        ref = head.removeprefix("ref: ")
        common = git / (git / "commondir").read_text(encoding="utf-8").strip() if (git / "commondir").is_file() else git
        for where in (git, common):
            if (where / ref).is_file():
                return (where / ref).read_text(encoding="utf-8").strip()[:12] or None
        for line in (common / "packed-refs").read_text(encoding="utf-8").splitlines():
            if line.endswith(" " + ref):
                return line.split()[0][:12]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _stop(signum: int, frame: FrameType | None) -> None:
    """Stop now: kill every child and what it started, remove temporary folders, exit 128+signal (130 for Ctrl-C).

    A second signal while stopping is ignored; exiting with os._exit means no thread waits on a child first.
    """
    global _stopping
    if _stopping:
        return
    _stopping = True
    stopped = childproc.shutdown()
    name = "interrupted" if signum == signal.SIGINT else f"stopped by {childproc.signal_name(signum)}"
    detail = f"; killed {plural(stopped, 'child process', 'child processes')}" if stopped else ""
    with contextlib.suppress(OSError):
        os.write(2, f"mhcdoctor: {name}{detail}\n".encode())
    os._exit(128 + signum)


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input is one line and exit 2; a bug in mhcdoctor is one line and exit 4, never a traceback.

    While it runs, SIGINT, SIGTERM and SIGHUP stop it at once with nothing left running (the previous handlers are
    put back when it returns, for callers that run it in-process). Run as the program itself (no `argv`: the console
    script, `python -m mhcdoctor`), the process is the doctor's alone, so every orphan re-parented to it is a helper
    a child left behind and is killed (childproc.own_orphans); a caller running it in-process passes `argv`.
    """
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {number: signal.signal(number, _stop) for number in childproc.STOP_SIGNALS}
    if argv is None:
        childproc.own_orphans()
    stdout, stderr = sys.stdout, sys.stderr
    try:
        with _Logs(stderr) as sys.stderr:
            sys.stdout = _whole_writes(stdout)
            _main(argv)
    finally:
        if sys.stdout is not stdout:
            _drop(sys.stdout)
        sys.stdout, sys.stderr = stdout, stderr
        childproc.finish()
        for number, handler in previous.items():
            signal.signal(number, handler)


def _whole_writes(stdout: TextIO | None) -> TextIO | None:
    """stdout that writes all of the document or raises. With PYTHONUNBUFFERED=1 (many container images set it)
    Python's stdout is unbuffered and drops, without a word, what a cut write (a disk that fills, a file size limit)
    left over; a BufferedWriter writes the rest or raises (ENOSPC, EFBIG). Its descriptor waits for room when it
    was left non-blocking (_Waiting)."""
    try:
        fd = stdout.fileno() if isinstance(stdout, io.TextIOWrapper) else None
    except (OSError, ValueError):  # no descriptor: a stream in memory (a caller running it in-process)
        fd = None
    if stdout is None or fd is None:
        return stdout
    stdout.flush()
    return io.TextIOWrapper(
        io.BufferedWriter(_Waiting(fd, "w", closefd=False)),  # its own: closing it leaves Python's stdout open
        encoding=stdout.encoding,
        errors=stdout.errors,
        line_buffering=True,
    )


class _Waiting(io.FileIO):
    """A descriptor written as a blocking one: a stdout left non-blocking by whatever started the doctor (a CI
    runner, node) refused a write it could not take at once (EAGAIN), which was exit 4."""

    def write(self, data: ReadableBuffer) -> int:
        while (written := super().write(data)) is None:  # None: nothing could be written without blocking
            select.select([], [self.fileno()], [])
        return written


def _drop(stream: TextIO | None) -> None:
    """Flush what `_whole_writes` made, or drop what cannot be written (reported already): nothing left to fail at
    exit."""
    if isinstance(stream, io.TextIOWrapper):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
        stream.buffer.raw.close()


class _Logs(io.TextIOBase):
    """stderr as the doctor writes it: logs and progress only, so one that is closed (`2>&-`) or cannot take a write
    (`2>/dev/full`) loses them, never stdout's document or the exit status. After a failed write its descriptor is
    pointed at /dev/null, where what is still buffered can go at exit (a failed final flush would exit 120)."""

    def __init__(self, stream: TextIO | None) -> None:
        self._own = stream is None  # closed: /dev/null takes descriptor 2, so no file the doctor opens lands there
        self._stream = open(os.devnull, "w", encoding="utf-8") if stream is None else stream  # noqa: SIM115

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    def isatty(self) -> bool:
        try:
            return self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        return self._stream.fileno()

    def write(self, text: str) -> int:
        self._quietly(lambda: self._stream.write(text))
        return len(text)

    def flush(self) -> None:
        self._quietly(self._stream.flush)

    def _quietly(self, act: Callable[[], object]) -> None:
        try:
            act()
        except (OSError, ValueError):  # ValueError: a stream closed under us
            with contextlib.suppress(OSError, ValueError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stream.fileno())
                os.close(null)

    def close(self) -> None:
        if self._own:
            self._stream.close()
        super().close()


# A write that failed for want of room or of a place to write to: a full disk or quota, a file too large, a stdout
# that was closed (`>&-`) or is a device that takes nothing (`> /dev/full`).
_CANNOT_WRITE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EBADF, errno.EIO)


def _main(argv: list[str] | None) -> None:
    if sys.stdout is None:  # started with stdout closed: nothing it found could be shown
        _error("stdout is closed, so nothing could be shown; run it with stdout open (or --json > file)")
        sys.exit(ExitStatus.BAD_INPUT)
    _escape_what_stdout_cannot_encode()
    try:
        code = cli.main(args=argv, prog_name="mhcdoctor", standalone_mode=False)
        sys.stdout.flush()  # a write that fails at the last flush fails here, not in the interpreter's exit
    except click.exceptions.Abort:
        click.echo("mhcdoctor: aborted", err=True)
        sys.exit(ExitStatus.ABORTED)
    except click.ClickException as exc:
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        _error(f"{exc.format_message()}{hint}")
        sys.exit(exc.exit_code)
    except InputError as exc:  # models.ModelError and facts.FactsError among them
        _error(str(exc))
        sys.exit(ExitStatus.BAD_INPUT)
    except RecursionError:  # a report or config nested absurdly deep, found while walking it
        click.echo("mhcdoctor: error: the input is nested too deeply to read", err=True)
        sys.exit(ExitStatus.BAD_INPUT)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in _CANNOT_WRITE:  # the machine's state, not a bug of ours
            _error(f"cannot write {exc.filename or 'the output'}: {exc.strerror}")
            sys.exit(ExitStatus.BAD_INPUT)
        if os.environ.get("MHCDOCTOR_DEBUG"):
            raise
        _error(
            f"{type(exc).__name__}: {exc} (a bug in mhcdoctor; MHCDOCTOR_DEBUG=1 shows the traceback)", "internal error"
        )
        sys.exit(ExitStatus.INTERNAL_ERROR)
    sys.exit(code if isinstance(code, int) else 0)


def _escape_what_stdout_cannot_encode() -> None:
    """A stdout in an encoding without ✓ or – (a latin-1 locale) shows them as \\u2713: click leaves such a stream
    strict (it rewraps only ASCII ones), and one en dash in a text view was exit 4."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        "✓–❌".encode(encoding)
    except (LookupError, UnicodeEncodeError):
        if isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(errors="backslashreplace")


def _error(message: str, kind: str = "error") -> None:
    """One line on stderr: a message may quote what a user or a child wrote (a file name, --python's stderr)."""
    click.echo(f"mhcdoctor: {kind}: {visible(message, one_line=True)}", err=True)
