"""Which Python environment and which machine tree the probes look at.

By default: the interpreter running mhcdoctor and the real `/`. `--python PATH` probes another environment (the
one vLLM runs in, when mhcdoctor is installed elsewhere): its `sys.path` is asked for once, and every child runs in
it. `MHCDOCTOR_SYSROOT` prefixes /sys, /proc and /opt (for tests, or for reading a copied tree).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from mhcdoctor import childproc
from mhcdoctor.errors import InputError
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.files import read_text
from mhcdoctor.text import cut

SYSROOT_ENV = "MHCDOCTOR_SYSROOT"
_ASK_PATH = "import json, platform, sys; print(json.dumps([platform.python_version(), sys.path]))"
_ASK_TIMEOUT = 15.0
# Where its site-packages are, asked without them (-S), so nothing of theirs runs: a venv's own (the folder of the
# pyvenv.cfg beside or above the executable, as site.venv finds it; site.venv itself would run the .pth files),
# else the installation's and the user's.
_ASK_SITES = """
import json, os, sys, site
exe = os.path.dirname(os.path.abspath(sys.executable))
venv = next((d for d in (exe, os.path.dirname(exe)) if os.path.isfile(os.path.join(d, "pyvenv.cfg"))), None)
print(json.dumps(site.getsitepackages([venv]) if venv else [*site.getsitepackages(), site.getusersitepackages()]))
"""
_SITES_TIMEOUT = 5.0


def _sysroot() -> Path:
    """MHCDOCTOR_SYSROOT as an absolute folder (children start elsewhere), else /: one that is no folder (a typo)
    would read as a machine with no GPU, driver or runtime, a verdict about nothing."""
    given = os.environ.get(SYSROOT_ENV)
    if not given:
        return Path("/")
    if not os.path.isdir(given):
        raise InputError(f"{SYSROOT_ENV}={given} is not a folder; unset it to look at this machine")
    return Path(os.path.abspath(given))


def probe_context(fast: bool = False, timeout: float = 20.0, python: str | None = None) -> ProbeContext:
    root = _sysroot()
    if python is None:
        return ProbeContext(root=root, fast=fast, timeout=timeout)
    if os.sep in python:  # ./venv/bin/python: children start in another folder, so make it absolute
        python = os.path.abspath(python)
    elif shutil.which(python) is None and os.path.isfile(python):  # a bare name is looked up on PATH, as a shell does
        raise InputError(f"--python {python} is not on PATH; give the one in the working folder as ./{python}")
    if os.path.isdir(python):
        raise InputError(f"--python {python} is a folder; give its interpreter, e.g. {python}/bin/python")
    version, search_path = interpreter(python)
    return ProbeContext(
        root=root, fast=fast, timeout=timeout, python=python, python_version=version, search_path=search_path
    )


def interpreter(python: str) -> tuple[str, list[str]]:
    """The version and `sys.path` of another interpreter; one InputError line when it cannot be run."""
    done = childproc.run([python, "-c", _ASK_PATH], dict(os.environ), _ASK_TIMEOUT)
    if done.status == "error":
        raise InputError(f"cannot run --python {python}: {done.error}")
    if done.status == "timeout":
        hint = _start_up_code(python)
        raise InputError(f"cannot run --python {python}: it did not answer within {_ASK_TIMEOUT:g} s{hint}")
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (ValueError, IndexError):
        answer = None
    match answer:
        case [str(version), list(paths)] if all(isinstance(p, str) for p in paths):
            return version, [p for p in paths if p]
    hint = _start_up_code(python)
    raise InputError(f"--python {python} is not a working Python interpreter: {_what_it_did(done)}{hint}")


def _start_up_code(python: str) -> str:
    """Why an interpreter that hangs or dies as it starts does so, when it starts without its site-packages
    (python -S): the .pth lines that run code (`import ...`) and the sitecustomize there, which run first in every
    start of it, vLLM's too; "" when it does not start that way either or nothing there runs code."""
    done = childproc.run([python, "-S", "-c", _ASK_SITES], dict(os.environ), _SITES_TIMEOUT)
    try:
        folders = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (ValueError, IndexError):
        return ""
    if not isinstance(folders, list):
        return ""
    runs: list[str] = []
    for folder in (Path(f) for f in folders if isinstance(f, str)):
        pth = sorted(folder.glob("*.pth")) if folder.is_dir() else []
        runs += [str(f) for f in pth if any(line.startswith(("import ", "import\t")) for line in _lines(f))]
        runs += [str(folder / n) for n in ("sitecustomize.py", "usercustomize.py") if (folder / n).is_file()]
    if not runs:
        return ""
    runs.sort(key=lambda f: -_changed(f))  # the newest install is the likeliest to have broken it
    shown = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
    return f"; it starts without its site-packages (python -S), where {shown} runs code at start-up"


def _changed(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _lines(path: Path) -> list[str]:
    return (read_text(path, limit=1 << 16) or "").splitlines()


def _what_it_did(done: childproc.Finished) -> str:
    """What an interpreter that gave no version and search path did instead, in its own last words."""
    said = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode != 0:
        return f"exited with code {done.returncode}" + (f": {said}" if said else "")
    answer = (done.stdout.strip().splitlines() or [""])[-1]
    if answer:  # it printed something else: an echo, a wrapper's banner, an answer cut by the output bound
        return f"its answer is not a Python version and search path: {cut(answer, 120)}"
    return said or "no output"
