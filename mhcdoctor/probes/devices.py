"""GPU device records shared by the GPU probes: arch names, PCI addresses, one device seen by several sources.

A probe reports each device as a plain dict with the keys of `facts.Device` (vendor, arch, name, memory_bytes,
driver) plus `bdf` (PCI address) when it knows it. `merge_devices` joins the lists of several probes so that one
physical GPU is one device, taking each field from the first source that knows it (sources are passed richest first).
"""

from __future__ import annotations

import re

from mhcdoctor.documents.vocabulary import JsonValue

DeviceRecord = dict[str, JsonValue]  # a device as one probe reports it (JSON: it may come from a child's output)

_FIELDS = ("arch", "name", "memory_bytes", "driver", "bdf")


def gfx_from_target_version(value: int) -> str | None:
    """KFD's gfx_target_version (90402) as an LLVM target (gfx942); the stepping is one hex digit (90010 -> gfx90a)."""
    if value <= 0:
        return None
    major, minor, stepping = value // 10000, (value // 100) % 100, value % 100
    return f"gfx{major}{minor}{stepping:x}"


def normalize_gfx(value: object) -> str | None:
    """amdsmi and torch spell the arch `gfx942:sramecc+:xnack-`; the rules want `gfx942`."""
    text = str(value or "").strip().split(":", 1)[0].lower()
    return text if re.fullmatch(r"gfx[0-9a-f]+", text) else None


# Product name → compute capability, as NVIDIA's CUDA GPU list gives it (A100 8.0, L4/L40S/RTX 40xx 8.9, H100/H200 9.0,
# B200/GB200 10.0, RTX 50xx 12.0), for /proc/driver/nvidia, which names the product but not its compute capability.
_NVIDIA_PRODUCTS: tuple[tuple[str, str], ...] = (
    (r"\bGB?200\b|\bB200\b", "sm_100"),
    (r"\bGH200\b|\bH100\b|\bH200\b|\bH800\b|\bH20\b", "sm_90"),
    (r"\bL4\b|\bL40S?\b|RTX 40\d0", "sm_89"),
    (r"\bA100\b|\bA800\b", "sm_80"),
    (r"RTX 50\d0", "sm_120"),
)


def nvidia_arch_from_name(name: str) -> str | None:
    for pattern, arch in _NVIDIA_PRODUCTS:
        if re.search(pattern, name):
            return arch
    return None


def normalize_bdf(value: object) -> str | None:
    """PCI addresses as `0000:c1:00.0`: NVML writes 8 domain digits in upper case, amdsmi and sysfs 4 in lower."""
    match = re.fullmatch(
        r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])", str(value or "").strip()
    )
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return f"{int(domain or '0', 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{function}"


def merge_devices(sources: list[tuple[str, list[DeviceRecord]]]) -> list[tuple[DeviceRecord, list[str]]]:
    """One record per physical device, and the sources that saw it, over (source name, devices) pairs given richest
    source first.

    Devices match by PCI address when both records have one, else by their order among that vendor's devices
    in each source (the sources enumerate in PCI order). Each field comes from the first source that knows it.
    """
    merged: list[DeviceRecord] = []
    seen_by: list[list[str]] = []
    for source, devices in sources:
        taken: set[int] = set()
        ordinal: dict[str, int] = {}
        for device in devices:
            vendor = str(device.get("vendor"))
            nth = ordinal.get(vendor, 0)
            ordinal[vendor] = nth + 1
            match = _find_match(merged, device, nth, taken)
            if match is None:
                merged.append({"vendor": vendor, **{k: device.get(k) for k in _FIELDS}})
                seen_by.append([source])
                taken.add(len(merged) - 1)
                continue
            taken.add(match)
            target = merged[match]
            for key in _FIELDS:
                if target.get(key) is None and device.get(key) is not None:
                    target[key] = device[key]
            seen_by[match].append(source)
    return list(zip(merged, seen_by, strict=True))


def _find_match(merged: list[DeviceRecord], device: DeviceRecord, nth: int, taken: set[int]) -> int | None:
    vendor, bdf = device.get("vendor"), device.get("bdf")
    same_vendor = [i for i, d in enumerate(merged) if d["vendor"] == vendor and i not in taken]
    if bdf is not None:
        for i in same_vendor:
            if merged[i].get("bdf") == bdf:
                return i
    # Without an address on both sides, fall back to the position among this vendor's devices.
    position = [i for i, d in enumerate(merged) if d["vendor"] == vendor]
    if nth < len(position) and position[nth] in same_vendor:
        candidate = merged[position[nth]]
        if bdf is None or candidate.get("bdf") is None:
            return position[nth]
    return None
