"""Reports gathered without Ray (Slurm, kubectl, by hand) read as fleet nodes, and the fleet bundle written.

A file that is not a readable report (a node where `mhcdoctor report --json > node-3.json` failed leaves it
empty) is a node that could not be checked, not a reason to stop: the merge goes on and counts it as fail.
"""

from __future__ import annotations

import json
from pathlib import Path

from mhcdoctor.documents.fleet import FleetDocument
from mhcdoctor.errors import InputError
from mhcdoctor.fleet.summary import NodeResult, natural_key, unique_names
from mhcdoctor.reportfile import load_report

SUFFIXES: tuple[str, ...] = (".json", ".md", ".tar.gz", ".tgz")
MAX_NODES = 10000
BUNDLE_ROOT = "mhcdoctor-fleet"


def report_files(inputs: list[str]) -> list[Path]:
    """The report files named, with each folder's *.json, *.md, *.tar.gz and *.tgz (not recursive), in order."""
    files: list[Path] = []
    for text in inputs:
        path = Path(text)
        if path.is_dir():
            found = [p for p in path.iterdir() if p.is_file() and p.name.endswith(SUFFIXES)]
            if not found:
                raise InputError(f"{path} holds no report files ({', '.join('*' + s for s in SUFFIXES)})")
            files += sorted(found, key=lambda p: natural_key(p.name))
        elif path.exists():
            files.append(path)
        else:
            raise InputError(f"no such file or folder: {path}")
        if len(files) > MAX_NODES:
            raise InputError(f"more than {MAX_NODES} report files; merge them in parts")
    return files


def node_name(path: Path) -> str:
    name = path.name
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


def load_nodes(files: list[Path]) -> list[NodeResult]:
    """One node per file, named after the file (node-07.json is node-07); an unreadable report is a row."""
    nodes = []
    for name, path in zip(unique_names(node_name(p) for p in files), files, strict=True):
        try:
            nodes.append(NodeResult(name, "checked", report=load_report(path), source=str(path)))
        except InputError as exc:
            nodes.append(NodeResult(name, "unreadable", error=str(exc), source=str(path)))
    return nodes


def bundle_files(summary: FleetDocument, markdown: str, node_files: dict[str, bytes]) -> dict[str, bytes]:
    """The fleet bundle: summary.json, summary.md and nodes/<file> for each node (its bundle or its report)."""
    files = {
        "summary.json": (json.dumps(summary, indent=2) + "\n").encode("utf-8"),
        "summary.md": markdown.encode("utf-8"),
    }
    files.update({f"nodes/{name}": data for name, data in node_files.items()})
    return files
