"""GPUs as torch sees them, in a child: this initialises the GPU, so it is the probe most likely to hang.

It is also the torch import probe (one import of torch, not two): it reports `imported` as soon as torch has
imported, so a GPU initialisation that hangs afterwards still leaves that fact.

`get_device_properties(i).gcnArchName` is the arch on ROCm but the product *name* on CUDA builds, so on CUDA the
arch comes from major/minor. Intel GPUs come from torch.xpu (an XPU build of torch). torch honours
*_VISIBLE_DEVICES (NVML and sysfs do not). Not run with --fast.
"""

from __future__ import annotations

from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import find_package
from mhcdoctor.probes.probe_child import run_probe_child, skipped

NAME = "gpu.torch"
SOURCE = "child: torch.cuda device properties"

CODE = """
try:
    import torch
except BaseException as exc:
    report(failure(exc, imported=False))
    raise SystemExit(0)
rocm = bool(getattr(torch.version, "hip", None))
data = {"imported": True, "version": str(getattr(torch, "__version__", "")) or None, "file": torch.__file__,
        "backend": "rocm" if rocm else ("cuda" if torch.version.cuda else "cpu"), "devices": []}
report(data)  # kept if initialising the GPU then hangs: torch itself imported
try:
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
except BaseException as exc:  # torch imported, but the GPU runtime failed to initialise
    report(failure(exc, **data))
    raise SystemExit(0)
try:  # Intel GPUs: vLLM's XPU platform asks torch.xpu.is_available()
    xpu = getattr(torch, "xpu", None)
    data["xpu_available"] = bool(xpu is not None and xpu.is_available())
    for i in range(xpu.device_count() if data["xpu_available"] else 0):
        p = xpu.get_device_properties(i)
        data["devices"].append({"vendor": "intel", "arch": None, "name": p.name,
                                "memory_bytes": int(getattr(p, "total_memory", 0)) or None, "driver": None,
                                "bdf": None})
except BaseException as exc:
    report(failure(exc, **data))
    raise SystemExit(0)
report(data)
"""


def probe(ctx: ProbeContext) -> ProbeResult:
    if ctx.fast:
        return skipped(NAME, SOURCE)
    if find_package("torch", ctx.search_path) is None:
        return ProbeResult(NAME, "missing", {"devices": []}, [], SOURCE, error="torch is not installed")
    return run_probe_child(NAME, CODE, ctx, SOURCE)
