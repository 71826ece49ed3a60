"""A PATH whose tools lie (a `uname` that hangs after megabytes of output, as a broken or hostile image may ship):
the doctor asks the kernel, not the tools, for what the report says of the machine, so it neither hangs nor copies
the tool's output into the report."""

from __future__ import annotations

import os
from pathlib import Path

import doctor
import fakes


def test_a_uname_on_path_that_hangs_after_megabytes_is_never_run(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    fakes.write(tools / "uname", "#!/bin/sh\nhead -c 2000000 /dev/zero | tr '\\0' x\nexec sleep 60\n").chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", "MHCDOCTOR_SYSROOT": str(tmp_path)}
    done = doctor.spawn("check", "--fast", "--json", env=env, timeout=30)  # Python's platform module ran `uname -p`
    os_name = done.json()["host"]["os"]
    assert (done.returncode, os_name.startswith(f"{os.uname().sysname}-{os.uname().release}")) == (3, True)
    assert len(os_name) < 200
