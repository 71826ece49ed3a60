"""`aiter-delayed-api-too-old` through vLLM's real code on the CPU: DeepSeek-V4.1's delayed pre (MHCPreDelayedOp)
inside the real vLLM 0.30.0 and 0.34.0 wheels, on a stand-in ROCm MI300X (gfx942, 304 CUs), against aiter at
v0.1.15, v0.1.17 and v0.1.18; and `aiter-seam-rmsnorm-missing`: the same op in vLLM 0.32.0 and 0.34.0 on a stand-in
gfx950, where the seam imports aiter's Triton module (aiter/ops/triton/ here: empty stand-ins of v0.1.20's files).

Real: vLLM (layers/mhc.py's flags and forward_hip, kernels/mhc/aiter.py, _aiter_ops.py mhc_pre_delayed and its tail),
and of aiter each tag's aiter/ops/mhc.py and aiter/jit/utils/torch_guard.py, their text unchanged (tests/data/
aiter_tags, from `git show TAG:PATH` of ROCm/aiter). Stand-in (tests/fakes.tagged_aiter): compile_ops (aiter/jit/
core.py's pybind branch, wrapped by the tag's own torch_compile_guard as aiter wraps it, with no JIT build), the
built module_mhc (the tag's MHC_PYBIND argument lists, checked like pybind11; nothing computed: it zeroes its
tensors), aiter.dtypes, chip_info (the GPU's arch and CU count) and amdsmi. What the finding read from the code, the
real code shows, with one correction: v0.1.16–v0.1.17 refuse the extra argument with torch's RuntimeError (the op's
registered schema), not a TypeError. Cost: five vLLM imports, about 35 s on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import doctor
import fakes
import pytest
from vllm_wheels import IMPORT_NEEDS

# One xdist worker runs the real-vLLM children in turn: each imports a whole vLLM, and several at once on two cores
# pushed other tests' 20 s import limits over (tests/probes/test_run.py, tests/real/test_real_packages.py).
pytestmark = [pytest.mark.real, pytest.mark.slow, pytest.mark.xdist_group("vllm-wheels")]

HERE = Path(__file__).parent
ID = "aiter-delayed-api-too-old"
HIDDEN = 4096  # DeepSeek-V4.1-Flash's; a multiple of 256 with hc_mult 4, so _aiter_mhc_supported holds
CALLS = [f"{form}@{tokens}" for form in ("post", "plain") for tokens in (1, 20, 200)]  # the child's calls
# gfx942 folds the post into aiter's fused GEMM below 128 tokens (_aiter_ops.py
# mhc_fused_post_pre_delayed_prefers_unfused); from 128 vLLM applies the post apart and calls mhc_pre_gemm_sqrsum
FUSED = {"post@1", "post@20"}
SEAM_ID = "aiter-seam-rmsnorm-missing"
# `git ls-tree --name-only v0.1.20 aiter/ops/triton/fusions/` in ROCm/aiter (fc2e5d57fb): no seam module
FUSIONS_V0_1_20 = (HERE.parent / "data" / "aiter_fusions_v0.1.20.txt").read_text().split()


def _delayed(installed, release: str, tag: str, tmp_path: Path, arch: str = "gfx942") -> tuple[dict, str]:
    site = fakes.site(tmp_path)
    fakes.amdsmi(site, arch)
    folder = fakes.tagged_aiter(site, tag, arch, 304 if arch == "gfx942" else 256)
    for name in ["__init__.py", *(f"fusions/{n}" for n in FUSIONS_V0_1_20)]:  # empty stand-ins of aiter's Triton ops
        fakes.write(folder / "ops" / "triton" / name, "")
    folders = [site, installed(f"vllm=={release}"), *(installed(spec) for spec in IMPORT_NEEDS)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MHCDOCTOR_", "VLLM_", "PYTHONPATH"))}
    env.update(HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(str(f) for f in folders), NO_COLOR="1")
    env["VLLM_CONFIGURE_LOGGING"] = "1"
    done = subprocess.run(
        [sys.executable, str(HERE / "vllm_delayed_child.py"), str(HIDDEN), *(["norm"] if arch == "gfx950" else [])],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["vllm"] == release and list(report["results"]) == CALLS
    assert report["flags"]["HAS_AITER_MHC"] and not report["flags"]["HAS_TILELANG_MHC"]  # vLLM's own, from its code
    # gfx950's from 0.32 (layers/mhc.py:62-76), with no probe of aiter's module
    assert report["flags"].get("HAS_AITER_MHC_FUSED_POST_PRE_DELAYED_RMS_NORM", False) == (arch == "gfx950")
    return report, output


def _log_ids(tmp_path: Path, output: str) -> dict[str, str]:
    (tmp_path / "vllm.log").write_text(output)
    log = json.loads(doctor.run("log", str(tmp_path / "vllm.log"), "--json").stdout)
    return {f["id"]: f["severity"] for f in log["findings"]}


def _explain(release: str, aiter: str) -> tuple[int, set[str]]:
    args = ("--model", "deepseek-v4.1-flash", "--platform", "rocm", "--arch", "gfx942", "--aiter", aiter)
    done = doctor.run("explain", *args, "--tilelang", "none", "--vllm", release, "--json")
    return done.returncode, {f["id"] for f in json.loads(done.stdout)["findings"] if f["severity"] == "fail"}


@pytest.mark.parametrize("release", ("0.30.0", "0.34.0"))
def test_v0_1_17_refuses_vllms_sixth_argument_and_the_log_and_explain_name_the_finding(installed, release, tmp_path):
    report, output = _delayed(installed, release, "v0.1.17", tmp_path)
    for call, result in report["results"].items():
        gemm, given = ("mhc_fused_post_pre_gemm_sqrsum", 11) if call in FUSED else ("mhc_pre_gemm_sqrsum", 5)
        assert result["raised"] == "RuntimeError", (call, result)
        assert result["message"].startswith(
            f"aiter::{gemm}() expected at most {given} argument(s) but received {given + 1} argument(s)"
        ), (call, result)
        # raised in aiter's own wrapper, called from vLLM's mhc_pre_delayed: never inside vLLM's tail
        (at,) = [i for i, frame in enumerate(result["frames"]) if frame.endswith("vllm/_aiter_ops.py:mhc_pre_delayed")]
        assert result["frames"][at + 1] == "aiter/jit/utils/torch_guard.py:wrapper_custom", result["frames"]
        assert "mhc/aiter.py:mhc_pre_delayed_aiter" in result["frames"][at - 1]
    assert _log_ids(tmp_path, output).get(ID) == "fail"
    code, fails = _explain(release, "0.1.17")
    assert code == 3 and ID in fails


@pytest.mark.parametrize("release", ("0.30.0", "0.34.0"))
def test_v0_1_18_takes_the_gemm_and_fails_only_in_vllms_triton_tail_on_this_cpu(installed, release, tmp_path):
    """aiter #4115's API accepts both calls (the stand-in binding takes is_fn_pack_bf16); what raises next is vLLM's
    own Triton tail (kernels/mhc/triton.py, launched through _mhc_delayed_pre_tail), which this CPU cannot run
    (a CUDA wheel's triton stand-in): not aiter's, and no finding of it."""
    report, output = _delayed(installed, release, "v0.1.18", tmp_path)
    for call, result in report["results"].items():
        frames = result["frames"]
        assert "vllm/_aiter_ops.py:_mhc_delayed_pre_tail" in " ".join(frames), (call, result)
        assert frames[-1].endswith("vllm/model_executor/kernels/mhc/triton.py:mhc_pre_mix_triton"), (call, frames)
        assert not any(frame.startswith("aiter/") for frame in frames), (call, frames)
    assert ID not in _log_ids(tmp_path, output)
    code, fails = _explain(release, "0.1.18")
    assert ID not in fails


def test_v0_1_15_fails_at_the_import_of_v0_1_16s_helper(installed, tmp_path):
    report, output = _delayed(installed, "0.34.0", "v0.1.15", tmp_path)
    for call, result in report["results"].items():
        assert result["raised"] == "ImportError", (call, result)
        assert result["message"].startswith(
            "cannot import name 'get_mhc_fused_post_pre_config' from 'aiter.ops.mhc'"
        ), result
        assert result["frames"][-1].endswith("vllm/_aiter_ops.py:mhc_pre_delayed"), result["frames"]
    assert _log_ids(tmp_path, output).get(ID) == "fail"
    code, fails = _explain("0.34.0", "0.1.15")
    assert code == 3 and ID in fails


@pytest.mark.parametrize("release", ("0.32.0", "0.34.0"))
def test_on_gfx950_the_seam_imports_aiters_triton_module_that_no_tag_ships(installed, release, tmp_path):
    """`aiter-seam-rmsnorm-missing`: on gfx950 the model passes norm_weight and forward_hip's first branch imports
    aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm at the call; aiter/ops/triton/fusions/ as v0.1.20
    lists it (empty stand-in files) has no such module, with v0.1.18's real ops/mhc.py (not reached)."""
    report, output = _delayed(installed, release, "v0.1.18", tmp_path, arch="gfx950")
    for call, result in report["results"].items():
        assert result["raised"] == "ModuleNotFoundError", (call, result)
        assert result["message"] == "No module named 'aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm'"
        caller, importer = result["frames"][-2:]  # raised at the import, inside vLLM's own function
        assert caller.endswith("vllm/model_executor/kernels/mhc/aiter.py:mhc_fused_post_pre_delayed_rms_norm_aiter")
        assert importer.endswith("vllm/_aiter_ops.py:mhc_fused_post_pre_delayed_rms_norm"), (call, result["frames"])
    assert _log_ids(tmp_path, output).get(SEAM_ID) == "fail"
    args = ("--model", "deepseek-v4.1-flash", "--platform", "rocm", "--arch", "gfx950", "--aiter", "0.1.18")
    done = doctor.run("explain", *args, "--tilelang", "none", "--vllm", release, "--json")
    assert done.returncode == 3 and SEAM_ID in {f["id"] for f in json.loads(done.stdout)["findings"]}
