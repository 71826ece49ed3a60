"""A failing verify row that matches a known bug (op, token range, shape, the path's version) names it and its fix,
in the JSON (verify/1 rows' `known_bugs`), the text and the problems list; a failure no record matches names none.

The planted failures are vLLM-shaped kernels over mhcdoctor's torch reference, loaded through the kernel fixture
from a synthetic wheel as vLLM 0.26.0's (tests/bench/vllm_fixture.py): mhc_pre wrong from 1024 tokens, as 0.22–0.26's
block-M prenorm GEMM under tilelang 0.1.9 measured on the H200; the fused post+pre leaving columns unwritten at 16
tokens or fewer, as 0.21–0.29's small-token kernel does at a hidden size it does not divide; mhc_pre raising where
hc_mult * hidden is no multiple of 512, as 0.22–0.34's tilelang GEMM asserts.
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from pathlib import Path

import doctor
import jsonschema
import needs
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
import vllm_fixture  # noqa: E402

ROOT = Path(__file__).parents[2]
SCHEMA = json.loads((ROOT / "mhcdoctor" / "schemas" / "verify.schema.json").read_text())

PLANTED = """
import torch

from mhcdoctor import reference
from mhcdoctor.knowledge.known import fused_small_fma_lost


def mhc_pre_tilelang(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value,
                     sinkhorn_repeat, n_splits=1, norm_weight=None, norm_eps=1e-6):
    assert (residual.shape[-2] * residual.shape[-1]) % 512 == 0  # planted: 0.22-0.34's tilelang GEMM's
    post, comb, layer_input = reference.mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps,
                                                hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat,
                                                norm_weight=norm_weight, norm_eps=norm_eps)
    if residual.shape[0] >= 1024:  # planted: prefill's post_mix off by 1.5
        post = post + 1.5
    return post, comb, layer_input


def mhc_post_tilelang(x, residual, post_layer_mix, comb_res_mix):
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)


def mhc_fused_post_pre_tilelang(x, residual, *args, n_splits=1, tile_n=1, norm_weight=None, norm_eps=1e-6):
    out = reference.mhc_fused_post_pre(x, residual, *args, norm_weight=norm_weight, norm_eps=norm_eps)
    if fused_small_fma_lost(residual.shape[-1], residual.shape[-2], residual.shape[0]):  # planted: columns not written
        out[0][..., -64:] = float("nan")
    return out


def hc_head_fused_kernel_tilelang(hs_flat, fn, hc_scale, hc_base, rms_eps, hc_eps):
    return reference.hc_head(hs_flat, fn, hc_scale, hc_base, rms_eps, hc_eps)
