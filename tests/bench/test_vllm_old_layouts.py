"""bench and verify on vLLM 0.20-0.22's kernels, loaded from a wheel laid out as those releases are, on the CPU.

0.20-0.21 keep their tilelang kernels and the functions the model calls (torch.ops.vllm.mhc_pre, mhc_post, and in
0.21 mhc_fused_post_pre and hc_head_fused_kernel, which fills a given `out`) in `vllm/model_executor/layers/mhc.py`;
0.20 has no fused op and computes hc_head in plain torch in its model. 0.22 has today's wrapper
(`kernels/mhc/tilelang.py`) over `vllm/_tilelang_ops.py`, with an hc_head that fills `out`. The synthetic files here
compute with mhcdoctor's torch reference and raise if called other than as each release's model calls them: what is
tested is the fixture's copying and how bench/verify call each layout. The real kernels run on the GPU machine
(scripts/gpu-measure).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import doctor
import needs
import pytest
import vllm_fixture

HERE = Path(__file__).parent
pytestmark = pytest.mark.slow  # bench and verify runs in child processes

# 0.20/0.21's layers/mhc.py: the signatures of the wheel (no norm_weight; hc_head fills `out`)
LAYERS = """
import torch

from mhcdoctor import reference
from vllm.platforms import current_platform
from vllm.utils.deep_gemm import tf32_hc_prenorm_gemm  # 0.20-0.21 have no other prenorm GEMM
from vllm.utils.import_utils import has_tilelang
from vllm.utils.math_utils import cdiv
from vllm.utils.torch_utils import direct_register_custom_op


def mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value,
            sinkhorn_repeat, n_splits=1):
    return reference.mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                             hc_post_mult_value, sinkhorn_repeat)


def mhc_post(x, residual, post_layer_mix, comb_res_mix):
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)
"""
LAYERS_021 = (
    LAYERS
    + """

def mhc_fused_post_pre(x, residual, post_layer_mix, comb_res_mix, fn, hc_scale, hc_base, rms_eps, hc_pre_eps,
                       hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat, n_splits=1, tile_n=1):
    return reference.mhc_fused_post_pre(x, residual, post_layer_mix, comb_res_mix, fn, hc_scale, hc_base, rms_eps,
                                        hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat)


def _hc_head_fused_kernel(hs_flat, fn, hc_scale, hc_base, out, hidden_size, rms_eps, hc_eps, hc_mult):
    assert out.shape == (hs_flat.shape[0], hidden_size) and hc_mult == hs_flat.shape[1]
    out.copy_(reference.hc_head(hs_flat, fn, hc_scale, hc_base, rms_eps, hc_eps))
"""
)
# 0.22: the wrapper imports its kernels from vllm._tilelang_ops; hc_head fills `out`
WRAPPER_022 = """
from mhcdoctor import reference
from vllm._tilelang_ops import KERNELS_022  # the fixture must copy _tilelang_ops.py


def mhc_pre_tilelang(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value,
                     sinkhorn_repeat, n_splits=1, norm_weight=None, norm_eps=1e-6):
    return reference.mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                             hc_post_mult_value, sinkhorn_repeat, norm_weight=norm_weight, norm_eps=norm_eps)


def mhc_post_tilelang(x, residual, post_layer_mix, comb_res_mix):
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)


def mhc_fused_post_pre_tilelang(x, residual, *args, n_splits=1, tile_n=1, norm_weight=None, norm_eps=1e-6):
    return reference.mhc_fused_post_pre(x, residual, *args, norm_weight=norm_weight, norm_eps=norm_eps)


def _hc_head_fused_kernel_tilelang(hs_flat, fn, hc_scale, hc_base, out, hidden_size, rms_eps, hc_eps, hc_mult):
    out.copy_(reference.hc_head(hs_flat, fn, hc_scale, hc_base, rms_eps, hc_eps))
