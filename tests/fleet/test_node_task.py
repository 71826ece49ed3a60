"""What runs on each node (mhcdoctor/fleet/node_task.py), without Ray: a hung check is killed with everything it
started, and a Python without mhcdoctor is reported as such."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import fakes
import pytest

from mhcdoctor import childproc
from mhcdoctor.fleet import node_task
from mhcdoctor.fleet.ray_runner import NodeRun, _record_check
from mhcdoctor.fleet.summary import NodeResult


def _report_processes(marker: str, settle: float = 3.0) -> list[int]:
    """Live processes (zombies are dead) carrying the marker, once a SIGKILL already sent has had `settle` s to land."""
    deadline = time.monotonic() + settle
    while (found := _live_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _live_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return [p for p in found if p != os.getpid()]


@pytest.mark.slow
def test_a_hung_check_is_killed_at_the_timeout_with_its_whole_process_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    fakes.kfd(root, [0, 90402])
    monkeypatch.setenv("MHCDOCTOR_SYSROOT", str(root))
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.12", init=fakes.HANG)  # an import that never returns (a FIFO driver file
    # hung `check --fast` once; probes/files.py refuses FIFOs now)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(Path(__file__).resolve().parents[2]), str(site)]))
    marker = f"MHCDOCTOR_NODE_TASK_TEST={tmp_path.name}"
    monkeypatch.setenv("MHCDOCTOR_NODE_TASK_TEST", tmp_path.name)
    start = time.monotonic()
    outcome = json.loads(node_task.run_on_node(["report", "--json"], timeout=3.0, want_bundle=False))
    assert outcome["timed_out"] and time.monotonic() - start < 10
    run = NodeRun(NodeResult("node-00", "timeout"))
    _record_check(run, outcome)
    assert (run.result.status, run.result.verdict) == ("timeout", "fail")
    assert _report_processes(marker) == []


BASE_PYTHON = os.path.join(sys.base_exec_prefix, "bin", f"python{sys.version_info.major}.{sys.version_info.minor}")


@pytest.mark.skipif(not os.path.isfile(BASE_PYTHON), reason="needs the interpreter this venv was made from")
def test_a_node_whose_python_lacks_mhcdoctor_is_reported_not_installed(tmp_path: Path) -> None:
    python = BASE_PYTHON  # the venv's base interpreter: the same Python, without the venv's packages
    probe = subprocess.run([python, "-I", "-c", "import mhcdoctor"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{python} has mhcdoctor installed")
    script = (
        f"import json\nexec(open({node_task.__file__!r}).read())\n"
        "print(run_on_node(['report', '--json'], 30.0, False).decode())\n"
    )
    # The node's Python runs the task (standard library only) and its own `python -m mhcdoctor`, which is absent.
    out = subprocess.run([python, "-I", "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    run = NodeRun(NodeResult("node-03", "timeout"))
    _record_check(run, json.loads(out.stdout))
    assert run.result.status == "not-installed"
    assert run.result.error == f"mhcdoctor is not installed in this node's Python ({python})"


@pytest.mark.skipif(not os.path.isfile(BASE_PYTHON), reason="needs the interpreter this venv was made from")
def test_a_node_without_mhcdoctor_runs_the_runner_the_driver_sent_and_is_reported_not_installed(
    tmp_path: Path,
) -> None:
    """What Ray does: node_task and childproc's source arrive by value; the node's `python -m mhcdoctor` fails."""
    python = BASE_PYTHON
    if subprocess.run([python, "-I", "-c", "import mhcdoctor"], capture_output=True).returncode == 0:
        pytest.skip(f"{python} has mhcdoctor installed")
    source = Path(childproc.__file__).read_text(encoding="utf-8")
    script = (
        f"import json, sys\nexec(open({node_task.__file__!r}).read())\n"
        "print(run_on_node(['report', '--json'], 30.0, False, False, sys.stdin.read()).decode())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the check child is not run with -I
    out = subprocess.run(
        [python, "-I", "-c", script], input=source, capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env
    )
    outcome = json.loads(out.stdout)
    assert outcome["code"] == 1 and "No module named mhcdoctor" in outcome["stderr"], "the check child really ran"
    run = NodeRun(NodeResult("node-04", "timeout"))
    _record_check(run, outcome)
    assert (run.result.status, run.result.error) == (
        "not-installed",
        f"mhcdoctor is not installed in this node's Python ({python})",
    )


def test_a_report_larger_than_the_evidence_tail_comes_back_whole(tmp_path: Path) -> None:
    """childproc keeps a tail of a child's output as evidence; node_task asks it for the whole stdout, up to a bound."""
    size = childproc.EVIDENCE_CHARS * 3
    argv = [sys.executable, "-c", f"import json; print(json.dumps({{'pad': 'x' * {size}}}))"]
    done = childproc.run(argv, dict(os.environ), 30.0, stdout_bytes=node_task.MAX_STDOUT)
    assert json.loads(done.stdout) == {"pad": "x" * size}
    cut = childproc.run(argv, dict(os.environ), 30.0)
    assert cut.stdout.startswith("…") and len(cut.stdout) <= childproc.OUTPUT_TAIL_BYTES + 1
    with pytest.raises(ValueError, match="stdout_bytes"):
        childproc.run(argv, dict(os.environ), 30.0, stdout_bytes=childproc.STDOUT_BYTES_MAX + 1)
