"""At the user's process limit (RLIMIT_NPROC counts threads too) `check` still reports (issue 33 §6): it started one
thread per probe and died with `can't start new thread`, exit 4. Run as a throwaway user (root ignores the limit)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import click
import doctor
import fakes
import packaging
import pytest
import users

import mhcdoctor


@pytest.mark.parametrize("mode", [["--fast"], []], ids=["fast", "full"])
def test_check_at_the_process_limit_reports_every_probe_instead_of_exit_4(mode: list[str]) -> None:
    version = subprocess.run([users.PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True)
    if version.stdout.decode().strip() != str(sys.version_info[:2]):
        pytest.skip(f"{users.PYTHON} is another Python than this one: this environment's packages may not load")
    with users.other_user() as user:
        (user.home / "root").mkdir()  # an empty machine: no GPU, so `no-gpu` fails the verdict (exit 3)
        source = user.readable_copy(mhcdoctor, click, packaging)  # what `check` imports, where the user can read it
        fakes.torch(source)  # a torch to import: the full check's torch child is one that cannot start
        env = {"PYTHONPATH": str(source), "MHCDOCTOR_SYSROOT": str(user.home / "root")}
        proc = user.popen(
            doctor.argv("check", *mode, "--json", python=users.PYTHON),
            env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NPROC, (1, 1)),  # no thread, no child can start
        )
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3 and "internal error" not in err, err
    doc = json.loads(out)
    assert "no-gpu" in {f["id"] for f in doc["findings"]}
    assert {p["name"] for p in doc["probes"]} >= {"gpu.kfd", "tilelang", "deepgemm", "vllm.env", "vllm.selfcheck"}
    if not mode:  # the children a full check starts cannot start either: each is that probe's error, not a crash
        errors = [p["error"] for p in doc["probes"] if p["status"] == "error"]
        assert errors and all("Resource temporarily unavailable" in e for e in errors if "could not start" in e)
