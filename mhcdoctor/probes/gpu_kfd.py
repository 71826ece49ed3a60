"""AMD GPUs from the KFD topology in sysfs: arch, PCI address and memory without ROCm userspace or a GPU context.

Reads /sys/class/kfd/kfd/topology/nodes/*/properties (and mem_banks/*/properties) and /sys/module/amdgpu/version.
Never opens /dev/kfd and never runs rocminfo, so it cannot hang on a wedged GPU.
"""

from __future__ import annotations

import re
from pathlib import Path

from mhcdoctor.documents.vocabulary import JsonValue
from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.devices import DeviceRecord, gfx_from_target_version

NAME = "gpu.kfd"
SOURCE = "sysfs: /sys/class/kfd/kfd/topology"
# HSA heap types of a GPU's own memory (kfd_crat.h: HSA_MEM_HEAP_TYPE_FB_PUBLIC, _FB_PRIVATE).
_FRAME_BUFFER_HEAPS = (1, 2)


def probe(ctx: ProbeContext) -> ProbeResult:
    nodes_dir = ctx.path("/sys/class/kfd/kfd/topology/nodes")
    if not nodes_dir.is_dir():
        why = "no KFD topology: the amdgpu kernel driver is not loaded (no AMD GPU, or a container without /sys)"
        return ProbeResult(NAME, "missing", {"devices": []}, [f"{nodes_dir}: not found"], SOURCE, error=why)
    devices: list[DeviceRecord] = []
    evidence = []
    cpu_nodes = 0
    driver_text = (read_text(ctx.path("/sys/module/amdgpu/version")) or "").strip()
    driver = driver_text if re.fullmatch(r"[\w.+-]{1,64}", driver_text) else None
    for node in sorted((p for p in nodes_dir.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
        props = _properties(node / "properties")
        if "gfx_target_version" not in props:  # unreadable, or not a KFD properties file: say so, don't guess
            evidence.append(f"node {node.name}: no readable gfx_target_version; skipped")
            continue
        target = props["gfx_target_version"]
        if target == 0:  # a CPU node (KFD lists the host's NUMA nodes too)
            cpu_nodes += 1
            continue
        arch = gfx_from_target_version(target)
        evidence.append(f"node {node.name}: gfx_target_version {target} -> {arch}")
        devices.append(
            {
                "vendor": "amd",
                "arch": arch,
                "name": None,
                "memory_bytes": _frame_buffer_bytes(node) or None,
                "driver": driver,
                "bdf": _bdf(props),
                "kfd_node": int(node.name),
                "device_id": f"0x{props['device_id']:04x}" if "device_id" in props else None,
            }
        )
    data: dict[str, JsonValue] = {"devices": devices, "cpu_nodes": cpu_nodes, "driver": driver}
    return ProbeResult(NAME, "ok", data, evidence, SOURCE)


def _properties(path: Path) -> dict[str, int]:
    """KFD properties files are `name value` lines with integer values."""
    values = {}
    for line in (read_text(path) or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def _frame_buffer_bytes(node: Path) -> int:
    banks = node / "mem_banks"
    if not banks.is_dir():
        return 0
    total = 0
    for bank in banks.iterdir():
        props = _properties(bank / "properties")
        if props.get("heap_type") in _FRAME_BUFFER_HEAPS:
            total += props.get("size_in_bytes", 0)
    return total


def _bdf(props: dict[str, int]) -> str | None:
    """location_id is the PCI bus/devfn (kfd_topology.c: pci_dev_id), domain the PCI domain."""
    if "location_id" not in props:
        return None
    loc = props["location_id"]
    return f"{props.get('domain', 0):04x}:{loc >> 8:02x}:{(loc >> 3) & 0x1F:02x}.{loc & 7}"
