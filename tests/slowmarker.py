"""The `slow` marker, enforced: a test not marked slow that takes longer than SLOW_SECONDS (its setup, call and
teardown together, so a module fixture's cost counts against the test that builds it) fails at its teardown, naming
the marker. `pytest -m "not slow"` is the inner loop and must stay under a minute on two cores.

The bound is wall time scaled by the machine's load (the one-minute load average per core, at least 1): a test that
takes 1 s on an idle machine takes 3 s where three runnable processes share each core, and must not fail there.
`MHCDOCTOR_SLOW_SECONDS` sets the bound (0 turns it off). Loaded by conftest.py (`pytest_plugins`).
"""

from __future__ import annotations

import os

import pytest

SLOW_SECONDS = 2.0
_SPENT = pytest.StashKey[float]()
_FAILED = pytest.StashKey[bool]()


def allowed_seconds() -> float:
    """The most a test not marked slow may take here and now; 0 when the check is off."""
    base = float(os.environ.get("MHCDOCTOR_SLOW_SECONDS", SLOW_SECONDS))
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        per_core = 1.0
    return base * max(1.0, per_core)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    spent = item.stash.get(_SPENT, 0.0) + report.duration
    item.stash[_SPENT] = spent
    item.stash[_FAILED] = item.stash.get(_FAILED, False) or not report.passed
    if report.when != "teardown" or item.stash[_FAILED] or item.get_closest_marker("slow") is not None:
        return None
    allowed = allowed_seconds()
    if allowed and spent > allowed:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} took {spent:.1f} s (setup, call and teardown), more than the {allowed:.1f} s a test not "
            "marked slow may take on this machine now: mark it @pytest.mark.slow (pyproject.toml says what slow is) "
            "or make it faster"
        )
    return None
