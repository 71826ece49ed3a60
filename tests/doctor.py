"""`mhcdoctor ARGS` run in the test's own process, seen as a fresh `python -m mhcdoctor` child would see the machine.

Starting an interpreter and importing mhcdoctor costs a few tenths of a CPU-second; the suite runs the doctor a few
hundred times, so most tests of a command's output run it here instead, through `mhcdoctor.cli.main` (what the
console script runs). What a child would have differently is set up for the call and put back after it:

- the environment is exactly `env` (a subprocess's `env=`), the working folder `cwd`;
- `sys.path` is what the child's would be: its working folder, then `PYTHONPATH` from `env`, then the interpreter's
  own entries (asked of a real child with that environment), so `ProbeContext` finds the same packages;
- stdout and stderr are UTF-8 streams with strict errors, read back with universal newlines as `text=True` does;
- modules first imported during the call from a folder outside the interpreter's own entries (a fake install) are
  forgotten afterwards, so no test sees another's fakes.
- a run past `timeout` seconds (default 300) is stopped and raises `Hung`, where a subprocess would be killed.

What needs a real process stays one, run by `spawn` (the same arguments, a real `python -m mhcdoctor`) or, where
the test holds the process (signals, a pty), started from `argv`: tests of signals, stdin, memory bounds, hangs,
crashes, `--python` targets' own imports, and a fresh install (tests/test_core_install.py).

These are the suite's only two ways to run the CLI. What a run sees besides its arguments is injected, as httpie's
tests inject an `Environment`: `env` is either the variables themselves or a `Place` (a fake machine of the tests:
its variables, its working folder, and the vLLM interpreter passed as `--python`).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mhcdoctor.cli import main

_own_paths: dict[tuple[tuple[str, str], ...], list[str]] = {}


def own_path(env: Mapping[str, str]) -> list[str]:
    """The sys.path entries a child started with `env` has that come from neither its working folder nor
    PYTHONPATH (site-packages, and the user's own when HOME holds one), asked of a real child once per environment."""
    key = tuple(sorted((k, v) for k, v in env.items() if k != "PYTHONPATH"))
    if key not in _own_paths:
        ask = "import json, sys; print(json.dumps(sys.path[1:]))"  # sys.path[0] is '' for -c
        done = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, env=dict(key), timeout=60)
        _own_paths[key] = json.loads(done.stdout)
    return _own_paths[key]


@runtime_checkable
class Place(Protocol):
    """A machine the tests build: what a run there sees besides its arguments."""

    @property
    def cwd(self) -> Path: ...

    @property
    def python(self) -> Path | None:
        """The interpreter passed as `--python` after the command (vLLM's venv), or None."""

    def env(self) -> dict[str, str]: ...


class Done(subprocess.CompletedProcess[str]):
    """A finished run: returncode, stdout and stderr, as subprocess gives them."""

    def json(self) -> Any:
        return json.loads(self.stdout)


def _resolve(
    args: tuple[str, ...], env: Mapping[str, str] | Place | None, cwd: Path | str | None
) -> tuple[tuple[str, ...], dict[str, str], Path]:
    """The arguments, variables and working folder a run gets from `env` (variables or a Place) and `cwd`."""
    if isinstance(env, Place):
        if env.python is not None and args:
            args = (args[0], "--python", str(env.python), *args[1:])
        return args, env.env(), Path(cwd or env.cwd)
    return args, dict(os.environ if env is None else env), Path(cwd or os.getcwd())


def argv(*args: str, python: Path | str = sys.executable) -> list[str]:
    """The command line of `python -m mhcdoctor ARGS`, for a test that starts and holds the process itself."""
    return [str(python), "-m", "mhcdoctor", *args]


