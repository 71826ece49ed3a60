"""The probes of `mhcdoctor check`: each touches the machine, returns a ProbeResult and never raises.

`run_probes(ctx)` runs them all (those that start a child interpreter concurrently, one thread each) and
`facts_from_probes(results)` turns their results into `Facts`, recording in `Facts.sources` which probe each
fact came from. With `ctx.fast`, no child is started: the child probes return `skipped` at once.
See docs/probes.md for what each probe reads and what each status means.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial
from importlib.machinery import PathFinder

from mhcdoctor.childproc import concurrently
from mhcdoctor.probes import (
    aiter,
    caches,
    compilers,
    deepgemm,
    envvars,
    gpu_amdsmi,
    gpu_intel,
    gpu_kfd,
    gpu_nvidia_proc,
    gpu_nvml,
    gpu_torch,
    rocm,
    torch_build,
    vllm_build,
    vllm_selfcheck,
)
from mhcdoctor.probes.assemble import facts_from_probes
from mhcdoctor.probes.base import ProbeResult, guarded
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.libraries import TILELANG, TRITON, TVM_FFI, VLLM, XPU_KERNELS, probe_import, probe_metadata

__all__ = ["PROBES", "ProbeContext", "ProbeResult", "facts_from_probes", "run_all_probes", "run_probes"]

Probe = Callable[[ProbeContext], ProbeResult]

# Every probe, by the name its ProbeResult carries, in the order results are returned.
PROBES: dict[str, Probe] = {
    gpu_kfd.NAME: gpu_kfd.probe,
    gpu_nvidia_proc.NAME: gpu_nvidia_proc.probe,
    gpu_amdsmi.NAME: gpu_amdsmi.probe,
    gpu_nvml.NAME: gpu_nvml.probe,
    gpu_intel.NAME: gpu_intel.probe,
    gpu_torch.NAME: gpu_torch.probe,
    torch_build.NAME: torch_build.probe,
    rocm.NAME: rocm.probe,
    "nvcc": compilers.probe_nvcc,
    "hipcc": compilers.probe_hipcc,
    aiter.NAME: aiter.probe,
    aiter.IMPORT_NAME: aiter.probe_import,
    "tilelang": partial(probe_metadata, TILELANG),
    "tilelang.import": partial(probe_import, TILELANG),
    "triton": partial(probe_metadata, TRITON),
    "triton.import": partial(probe_import, TRITON),
    vllm_build.NAME: vllm_build.probe,
    "vllm.import": partial(probe_import, VLLM),
    "vllm_xpu_kernels": partial(probe_metadata, XPU_KERNELS),
    "tvm_ffi": partial(probe_metadata, TVM_FFI),
    deepgemm.NAME: deepgemm.probe,
    envvars.NAME: envvars.probe,
    caches.TILELANG_NAME: caches.probe_tilelang,
    caches.AITER_NAME: caches.probe_aiter_jit,
}


def run_probes(
    ctx: ProbeContext, skip: Collection[str] = (), on_done: Callable[[ProbeResult], None] | None = None
) -> list[ProbeResult]:
    """Run every probe but those in `skip`; a probe's own bug becomes an `error` result. Results come back in PROBES
    order; `on_done` hears of each as it finishes (from the probe's thread: it must be quick and thread-safe)."""
    PathFinder.invalidate_caches()  # packages may have been installed since this process last looked
    told = on_done or (lambda result: None)

    def run(name: str, probe: Probe) -> ProbeResult:
        result = guarded(name, partial(probe, ctx))
        told(result)
        return result

    calls = [partial(run, name, probe) for name, probe in PROBES.items() if name not in skip]
    if ctx.fast:  # files only: sequential is faster than starting threads
        return [call() for call in calls]
    # Threads only wait on children and subprocesses, so one per probe lets every child run at once (fewer at the
    # user's process limit).
    return concurrently(calls, "probe")


def run_all_probes(
    ctx: ProbeContext, sizes: list[tuple[int, int]], on_done: Callable[[ProbeResult], None] | None = None
) -> list[ProbeResult]:
    """Every probe and vLLM's self-check for these model sizes (hidden_size, hc_mult), as a full check and
    `explain --deep` run them: one vLLM child, not two, since the self-check's first step is the import the
    vllm.import probe would run (and its `vllm.platforms` import, which fails where vLLM's requirements are missing,
    counts as vLLM not importing for both). Results in PROBES order, the self-check last."""

    def selfcheck() -> list[ProbeResult]:  # vLLM imports slowly: it runs beside the other probes
        checked = guarded(vllm_selfcheck.NAME, partial(vllm_selfcheck.probe, ctx, sizes))
        if on_done is not None:
            on_done(checked)
        return [checked]

    def others() -> list[ProbeResult]:
        return run_probes(ctx, skip={vllm_selfcheck.IMPORT_NAME}, on_done=on_done)

    (checked,), results = concurrently([selfcheck, others], "check")
    results.insert([*PROBES].index(vllm_selfcheck.IMPORT_NAME), vllm_selfcheck.import_result(checked))
    return [*results, checked]
