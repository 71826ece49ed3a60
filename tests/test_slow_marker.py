"""The `slow` marker is enforced from measured durations (tests/slowmarker.py): run on a small suite of its own."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import time

import pytest


def test_quick():
    pass


def test_sleeps_unmarked():
    time.sleep(0.6)


@pytest.mark.slow
def test_sleeps_marked():
    time.sleep(0.6)


@pytest.fixture(scope="module")
def costly():
    time.sleep(0.6)


def test_pays_for_a_module_fixture(costly):
    pass
"""


def test_an_unmarked_test_over_the_bound_fails_naming_the_marker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MHCDOCTOR_SLOW_SECONDS", "0.3")
    monkeypatch.setattr("os.getloadavg", lambda: (0.0, 0.0, 0.0))  # an idle machine: the bound is not scaled
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess("-p", "slowmarker", "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=2)
    failed = {line.split(" - ")[0] for line in result.outlines if line.startswith("ERROR ")}
    assert failed == {
        "ERROR test_suite.py::test_sleeps_unmarked",
        "ERROR test_suite.py::test_pays_for_a_module_fixture",
    }
    assert "more than the 0.3 s a test not marked slow may take on this machine now: mark it @pytest.mark.slow" in (
        result.stdout.str()
    )


def test_the_bound_grows_with_the_load_per_core(monkeypatch: pytest.MonkeyPatch) -> None:
    import slowmarker

    monkeypatch.delenv("MHCDOCTOR_SLOW_SECONDS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (6.0, 0.0, 0.0))
    assert slowmarker.allowed_seconds() == slowmarker.SLOW_SECONDS * 3
    monkeypatch.setattr("os.getloadavg", lambda: (0.5, 0.0, 0.0))
    assert slowmarker.allowed_seconds() == slowmarker.SLOW_SECONDS
