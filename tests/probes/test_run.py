"""run_probes as `check` uses it: every probe answers, children run at once, --fast starts none, and the
doctor's own process never imports the libraries it diagnoses."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import fakes
import pytest

from mhcdoctor.documents.check import STATUSES
from mhcdoctor.probes import PROBES, facts_from_probes, run_probes

CHILD_PROBES = {"gpu.amdsmi", "gpu.nvml", "gpu.torch", "aiter.import", "tilelang.import"}
CHILD_PROBES |= {"triton.import", "vllm.import"}


def broken_machine(tmp_path):
    """A ROCm host whose libraries are installed but broken in every way a child can break."""
    root, site = tmp_path / "root", fakes.site(tmp_path)
    fakes.kfd(root, [0, 90402, 90402])
    fakes.rocm(root)
    fakes.aiter(site, version="0.1.13", kernel="racy", init=fakes.HANG)
    fakes.library(site, "tilelang", "0.1.12", init=fakes.NVRTC_MISSING)
    fakes.library(site, "triton", "3.5.0", init=fakes.SEGFAULT)
    fakes.library(site, "vllm", "0.30.0", init=fakes.HANG)
    return root, site


def test_every_probe_answers_with_a_known_status_on_a_broken_machine(tmp_path):
    root, site = broken_machine(tmp_path)
    results = run_probes(fakes.context(tmp_path, site, root=root, timeout=1.5))
    assert [r.name for r in results] == list(PROBES)
    statuses = {r.name: r.status for r in results}
    assert {k: statuses[k] for k in ("aiter.import", "tilelang.import", "triton.import", "vllm.import")} == {
        "aiter.import": "timeout",
        "tilelang.import": "error",
        "triton.import": "crash",
        "vllm.import": "timeout",
    }
    assert set(statuses.values()) <= set(STATUSES)
    json.dumps([r.to_dict() for r in results])  # check --json carries them as they are


@pytest.mark.slow
def test_the_report_is_still_produced_when_children_hang_and_crash(tmp_path):
    root, site = broken_machine(tmp_path)
    facts = facts_from_probes(run_probes(fakes.context(tmp_path, site, root=root, timeout=1.5)))
    assert (facts.platform, facts.arch, facts.rocm_version) == ("rocm", "gfx942", "7.2.3")
    assert (facts.aiter.genuine, facts.aiter.sqrsum_fix, facts.aiter.imports) == (True, "absent", False)
    assert (facts.tilelang.present, facts.tilelang.imports) == (True, False)
    assert (facts.triton.imports, facts.vllm.imports) == (False, False)


def test_children_run_concurrently(tmp_path):
    site = fakes.site(tmp_path)
    for name in ("tilelang", "triton", "vllm"):
        fakes.library(site, name, "1.0", init=fakes.HANG)
    fakes.aiter(site, init=fakes.HANG)
    start = time.perf_counter()
    results = run_probes(fakes.context(tmp_path, site, timeout=1.0))
    elapsed = time.perf_counter() - start
    assert sum(r.status == "timeout" for r in results) == 4
    assert elapsed < 3.0, f"four 1 s timeouts took {elapsed:.1f} s: the children ran one after another"


def test_fast_mode_starts_no_child_and_skips_the_child_probes(tmp_path, monkeypatch):
    root, site = broken_machine(tmp_path)
    fakes.executable(root / "opt" / "rocm" / "bin" / "hipcc", fakes.HIPCC_VERSION)

    def no_child(*args, **kwargs):
        raise AssertionError(f"--fast started a process: {args[0]}")

    monkeypatch.setattr(subprocess, "Popen", no_child)
    start = time.perf_counter()
    results = run_probes(fakes.context(tmp_path, site, root=root, fast=True))
    assert time.perf_counter() - start < 0.5
    assert {r.name for r in results if r.status == "skipped"} == CHILD_PROBES
    facts = facts_from_probes(results)
    assert (facts.arch, facts.aiter.sqrsum_fix, facts.hipcc.found) == ("gfx942", "absent", True)


@pytest.mark.slow
def test_the_doctor_process_never_imports_what_it_diagnoses_and_stays_small():
    """Full probes on this machine's real environment (torch, tilelang and triton are installed here)."""
    code = textwrap.dedent(
        """
        import json, resource, sys

        def peak_kib():
            # VmHWM belongs to this process's own memory map; ru_maxrss can carry over the high-water mark of
            # the process that forked it (pytest, with torch loaded by other tests).
            try:
                with open("/proc/self/status") as f:
                    return int(next(line.split()[1] for line in f if line.startswith("VmHWM:")))
            except (OSError, StopIteration):
                return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        from mhcdoctor.probes import ProbeContext, facts_from_probes, run_probes
        results = run_probes(ProbeContext(timeout=120.0))  # import torch alone has taken over 20 s under CI's load
        facts_from_probes(results)
        heavy = ("torch", "aiter", "tilelang", "amdsmi", "pynvml", "triton", "vllm")
        print(json.dumps({
            "imported": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
            "children": {r.name: r.status for r in results if r.name.endswith(".import") or r.name == "gpu.torch"},
            "peak_mib": peak_kib() / 1024,
        }))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(out.stdout)
    assert seen["imported"] == []
    assert seen["children"]["gpu.torch"] == "ok", "the children did import torch: the check above is real"
    assert seen["peak_mib"] < 80


def test_every_known_fact_names_the_probe_it_came_from(tmp_path):
    root, site = broken_machine(tmp_path)
    fakes.torch(site, "2.9.1+rocm7.2", cuda=None, hip="7.2.26015")
    facts = facts_from_probes(run_probes(fakes.context(tmp_path, site, root=root, timeout=1.5)))
    known = {
        f"{group}.{key}" if isinstance(values, dict) else group
        for group, values in facts.to_dict().items()
        if group != "sources"
        for key, value in (values.items() if isinstance(values, dict) else [(None, values)])
        if value is not None
    }
    known -= {"aiter.sqrsum_fix"} if facts.aiter.sqrsum_fix == "unknown" else set()
    assert known - set(facts.sources) == set()
    assert all(source.startswith("probe:") for source in facts.sources.values())
    assert facts.sources["aiter.imports"] == "probe:aiter.import"


@pytest.mark.slow
def test_torch_that_imports_but_hangs_initialising_the_gpu_still_counts_as_imported(tmp_path):
    site = fakes.site(tmp_path)
    hang_in_init = fakes.fake_torch_gpus([{"name": "x"}]).replace(
        "is_available=lambda: bool(_DEVICES)", "is_available=lambda: __import__('time').sleep(600)"
    )
    fakes.torch(site, init=hang_in_init)
    results = run_probes(fakes.context(tmp_path, site=site, timeout=2))
    gpu_torch = next(r for r in results if r.name == "gpu.torch")
    assert gpu_torch.status == "timeout"
    facts = facts_from_probes(results)
    assert facts.torch.imports is True, "torch imported; only the GPU initialisation hung"
    assert facts.devices == []
