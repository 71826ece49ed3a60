"""On Ray, vLLM copies only some variables to its actors (vllm/ray/ray_env.py, 0.20–0.34): MHCDOCTOR_* is not among
them unless VLLM_RAY_EXTRA_ENV_VAR_PREFIXES_TO_COPY names its prefix (docs/vllm-plugin.md). Shown on the suite's
loopback Ray cluster with vLLM 0.34.0's own get_env_vars_to_copy building the actor's environment."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.real, pytest.mark.xdist_group("ray-fleet")]

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _drive(local_fleet, tmp_path: Path, **env: str) -> dict:
    real = _load("real_conftest", REPO / "tests/real/conftest.py")  # the cached real installs
    needs = _load("real_vllm_wheels", REPO / "tests/real/vllm_wheels.py").IMPORT_NEEDS
    folders = [real.install("vllm==0.34.0"), *(real.install(spec) for spec in needs)]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("MHCDOCTOR_", "VLLM_", "PYTHONPATH"))}
    child_env.update(env, PYTHONPATH=os.pathsep.join([*map(str, folders), str(REPO)]), HOME=str(tmp_path))
    # Ray would rewrite the loopback address to this machine's primary IP, where no node listens (fleet/ray_runner.py)
    child_env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    done = subprocess.run(
        [sys.executable, str(HERE / "vllm_plugin_ray_driver.py"), local_fleet.address, local_fleet.node_ids["normal"]],
        env=child_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_mhcdoctor_variables_reach_rays_workers_only_with_the_extra_prefix(local_fleet, tmp_path):
    wanted = {"MHCDOCTOR_VLLM": "observe", "MHCDOCTOR_VLLM_DIR": str(tmp_path / "observed")}
    plain = _drive(local_fleet, tmp_path, **wanted)
    assert plain["copied"] == [] and plain["worker"]["pid"] != plain["driver"]
    assert (plain["worker"]["MHCDOCTOR_VLLM"], plain["worker"]["mode"]) == (None, None)  # the plugin stays off there
    told = _drive(local_fleet, tmp_path, **wanted, VLLM_RAY_EXTRA_ENV_VAR_PREFIXES_TO_COPY="MHCDOCTOR_")
    assert told["copied"] == ["MHCDOCTOR_VLLM", "MHCDOCTOR_VLLM_DIR"]
    assert told["worker"]["MHCDOCTOR_VLLM"] == "observe" and told["worker"]["mode"] == "observe"
    assert told["worker"]["MHCDOCTOR_VLLM_DIR"] == str(tmp_path / "observed")
