"""The probes the known-bugs catalogue reads: apache-tvm-ffi and DeepGEMM from metadata and files, the environment
variables vLLM's mHC code reads, tilelang's kernel cache and aiter's module_mhc.so, each on fake installs."""

from __future__ import annotations

import os
import time

import fakes

from mhcdoctor.models import BUILTIN_MODELS
from mhcdoctor.probes import PROBES, facts_from_probes
from mhcdoctor.rules import decide


def probe(name: str, ctx):
    return PROBES[name](ctx)


def test_apache_tvm_ffi_and_tilelang_versions_come_from_metadata_in_fast_mode(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.11")
    fakes.library(site, "tvm_ffi", "0.1.15.post2", dist="apache-tvm-ffi")
    ctx = fakes.context(tmp_path, site, fast=True)
    facts = facts_from_probes([probe(n, ctx) for n in ("tilelang", "tvm_ffi")])
    assert (facts.tilelang.version, facts.tvm_ffi.version) == ("0.1.11", "0.1.15.post2")
    assert facts.sources["tvm_ffi.version"] == "probe:tvm_ffi"


def test_a_standalone_deep_gemm_shadows_vllms_vendored_copy(tmp_path):
    site = fakes.site(tmp_path)
    fakes.package(site, "vllm", {"third_party/deep_gemm/__init__.py": "from ._C import tf32_hc_prenorm_gemm\n"
                                 "__version__ = '2.8.1'\n"})  # fmt: skip
    vendored = probe("deepgemm", fakes.context(tmp_path, site)).data
    assert (vendored["vendored"], vendored["version"], vendored["has_prenorm_gemm"]) == (True, "2.8.1", True)
    fakes.library(site, "deep_gemm", "2.1.1")
    standalone = probe("deepgemm", fakes.context(tmp_path, site)).data
    assert (standalone["vendored"], standalone["version"], standalone["has_prenorm_gemm"]) == (False, "2.1.1", False)


def test_no_deep_gemm_anywhere_is_missing(tmp_path):
    result = probe("deepgemm", fakes.context(tmp_path, fakes.site(tmp_path)))
    assert result.status == "missing" and result.data == {"present": False}


def test_only_the_env_vars_vllms_mhc_code_reads_are_kept(tmp_path):
    ctx = fakes.context(tmp_path, env={"VLLM_USE_DEEP_GEMM": "0", "TILELANG_CACHE_DIR": "/c", "SECRET_TOKEN": "x"})
    facts = facts_from_probes([probe("vllm.env", ctx)])
    assert facts.vllm_env == {"VLLM_USE_DEEP_GEMM": "0", "TILELANG_CACHE_DIR": "/c"}


def _tilelang_cache(tmp_path, kernels: dict[str, str]):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.12")
    cache = tmp_path / "tlcache"
    for key, source in kernels.items():
        fakes.write(cache / "0.1.12-x86_64" / "kernels" / key / "device_kernel.cu", source)
    return fakes.context(tmp_path, site, env={"TILELANG_CACHE_DIR": str(cache)})


def test_the_tilelang_cache_counts_vllms_mhc_kernels_of_this_tilelang(tmp_path):
    ctx = _tilelang_cache(tmp_path, {"a": 'extern "C" __global__ void mhc_post_tilelang_kernel(', "b": "gemm_kernel"})
    data = probe("tilelang.cache", ctx).data
    assert (data["entries"], data["mhc_entries"], data["exists"]) == (2, 1, True)


def test_a_cold_cache_on_cuda_0_29_is_a_warning_that_kernels_compile_while_serving(tmp_path):
    ctx = _tilelang_cache(tmp_path, {"b": "gemm_kernel"})
    facts = facts_from_probes([probe(n, ctx) for n in ("tilelang", "tilelang.cache")])
    facts.platform, facts.arch = "cuda", "sm_90"
    cold = next(f for f in decide(facts, BUILTIN_MODELS["deepseek-v4-pro"], "0.29.0").findings
                if f.id == "tilelang-cache-cold")  # fmt: skip
    assert cold.severity == "warn" and "#51790" in cold.detail and "6–10 s" in cold.detail
    earlier = decide(facts, BUILTIN_MODELS["deepseek-v4-pro"], "0.22.1").findings  # 0.22 warms its kernels up
    assert "tilelang-cache-cold" not in {f.id for f in earlier if f.severity in ("warn", "fail")}


def _aiter_with_so(tmp_path, targets: list[str], built_before_install: bool, core: str | None = "v0.1.16.post6"):
    """A fake aiter whose jit/core.py is the real get_module of `core` (tests/data/aiter_code; None: the fake's
    placeholder, which holds no get_module), and a module_mhc.so for `targets` in $AITER_JIT_DIR."""
    site = fakes.site(tmp_path)
    jit = tmp_path / "aiterjit"
    package = fakes.aiter(site, "0.1.16", norm_args=True, fused=True)
    if core is not None:
        fakes.write(package / "jit" / "core.py", (fakes.AITER_CODE / f"{core}.jit_core_py").read_text())
    bundle = "".join(f"__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--{t}:sramecc+" for t in targets)
    so = fakes.write(jit / "module_mhc.so", "ELF" + bundle)
    if built_before_install:
        old = time.time() - 86400
        os.utime(so, (old, old))
    return fakes.context(tmp_path, site, env={"AITER_JIT_DIR": str(jit)})


def _jit_stale(ctx):
    facts = facts_from_probes([probe(n, ctx) for n in ("aiter", "aiter.jit")])
    facts.platform, facts.arch = "rocm", "gfx942"
    found = decide(facts, BUILTIN_MODELS["deepseek-v4-pro"], "0.25.0").findings
    return next((f for f in found if f.id == "aiter-jit-stale"), None)


def test_module_mhc_so_for_another_gfx_fails_where_aiter_loads_it_by_name(tmp_path):
    ctx = _aiter_with_so(tmp_path, ["gfx950"], built_before_install=False)
    data = probe("aiter.jit", ctx).data
    assert (data["targets"], data["arch_rebuild"]) == (["gfx950"], False)
    stale = _jit_stale(ctx)
    assert stale is not None and stale.severity == "fail" and "gfx950" in stale.detail
    assert "the first mHC call fails" in stale.detail and stale.fix.startswith("rm -f ") and stale.ops


def test_module_mhc_so_for_another_gfx_is_only_info_where_aiter_0_1_17_rebuilds_it(tmp_path):
    ctx = _aiter_with_so(tmp_path, ["gfx950"], built_before_install=False, core="v0.1.17")
    assert probe("aiter.jit", ctx).data["arch_rebuild"] is True
    stale = _jit_stale(ctx)
    assert stale is not None and stale.severity == "info" and stale.ops == []
    assert "rebuilds it for this GPU at the first mHC call" in stale.detail and "#3849" in stale.detail


def test_module_mhc_so_for_another_gfx_is_a_warning_where_aiters_jit_code_cannot_be_read(tmp_path):
    ctx = _aiter_with_so(tmp_path, ["gfx950"], built_before_install=False, core=None)
    assert probe("aiter.jit", ctx).data["arch_rebuild"] is None
    stale = _jit_stale(ctx)
    assert stale is not None and stale.severity == "warn" and "could not be read" in stale.detail


def test_module_mhc_so_older_than_the_installed_aiter_is_stale_and_a_fresh_one_is_not(tmp_path):
    for core in ("v0.1.16.post6", "v0.1.17"):  # v0.1.17 checks the arch only: an old .so still loads by name
        for old, fires in ((True, True), (False, False)):
            ctx = _aiter_with_so(tmp_path / core / str(old), ["gfx942"], built_before_install=old, core=core)
            stale = _jit_stale(ctx)
            assert (stale is not None and stale.severity == "fail") is fires, (core, old)
