"""Installed Python packages as the probed interpreter would see them, read from files only: nothing is imported.

`find_package` answers vLLM's presence test (`find_spec`) for a top-level name over a search path;
`distribution` reads a distribution's metadata; `owners` tells which distributions own an import name
(the `packages_distributions()` idea, but limited to one name so a large environment stays fast).
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from urllib.parse import unquote, urlparse

from mhcdoctor.probes.base import read_text

_METADATA_DIRS = (".dist-info", ".egg-info")


def normalize(name: str) -> str:
    """PEP 503 name normalisation: `AMD_Aiter` and `amd-aiter` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Distribution:
    """One `*.dist-info` or `*.egg-info` folder."""

    name: str
    version: str | None
    path: Path

    def read(self, filename: str) -> str | None:
        return read_text(self.path / filename, limit=16 << 20)

    def top_level(self) -> set[str]:
        """Import names this distribution installs: top_level.txt, else the first parts of RECORD's paths."""
        text = self.read("top_level.txt")
        if text is not None:
            return {line.strip() for line in text.splitlines() if line.strip()}
        names = set()
        for relative in self.files():
            first = relative.split("/", 1)[0]
            if first.endswith(_METADATA_DIRS) or first in ("..", "__pycache__") or first.endswith(".pth"):
                continue
            names.add(first[:-3] if first.endswith(".py") else first)
        return names

    def files(self) -> list[str]:
        """RECORD's paths (relative to the site folder), or [] when there is no RECORD."""
        text = self.read("RECORD") or self.read("installed-files.txt") or ""
        return [line.split(",", 1)[0].strip('"') for line in text.splitlines() if line.strip()]

    def locate(self, relative: str) -> Path:
        return self.path.parent / relative

    def editable_root(self) -> Path | None:
        """The source folder of an editable install (PEP 610 direct_url.json), or None."""
        text = self.read("direct_url.json")
        if not text:
            return None
        try:
            info = json.loads(text)
        except ValueError:
            return None
        if not isinstance(info, dict) or not (info.get("dir_info") or {}).get("editable"):
            return None
        url = urlparse(str(info.get("url", "")))
        return Path(unquote(url.path)) if url.scheme == "file" else None


def _metadata_folders(search_path: list[str]) -> list[Path]:
    folders: list[Path] = []
    for entry in search_path:
        try:
            with os.scandir(entry or ".") as it:
                folders.extend(Path(e.path) for e in it if e.name.endswith(_METADATA_DIRS) and e.is_dir())
        except OSError:
            continue
    return folders


def _read_distribution(folder: Path) -> Distribution | None:
    # The headers come first; 64 KiB holds them without reading a long description.
    text = read_text(folder / "METADATA", limit=1 << 16) or read_text(folder / "PKG-INFO", limit=1 << 16)
    if text is None:
        return None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the long description follows
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version") and key not in fields:
            fields[key] = value.strip()
    if "Name" not in fields:
        return None
    return Distribution(fields["Name"], fields.get("Version"), folder)


def _folder_name(folder: Path) -> str:
    return normalize(folder.name.rsplit(".", 1)[0].split("-", 1)[0])


def distribution(name: str, search_path: list[str]) -> Distribution | None:
    """The first distribution called `name` on the search path (the one importlib.metadata would pick)."""
    wanted = normalize(name)
    for folder in _metadata_folders(search_path):
        if _folder_name(folder) != wanted:
            continue
        found = _read_distribution(folder)
        if found is not None and normalize(found.name) == wanted:
            return found
    return None


def rivals(dist: Distribution) -> list[Distribution]:
    """The other metadata folders of `dist`'s name in its own folder: two installs of one package (an interrupted or
    forced pip install), whose files on disk may be either's."""
    wanted = normalize(dist.name)
    found = []
    for folder in _metadata_folders([str(dist.path.parent)]):
        other = _read_distribution(folder) if folder != dist.path and _folder_name(folder) == wanted else None
        if other is not None and normalize(other.name) == wanted:
            found.append(other)
    return found


def installed(search_path: list[str]) -> list[Distribution]:
    """Every distribution on the search path, first occurrence of each name only."""
    seen: set[str] = set()
    found = []
    for folder in _metadata_folders(search_path):
        dist = _read_distribution(folder)
        if dist is None or normalize(dist.name) in seen:
            continue
        seen.add(normalize(dist.name))
        found.append(dist)
    return found


def find_package(name: str, search_path: list[str]) -> Path | None:
    """Where `import name` would load from: its package folder or module file, or None.

    PathFinder over the search path is what `importlib.util.find_spec` does for a top-level name, without
    executing anything; setuptools' editable finders (`__editable___*_finder.py`) are read as text.
    """
    try:
        spec = PathFinder.find_spec(name, search_path)
    except (ImportError, OSError, ValueError):
        spec = None
    if spec is not None:
        if spec.submodule_search_locations:
            return Path(list(spec.submodule_search_locations)[0])
        if spec.origin:
            return Path(spec.origin)
    return _editable_mapping(search_path).get(name)


def _editable_mapping(search_path: list[str]) -> dict[str, Path]:
    mapping: dict[str, Path] = {}
    for entry in search_path:
        try:
            finders = sorted(Path(entry or ".").glob("__editable___*_finder.py"))
        except OSError:
            continue
        for finder in finders:
            mapping.update({k: v for k, v in _finder_mapping(finder).items() if k not in mapping})
    return mapping


def _finder_mapping(finder: Path) -> dict[str, Path]:
    """setuptools writes `MAPPING: dict[str, str] = {'aiter': '/src/aiter'}` into its editable finder."""
    text = read_text(finder) or ""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target: ast.expr = node.target
        elif isinstance(node, ast.Assign):
            target = node.targets[0]
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return {}
            if isinstance(value, dict):
                return {str(k): Path(str(v)) for k, v in value.items()}
    return {}


def owners(import_name: str, location: Path | None, search_path: list[str]) -> list[Distribution]:
    """Distributions that own `import_name`: by top_level.txt/RECORD, or an editable install whose source holds it."""
    found = []
    for dist in installed(search_path):
        if import_name in dist.top_level():
            found.append(dist)
            continue
        root = dist.editable_root()
        if root is not None and location is not None and location.is_relative_to(root):
            found.append(dist)
    return found
