"""Children keep their bytecode in mhcdoctor's own cache: the probed install gets no .pyc, and the next child finds
the compiled modules instead of compiling them again."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import users

import mhcdoctor
from mhcdoctor import bytecode
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.python_child import run_child


def _fake_install(tmp_path: Path, torch_bytecode: bool = False) -> Path:
    """A site folder with a package, and a torch shipped without bytecode (as the H200 machine's image has it) or,
    with `torch_bytecode`, with it (as pip installs it)."""
    site = tmp_path / "site"
    (site / "bigpkg").mkdir(parents=True)
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    if torch_bytecode:
        (site / "torch" / "__pycache__").mkdir()
        (site / "torch" / "__pycache__" / "__init__.cpython-312.pyc").write_bytes(b"")
    (site / "bigpkg" / "__init__.py").write_text("from bigpkg import core\nVALUE = core.VALUE\n")
    (site / "bigpkg" / "core.py").write_text("VALUE = 7\n")
    return site


def _cached(folder: Path, name: str) -> list[Path]:
    return sorted(folder.rglob(f"{name}.cpython-*.pyc"))


def test_a_child_writes_bytecode_to_the_cache_and_not_into_the_install(tmp_path: Path) -> None:
    site = _fake_install(tmp_path)
    cache = tmp_path / "cache"
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1", bytecode.CACHE_DIR_VARIABLE: str(cache)}
    ctx = ProbeContext(search_path=[str(site)], env=env)

    first = run_child("import bigpkg; report(bigpkg.VALUE)", ctx)

    assert (first.status, first.result) == ("ok", 7)
    assert not list(site.rglob("__pycache__")), "the probed install must stay as it was"
    compiled = _cached(cache / "pycache", "core")
    assert len(compiled) == 1
    assert oct((cache / "pycache").stat().st_mode & 0o777) == "0o700"
    written = compiled[0].stat().st_mtime_ns

    second = run_child("import bigpkg; report(bigpkg.VALUE)", ctx)

    assert (second.status, second.result) == ("ok", 7)
    assert compiled[0].stat().st_mtime_ns == written, "the second child read the cached bytecode, not a new copy"


def test_a_changed_source_is_recompiled_not_run_stale(tmp_path: Path) -> None:
    site = _fake_install(tmp_path)
    ctx = ProbeContext(search_path=[str(site)], env={bytecode.CACHE_DIR_VARIABLE: str(tmp_path / "cache")})
    assert run_child("import bigpkg; report(bigpkg.VALUE)", ctx).result == 7

    (site / "bigpkg" / "core.py").write_text("VALUE = 8  # upgraded, and a different size\n")

    assert run_child("import bigpkg; report(bigpkg.VALUE)", ctx).result == 8


def test_no_cache_where_it_is_switched_off_or_unsafe(tmp_path: Path) -> None:
    site = [str(_fake_install(tmp_path))]
    off = bytecode.child_env({"HOME": str(tmp_path), bytecode.SWITCH_VARIABLE: "0"}, site)
    assert off.get("PYTHONDONTWRITEBYTECODE") == "1" and "PYTHONPYCACHEPREFIX" not in off

    shared = tmp_path / "shared"
    (shared / "pycache").mkdir(parents=True)
    (shared / "pycache").chmod(0o777)
    assert "writable by others" in str(bytecode.usable_folder(shared / "pycache"))
    unsafe = bytecode.child_env({bytecode.CACHE_DIR_VARIABLE: str(shared)}, site)
    assert unsafe.get("PYTHONDONTWRITEBYTECODE") == "1" and "PYTHONPYCACHEPREFIX" not in unsafe

    (tmp_path / "file").write_text("")
    assert "not a folder" in str(bytecode.usable_folder(tmp_path / "file" / "pycache"))

    homeless = bytecode.child_env({"PATH": "/usr/bin"}, site)
    assert homeless.get("PYTHONDONTWRITEBYTECODE") == "1" and "PYTHONPYCACHEPREFIX" not in homeless


def test_the_users_own_prefix_and_choice_stand(tmp_path: Path) -> None:
    theirs = {"HOME": str(tmp_path), "PYTHONPYCACHEPREFIX": "/their/cache", "PYTHONDONTWRITEBYTECODE": "1"}
    assert bytecode.child_env(theirs, [str(_fake_install(tmp_path))]) == theirs


def test_the_default_folder_is_under_the_users_cache_home(tmp_path: Path) -> None:
    site = [str(_fake_install(tmp_path))]
    env = bytecode.child_env({"HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}, site)
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / ".cache" / "mhcdoctor" / "pycache")
    assert "PYTHONDONTWRITEBYTECODE" not in env
    xdg = bytecode.child_env({"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}, site)
    assert xdg["PYTHONPYCACHEPREFIX"] == str(tmp_path / "xdg" / "mhcdoctor" / "pycache")


def test_where_torch_has_its_bytecode_children_read_it_and_write_none(tmp_path: Path) -> None:
    site = _fake_install(tmp_path, torch_bytecode=True)
    cache = tmp_path / "cache"
    ctx = ProbeContext(search_path=[str(site)], env={bytecode.CACHE_DIR_VARIABLE: str(cache)})

    assert ctx.child_env().get("PYTHONDONTWRITEBYTECODE") == "1"
    assert run_child("import bigpkg; report(bigpkg.VALUE)", ctx).result == 7
    assert not (site / "bigpkg" / "__pycache__").exists() and not cache.exists()


def test_without_torch_on_the_search_path_no_cache_is_made(tmp_path: Path) -> None:
    env = bytecode.child_env({"HOME": str(tmp_path)}, [str(tmp_path / "empty")])
    assert env.get("PYTHONDONTWRITEBYTECODE") == "1" and "PYTHONPYCACHEPREFIX" not in env


# --- another user on the same machine ------------------------------------------------------------------------------

# Run as the other user: swap `~/.cache/mhcdoctor` between root's real cache folder and one of their own, as fast as
# they can, so that root's check of the cache sees the one and its child's imports read from the other.
_FLIPPER = """
import os, sys, time
cache = os.path.expanduser("~/.cache")
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for target in ("real", "evil"):
        os.symlink(target, cache + "/flip")
        os.rename(cache + "/flip", cache + "/mhcdoctor")
"""


def _crafted_pyc(source: Path, mark: Path) -> bytes:
    """Bytecode that passes Python's check against `source` (its mtime and size) and, run, writes the euid to
    `mark`."""
    from importlib._bootstrap_external import _code_to_timestamp_pyc  # type: ignore[attr-defined]

    info = source.stat()
    code = compile(f"import os\nopen({str(mark)!r}, 'w').write(str(os.geteuid()))\nVALUE = 7\n", str(source), "exec")
    return bytes(_code_to_timestamp_pyc(code, int(info.st_mtime), info.st_size))


@pytest.mark.slow
def test_root_under_another_users_home_keeps_no_cache_there_and_runs_none_of_their_bytecode(tmp_path):
    """`sudo -E mhcdoctor check`: root, with another user's HOME, over an install without bytecode. That user races
    root's children by swapping the cache folder for their own, holding crafted `.pyc` files."""
    with users.other_user() as attacker:
        site = _fake_install(tmp_path)
        source = site / "bigpkg" / "core.py"
        mark = attacker.home / "ran-as"
        cache = attacker.home / ".cache"
        attacker.run(["mkdir", "-p", str(cache / "evil" / "pycache")])
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(attacker.home)}
        ctx = ProbeContext(search_path=[str(site)], env=env)

        first = run_child("import bigpkg; report(bigpkg.VALUE)", ctx)  # root's first run: the cache, if any, made
        assert first.result == 7
        # their own folder, or root's, moved aside within their ~/.cache (a rename they may do)
        attacker.run(["sh", "-c", f"cd {cache} && (mv mhcdoctor real || mkdir -p real/pycache)"])
        evil = cache / "evil" / "pycache" / str(source.parent).lstrip("/") / f"core.{sys.implementation.cache_tag}.pyc"
        attacker.run(["mkdir", "-p", str(evil.parent)])
        attacker.run([users.PYTHON, "-c", f"open({str(evil)!r}, 'wb').write({_crafted_pyc(source, mark)!r})"])
        flipper = attacker.popen([users.PYTHON, "-c", _FLIPPER, "20"])
        while not (cache / "mhcdoctor").is_symlink():  # their swapping has begun
            assert flipper.poll() is None
            time.sleep(0.01)

        runs = [run_child("import bigpkg; report(bigpkg.VALUE)", ctx) for _ in range(30)]
        flipper.kill()

        ran_as = mark.read_text() if mark.exists() else None
        print(
            f"ATTACK cache swap under root's children: 30 runs, the crafted bytecode ran as {ran_as}", file=sys.stderr
        )
        assert all(r.result == 7 for r in runs)
        assert ran_as is None, "the other user's bytecode ran in root's child"
        assert "PYTHONPYCACHEPREFIX" not in ctx.child_env()
        made_by_root = [str(p) for p in attacker.home.rglob("*") if p.lstat().st_uid == 0]
        assert made_by_root == [], "root made nothing in the other user's home"


