"""A fake machine for end-to-end tests of `mhcdoctor check` and `explain`: a machine tree given by MHCDOCTOR_SYSROOT and
a Python environment that holds only fakes, passed with --python exactly as a user points mhcdoctor at vLLM's venv
(a wrapper interpreter, `python -S` with only the fake site on its path). A Machine is a `doctor.Place`:
`doctor.run("check", "--json", env=machine)` runs `mhcdoctor check --python <its python> --json` there.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import doctor
import fakes
import jsonschema

REPO = Path(__file__).resolve().parents[1]
CHECK_SCHEMA = json.loads((REPO / "mhcdoctor/schemas/check.schema.json").read_text())


class Machine:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "root"
        self.root.mkdir()
        self.site = fakes.site(tmp_path)
        self.python = fakes.write(
            tmp_path / "bin" / "python",
            f'#!/bin/sh\nPYTHONPATH="{self.site}" exec "{sys.executable}" -S "$@"\n',
        )
        self.python.chmod(0o755)

    def env(self) -> dict[str, str]:
        """The environment the doctor runs with on this machine: its sysroot, no tools on PATH, mhcdoctor from REPO."""
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
        env.update({"MHCDOCTOR_SYSROOT": str(self.root), "PATH": str(self.tmp / "no-bin"), "HOME": str(self.tmp)})
        env["PYTHONPATH"] = str(REPO)
        return env

    @property
    def cwd(self) -> Path:
        return self.tmp


def check_json(machine: Machine, *args: str) -> tuple[dict, doctor.Done]:
    """`mhcdoctor check --json ARGS` on `machine`: its document, held to the published schema, and the run."""
    proc = doctor.run("check", "--json", *args, env=machine)
    doc = json.loads(proc.stdout)  # the whole stdout is one JSON document
    jsonschema.validate(doc, CHECK_SCHEMA)
    return doc, proc


def model(doc: dict, name: str) -> dict:
    return next(m for m in doc["models"] if m["model"]["name"] == name)


def finding_ids(doc: dict) -> set[str]:
    return {f["id"] for f in doc["findings"]}
