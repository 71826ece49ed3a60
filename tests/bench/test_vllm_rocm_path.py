"""On ROCm, bench and verify call vLLM's mHC CustomOps' forward_hip, as vLLM's DeepSeek-V4 model does, on the CPU.

vLLM 0.34's AMD model (`models/deepseek_v4/amd/model.py`) calls MHCPreOp, MHCPostOp, MHCFusedPostPreOp and HCHeadOp
of `model_executor/layers/mhc.py`, whose `forward_hip` sends each op to aiter, tilelang or torch/triton by vLLM's own
flags (aiter found and supported, its ops.mhc taking `norm_weight`, having `mhc_fused_post_pre`). Here: the vLLM
kernel fixture (tests/bench/vllm_fixture.py) over a small synthetic wheel, a platform stand-in that says ROCm, the
project's stand-in aiter (tests/fakes.py), and a layers/mhc.py with 0.34's dispatch whose branches compute with
mhcdoctor's torch reference: what runs is mhcdoctor's calling code, and vLLM's dispatch decides which path runs what.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import doctor
import fakes
import needs
import pytest
import vllm_fixture
from synthetic_vllm import make_wheel

HERE = Path(__file__).parent

ROCM = """
class _Rocm(_Platform):
    def is_rocm(self) -> bool:  # the machine vLLM's ROCm build runs on
        return True


current_platform = _Rocm()
"""

AITER_OPS = '''"""Stand-in for vllm._aiter_ops (0.34): aiter found and supported where vLLM runs on ROCm."""
import importlib.util

from vllm.platforms import current_platform


def is_aiter_found_and_supported() -> bool:
    return current_platform.is_rocm() and importlib.util.find_spec("aiter") is not None
'''

# vLLM 0.34's layers/mhc.py, its flags and forward_hip branches; each branch's kernel is the torch reference.
LAYER = """
import inspect

from mhcdoctor import reference
from vllm._aiter_ops import is_aiter_found_and_supported

HAS_TILELANG_MHC = True
HAS_AITER_MHC = is_aiter_found_and_supported()


def _aiter_op(name):
    from aiter.ops import mhc
    return getattr(mhc, name, None)


def _accepts_norm(name):
    op = _aiter_op(name) if HAS_AITER_MHC else None
    return op is not None and "norm_weight" in inspect.signature(op).parameters


HAS_AITER_MHC_FUSED = HAS_AITER_MHC and callable(_aiter_op("mhc_fused_post_pre"))
HAS_AITER_MHC_PRE_NORM = _accepts_norm("mhc_pre")
HAS_AITER_MHC_FUSED_NORM = _accepts_norm("mhc_fused_post_pre")


def _aiter_mhc_supported(residual, norm_weight, *, supports_norm):
    return (HAS_AITER_MHC and residual.shape[-1] % 256 == 0 and residual.shape[-2] == 4
            and (norm_weight is None or supports_norm))


class CustomOp:
    def __init__(self):
        raise RuntimeError("a CustomOp is built inside vLLM's config")


class MHCPreOp(CustomOp):
    def forward_hip(self, residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                    hc_post_mult_value, sinkhorn_repeat, n_splits=1, norm_weight=None, norm_eps=0.0):
        return reference.mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                                 hc_post_mult_value, sinkhorn_repeat, norm_weight=norm_weight, norm_eps=norm_eps)


class MHCPostOp(CustomOp):
    def forward_hip(self, x, residual, post_layer_mix, comb_res_mix):
        return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)


class MHCFusedPostPreOp(CustomOp):
    def forward_hip(self, x, residual, post_layer_mix, comb_res_mix, fn, hc_scale, hc_base, rms_eps, hc_pre_eps,
                    hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat, n_splits=1, tile_n=1, norm_weight=None,
                    norm_eps=0.0):
        return list(reference.mhc_fused_post_pre(
            x, residual, post_layer_mix, comb_res_mix, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
            hc_post_mult_value, sinkhorn_repeat, norm_weight=norm_weight, norm_eps=norm_eps))


class HCHeadOp(CustomOp):
    def forward_hip(self, hidden_states, hc_fn, hc_scale, hc_base, rms_norm_eps, hc_eps):
        return reference.hc_head(hidden_states, hc_fn, hc_scale, hc_base, rms_norm_eps, hc_eps)
