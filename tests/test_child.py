"""The child interpreter that risky probes run in: a hang, a crash or noise never reaches the doctor."""

import time

import pytest

from mhcdoctor.probes.base import guarded
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.python_child import run_child

CTX = ProbeContext(timeout=5)


def test_result_comes_back_even_when_the_child_prints_on_stdout():
    out = run_child("print('[amdsmi] banner on stdout'); report({'answer': 42})", CTX)
    assert (out.status, out.result) == ("ok", {"answer": 42})
    assert "banner on stdout" in out.stdout


@pytest.mark.slow
def test_a_hang_is_a_timeout_and_the_whole_process_group_dies():
    start = time.perf_counter()
    code = "import subprocess, time\nsubprocess.Popen(['sleep', '60'])\ntime.sleep(60)"
    out = run_child(code, ProbeContext(timeout=0.5))
    assert out.status == "timeout"
    assert "did not finish within 0.5 s" in out.error
    assert time.perf_counter() - start < 5


@pytest.mark.slow
def test_a_segfault_is_a_crash_with_the_signal_named():
    out = run_child("import ctypes; ctypes.string_at(0)", CTX)
    assert out.status == "crash"
    assert "SIGSEGV" in out.error
    assert any("SIGSEGV" in line for line in out.evidence())
    assert "Fatal Python error" in out.stderr, "faulthandler's stack is kept as evidence"


def test_an_exception_is_an_error_with_the_traceback_as_evidence():
    out = run_child("raise ImportError('libnvrtc.so.13: cannot open shared object file')", CTX)
    assert out.status == "error"
    assert "exited with code 1" in out.error
    assert "libnvrtc.so.13" in "\n".join(out.evidence())


def test_a_child_that_reports_nothing_is_an_error():
    out = run_child("pass", CTX)
    assert (out.status, out.error) == ("error", "child reported nothing")


def test_a_missing_interpreter_is_an_error_not_an_exception():
    out = run_child("report(1)", ProbeContext(python="/nonexistent/python3"))
    assert out.status == "error" and "could not start" in out.error


def test_guarded_turns_a_probe_bug_into_an_error_result():
    def buggy():
        raise KeyError("target_graphics_version")

    result = guarded("gpu.amdsmi", buggy)
    assert result.status == "error"
    assert "KeyError" in result.error


def test_a_huge_result_is_an_error_not_read_whole():
    out = run_child("report('x' * (5 * 1024 * 1024))", CTX)
    assert out.status == "error" and "bad result" in out.error and "longer than" in out.error
