"""The README's sample output is what `check --fast` prints on such a machine (an H200 with tilelang)."""

from __future__ import annotations

import doctor
import fakes
from fakemachine import REPO, Machine


def test_the_readme_sample_table_is_what_check_prints(tmp_path):
    machine = Machine(tmp_path)
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.torch(machine.site)
    fakes.library(machine.site, "tilelang", "0.1.12")
    fakes.executable(tmp_path / "no-bin" / "nvcc", "Cuda compilation tools, release 13.0, V13.0.88\n")
    printed = doctor.run("check", "--fast", env=machine).stdout.splitlines()
    readme = (REPO / "README.md").read_text().split("## What it looks like", 1)[1].split("```")[1].splitlines()
    table = [line for line in readme if line.strip()]
    start = printed.index(table[0])
    assert printed[start : start + len(table)] == table