"""


def make_wheel(folder: Path, version: str, files: dict[str, str]) -> Path:
    wheel = folder / f"vllm-{version}-cp38-abi3-manylinux_2_35_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(
            f"vllm-{version}.dist-info/METADATA", f"Name: vllm\nVersion: {version}\nRequires-Dist: tilelang==0.1.9\n"
        )
        for name, text in files.items():
            z.writestr(name, text)
        # a CustomOp file the 0.22 fixture must not copy (it imports vLLM's config machinery)
        if "vllm/_tilelang_ops.py" in files:
            z.writestr("vllm/model_executor/layers/mhc.py", "raise ImportError('not copied by the fixture')\n")
    return wheel


RELEASES = {
    "0.20.0": {"vllm/model_executor/layers/mhc.py": LAYERS},
    "0.21.0": {"vllm/model_executor/layers/mhc.py": LAYERS_021},
    "0.22.0": {
        "vllm/model_executor/kernels/mhc/tilelang.py": WRAPPER_022,
        "vllm/_tilelang_ops.py": "KERNELS_022 = 1\n",
    },
}
CALLED = {
    "0.20.0": {"mhc_pre": "mhc_pre", "mhc_post": "mhc_post"},
    "0.21.0": {"mhc_pre": "mhc_pre", "mhc_post": "mhc_post", "mhc_fused_post_pre": "mhc_fused_post_pre",
               "hc_head": "hc_head"},
    "0.22.0": {"mhc_pre": "mhc_pre_tilelang (norm_weight)", "mhc_post": "mhc_post_tilelang",
               "mhc_fused_post_pre": "mhc_fused_post_pre_tilelang (norm_weight)", "hc_head": "hc_head"},
}  # fmt: skip


def site(tmp_path: Path, version: str) -> dict[str, str]:
    vllm_fixture.build(make_wheel(tmp_path, version, RELEASES[version]), tmp_path / "site")
    # a standalone deep_gemm, as vLLM's vendored one is found, so 0.20-0.21's mhc_pre has its GEMM
    (tmp_path / "dg" / "deep_gemm").mkdir(parents=True)
    (tmp_path / "dg" / "deep_gemm" / "__init__.py").write_text("def tf32_hc_prenorm_gemm(*args):\n    pass\n")
    path = os.pathsep.join([str(tmp_path / "site"), str(tmp_path / "dg"), str(HERE.parents[1])])
    return dict(os.environ, PYTHONPATH=path)


@pytest.mark.parametrize("version", sorted(RELEASES))
def test_each_old_layout_is_benched_as_its_model_calls_it(tmp_path: Path, version: str) -> None:
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    args = ["--hidden", "256", "--device", "cpu", "--tokens", "1", "--repeats", "3", "--path", "vllm:tilelang"]
    doc = json.loads(doctor.run("bench", *args, "--json", env=site(tmp_path, version)).stdout)
    rows = {r["op"]: r for r in doc["results"] if r["path"] == "vllm:tilelang"}
    assert {op: (r["status"], r["called"]) for op, r in rows.items()} == {
        op: ("pass", called) for op, called in CALLED[version].items()
    }
    assert doc["vllm"] == version
    notes = " ".join(next(p["notes"] for p in doc["paths"] if p["path"] == "vllm:tilelang"))
    if version < "0.22":
        assert "vLLM 0.20-0.21: layers/mhc.py's" in notes and "DeepGEMM's tf32_hc_prenorm_gemm" in notes
    assert f"vLLM {version}'s kernel files from its wheel" in notes


def test_the_fixture_copies_0_22s_kernel_module_and_not_its_custom_ops(tmp_path: Path) -> None:
    vllm_fixture.build(make_wheel(tmp_path, "0.22.0", RELEASES["0.22.0"]), tmp_path / "site")
    assert (tmp_path / "site/vllm/_tilelang_ops.py").read_text() == "KERNELS_022 = 1\n"
    assert not (tmp_path / "site/vllm/model_executor/layers/mhc.py").exists()


def test_verify_runs_0_21s_kernels_and_names_the_release(tmp_path: Path) -> None:
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    proc = doctor.run(
        "verify",
        "--path",
        "vllm:tilelang",
        "--device",
        "cpu",
        "--hidden",
        "256",
        "--tokens",
        "1,7",
        "--json",
        env=site(tmp_path, "0.21.0"),
    )
    doc = json.loads(proc.stdout)
    rows = [r for r in doc["results"] if r["path"] == "vllm:tilelang"]
    assert {r["op"] for r in rows} == {"mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"}
    assert all(r["status"] == "pass" for r in rows), rows
