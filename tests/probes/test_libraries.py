"""tilelang, triton, vLLM: present and versioned from metadata; imported in one child each, whatever breaks."""

from __future__ import annotations

import fakes
import pytest

from mhcdoctor.probes import facts_from_probes
from mhcdoctor.probes.libraries import TILELANG, TRITON, VLLM, probe_import, probe_metadata


def library_facts(ctx, lib):
    return facts_from_probes([probe_metadata(lib, ctx), probe_import(lib, ctx)])


def test_a_healthy_library_is_present_versioned_and_imports(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "vllm", "0.30.0")
    facts = library_facts(fakes.context(tmp_path, site), VLLM)
    assert (facts.vllm.present, facts.vllm.version, facts.vllm.imports) == (True, "0.30.0", True)
    assert facts.sources["vllm.version"] == "probe:vllm"
    assert facts.sources["vllm.imports"] == "probe:vllm.import"


def test_tilelang_without_libnvrtc_is_present_but_does_not_import(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.12", init=fakes.NVRTC_MISSING)
    facts = library_facts(fakes.context(tmp_path, site), TILELANG)
    assert (facts.tilelang.present, facts.tilelang.imports) == (True, False)
    assert facts.tilelang.import_error == (
        "OSError: libnvrtc.so.13: cannot open shared object file: No such file or directory"
    )


def test_the_import_error_keeps_the_traceback_as_evidence(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.12", init=fakes.NVRTC_MISSING)
    result = probe_import(TILELANG, fakes.context(tmp_path, site))
    assert result.status == "error"
    trace = next(line for line in result.evidence if line.startswith("traceback"))
    assert "tilelang/__init__.py" in trace
    assert trace.endswith("OSError: libnvrtc.so.13: cannot open shared object file: No such file or directory")


@pytest.mark.slow
def test_an_import_that_hangs_is_a_timeout(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "triton", "3.5.0", init=fakes.HANG)
    result = probe_import(TRITON, fakes.context(tmp_path, site, timeout=0.5))
    assert (result.status, result.error) == ("timeout", "child: import triton did not finish within 0.5 s")


@pytest.mark.slow
def test_an_import_that_segfaults_is_a_crash_with_the_signal(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.15", init=fakes.SEGFAULT)
    result = probe_import(TILELANG, fakes.context(tmp_path, site))
    assert (result.status, result.error) == ("crash", "child: import tilelang crashed (SIGSEGV)")
    facts = facts_from_probes([result])
    assert (facts.tilelang.imports, facts.tilelang.import_error) == (False, result.error)


def test_systemexit_in_init_is_an_import_error_not_a_silent_success(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "vllm", "0.25.0", init=fakes.raises("SystemExit('unsupported platform')"))
    result = probe_import(VLLM, fakes.context(tmp_path, site))
    assert (result.status, result.error) == ("error", "SystemExit: unsupported platform")


def test_a_missing_library_starts_no_child(tmp_path):
    facts = library_facts(fakes.context(tmp_path, fakes.site(tmp_path)), TILELANG)
    assert (facts.tilelang.present, facts.tilelang.imports) == (False, False)


def test_a_source_checkout_without_metadata_gets_its_version_from_version_py(tmp_path):
    site = fakes.site(tmp_path)
    fakes.package(site, "tilelang", {"_version.py": "__version__ = version = '0.1.13.dev5+g00ff'\n"})
    result = probe_metadata(TILELANG, fakes.context(tmp_path, site, fast=True))
    assert (result.status, result.data["version"], result.data["distribution"]) == ("ok", "0.1.13.dev5+g00ff", None)


@pytest.mark.parametrize("lib", [TILELANG, TRITON, VLLM], ids=lambda lib: lib.module)
def test_fast_mode_skips_imports(tmp_path, lib):
    site = fakes.site(tmp_path)
    fakes.library(site, lib.module, "1.0")
    facts = library_facts(fakes.context(tmp_path, site, fast=True), lib)
    package = getattr(facts, lib.module)
    assert (package.present, package.version, package.imports) == (True, "1.0", None), "not tried is unknown"
