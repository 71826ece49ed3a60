"""How pytest-xdist shares the tests out among its workers (pyproject's addopts run `pytest -n 4 --dist loadgroup`).
It lives here, not in tests/, because mypy maps every tests/**/conftest.py to one module name `conftest`.

Each test is its own unit of work, except the tests marked `xdist_group(NAME)`: each group goes to one worker.
A module whose tests read one expensive fixture of module or session scope (the Ray cluster and the fleet run on it,
one bench run, one report) marks itself so, and the fixture is built once; the modules that import torch in the
worker itself share one group, so that only one worker pays for `import torch`. Units are handed out in collection
order, `slow` tests first (a group that is slow before them): they mostly wait on timeouts and children while the
other workers use the cores, and none of them is left to the end.
"""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

# tests/slowmarker.py (on the path through pyproject's `pythonpath`): a test not marked slow must be quick.
pytest_plugins = ["slowmarker"]
_MADE_CACHE: list[str] = []


def _rank(item: pytest.Item) -> int:
    """0: a slow group, 1: a slow test, 2: the rest."""
    if item.get_closest_marker("slow") is None:
        return 2
    return 0 if item.get_closest_marker("xdist_group") is not None else 1


def pytest_configure(config: pytest.Config) -> None:
    """The children the tests start keep their bytecode (mhcdoctor.bytecode) in one folder for the whole run, shared
    by the xdist workers (they inherit it) and removed at the end, not in the tester's home.

    mhcdoctor's own modules are compiled first, into mhcdoctor/**/__pycache__ (ignored by git), as `pip install .`
    compiles them in a user's install. Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE=1, as on CI's
    image), each of the few hundred `python -m mhcdoctor` processes the tests start would otherwise compile every
    module it imports from source.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # once, before the workers start
        compileall.compile_dir(Path(__file__).parent / "mhcdoctor", quiet=1)
    if "MHCDOCTOR_CACHE_DIR" not in os.environ:
        os.environ["MHCDOCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="mhcdoctor-test-cache-")
        _MADE_CACHE.append(os.environ["MHCDOCTOR_CACHE_DIR"])


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _MADE_CACHE:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: the order within each part stays


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None  # an explicit --dist other than the default: xdist's own
    from xdist.scheduler import LoadGroupScheduling

    config.option.loadscopereorder = False  # hand units out in the collection order above, not by their size
    return LoadGroupScheduling(config, log)
