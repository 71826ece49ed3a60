"""Reports gathered without Ray (Slurm, kubectl, by hand) read as fleet nodes, and the fleet bundle written.

A file that is not a readable report (a node where `mhcdoctor report --json > node-3.json` failed leaves it
empty) is a node that could not be checked, not a reason to stop: the merge goes on and counts it as fail.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from mhcdoctor.documents.fleet import FleetDocument
from mhcdoctor.errors import InputError
from mhcdoctor.fleet.summary import NodeResult, natural_key, unique_names
from mhcdoctor.reportfile import load_report

SUFFIXES: tuple[str, ...] = (".json", ".md", ".tar.gz", ".tgz")
MAX_NODES = 10000
BUNDLE_ROOT = "mhcdoctor-fleet"


@dataclass(frozen=True)
class ReportFile:
    """A report to read: a file named on the command line (read as named: a FIFO or <(...) works), or one found in
    a folder (read only if it is a regular file itself: a link or a FIFO there is a node that could not be read)."""

    path: Path
    in_folder: bool


def report_files(inputs: list[str]) -> list[ReportFile]:
    """The report files named, with each folder's *.json, *.md, *.tar.gz and *.tgz (not recursive), in order."""
    files: list[ReportFile] = []
    for text in inputs:
        path = Path(text)
        if path.is_dir():
            try:
                with os.scandir(path) as entries:  # is_dir without following: a link to a folder is a file here
                    found = [
                        Path(e.path)
                        for e in entries
                        if not e.is_dir(follow_symlinks=False) and e.name.endswith(SUFFIXES)
                    ]
            except OSError as exc:
                raise InputError(f"cannot list {path}: {exc.strerror or exc}") from None
            if not found:
                raise InputError(f"{path} holds no report files ({', '.join('*' + s for s in SUFFIXES)})")
            files += [ReportFile(p, True) for p in sorted(found, key=lambda p: natural_key(p.name))]
        elif path.exists():
            files.append(ReportFile(path, False))
        else:
            raise InputError(f"no such file or folder: {path}")
        if len(files) > MAX_NODES:
            raise InputError(f"more than {MAX_NODES} report files; merge them in parts")
    seen: dict[tuple[int, int], Path] = {}
    for file in files:  # one file named twice (or named and in a folder named) would count as two nodes
        try:
            info = os.stat(file.path, follow_symlinks=not file.in_folder)  # a link in a folder is not followed
        except OSError:
            continue  # its row says why it cannot be read
        first = seen.setdefault((info.st_dev, info.st_ino), file.path)
        if first is not file.path:
            raise InputError(f"{file.path} is named twice (also as {first}); give each node's report once")
    return files


def node_name(path: Path) -> str:
    name = path.name
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


def load_nodes(files: list[ReportFile]) -> list[NodeResult]:
    """One node per file, named after the file (node-07.json is node-07); an unreadable report is a row."""
    nodes = []
    for name, file in zip(unique_names(node_name(f.path) for f in files), files, strict=True):
        try:
            report = load_report(file.path, regular_only=file.in_folder)
            nodes.append(NodeResult(name, "checked", report=report, source=str(file.path)))
        except InputError as exc:
            nodes.append(NodeResult(name, "unreadable", error=str(exc), source=str(file.path)))
    return nodes


def bundle_files(summary: FleetDocument, markdown: str, node_files: dict[str, bytes]) -> dict[str, bytes]:
    """The fleet bundle: summary.json, summary.md and nodes/<file> for each node (its bundle or its report)."""
    files = {
        "summary.json": (json.dumps(summary, indent=2) + "\n").encode("utf-8"),
        "summary.md": markdown.encode("utf-8"),
    }
    files.update({f"nodes/{name}": data for name, data in node_files.items()})
    return files
