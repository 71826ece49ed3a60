"""GPUs as torch sees them, in a child: this initialises the GPU, so it is the probe most likely to hang.

`get_device_properties(i).gcnArchName` is the arch on ROCm but the product *name* on CUDA builds, so on CUDA the
arch comes from major/minor. torch honours *_VISIBLE_DEVICES (NVML and sysfs do not). Not run with --fast.
"""

from __future__ import annotations

from mhcdoctor.probes.base import ProbeContext, ProbeResult
from mhcdoctor.probes.children import run_probe_child, skipped
from mhcdoctor.probes.packages import find_package

NAME = "gpu.torch"
SOURCE = "child: torch.cuda device properties"

CODE = """
try:
    import torch
except BaseException as exc:
    report(failure(exc))
    raise SystemExit(0)
rocm = bool(getattr(torch.version, "hip", None))
data = {"backend": "rocm" if rocm else ("cuda" if torch.version.cuda else "cpu"), "devices": []}
if torch.cuda.is_available():
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        bus = getattr(p, "pci_bus_id", None)
        bdf = None
        if bus is not None:
            bdf = f"{getattr(p, 'pci_domain_id', 0):04x}:{bus:02x}:{getattr(p, 'pci_device_id', 0):02x}.0"
        data["devices"].append({
            "vendor": "amd" if rocm else "nvidia",
            "arch": getattr(p, "gcnArchName", None) if rocm else f"sm_{p.major}{p.minor}",
            "name": p.name,
            "memory_bytes": int(p.total_memory),
            "driver": None,
            "bdf": bdf,
        })
report(data)
"""


def probe(ctx: ProbeContext) -> ProbeResult:
    if ctx.fast:
        return skipped(NAME, SOURCE)
    if find_package("torch", ctx.search_path) is None:
        return ProbeResult(NAME, "missing", {"devices": []}, [], SOURCE, error="torch is not installed")
    return run_probe_child(NAME, CODE, ctx, SOURCE)