def spawn(
    *args: str,
    env: Mapping[str, str] | Place | None = None,
    cwd: Path | str | None = None,
    timeout: float = 300,
    input: str | bytes | None = None,
    python: Path | str = sys.executable,
    **popen: Any,
) -> Done:
    """`python -m mhcdoctor ARGS` in a real child process (default: this interpreter); `input` is its stdin (else
    none: /dev/null); `popen` goes to subprocess (preexec_fn). Output is read as UTF-8 with universal newlines, as
    `run` reads it."""
    args, environ, where = _resolve(args, env, cwd)
    data = input.encode() if isinstance(input, str) else input
    done = subprocess.run(
        argv(*args, python=python),
        input=data,
        stdin=subprocess.DEVNULL if data is None else None,
        capture_output=True,
        env=environ,
        cwd=where,
        timeout=timeout,
        **popen,
    )
    return Done(done.args, done.returncode, _decode(done.stdout), _decode(done.stderr))


class Hung(BaseException):
    """Raised into the doctor when an in-process run passes its timeout (a BaseException: `except Exception` in the
    doctor cannot swallow it, as it could not swallow a subprocess's kill)."""


def run(
    *args: str, env: Mapping[str, str] | Place | None = None, cwd: Path | str | None = None, timeout: float = 300
) -> Done:
    """`python -m mhcdoctor ARGS` with `env` (variables, default this process's, or a Place) in `cwd`, run here; a run
    past `timeout` seconds raises Hung, as a subprocess's would raise TimeoutExpired."""
    args, environ, where = _resolve(args, env, cwd)
    out, err = io.BytesIO(), io.BytesIO()
    out_text, err_text = _utf8(out), _utf8(err)  # held: a wrapper closes its buffer when it is collected
    with (
        _as_child(environ, where),
        _deadline(args, timeout),
        contextlib.redirect_stdout(out_text),
        contextlib.redirect_stderr(err_text),
    ):
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return Done(["mhcdoctor", *args], code, _text(out), _text(err))


def _utf8(raw: io.BytesIO) -> io.TextIOWrapper:
    """A strict UTF-8 text stream that writes straight through to `raw`."""
    return io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)


def _text(raw: io.BytesIO) -> str:
    return _decode(raw.getvalue())


def _decode(data: bytes) -> str:
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def _deadline(args: tuple[str, ...], seconds: float) -> Iterator[None]:
    """SIGALRM after `seconds` raises Hung (tests run in the main thread; elsewhere there is no deadline)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise Hung(f"mhcdoctor {' '.join(args)} ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _as_child(env: dict[str, str], cwd: Path) -> Iterator[None]:
    saved_env, saved_path, saved_cwd = dict(os.environ), list(sys.path), os.getcwd()
    before = set(sys.modules)
    python_path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    own = own_path(env)
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.path[:] = [str(cwd), *python_path, *own]
        importlib.invalidate_caches()
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        importlib.invalidate_caches()
        kept = (*(p for p in own if p), _PACKAGE)
        for name in set(sys.modules) - before:
            where = getattr(sys.modules[name], "__file__", None) or ""
            if where and not where.startswith(kept):
                del sys.modules[name]


_PACKAGE = str(Path(__file__).resolve().parents[1] / "mhcdoctor")


def on_terminal(*args: str, env: Mapping[str, str], cwd: Path | str | None = None, timeout: float = 120) -> str:
    """What `python -m mhcdoctor ARGS` writes to stdout when stdout is a terminal (a pty), TERM=xterm."""
    import pty

    leader, follower = pty.openpty()
    environ = {**env, "TERM": "xterm"}
    proc = subprocess.Popen(argv(*args), stdout=follower, stderr=subprocess.DEVNULL, env=environ, cwd=cwd)
    os.close(follower)  # read while it writes: a full terminal buffer must not block it
    shown = read_terminal(leader)
    proc.wait(timeout=timeout)
    return shown.decode("utf-8", "replace")


def read_terminal(leader: int) -> bytes:
    """Everything written to a pty until its last writer closes it (then Linux raises EIO), and the pty closed."""
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return b"".join(chunks)
