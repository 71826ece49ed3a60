"""A real multi-node Ray cluster on 127.0.0.1, started once for the fleet tests, and the nodes' environments.

Nodes (all on loopback, each a raylet of its own, as on separate machines):
    head     MI300X tree, AMD's aiter 0.1.14 (every fix)
    normal   the same as head, and two (pretend) GPUs for Ray to hand to verify tasks
    odd      MI300X tree, aiter 0.1.13 with the sqrsum race: the node the summary must single out
    victim   its check hangs (its Python's sitecustomize sleeps); the test kills its Ray worker mid-run
    hung     its check hangs (the same) and is left to the timeout
    liar     its `python -m mhcdoctor` prints a report that lies about its types (a finding's severity a list)
    pickler  its Python's sitecustomize makes every task of that node return a pickle that, unpickled, runs code
             (writes the file localfleet.PWNED names): what a node whose Python was tampered with can send the driver
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import fakes
import pytest
from localfleet import PWNED, ROLE, LocalFleet, alive

MI300X = 90402  # gfx942

_LYING_MAIN = """import json
print(json.dumps({"schema": "mhcdoctor.check/1", "facts": {}, "verdict": "ok",
                  "findings": [{"id": "lie", "severity": ["fail"], "title": "t", "fix": "f"}]}))
"""
# Ray imports ray._private.serialization in every worker; the hook patches it as it loads, so what the node's tasks
# return is replaced by an object whose unpickling writes the file named in the driver's environment.
_PICKLING_SITECUSTOMIZE = (
    """import importlib.abc, importlib.util, sys

class _Payload:
    def __reduce__(self):
        code = "import os; open(os.environ['"""
    + PWNED
    + """'], 'w').write('a node ran code here')"
        return (exec, (code,))

class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "ray._private.serialization":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            serialize = module.SerializationContext.serialize

            def swapped(self, value):
                mine = isinstance(value, bytes) and value.startswith(b'{"python"')
                mine = mine or isinstance(value, dict) and "python" in value
                return serialize(self, _Payload() if mine else value)

            module.SerializationContext.serialize = swapped

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Hook())
"""
)


def _machine(root: Path) -> Path:
    fakes.kfd(root, [0, MI300X, MI300X])
    return root


def _hanging(base: Path, site: Path) -> str:
    """`site` and a folder whose sitecustomize makes the node's `python -m mhcdoctor report` hang before it reports,
    and nothing else (a FIFO as a driver file hung `check --fast` once; probes/files.py reads no FIFO now)."""
    hook = "import sys, time\nif sys.argv[:1] == ['-m'] and 'report' in sys.argv:\n    time.sleep(600)\n"
    fakes.write(base / "sitecustomize.py", hook)
    return os.pathsep.join([str(site), str(base)])


def _site(base: Path, version: str, kernel: str) -> Path:
    site = fakes.site(base)
    fakes.aiter(site, version=version, kernel=kernel)
    return site


def _lying_site(base: Path) -> Path:
    """A folder that, on PYTHONPATH, makes `python -m mhcdoctor` print a lying report (a sitecustomize serves its own
    mhcdoctor.__main__: an editable install's finder would win over a plain package on PYTHONPATH)."""
    main = fakes.write(base / "lying_main.py", _LYING_MAIN)
    hook = (
        "import importlib.abc, importlib.util, sys\n"
        "class _Liar(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        return importlib.util.spec_from_file_location(name, {str(main)!r}) if name == 'mhcdoctor.__main__' "
        "else None\n"
        "sys.meta_path.insert(0, _Liar())\n"
    )
    fakes.write(base / "sitecustomize.py", hook)
    return base


def _pickling_site(base: Path) -> Path:
    fakes.write(base / "sitecustomize.py", _PICKLING_SITECUSTOMIZE)
    return base


@pytest.fixture(scope="session")
def local_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalFleet]:
    pytest.importorskip("ray", reason="the fleet tests need Ray: pip install 'mhcdoctor[fleet]' (CI installs it)")
    from ray.cluster_utils import Cluster

    base = tmp_path_factory.mktemp("fleet")
    fixed = _site(base / "fixed", "0.1.14", "fixed")
    racy = _site(base / "racy", "0.1.13", "racy")
    nodes = {
        "head": {"PYTHONPATH": str(fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-head"))},
        "normal": {"PYTHONPATH": str(fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-normal"))},
        "odd": {"PYTHONPATH": str(racy), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-odd"))},
        "victim": {"PYTHONPATH": _hanging(base / "h-victim", fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-v"))},
        "hung": {"PYTHONPATH": _hanging(base / "h-hung", fixed), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-hung"))},
        "liar": {"PYTHONPATH": str(_lying_site(base / "liar")), "MHCDOCTOR_SYSROOT": str(_machine(base / "m-liar"))},
        "pickler": {
            "PYTHONPATH": str(_pickling_site(base / "pickler")),
            "MHCDOCTOR_SYSROOT": str(_machine(base / "m-p")),
        },
    }
    loopback = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "include_dashboard": False}
    head_env = {**nodes["head"], ROLE: "head"}
    cluster = Cluster(initialize_head=True, head_node_args={**loopback, "env_vars": head_env})
    fleet = LocalFleet(cluster)
    try:
        for role in ("normal", "odd", "victim", "hung", "liar", "pickler"):
            gpus = 2 if role == "normal" else 0
            node = cluster.add_node(
                node_ip_address="127.0.0.1", num_cpus=1, num_gpus=gpus, env_vars={**nodes[role], ROLE: role}
            )
            fleet.node_ids[role] = node.node_id
        fleet.remember_processes()
        yield fleet
        fleet.remember_processes()
    finally:
        cluster.shutdown()
    deadline = time.monotonic() + 15
    left = alive(fleet.seen)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = alive(fleet.seen)
    assert not left, f"processes left running after the cluster shut down: {left}"
