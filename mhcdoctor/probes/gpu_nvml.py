"""NVIDIA GPUs through NVML (`pynvml` from nvidia-ml-py), in a child: compute capability, memory, driver, CUDA version.

NVML reads the driver's view without creating a CUDA context; it ignores CUDA_VISIBLE_DEVICES, so it lists
every GPU on the host. Not run with --fast; reported `missing` without a child when pynvml is not installed.
"""

from __future__ import annotations

from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import find_package
from mhcdoctor.probes.probe_child import run_probe_child, skipped

NAME = "gpu.nvml"
SOURCE = "child: pynvml (NVML)"

CODE = """
def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)

try:
    import pynvml as nvml
    nvml.nvmlInit()
except Exception as exc:
    # No libnvidia-ml.so, or no driver loaded: there is no NVIDIA GPU to see, not a broken probe.
    name = type(exc).__name__
    report(failure(exc, missing="LibraryNotFound" in name or "DriverNotLoaded" in name))
    raise SystemExit(0)
data = {"driver": text(nvml.nvmlSystemGetDriverVersion()), "devices": []}
try:
    cuda = nvml.nvmlSystemGetCudaDriverVersion()  # 13000 means CUDA 13.0
    data["cuda_driver_version"] = f"{cuda // 1000}.{cuda % 1000 // 10}"
except Exception as exc:
    data["cuda_driver_version_error"] = failure(exc)["error"]

def ask(fn, *args):
    # One unsupported query (a MIG slice, an old GPU) must not lose the device's other facts.
    try:
        return fn(*args)
    except Exception:
        return None

for i in range(nvml.nvmlDeviceGetCount()):
    handle = nvml.nvmlDeviceGetHandleByIndex(i)
    capability = ask(nvml.nvmlDeviceGetCudaComputeCapability, handle)
    name, memory, pci = (ask(f, handle) for f in (nvml.nvmlDeviceGetName, nvml.nvmlDeviceGetMemoryInfo,
                                                   nvml.nvmlDeviceGetPciInfo))
    data["devices"].append({
        "vendor": "nvidia",
        "arch": f"sm_{capability[0]}{capability[1]}" if capability else None,
        "name": text(name) if name is not None else None,
        "memory_bytes": int(memory.total) if memory is not None else None,
        "driver": data["driver"],
        "bdf": text(pci.busId) if pci is not None else None,
    })
ask(nvml.nvmlShutdown)
report(data)
"""


def probe(ctx: ProbeContext) -> ProbeResult:
    if ctx.fast:
        return skipped(NAME, SOURCE)
    if find_package("pynvml", ctx.search_path) is None:
        why = "pynvml is not installed (pip install nvidia-ml-py)"
        return ProbeResult(NAME, "missing", {"devices": []}, [], SOURCE, error=why)
    return run_probe_child(NAME, CODE, ctx, SOURCE)
