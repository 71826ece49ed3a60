"""Intel GPUs (vLLM's XPU platform) from sysfs, and from `xpu-smi` where it is installed.

Reads /sys/class/drm/card*/device/{vendor,class,device}: vendor 0x8086 with a display class (0x03xxxx) is an Intel
GPU. The integrated GPU sits at PCI 00:02.0 on every Intel CPU; vLLM's XPU platform is meant for the discrete ones
(Arc, Data Center GPU Max/Flex), so it is listed in the evidence and not counted. Without --fast, `xpu-smi discovery
-j` (under the timeout) names the devices. Never opens /dev/dri, so it cannot hang on a wedged GPU.
"""

from __future__ import annotations

import json
import re

from mhcdoctor import childproc
from mhcdoctor.documents.check import Status
from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.devices import DeviceRecord, normalize_bdf

NAME = "gpu.intel"
SOURCE = "sysfs: /sys/class/drm/card*/device"
INTEL = "0x8086"
_INTEGRATED_SLOT = re.compile(r"^[0-9a-f]{4}:00:02\.[0-7]$")  # the CPU's own graphics: always bus 0, device 2


def probe(ctx: ProbeContext) -> ProbeResult:
    drm = ctx.path("/sys/class/drm")
    if not drm.is_dir():
        return ProbeResult(NAME, "missing", {"devices": []}, [f"{drm}: not found"], SOURCE, error="no /sys/class/drm")
    devices: list[DeviceRecord] = []
    evidence = []
    for card in sorted(drm.glob("card*"), key=lambda p: p.name):
        if not re.fullmatch(r"card\d+", card.name):  # card0-DP-1 and the like are connectors, not devices
            continue
        device = card / "device"
        vendor = (read_text(device / "vendor", 64) or "").strip().lower()
        pci_class = (read_text(device / "class", 64) or "").strip().lower()
        if vendor != INTEL or not pci_class.startswith("0x03"):
            continue
        bdf = normalize_bdf(device.resolve().name) if device.exists() else None
        device_id = (read_text(device / "device", 64) or "").strip().lower() or None
        if bdf is not None and _INTEGRATED_SLOT.match(bdf):
            evidence.append(f"{card.name}: Intel integrated GPU {device_id} at {bdf}; not counted")
            continue
        evidence.append(f"{card.name}: Intel GPU {device_id} class {pci_class} at {bdf}")
        devices.append(
            {
                "vendor": "intel",
                "arch": None,
                "name": f"Intel GPU {device_id}" if device_id else None,
                "memory_bytes": None,
                "driver": None,
                "bdf": bdf,
                "device_id": device_id,
            }
        )
    if devices and not ctx.fast:
        _name_with_xpu_smi(ctx, devices, evidence)
    status: Status = "ok" if devices else "missing"
    return ProbeResult(NAME, status, {"devices": devices}, evidence, SOURCE, error=None if devices else "no Intel GPU")


def _name_with_xpu_smi(ctx: ProbeContext, devices: list[DeviceRecord], evidence: list[str]) -> None:
    """`xpu-smi discovery -j` names each device by PCI address (its output read as childproc's bounded tail); a missing,
    failing or hanging xpu-smi is evidence."""
    program = ctx.which("xpu-smi")
    if program is None:
        evidence.append("xpu-smi: not on PATH")
        return
    done = childproc.run([program, "discovery", "-j"], ctx.env, ctx.timeout)
    if done.status != "ok":
        evidence.append(f"xpu-smi discovery -j: {done.error or f'did not finish within {ctx.timeout:g} s'}")
        return
    try:
        listed = json.loads(done.stdout).get("device_list") or []
    except (ValueError, AttributeError):
        evidence.append(f"xpu-smi discovery -j: exit {done.returncode}, no JSON device list")
        return
    by_bdf = {d["bdf"]: d for d in devices if d.get("bdf")}
    for entry in listed:
        if not isinstance(entry, dict):
            continue
        match = by_bdf.get(normalize_bdf(entry.get("pci_bdf_address")) or "")
        name = entry.get("device_name")
        if match is not None and isinstance(name, str):
            match["name"] = name[:200]
            evidence.append(f"xpu-smi: {match['bdf']} is {match['name']}")
