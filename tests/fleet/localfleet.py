"""The local Ray fleet the tests share (started in conftest.py): its address, its nodes by role, its processes."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import procnet

ROLE = "MHCDOCTOR_FLEET_TEST_ROLE"  # each node's environment says which node of the test it is
PWNED = "MHCDOCTOR_FLEET_TEST_PWNED"  # the file the pickler node's payload writes where it is unpickled


class LocalFleet:
    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.address: str = cluster.address
        self.node_ids: dict[str, str] = {"head": cluster.head_node.node_id}  # role -> Ray node id
        self.seen: dict[int, str] = {}  # every process of the cluster seen while it ran: none may outlive it

    def remember_processes(self) -> None:
        for pid in procnet.descendants(os.getpid()):
            cmd = _cmdline(pid)
            if cmd:
                self.seen.setdefault(pid, cmd)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def alive(seen: dict[int, str]) -> dict[int, str]:
    """The processes seen earlier that still run (the same command line, not a zombie)."""
    out = {}
    for pid, cmd in seen.items():
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and _cmdline(pid) == cmd:
            out[pid] = cmd[:200]
    return out


def fleet_validator() -> jsonschema.Draft202012Validator:
    """The published fleet/1 schema, for the fleet runs on this cluster and for `merge`."""
    return jsonschema.Draft202012Validator(
        json.loads(resources.files("mhcdoctor").joinpath("schemas/fleet.schema.json").read_text())
    )
