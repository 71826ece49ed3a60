"""Peak memory bandwidth of known devices, from their makers' data sheets, matched on torch's device name.

An unknown device gets its bandwidth measured instead (a device-to-device copy, see timing.measure_copy), and
the bench document says which of the two the fraction of peak is against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NVIDIA_A100 = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
_NVIDIA_H100 = "https://www.nvidia.com/en-us/data-center/h100/"


@dataclass(frozen=True)
class Peak:
    device: str  # the marketing name, e.g. "NVIDIA H100 SXM"
    tb_per_s: float  # peak memory bandwidth, 10^12 bytes per second
    source: str  # where the figure is published


# (pattern on torch.cuda.get_device_name, in lower case; the first match wins) -> peak.
# torch names an H100 SXM "NVIDIA H100 80GB HBM3" and an A100 SXM "NVIDIA A100-SXM4-80GB".
KNOWN: tuple[tuple[str, Peak], ...] = (
    (r"h200", Peak("NVIDIA H200", 4.8, "https://www.nvidia.com/en-us/data-center/h200/")),
    (r"h100.*nvl", Peak("NVIDIA H100 NVL", 3.9, _NVIDIA_H100)),
    (r"h100.*pcie", Peak("NVIDIA H100 PCIe", 2.0, _NVIDIA_H100)),
    (r"h100", Peak("NVIDIA H100 SXM", 3.35, _NVIDIA_H100)),
    (r"h20\b", Peak("NVIDIA H20", 4.0, "https://www.nvidia.com/en-us/data-center/h20/")),
    (r"gb200|b200", Peak("NVIDIA B200", 8.0, "https://www.nvidia.com/en-us/data-center/hgx/")),
    (r"a100.*80gb.*pcie", Peak("NVIDIA A100 80GB PCIe", 1.935, _NVIDIA_A100)),
    (r"a100.*80gb", Peak("NVIDIA A100 80GB SXM", 2.039, _NVIDIA_A100)),
    (r"a100", Peak("NVIDIA A100 40GB", 1.555, _NVIDIA_A100)),
    (r"l40s", Peak("NVIDIA L40S", 0.864, "https://www.nvidia.com/en-us/data-center/l40s/")),
    (
        r"mi355x",
        Peak("AMD Instinct MI355X", 8.0, "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html"),
    ),
    (
        r"mi350x",
        Peak("AMD Instinct MI350X", 8.0, "https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html"),
    ),
    (
        r"mi325x",
        Peak("AMD Instinct MI325X", 6.0, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html"),
    ),
    (
        r"mi300x",
        Peak("AMD Instinct MI300X", 5.3, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
    ),
    (
        r"mi250x",
        Peak("AMD Instinct MI250X", 3.2, "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html"),
    ),
)


def known_peak(device_name: str | None) -> Peak | None:
    """The data-sheet peak for a device name as torch reports it, or None when it is not in the table."""
    if not device_name:
        return None
    name = device_name.lower()
    for pattern, peak in KNOWN:
        if re.search(pattern, name):
            return peak
    return None
