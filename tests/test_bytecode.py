"""Children keep their bytecode in mhcdoctor's own cache: the probed install gets no .pyc, and the next child finds
the compiled modules instead of compiling them again."""

from __future__ import annotations

import os
from pathlib import Path

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

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "pycache").symlink_to(tmp_path / "elsewhere")
    assert "not a folder" in str(bytecode.usable_folder(tmp_path / "linked" / "pycache"))

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