"""


def planted(tmp_path: Path, version: str) -> dict[str, str]:
    wheel = tmp_path / f"vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"vllm-{version}.dist-info/METADATA", f"Name: vllm\nVersion: {version}\n")
        z.writestr("vllm/model_executor/kernels/mhc/tilelang.py", PLANTED)
        z.writestr("vllm/model_executor/kernels/mhc/tilelang_kernels.py", "")
    vllm_fixture.build(wheel, tmp_path / "site")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT)]))


def verify(env: dict[str, str], *args: str) -> tuple[dict, str, int]:
    base = ["verify", "--path", "vllm:tilelang", "--device", "cpu", *args]
    proc = doctor.run(*base, "--json", env=env)
    text = doctor.run(*base, env=env)
    return json.loads(proc.stdout), text.stdout, proc.returncode


def bad(doc: dict) -> dict[tuple[str, int], list[str] | None]:
    return {
        (r["op"], r["tokens"]): [b["id"] for b in r["known_bugs"]] if "known_bugs" in r else None
        for r in doc["results"]
        if r["status"] != "pass"
    }


pytestmark = pytest.mark.slow  # verify runs in child processes


@pytest.fixture(autouse=True)
def _torch() -> None:
    if not needs.installed("torch"):
        pytest.skip("needs torch")


def test_026s_prefill_failure_names_the_block_m_bug_and_its_fix(tmp_path: Path) -> None:
    doc, text, code = verify(planted(tmp_path, "0.26.0"), "--hidden", "2048", "--tokens", "16,1024")
    jsonschema.validate(doc, SCHEMA)
    assert bad(doc) == {("mhc_pre", 1024): ["tilelang-prenorm-block-m"]} and code == 3
    row = next(r for r in doc["results"] if r["op"] == "mhc_pre" and r["tokens"] == 1024)
    assert row["known_bugs"][0]["proof"] == "measured" and "vllm>=0.27" in row["known_bugs"][0]["fix"]
    assert "↳ known bug tilelang-prenorm-block-m (measured): vLLM 0.22–0.26's block-M prenorm GEMM" in text
    assert "fix: pip install -U 'vllm>=0.27'" in text
    assert any("(known bug tilelang-prenorm-block-m: pip install -U 'vllm>=0.27'" in p for p in doc["problems"])


def test_a_small_batch_failure_at_a_hidden_the_fused_kernel_does_not_divide_names_the_shape_bug(
    tmp_path: Path,
) -> None:
    doc, text, _ = verify(planted(tmp_path, "0.26.0"), "--hidden", "2560", "--tokens", "7")
    assert bad(doc) == {("mhc_fused_post_pre", 7): ["tilelang-fused-shape"]}
    assert "↳ known bug tilelang-fused-shape (measured): vLLM 0.21–0.29's fused post+pre skips part of a shape" in text


def test_a_failure_no_record_matches_names_none(tmp_path: Path) -> None:
    # the same planted prefill failure in a release the block-M bug is not in: only the error figures
    doc, text, code = verify(planted(tmp_path, "0.27.0"), "--hidden", "512", "--tokens", "1024")
    assert bad(doc) == {("mhc_pre", 1024): None} and code == 3
    assert "known bug" not in text


# 0.34.0: the assert moved into tilelang_kernels.py in 0.30 and stayed (0.34.0 tilelang_kernels.py:1261)
@pytest.mark.parametrize("release", ["0.26.0", "0.34.0"])
def test_a_crash_at_a_shape_the_tilelang_gemm_asserts_on_names_that_bug_and_not_the_wrong_results_ones(
    tmp_path: Path, release: str
) -> None:
    doc, text, _ = verify(planted(tmp_path, release), "--hidden", "2000", "--tokens", "7")
    pre = next(r for r in doc["results"] if r["op"] == "mhc_pre")
    assert pre["status"] == "error" and [b["id"] for b in pre["known_bugs"]] == ["tilelang-gemm-shape"]
    assert "↳ known bug tilelang-gemm-shape (code): vLLM 0.22–0.34's tilelang prenorm GEMM asserts" in text


@pytest.mark.parametrize(
    "release, tokens, named",
    [("0.22.0", 512, ["tilelang-pre-norm-stages"]),  # measured: 0.22's three-stage pre, wrong from 512 at 7168
     ("0.22.1", 1024, ["tilelang-prenorm-block-m", "tilelang-pre-norm-stages"]),  # both carry a 1024-token failure
     ("0.23.0", 512, [])],  # 0.23.0 pipelines in 2 stages; below 1024 no record is named on a guess
)  # fmt: skip
def test_a_failing_vllm_022_pre_row_names_the_three_stage_pipeline(release, tokens, named):
    from mhcdoctor.verify.known_bugs import matching, platform_of

    found = matching("vllm:tilelang", release, "mhc_pre", tokens, 7168, 4, "fail", platform_of("NVIDIA H200"))
    assert sorted(bug["id"] for bug in found) == sorted(named)  # tilelang-wrong-arch is gfx942's: not on an H200
    on_mi300x = matching(
        "vllm:tilelang", release, "mhc_pre", tokens, 7168, 4, "fail", platform_of("AMD Instinct MI300X")
    )
    assert "tilelang-pre-norm-stages" not in {bug["id"] for bug in on_mi300x}  # 0.22's ROCm model folds no norm
    for bug in found:
        assert bug["proof"] == "measured" and bug["fix"]
