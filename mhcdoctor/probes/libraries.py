"""Python libraries as vLLM sees them: present (`find_spec`), which version, and whether `import` really works.

Two probes per library. `<name>` reads files only: the package folder on the search path and its distribution's
metadata. `<name>.import` imports it in a child interpreter (one child per library, so a hang in one is that
library's `timeout` and nothing else's); it is `skipped` with --fast and `missing`, without a child, when the
package is not there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import Distribution, distribution, find_package, normalize, rivals
from mhcdoctor.probes.probe_child import run_probe_child, skipped
from mhcdoctor.probes.torch_build import parse_assignments


@dataclass(frozen=True)
class Library:
    module: str  # the import name
    dist: str  # the distribution that normally provides it


# torch's metadata comes from the `torch` probe (torch/version.py) and its import from `gpu.torch`.
TILELANG = Library("tilelang", "tilelang")
TRITON = Library("triton", "triton")
VLLM = Library("vllm", "vllm")
XPU_KERNELS = Library("vllm_xpu_kernels", "vllm-xpu-kernels")
TVM_FFI = Library(
    "tvm_ffi", "apache-tvm-ffi"
)  # tilelang's runtime (known.TVM_FFI_BAD_PAIRS)  # vLLM's XPU ops; vllm/platforms/xpu.py imports it
# What vLLM's mHC kernels are written against, where its Requires-Dist pins it (aiter is never pinned on PyPI).
PINNED = ("torch", "tilelang", "triton", "amd-aiter")

IMPORT_CODE = """
import importlib
try:
    module = importlib.import_module({module!r})
except BaseException as exc:  # SystemExit and KeyboardInterrupt from a broken __init__ are findings too
    report(failure(exc, imported=False))
else:
    version = getattr(module, "__version__", None)
    report({{"imported": True, "version": str(version) if version is not None else None,
             "file": getattr(module, "__file__", None)}})
"""


def probe_metadata(lib: Library, ctx: ProbeContext) -> ProbeResult:
    source = f"metadata: {lib.dist}"
    location = find_package(lib.module, ctx.search_path)
    dist = distribution(lib.dist, ctx.search_path)
    if location is None:
        evidence = [f"{dist.path}: installed metadata, but no importable {lib.module}"] if dist else []
        return ProbeResult(
            lib.module,
            "missing",
            {"present": False, "version": None},
            evidence,
            source,
            error=f"{lib.module} is not installed",
        )
    data: dict[str, Any] = {"present": True, "location": str(location), "version": None, "distribution": None}
    if dist is not None:
        data.update(version=dist.version, distribution=dist.name)
        evidence = [f"{dist.path}: {dist.name} {dist.version}"]
        if others := rivals(dist):
            names = ", ".join(sorted(o.path.name for o in others))
            evidence.append(
                f"{dist.path.parent}: also {names}: two installs of {dist.name} in one folder (an interrupted or "
                f"forced pip install); {dist.version} is what Python's metadata reads first, the files may be another's"
            )
        if lib is VLLM:
            data["pins"] = pinned_requirements(dist)
            evidence.append(f"{dist.path / 'METADATA'}: Requires-Dist pins {data['pins'] or 'none of ' + str(PINNED)}")
    else:  # a source checkout on PYTHONPATH: no metadata, maybe a _version.py
        data["version"] = version_from_files(location)
        evidence = [f"{location}: no {lib.dist} metadata on the search path; version from files: {data['version']}"]
    return ProbeResult(lib.module, "ok", data, evidence, source)


def pinned_requirements(dist: Distribution) -> dict[str, str]:
    """{name: specifier} for PINNED in the distribution's Requires-Dist headers (first 64 KiB of METADATA), without
    extras; markers are evaluated for this interpreter, so a platform-only pin counts where it applies here."""
    text = read_text(dist.path / "METADATA", limit=1 << 16) or ""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end here; the long description follows
        key, sep, value = line.partition(":")
        if not sep or key != "Requires-Dist":
            continue
        try:
            requirement = Requirement(value.strip())
            applies = requirement.marker is None or requirement.marker.evaluate({"extra": ""})
        except (InvalidRequirement, InvalidMarker, UndefinedEnvironmentName):
            continue
        name = normalize(requirement.name)
        if applies and name in PINNED and str(requirement.specifier) and name not in pins:
            pins[name] = str(requirement.specifier)
    return pins


def version_from_files(package: Path) -> str | None:
    """`__version__` from `<package>/_version.py` or `version.py` (setuptools_scm writes the first), read as text."""
    for filename in ("_version.py", "version.py"):
        path = package / filename
        if path.is_file():
            values = parse_assignments(read_text(path) or "")
            version = values.get("__version__") or values.get("version")
            if isinstance(version, str):
                return version
    return None


def probe_import(lib: Library, ctx: ProbeContext) -> ProbeResult:
    name, source = f"{lib.module}.import", f"child: import {lib.module}"
    if ctx.fast:
        return skipped(name, source)
    if find_package(lib.module, ctx.search_path) is None:
        return ProbeResult(name, "missing", {"imported": False}, [], source, error=f"{lib.module} is not installed")
    return run_probe_child(name, IMPORT_CODE.format(module=lib.module), ctx, source)
