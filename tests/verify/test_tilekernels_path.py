"""The tilekernels path: TileKernels' calling conventions adapted to the reference's, and a tile-kernels that
does not import with the installed tilelang is a reason with its evidence, not a crash.

No GPU here: the adapter is checked against a stand-in with TileKernels' shapes (tile-kernels 1.0.0:
`mhc_post` asserts residual [batch, tokens, n, H]; `mhc_head`'s mix kernel asserts a 3-D mix), computing with
mhcdoctor's reference, through verify's own check on the CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mhcdoctor.kernels import PathImpl
from mhcdoctor.kernels.tilekernels_path import _Ops
from mhcdoctor.verify.cases import Params
from mhcdoctor.verify.worker import check_case

torch = pytest.importorskip("torch")
from mhcdoctor import reference  # noqa: E402  (imports torch)


def big_fuse(residual, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult, repeat):
    post, comb, layer_input = reference.mhc_pre(
        residual, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult, repeat
    )
    return post.reshape(-1, residual.shape[-2]), comb, layer_input  # post_mix as [T, n], as some versions do


def post(x, residual, post_layer_mix, comb_res_mix):
    assert residual.dim() == 4 and x.dim() == 3 and post_layer_mix.shape[-1] == 1, "TileKernels' batch axis"
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)


def head(residual, fn, scale, base, *, norm_eps, mhc_mult, pre_eps):
    assert residual.dim() == 4 and scale.shape == (1,), "mhc_head_compute_mix asserts a 3-D mix"
    return reference.hc_head(residual, fn, scale, base, norm_eps, pre_eps)


STANDIN = PathImpl(
    "tilekernels",
    _Ops(SimpleNamespace(mhc_pre_big_fuse=big_fuse, mhc_post=post), SimpleNamespace(mhc_head=head)).as_dict(),
)
P = Params(256, 4, 1e-6, 1e-6, 1e-6, 2.0, 20)


@pytest.mark.parametrize("op", ["mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"])
def test_the_adapted_calls_pass_verify(op: str) -> None:
    assert check_case(STANDIN, op, 7, P, "cpu")["status"] == "pass"


def test_a_tilelang_without_utils_target_makes_the_path_unavailable_with_the_evidence(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for name, version, files in (
        ("tilelang", "0.1.12", {"tilelang/__init__.py": "", "tilelang/utils/__init__.py": ""}),
        ("tile_kernels", "1.0.0", {"tile_kernels/__init__.py": "from tilelang.utils.target import determine_target\n"}),
    ):
        for rel, text in files.items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text(text)
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(Path(__file__).parents[2])]))
    proc = subprocess.run(
        [sys.executable, "-m", "mhcdoctor", "verify", "--path", "tilekernels", "--device", "cpu", "--json"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    path = json.loads(proc.stdout)["paths"][0]
    assert (proc.returncode, path["status"]) == (3, "unavailable")
    assert path["reason"] == (
        "tile_kernels 1.0.0 does not import with tilelang 0.1.12: "
        "ModuleNotFoundError: No module named 'tilelang.utils.target'"
    )
