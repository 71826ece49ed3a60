"""AMD GPUs through amdsmi, in a child: product (market) name, arch, VRAM, driver version, PCI address.

amdsmi prints to stdout and raises KeyError at import when libamd_smi.so is missing: that is `missing`, not
`error`. `amd-smi` (the CLI) can hang, so it is never run; the library runs in a child under the timeout.
Not run with --fast; reported `missing` without a child when the amdsmi package is not installed.
"""

from __future__ import annotations

from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import find_package
from mhcdoctor.probes.probe_child import run_probe_child, skipped

NAME = "gpu.amdsmi"
SOURCE = "child: amdsmi"

# What amdsmi prints goes to the child's stdout, which is kept as evidence; the result travels in a file.
CODE = """
try:
    import amdsmi
except Exception as exc:
    # amdsmi's __init__ prints and raises KeyError when libamd_smi.so cannot be loaded.
    report(failure(exc, missing=True))
    raise SystemExit(0)
try:
    amdsmi.amdsmi_init()
except Exception as exc:
    report(failure(exc))
    raise SystemExit(0)

def ask(fn, *args):
    try:
        return fn(*args)
    except Exception:
        return None

data = {"devices": []}
for handle in amdsmi.amdsmi_get_processor_handles():
    asic = ask(amdsmi.amdsmi_get_gpu_asic_info, handle) or {}
    vram = ask(amdsmi.amdsmi_get_gpu_vram_info, handle) or {}
    driver = ask(amdsmi.amdsmi_get_gpu_driver_info, handle) or {}
    size_mb = vram.get("vram_size")
    data["devices"].append({
        "vendor": "amd",
        "arch": asic.get("target_graphics_version"),
        "name": asic.get("market_name"),
        "memory_bytes": int(size_mb) * 1024 * 1024 if str(size_mb).isdigit() else None,
        "driver": driver.get("driver_version"),
        "bdf": ask(amdsmi.amdsmi_get_gpu_device_bdf, handle),
    })
ask(amdsmi.amdsmi_shut_down)
report(data)
"""


def probe(ctx: ProbeContext) -> ProbeResult:
    if ctx.fast:
        return skipped(NAME, SOURCE)
    if find_package("amdsmi", ctx.search_path) is None:
        return ProbeResult(NAME, "missing", {"devices": []}, [], SOURCE, error="the amdsmi package is not installed")
    return run_probe_child(NAME, CODE, ctx, SOURCE)