def test_a_cache_below_a_folder_another_user_owns_is_refused_even_for_them(tmp_path):
    with users.other_user() as other:
        reason = bytecode.usable_folder(other.home / "cache" / "pycache")
        assert reason == f"{other.home} belongs to another user (uid {other.uid})"
        assert not (other.home / "cache").exists(), "nothing is made in a folder found unsafe"


def test_the_user_running_it_gets_a_cache_in_their_own_home(tmp_path):
    """The same check, made by an ordinary user for their own home: their cache works, with no link left in it."""
    with users.other_user() as user:
        site = user.home.parent / "site"  # where they can read it
        shutil.copytree(_fake_install(tmp_path), site)
        probe = (
            "import json, sys; from mhcdoctor import bytecode; "
            f"print(json.dumps(bytecode.child_env({{'HOME': {str(user.home)!r}}}, [{str(site)!r}])))"
        )
        user.run(["ln", "-s", str(user.home / "real-cache"), str(user.home / ".cache")])
        user.run(["mkdir", str(user.home / "real-cache")])
        # their own copy of mhcdoctor: this clone may sit below a folder they cannot enter (mktemp -d makes it 0700)
        source = user.readable_copy(mhcdoctor)
        done = user.run([users.PYTHON, "-c", probe], env={"PYTHONPATH": str(source)})
        assert done.returncode == 0, done.stderr
        env = json.loads(done.stdout)
        assert env["PYTHONPYCACHEPREFIX"] == str(user.home / "real-cache" / "mhcdoctor" / "pycache")


def test_a_link_is_followed_only_to_a_folder_that_is_safe_too(tmp_path):
    site = [str(_fake_install(tmp_path))]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".cache").symlink_to(tmp_path / "elsewhere")
    env = bytecode.child_env({"HOME": str(tmp_path / "home")}, site)
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "elsewhere" / "mhcdoctor" / "pycache")

    (tmp_path / "open").mkdir(mode=0o777)
    (tmp_path / "open").chmod(0o777)
    (tmp_path / "home2").mkdir()
    (tmp_path / "home2" / ".cache").symlink_to(tmp_path / "open")
    assert "writable by others" in str(bytecode.usable_folder(tmp_path / "home2" / ".cache" / "mhcdoctor"))
