"""How pytest-xdist shares the tests out among its workers (pyproject's addopts run `pytest -n 4`). It lives here,
not in tests/, because mypy maps every tests/**/conftest.py to one module name `conftest`.

Each test is its own unit of work, except in the modules of SHARED_FIXTURE_MODULES, whose tests read one expensive
fixture of module or session scope (the Ray cluster and the fleet run on it, one bench run, one report): all of such
a module's tests go to one worker, so the fixture is built once (with plain `--dist load`, every worker that got
one of the Ray tests would start a cluster of its own), and of IN_PROCESS_TORCH, which go to one worker together.
Units are handed out in the order of START_FIRST: the Ray
fleet first, since it mostly waits (on its hung node's timeout) while the other workers use the cores, then the
tests that wait on timeouts or import torch in children, so that none of them is left to the end.
"""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

_MADE_CACHE: list[str] = []

SHARED_FIXTURE_MODULES = (
    "tests/fleet/test_ray_fleet.py",  # local_fleet (session, tests/fleet/conftest.py) and fleet_run
    "tests/bench/test_bench_cli.py",  # torch_run
    "tests/triage/test_report_cli.py",
    "tests/triage/test_diff_cli.py",
    "tests/fleet/test_merge.py",
    "tests/rules/test_catalogue_and_docs.py",
)

# Modules whose tests import torch in the worker itself (elsewhere only children do): one worker runs them all, so
# that only it pays the two CPU-seconds of `import torch` (the others never import it: tests/needs.py).
IN_PROCESS_TORCH = (
    "tests/verify/test_reference.py",
    "tests/verify/test_mutations.py",
    "tests/verify/test_tilekernels_path.py",
)

START_FIRST = (
    "tests/fleet/test_ray_fleet.py",
    "tests/verify/",
    "tests/bench/",
    "tests/test_stopping.py",
    "tests/probes/test_run.py",
)


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(START_FIRST) if nodeid.startswith(prefix)), len(START_FIRST))


def pytest_configure(config: pytest.Config) -> None:
    """The children the tests start keep their bytecode (mhcdoctor.bytecode) in one folder for the whole run, shared
    by the xdist workers (they inherit it) and removed at the end, not in the tester's home.

    mhcdoctor's own modules are compiled first, into mhcdoctor/**/__pycache__ (ignored by git), as `pip install .`
    compiles them in a user's install. Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE=1, as on CI's
    image), each of the few hundred `python -m mhcdoctor` processes the tests start would otherwise compile every
    module it imports from source: about 0.06 s of CPU each, on a fresh clone.
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
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: the order within each part stays


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "load":
        return None  # an explicit --dist other than the default: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module in IN_PROCESS_TORCH:
                return "in-process torch"
            return module if module in SHARED_FIXTURE_MODULES else nodeid

    config.option.loadscopereorder = False  # hand units out in the collection order above, not by their size
    return SharedFixtureScheduling(config, log)
