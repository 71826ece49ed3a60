"""From probe results to Facts: merge what several probes saw, and record which probe each fact came from.

Pure: reads ProbeResult data only, so a test can feed it results built by hand or read from a saved report.
A fact no probe established stays None (unknown) and gets no `sources` entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

from mhcdoctor.documents.vocabulary import JsonValue
from mhcdoctor.facts import AiterJitFacts, CacheFacts, Device, Facts, FactsError, VllmSelfCheck, from_json
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.devices import DeviceRecord, merge_devices, normalize_bdf, normalize_gfx

# Richest source first: amdsmi and NVML name the product and the memory; torch sees only visible devices;
# sysfs and /proc know the least but never hang.
_DEVICE_PROBES = ("gpu.amdsmi", "gpu.nvml", "gpu.torch", "gpu.kfd", "gpu.nvidia-proc", "gpu.intel")
# Statuses after which a probe's silence about devices is itself knowledge: it looked and found none.
_ANSWERED = ("ok", "missing")


def facts_from_probes(results: list[ProbeResult]) -> Facts:
    """Facts from `run_probes` results; every fact set here has `sources[fact] == "probe:<name>"`."""
    by_name = {r.name: r for r in results}
    facts = Facts()
    _devices(facts, by_name)
    _runtimes(facts, by_name)
    _torch(facts, by_name)
    _aiter(facts, by_name)
    for lib in ("tilelang", "triton", "vllm"):
        _package(facts, lib, by_name)
    _vllm(facts, by_name)
    _package(facts, "xpu_kernels", by_name, probe="vllm_xpu_kernels")
    _package(facts, "tvm_ffi", by_name, probe="tvm_ffi")
    _deepgemm(facts, by_name)
    _caches(facts, by_name)
    found = (_ok(by_name, "vllm.env") or {}).get("vars")
    if isinstance(found, Mapping):
        facts.set("vllm_env", {str(k): str(v) for k, v in found.items()}, "probe:vllm.env")
    return facts


def _caches(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    for name, key, kind in (
        ("tilelang.cache", "tilelang_cache", CacheFacts),
        ("aiter.jit", "aiter_jit", AiterJitFacts),
    ):
        data = _ok(by_name, name)
        if data is None:
            continue
        try:
            facts.set(key, from_json(kind, data, name), f"probe:{name}")
        except FactsError:
            continue  # a value of the wrong type: the cache stays unknown
        facts.sources.update({f"{key}.{field}": f"probe:{name}" for field in data})


def _deepgemm(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    result = by_name.get("deepgemm")
    if result is None or result.status not in _ANSWERED:
        return
    for key in ("present", "version", "location", "vendored", "has_prenorm_gemm", "prenorm_archs"):
        if key in result.data:
            facts.set(f"deepgemm.{key}", result.data[key], "probe:deepgemm")


def _ok(by_name: dict[str, ProbeResult], name: str) -> Mapping[str, JsonValue] | None:
    result = by_name.get(name)
    return result.data if result is not None and result.status == "ok" else None


def _devices(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    answered = [n for n in _DEVICE_PROBES if n in by_name and by_name[n].status in _ANSWERED]
    if not answered:
        return  # every GPU probe failed or was skipped: the devices are unknown
    seen = []
    for name in answered:
        found = by_name[name].data.get("devices")
        records = [_clean(d) for d in found if isinstance(d, dict)] if isinstance(found, list) else []
        if records:
            seen.append((name, records))
    devices: list[Device] = []
    for record, sources in merge_devices(seen):
        maker = _VENDORS.get(str(record["vendor"]))  # a vendor no rule knows is no device of theirs
        if maker is not None:
            devices.append(
                Device(
                    index=len(devices),
                    vendor=maker,
                    arch=_text(record.get("arch")),
                    name=_text(record.get("name")),
                    memory_bytes=_integer(record.get("memory_bytes")),
                    driver=_text(record.get("driver")),
                    source=",".join(sources),
                )
            )
    source = "probe:" + ",".join(name for name, _ in seen) if seen else "probe:" + ",".join(answered)
    facts.set("devices", devices, source)
    vendors = {d.vendor for d in devices}
    platform = "cpu"
    if vendors == {"amd", "nvidia"}:  # a mixed host: the torch build says which one vLLM would use
        torch = _ok(by_name, "torch") or {}
        platform = "cuda" if torch.get("cuda") and not torch.get("hip") else "rocm"
    elif vendors:  # an Intel GPU beside an AMD or NVIDIA one: the latter is what vLLM's plugins try first
        platform = "rocm" if "amd" in vendors else "cuda" if "nvidia" in vendors else "xpu"
    facts.set("platform", platform, source)
    vendor = {"rocm": "amd", "cuda": "nvidia", "xpu": "intel"}.get(platform)
    arch = next((d.arch for d in devices if d.vendor == vendor and d.arch), None)
    if arch is not None:
        facts.set("arch", arch, source)


def _clean(device: Mapping[str, JsonValue]) -> DeviceRecord:
    """One spelling per field whatever the source: `gfx942` (not `gfx942:sramecc+`), `0000:c1:00.0`, no "N/A"."""
    cleaned = {k: (None if v in ("N/A", "", "None") else v) for k, v in device.items()}
    if cleaned.get("vendor") == "amd":
        cleaned["arch"] = normalize_gfx(cleaned.get("arch"))
    cleaned["bdf"] = normalize_bdf(cleaned.get("bdf"))
    if _integer(cleaned.get("memory_bytes")) is None:
        cleaned["memory_bytes"] = None
    return cleaned


_VENDORS: dict[str, Literal["amd", "nvidia", "intel"]] = {"amd": "amd", "nvidia": "nvidia", "intel": "intel"}


def _text(value: JsonValue) -> str | None:
    """A device field that must be a string: anything else a probe reported is unknown (None)."""
    return value if isinstance(value, str) else None


def _integer(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _runtimes(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    rocm = _ok(by_name, "rocm")
    if rocm and rocm.get("version"):
        facts.set("rocm_version", rocm["version"], "probe:rocm")
    nvml = _ok(by_name, "gpu.nvml") or {}
    proc = _ok(by_name, "gpu.nvidia-proc") or {}
    if nvml.get("cuda_driver_version"):
        facts.set("cuda_driver_version", nvml["cuda_driver_version"], "probe:gpu.nvml")
    for name, data in (("gpu.nvml", nvml), ("gpu.nvidia-proc", proc)):
        if data.get("driver"):
            facts.set("nvidia_driver", data["driver"], f"probe:{name}")
            break
    for compiler in ("nvcc", "hipcc"):
        result = by_name.get(compiler)
        if result is None or "found" not in result.data:
            continue
        for key in ("found", "path", "version"):
            facts.set(f"{compiler}.{key}", result.data.get(key), f"probe:{compiler}")


def _torch(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    result = by_name.get("torch")
    if result is not None and result.status in _ANSWERED:
        for key in ("present", "version", "location", "cuda", "hip", "xpu", "build"):
            facts.set(f"torch.{key}", result.data.get(key), "probe:torch")
    _imports(facts, "torch", by_name, probe="gpu.torch")
    initialised = _ok(by_name, "gpu.torch")
    if initialised is not None and initialised.get("imported"):
        seen = initialised.get("devices")
        facts.set("torch.gpus_visible", len(seen) if isinstance(seen, list) else 0, "probe:gpu.torch")


def _package(facts: Facts, lib: str, by_name: dict[str, ProbeResult], probe: str | None = None) -> None:
    name = probe or lib
    result = by_name.get(name)
    if result is not None and result.status in _ANSWERED:
        for key in ("present", "version", "location"):
            facts.set(f"{lib}.{key}", result.data.get(key), f"probe:{name}")
    if probe is None:
        _imports(facts, lib, by_name)


def _vllm(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    """Which build vLLM is and what it pins (the vllm probe), and what vLLM itself reported (vllm.selfcheck, full
    check only)."""
    data = _ok(by_name, "vllm") or {}
    for key in ("build", "build_evidence", "code", "code_evidence"):
        if key in data:
            facts.set(f"vllm.{key}", data[key], "probe:vllm")
    if isinstance(data.get("pins"), dict):
        facts.set("vllm_pins", data["pins"], "probe:vllm")
    result = by_name.get("vllm.selfcheck")
    if result is None or result.status in ("skipped", "missing") or "platform" not in result.data:
        return
    fields = {f.name for f in dataclasses.fields(VllmSelfCheck)}
    values = {k: v for k, v in result.data.items() if k in fields}
    if result.status != "ok" and not values.get("error"):
        values["error"] = result.error
    fused = values.get("fused")
    values["fused"] = {str(k): str(v) for k, v in fused.items()} if isinstance(fused, dict) else None
    try:
        check = from_json(VllmSelfCheck, values, "vllm.selfcheck")
    except FactsError as exc:  # the child's report is read, not trusted: a value of the wrong type is its error
        check = VllmSelfCheck(error=f"vLLM's self-check reported {exc}")
    facts.set("vllm.selfcheck", check, "probe:vllm.selfcheck")


def _imports(facts: Facts, lib: str, by_name: dict[str, ProbeResult], probe: str | None = None) -> None:
    """`imports`: True when the child imported it (even if a later step failed); False when the import failed, hung
    or crashed, or nothing is there."""
    name = probe or f"{lib}.import"
    result = by_name.get(name)
    if result is None or result.status == "skipped":
        return  # not tried (--fast): unknown
    imported = bool(result.data.get("imported")) and (result.status == "ok" or probe is not None)
    facts.set(f"{lib}.imports", imported, f"probe:{name}")
    if not imported and result.status != "ok":
        facts.set(f"{lib}.import_error", result.error, f"probe:{name}")


def _aiter(facts: Facts, by_name: dict[str, ProbeResult]) -> None:
    result = by_name.get("aiter")
    if result is not None and result.status in _ANSWERED:
        data = result.data
        if not data.get("present"):
            facts.set("aiter.present", False, "probe:aiter")
        else:
            for key in (
                "present", "version", "location", "genuine", "distribution", "sqrsum_fix", "sqrsum_fix_evidence",
                "has_mhc_ops", "mhc_pre_norm_args", "has_fused_post_pre", "module_mhc_so", "fixes", "fix_evidence",
                "has_seam_rmsnorm",
            ):  # fmt: skip
                if key in data:
                    facts.set(f"aiter.{key}", data[key], "probe:aiter")
    _imports(facts, "aiter", by_name)
    imported = _ok(by_name, "aiter.import") or {}
    # What the imported module says about its API beats the text: a decorator could change a signature.
    for key in ("mhc_pre_norm_args", "has_fused_post_pre"):
        if key in imported:
            facts.set(f"aiter.{key}", imported[key], "probe:aiter.import")
