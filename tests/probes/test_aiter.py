"""The aiter probe: AMD's aiter or PyPI's impostor, its version, the sqrsum race fix and the mHC API, from files."""

from __future__ import annotations

import fakes
import pytest

from mhcdoctor.probes import aiter as aiter_probe
from mhcdoctor.probes import facts_from_probes, run_probes


def probe_facts(ctx):
    return facts_from_probes([aiter_probe.probe(ctx), aiter_probe.probe_import(ctx)])


@pytest.mark.parametrize(
    ("kernel", "version", "expected", "said"),
    [
        ("racy", "0.1.13", "absent", "racy store guard"),
        ("fixed", "0.1.14", "present", "fixed store guard"),
        ("v0.1.11", "0.1.11", "present", "before the race existed"),
        ("fixed-reflowed", "0.1.16", "present", "fixed store guard"),
        # The source wins over the version: a 0.1.13-numbered build carrying the fix is fixed.
        ("fixed", "0.1.13.post2.dev4+g1a2b3c", "present", "fixed store guard"),
        ("racy", "0.1.14", "absent", "racy store guard"),
    ],
)
def test_the_installed_kernel_source_decides_the_sqrsum_fix(tmp_path, kernel, version, expected, said):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version=version, kernel=kernel)
    facts = probe_facts(fakes.context(tmp_path, site, fast=True))
    assert facts.aiter.sqrsum_fix == expected
    assert "aiter_meta/csrc/kernels/mhc_kernels.cu:4:" in facts.aiter.sqrsum_fix_evidence
    assert said in facts.aiter.sqrsum_fix_evidence
    assert facts.sources["aiter.sqrsum_fix"] == "probe:aiter"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.1.11", "present"),
        ("0.1.12", "absent"),
        ("0.1.12.post2", "absent"),
        ("0.1.13rc3", "absent"),
        ("0.1.13.post1", "absent"),
        ("0.1.14rc0", "present"),
        ("0.1.14rc1.dev3+gdeadbee", "present"),
        ("0.1.16.post5", "present"),
        ("0.1.12.post2.dev7+g0f3e2a1", "unknown"),
        ("0.1.0", "unknown"),
        ("not-a-version", "unknown"),
    ],
)
def test_without_kernel_source_the_release_list_decides(tmp_path, version, expected):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version=version, kernel=None)
    facts = probe_facts(fakes.context(tmp_path, site, fast=True))
    assert (facts.aiter.version, facts.aiter.sqrsum_fix) == (version, expected)
    assert facts.aiter.sqrsum_fix_evidence.startswith("by version: ")


def test_kernel_source_of_no_known_form_is_unknown_whatever_the_version_says(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.13", kernel="unrecognised")
    result = aiter_probe.probe(fakes.context(tmp_path, site, fast=True))
    assert result.data["sqrsum_fix"] == "unknown"
    assert "no known form of the code aiter #3033 is about" in result.data["sqrsum_fix_evidence"]
    assert set(result.data["fixes"].values()) == {"unknown"}


def test_pypi_aiter_is_an_impostor_even_though_its_version_compares_higher(tmp_path):
    site = fakes.site(tmp_path)
    fakes.impostor_aiter(site)
    facts = probe_facts(fakes.context(tmp_path, site, fast=True))
    assert facts.aiter.present is True, "vLLM's find_spec('aiter') sees it"
    assert (facts.aiter.genuine, facts.aiter.distribution, facts.aiter.version) == (False, "aiter", "0.13.20191203")
    assert facts.aiter.has_mhc_ops is False
    assert facts.aiter.sqrsum_fix == "unknown"


def test_genuine_aiter_reports_its_distribution_and_mhc_layout(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.14", kernel="fixed")
    result = aiter_probe.probe(fakes.context(tmp_path, site, fast=True))
    assert result.status == "ok"
    assert result.data["genuine"] is True
    assert result.data["distribution"] == "amd-aiter"
    assert result.data["has_mhc_ops"] is True
    assert result.data["module_mhc_config"] is True


def test_editable_checkout_reads_csrc_next_to_the_package(tmp_path):
    site, checkout = fakes.site(tmp_path), tmp_path / "src" / "aiter-repo"
    fakes.aiter(site, version="0.1.12.post2.dev9+g1234567", kernel="racy", checkout=checkout)
    facts = probe_facts(fakes.context(tmp_path, [site, checkout], fast=True))
    assert (facts.aiter.genuine, facts.aiter.distribution) == (True, "amd-aiter")
    assert facts.aiter.sqrsum_fix == "absent"
    assert str(checkout / "csrc" / "kernels" / "mhc_kernels.cu") in facts.aiter.sqrsum_fix_evidence


def test_source_tree_without_metadata_takes_its_version_from_version_py(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version=None, kernel=None, version_file="0.1.13.post1")
    facts = probe_facts(fakes.context(tmp_path, site, fast=True))
    assert (facts.aiter.genuine, facts.aiter.distribution, facts.aiter.version) == (True, None, "0.1.13.post1")
    assert facts.aiter.sqrsum_fix == "absent"


@pytest.mark.parametrize(
    ("norm_args", "fused"),
    [(False, False), (True, False), (True, True)],
    ids=["0.1.14-api", "0.1.15-api", "0.1.16-api"],
)
def test_mhc_api_is_read_from_ops_mhc_py(tmp_path, norm_args, fused):
    site = fakes.site(tmp_path)
    fakes.aiter(site, norm_args=norm_args, fused=fused)
    facts = probe_facts(fakes.context(tmp_path, site, fast=True))
    assert (facts.aiter.mhc_pre_norm_args, facts.aiter.has_fused_post_pre) == (norm_args, fused)


def test_a_built_module_mhc_in_aiter_jit_dir_is_found(tmp_path):
    site, jit = fakes.site(tmp_path), tmp_path / "jit-cache"
    fakes.aiter(site, module_mhc_so=jit)
    ctx = fakes.context(tmp_path, site, env={"AITER_JIT_DIR": str(jit)}, fast=True)
    assert facts_from_probes([aiter_probe.probe(ctx)]).aiter.module_mhc_so == str(jit / "module_mhc.so")


def test_no_aiter_is_missing(tmp_path):
    facts = probe_facts(fakes.context(tmp_path, fakes.site(tmp_path), fast=True))
    assert (facts.aiter.present, facts.aiter.sqrsum_fix) == (False, "unknown")


def test_importing_aiter_reports_the_mhc_api_it_really_has(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, norm_args=True, fused=True)
    result = aiter_probe.probe_import(fakes.context(tmp_path, site))
    assert result.status == "ok"
    assert result.data == {
        "imported": True,
        "file": str(site / "aiter" / "__init__.py"),
        "mhc_ops_imported": True,
        "has_fused_post_pre": True,
        "mhc_pre_norm_args": True,
    }


@pytest.mark.slow
def test_an_aiter_whose_import_hangs_is_a_timeout_and_the_file_facts_stand(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.13", kernel="racy", init=fakes.HANG)
    results = [r for r in run_probes(fakes.context(tmp_path, site, timeout=1)) if r.name.startswith("aiter")]
    by_name = {r.name: r for r in results}
    assert by_name["aiter.import"].status == "timeout"
    facts = facts_from_probes(results)
    assert (facts.aiter.imports, facts.aiter.sqrsum_fix) == (False, "absent")
    assert "did not finish within 1 s" in facts.aiter.import_error
