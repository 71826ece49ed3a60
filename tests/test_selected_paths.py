"""The paths verify and bench hold their rows against: the rules' pick on the machine the probes see."""

from __future__ import annotations

from pathlib import Path

import fakes
import pytest
from fakemachine import Machine

from mhcdoctor.commands.selection import selected_here
from mhcdoctor.models import BUILTIN_MODELS


def test_the_pick_is_made_on_the_sysroot_machine_in_the_python_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = Machine(tmp_path)  # an MI300X tree and a Python environment with aiter 0.1.14 and vLLM 0.25.0
    fakes.kfd(machine.root, [0, 90402, 90402])
    fakes.rocm(machine.root, "6.4.1-120")
    fakes.aiter(machine.site, version="0.1.14", kernel="fixed")
    fakes.library(machine.site, "vllm", "0.25.0")
    monkeypatch.setenv("MHCDOCTOR_SYSROOT", str(machine.root))
    selection = selected_here(BUILTIN_MODELS["deepseek-v4-pro"], python=str(machine.python))
    assert selection.paths is not None
    assert (selection.paths["mhc_pre"], selection.paths["mhc_post"]) == ("aiter", "aiter")
    assert selection.fused_post_pre is False  # 0.25 runs post and pre apart where aiter serves them
