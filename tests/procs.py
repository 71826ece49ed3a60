"""Processes the tests plant (import-time code that leaves a helper sleeping 600 s, tagged in its argv) and the one
way to look for them afterwards (`running`), shared by the stopping and fleet-signal tests."""

from __future__ import annotations

import os
from pathlib import Path


def helper(tag: str, setsid: bool = False) -> str:
    """Import-time code starting a helper that sleeps 600 s with `tag` in its argv."""
    return (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {tag!r}], "
        f"start_new_session={setsid}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    )


def daemon(tag: str) -> str:
    """Import-time code that double-forks a setsid() daemon keeping the import's stdout and stderr, then returns."""
    return (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', {tag!r}])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )


def escapee(tag: str) -> str:
    """Import-time code that leaves a helper with nothing of the doctor's: a new session, then an exec with an
    empty environment (no token), its parent gone (re-parented away from the import child)."""
    return (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execve(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', {tag!r}], {{}})\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )


def running(needle: str) -> list[str]:
    """`pid: argv` of every live (not zombie) process whose argv contains `needle`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if needle.encode() in argv and stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
            shown = argv.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{name}: {shown}")
    return found