"""


def rocm_site(folder: Path, fused: bool, norm_args: bool) -> Path:
    site = folder / "site"
    vllm_fixture.build(make_wheel(folder), site)
    platforms = site / "vllm/platforms/__init__.py"
    platforms.write_text(platforms.read_text() + ROCM)
    fakes.write(site / "vllm/_aiter_ops.py", AITER_OPS)
    fakes.write(site / "vllm/model_executor/layers/__init__.py", "")
    fakes.write(site / "vllm/model_executor/layers/mhc.py", LAYER)
    fakes.write(site / "vllm/model_executor/kernels/mhc/aiter.py", "")  # registers aiter's custom ops in vLLM
    fakes.aiter(site, fused=fused, norm_args=norm_args)
    return site


def bench(site: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(HERE.parents[1])]))
    args = ["--model", "deepseek-v4-flash", "--hidden", "256", "--device", "cpu", "--tokens", "1", "--repeats", "3"]
    proc = doctor.run("bench", *args, "--path", "vllm:aiter", "--path", "vllm:tilelang", "--json", env=env)
    return json.loads(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fused", "norm_args", "aiter_ops", "dispatch"),
    [
        # an aiter without mhc_fused_post_pre or norm_weight: vLLM sends the fused op to tilelang
        (False, False, {"mhc_pre", "mhc_post"}, "mhc_pre->aiter, mhc_post->aiter, mhc_fused_post_pre->tilelang"),
        (True, True, {"mhc_pre", "mhc_post", "mhc_fused_post_pre"}, "mhc_fused_post_pre->aiter"),
    ],
)
def test_on_rocm_each_vllm_path_calls_forward_hip_for_the_ops_vllm_sends_it(
    tmp_path: Path, fused: bool, norm_args: bool, aiter_ops: set[str], dispatch: str
) -> None:
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    doc = bench(rocm_site(tmp_path, fused, norm_args))
    rows = {(r["path"], r["op"]): (r["status"], r["called"]) for r in doc["results"]}
    assert {op for path, op in rows if path == "vllm:aiter"} == aiter_ops
    assert {op for path, op in rows if path == "vllm:tilelang"} == {"mhc_pre", "mhc_post", "mhc_fused_post_pre",
                                                                      "hc_head"} - aiter_ops  # fmt: skip
    assert all(status == "pass" and called.split(" ")[0].endswith("Op.forward_hip") for status, called in rows.values())
    # the model passes its norm weight where aiter takes one, else vLLM sends that call to tilelang
    assert ("(norm_weight)" in rows[("vllm:aiter", "mhc_pre")][1]) == norm_args
    notes = {p["path"]: " ".join(p.get("notes", [])) for p in doc["paths"]}
    assert "forward_hip; vLLM's dispatch here: " in notes["vllm:aiter"] and dispatch in notes["vllm:aiter"]


@pytest.mark.slow
def test_on_rocm_without_aiter_the_aiter_path_says_vllm_sends_it_nothing(tmp_path: Path) -> None:
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    site = rocm_site(tmp_path, fused=False, norm_args=False)
    for folder in ("aiter", "aiter_meta"):
        for f in sorted((site / folder).rglob("*"), reverse=True):
            f.unlink() if f.is_file() else f.rmdir()
        (site / folder).rmdir()
    doc = bench(site)
    aiter = next(p for p in doc["paths"] if p["path"] == "vllm:aiter")
    assert aiter["status"] == "unavailable"
    assert aiter["reason"] == (
        "on ROCm vLLM's model sends no mHC op to aiter here (forward_hip: mhc_pre->tilelang, mhc_post->tilelang,"
        " mhc_fused_post_pre->tilelang, hc_head->tilelang)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["xpu", "cpu"])
def test_on_xpu_and_cpu_the_vllm_paths_say_why_they_are_not_timed(tmp_path: Path, platform: str) -> None:
    # forward_xpu (vllm-xpu-kernels) and forward_cpu (the +cpu build's ops) ran on no machine here: no timing faked
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    site = tmp_path / "site"
    vllm_fixture.build(make_wheel(tmp_path), site)
    platforms = site / "vllm/platforms/__init__.py"
    platforms.write_text(platforms.read_text() + f"\n_Platform.is_{platform} = lambda self: True\n")
    doc = bench(site)
    [row] = [p for p in doc["paths"] if p["path"] == "vllm:tilelang"]
    assert row["status"] == "unavailable" and not [r for r in doc["results"] if r["path"].startswith("vllm:")]
    assert row["reason"].startswith(f"on {platform.upper()} vLLM's model calls the CustomOps' forward_{platform}")
    assert "not called or timed by mhcdoctor" in row["reason"]
