"""NVIDIA GPUs from the kernel driver's /proc files: driver version, product names and PCI addresses.

Reads /proc/driver/nvidia/version and /proc/driver/nvidia/gpus/*/information. Never loads libcuda or NVML.
The compute capability is not there; the arch is inferred from the product name where
probes/devices.py's product table lists it.
"""

from __future__ import annotations

import re

from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.devices import DeviceRecord, normalize_bdf, nvidia_arch_from_name

NAME = "gpu.nvidia-proc"
SOURCE = "procfs: /proc/driver/nvidia"
# "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  ..." (or "... Open Kernel Module for x86_64  580...")
_DRIVER_RE = re.compile(r"NVRM version:.*?Kernel Module\S*(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")


def probe(ctx: ProbeContext) -> ProbeResult:
    base = ctx.path("/proc/driver/nvidia")
    if not base.is_dir():
        why = "no /proc/driver/nvidia: the NVIDIA kernel driver is not loaded"
        return ProbeResult(NAME, "missing", {"devices": []}, [f"{base}: not found"], SOURCE, error=why)
    evidence = []
    version_text = read_text(base / "version") or ""
    match = _DRIVER_RE.search(version_text)
    driver = match.group(1) if match else None
    if version_text:
        evidence.append(f"{base / 'version'}: {version_text.splitlines()[0].strip()}")
    devices: list[DeviceRecord] = []
    gpus = base / "gpus"
    for folder in sorted(gpus.iterdir()) if gpus.is_dir() else []:
        info = _information(read_text(folder / "information") or "")
        name = info.get("model")
        devices.append(
            {
                "vendor": "nvidia",
                "arch": nvidia_arch_from_name(name) if name else None,
                "name": name,
                "memory_bytes": None,
                "driver": driver,
                "bdf": normalize_bdf(info.get("bus location") or folder.name),
                "uuid": info.get("gpu uuid"),
            }
        )
        evidence.append(f"{folder / 'information'}: Model: {name}")
    return ProbeResult(NAME, "ok", {"driver": driver, "devices": devices}, evidence, SOURCE)


def _information(text: str) -> dict[str, str]:
    """`Model:  NVIDIA H200` lines, keyed in lower case."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields
