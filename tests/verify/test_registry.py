"""The registry of kernel paths (mhcdoctor.kernels): typed entries, lazy adapters, one health decision."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mhcdoctor.kernels import REGISTRY, USER, USER_PATH, AdapterPath, KernelPath, adapter_load
from mhcdoctor.verify.runner import unavailable


def test_importing_the_registry_and_asking_every_path_imports_no_gpu_library() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        from mhcdoctor.kernels import REGISTRY, USER
        for path in [*REGISTRY, USER]:
            path.ops, path.requires, path.on_request, path.health("cuda:0", sys.path)
        heavy = ("torch", "triton", "tilelang", "aiter", "vllm", "tile_kernels", "numpy")
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == []


def test_every_entry_names_an_adapter_with_the_protocols_load() -> None:
    paths: list[KernelPath] = [*REGISTRY, USER]
    for path in paths:
        assert isinstance(path, AdapterPath)
        assert callable(adapter_load(path.module)), path.name
    assert USER_PATH not in REGISTRY.names() and REGISTRY[USER_PATH] is USER
    assert "tilekernels" in REGISTRY.names() and "tilekernels" not in REGISTRY.default()
    assert REGISTRY.default(peers=True) == REGISTRY.names()


def test_an_adapter_whose_load_has_another_signature_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "badadapter.py").write_text("def load(device, progress):\n    return None\n")
    (tmp_path / "noadapter.py").write_text("LOAD = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match=r"badadapter.load\(device, progress\) is not load\(name, device, progress\)"):
        adapter_load("badadapter")
    with pytest.raises(TypeError, match="noadapter has no function load"):
        AdapterPath("bad", ("mhc_post",), "torch", "noadapter").load("cpu", print)
    with pytest.raises(ValueError, match="unknown ops"):
        AdapterPath("bad", ("mhc_posst",), "torch", "badadapter")


def test_a_path_whose_package_is_missing_is_unavailable_with_the_package_named(tmp_path: Path) -> None:
    from mhcdoctor.probes.context import ProbeContext

    for package in ("torch", "numpy"):  # what every path's child imports
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").touch()
    ctx = ProbeContext(search_path=[str(tmp_path)])
    assert unavailable("torch", "cuda:0", ctx) is None
    outcome = unavailable("tilelang", "cuda:0", ctx)
    assert outcome is not None and (outcome["status"], outcome["reason"]) == (
        "unavailable",
        "tilelang is not installed (No module named 'tilelang' on the search path)",
    )
    bare = ProbeContext(search_path=[str(tmp_path / "nothing")])
    assert REGISTRY["user"].health("cpu", bare.search_path) == (
        "torch is not installed (No module named 'torch' on the search path); pip install 'mhcdoctor[verify]' "
        "installs torch and numpy"
    )
