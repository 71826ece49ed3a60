"""The tilekernels path: both TileKernels layouts found and adapted to the reference's calls, a third layout or an
import that fails is a reason with its evidence, never a crash.

No GPU here. Stand-in `tile_kernels` packages are written as real files into a temporary folder, each with a
dist-info, and imported as a user's would be:
- 1.x (tile-kernels 1.0.0): `tile_kernels.modeling.mhc` ops with 1.0.0's asserted shapes (`mhc_post` takes
  residual [batch, tokens, n, H]; `mhc_head`'s mix kernel a 3-D mix), computing with mhcdoctor's reference;
- 2.x (tile-kernels 2.1.0): `tile_kernels.mhc`'s forward kernels with 2.1.0's signatures, asserting the shapes,
  dtypes and contiguity its tilelang kernels declare and writing their outputs in place, computed with torch on the
  CPU from the kernels' own steps (not from mhcdoctor's reference);
- neither layout.
The CLI refuses to run TileKernels on the CPU (its kernels are tilelang's), so the numbers are checked through the
adapter's `load` and verify's own loop (`run_path`), and what `verify --device cpu` says through the real CLI.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import doctor
import needs
import pytest

from mhcdoctor.kernels import OpUnsupported, PathImpl, PathUnavailable
from mhcdoctor.kernels import tilekernels_path as tk
from mhcdoctor.verify.cases import Params
from mhcdoctor.verify.worker import check_case, run_path

pytestmark = [needs.library("torch"), pytest.mark.slow, pytest.mark.xdist_group("torch-in-process")]  # conftest.py

REPO = Path(__file__).parents[2]
P = Params(256, 4, 1e-6, 1e-6, 1e-6, 2.0, 20)
OPS = ["mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"]

V1_FILES = {
    "tile_kernels/__init__.py": "from . import mhc, modeling\n",
    "tile_kernels/mhc/__init__.py": "# 1.0.0 has tile_kernels.mhc too: kernel factories, not 2.x's *_fwd\n",
    "tile_kernels/modeling/__init__.py": "from . import mhc\n",
    "tile_kernels/modeling/mhc/__init__.py": "from .functional import mhc_head\n",
    "tile_kernels/modeling/mhc/ops.py": """
        from mhcdoctor import reference

        def mhc_pre_big_fuse(residual, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult, repeat):
            post, comb, layer_input = reference.mhc_pre(
                residual, fn, scale, base, rms_eps, pre_eps, sinkhorn_eps, post_mult, repeat
            )
            return post.reshape(-1, residual.shape[-2]), comb, layer_input  # post_mix as [T, n], as some builds do

        def mhc_post(x, residual, post_layer_mix, comb_res_mix):
            assert residual.dim() == 4 and x.dim() == 3 and post_layer_mix.shape[-1] == 1, "1.0.0's batch axis"
            return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)
        """,
    "tile_kernels/modeling/mhc/functional.py": """
        from mhcdoctor import reference

        def mhc_head(residual, fn, scale, base, *, norm_eps, mhc_mult, pre_eps):
            assert residual.dim() == 4 and scale.shape == (1,), "mhc_head_compute_mix asserts a 3-D mix"
            return reference.hc_head(residual, fn, scale, base, norm_eps, pre_eps)
        """,
}

# 2.1.0's wrappers (tile_kernels/mhc/*_kernel.py) with the shapes their tilelang kernels declare (*_cuda.py).
V2_KERNELS = """
    import torch

    F32, BF16 = torch.float32, torch.bfloat16


    def _arg(t, shape, dtype):
        assert tuple(t.shape) == tuple(shape) and t.dtype == dtype and t.is_contiguous(), (tuple(t.shape), t.dtype)


    def mhc_pre_big_fuse_fwd(gemm_out_mul, gemm_out_sqrsum, mhc_scale, mhc_base, residual, post_mix, comb_mix,
                             layer_input, rms_eps, mhc_pre_eps, mhc_sinkhorn_eps, mhc_post_mult_value,
                             sinkhorn_repeat, n_splits=16):
        t, n, h = residual.shape
        m = n * (n + 2)
        for arg, shape, dtype in ((gemm_out_mul, (n_splits, t, m), F32), (gemm_out_sqrsum, (n_splits, t), F32),
                                  (mhc_scale, (3,), F32), (mhc_base, (m,), F32), (residual, (t, n, h), BF16),
                                  (post_mix, (t, n), F32), (comb_mix, (t, n * n), F32), (layer_input, (t, h), BF16)):
            _arg(arg, shape, dtype)
        rms = torch.rsqrt(gemm_out_sqrsum.sum(0) / (n * h) + rms_eps)
        mixes = gemm_out_mul.sum(0) * rms[:, None]
        post_mix.copy_(torch.sigmoid(mixes[:, n:2 * n] * mhc_scale[1] + mhc_base[n:2 * n]) * mhc_post_mult_value)
        cm = (mixes[:, 2 * n:] * mhc_scale[2] + mhc_base[2 * n:]).view(t, n, n)
        cm = cm.softmax(-1) + mhc_sinkhorn_eps
        cm = cm / (cm.sum(-2, keepdim=True) + mhc_sinkhorn_eps)
        for _ in range(sinkhorn_repeat - 1):
            cm = cm / (cm.sum(-1, keepdim=True) + mhc_sinkhorn_eps)
            cm = cm / (cm.sum(-2, keepdim=True) + mhc_sinkhorn_eps)
        comb_mix.copy_(cm.reshape(t, n * n))
        pre = torch.sigmoid(mixes[:, :n] * mhc_scale[0] + mhc_base[:n]) + mhc_pre_eps
        layer_input.copy_((pre[:, :, None] * residual.float()).sum(1).to(BF16))


    def mhc_post_fwd(x, residual, post_layer_mix, comb_res_mix, out=None):
        b, t, n, h = residual.shape
        _arg(x, (b, t, h), BF16)
        _arg(post_layer_mix, (b, t, n, 1), F32)
        _arg(comb_res_mix, (b, t, n, n), F32)
        assert h % 128 == 0
        mixed = torch.einsum("btij,btih->btjh", COMB, residual.float())
        return (mixed + post_layer_mix * x.float()[:, :, None, :]).to(BF16)


    def mhc_reduce_partials_and_rmsnorm_fwd(out_mul_splitted, sqrsum_splitted, out_mul, sqrsum, out, rms_group_size,
                                            rms_eps, n_splits):
        s, t, g, m = out_mul_splitted.shape
        assert s == n_splits
        _arg(sqrsum_splitted, (s, t, g), F32)
        _arg(out_mul, (t, g, m), F32)
        _arg(sqrsum, (t, g), F32)
        _arg(out, (t, m), F32)
        sqrsum.copy_(sqrsum_splitted.sum(0))
        out_mul.copy_(out_mul_splitted.sum(0))
        out.copy_((out_mul * torch.rsqrt(sqrsum / rms_group_size + rms_eps)[:, :, None]).sum(1))


    def mhc_head_compute_mix_fwd(input_mix, mhc_scale, mhc_base, output_mix, mhc_pre_eps, token_block_size=0):
        t, n = input_mix.shape
        _arg(mhc_scale, (1,), F32)
        _arg(mhc_base, (n,), F32)
        _arg(output_mix, (t, n), F32)
        output_mix.copy_(torch.sigmoid(input_mix * mhc_scale[0] + mhc_base) + mhc_pre_eps)


    def mhc_pre_apply_mix_fwd(x, mix, o):
        t, n, h = x.shape
        _arg(x, (t, n, h), BF16)
        _arg(mix, (t, n), F32)
        _arg(o, (t, h), BF16)
        o.copy_((mix[:, :, None] * x.float()).sum(1).to(BF16))
    """


def v2_files(comb: str = "comb_res_mix") -> dict[str, str]:
    """2.1.0's layout; `comb` is what mhc_post_fwd reads as comb (a planted transpose shows verify can fail)."""
    return {
        "tile_kernels/__init__.py": "from . import mhc, modeling\n",
        "tile_kernels/modeling/__init__.py": "# 2.x: engram only, no modeling.mhc\n",
        "tile_kernels/mhc/__init__.py": textwrap.dedent(V2_KERNELS).replace("COMB", comb),
    }


NEITHER_FILES = {
    "tile_kernels/__init__.py": "from . import mhc\n",
    "tile_kernels/mhc/__init__.py": """
        def mhc_pre_fused(*args):
            pass


        def mhc_post_fwd(a, b, c, d):
            pass
        """,
}


def write_site(root: Path, files: dict[str, str], version: str, name: str = "tile-kernels") -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return root


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder first on sys.path; the stand-in tile_kernels modules are forgotten before and after."""

    def forget() -> None:
        for module in [m for m in sys.modules if m == "tile_kernels" or m.startswith("tile_kernels.")]:
            del sys.modules[module]

    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    forget()
    yield root
    forget()


def load(site: Path, files: dict[str, str], version: str) -> PathImpl:
    write_site(site, files, version)
    return tk.load("tilekernels", "cuda", lambda _: None)  # any cuda device string; the tensors stay on the CPU


def verify_rows(impl: PathImpl, tokens: list[int], p: Params = P) -> list[dict]:
    return list(run_path(impl, OPS, tokens, p, "cpu"))


# --- which layout is found ------------------------------------------------------------------------------------------


def test_the_1x_layout_is_found_and_its_adapted_calls_pass_verify(site: Path) -> None:
    impl = load(site, V1_FILES, "1.0.0")
    assert impl.version == "1.0.0"
    assert impl.notes == [
        "TileKernels 1.x API tile_kernels.modeling.mhc; fused post+pre is its mhc_post then its mhc_pre"
    ]
    rows = verify_rows(impl, [1, 7, 80])
    assert [(r["op"], r["tokens"], r["status"]) for r in rows] == [(op, n, "pass") for op in OPS for n in (1, 7, 80)]


def test_the_2x_layout_is_found_and_its_kernels_composed_pass_verify(site: Path) -> None:
    impl = load(site, v2_files(), "2.1.0")
    assert impl.version == "2.1.0" and impl.notes[0].startswith("TileKernels 2.x API tile_kernels.mhc: ")
    assert "prenorm GEMM (DeepGEMM's in 2.x) is torch's float32 matmul here" in impl.notes[0]
    rows = verify_rows(impl, [1, 7, 80])
    assert [(r["op"], r["tokens"], r["status"]) for r in rows] == [(op, n, "pass") for op in OPS for n in (1, 7, 80)]


def test_the_2x_outputs_have_the_references_shapes_for_any_outer_axes(site: Path) -> None:
    import torch

    from mhcdoctor import reference

    impl = load(site, v2_files(), "2.1.0")
    gen = torch.Generator().manual_seed(0)
    residual = torch.randn(2, 3, 4, 256, generator=gen).to(torch.bfloat16)  # [batch, tokens, n, H]
    fn = torch.randn(24, 4 * 256, generator=gen) / 32
    scale, base = torch.tensor([0.5, 0.7, 0.9]), torch.randn(24, generator=gen) / 10
    got = impl.ops["mhc_pre"](residual, fn, scale, base, 1e-6, 1e-6, 1e-6, 2.0, 20)
    want = reference.mhc_pre(residual, fn, scale, base, 1e-6, 1e-6, 1e-6, 2.0, 20)
    assert isinstance(got, tuple)
    assert [tuple(t.shape) for t in got] == [(2, 3, 4, 1), (2, 3, 4, 4), (2, 3, 256)]
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g.float(), w.float(), atol=1e-2, rtol=1e-2)
    head = impl.ops["hc_head"](residual, fn[:4], scale[:1], base[:4], 1e-6, 1e-6)
    assert isinstance(head, torch.Tensor)
    assert tuple(head.shape) == (2, 3, 256)
    torch.testing.assert_close(
        head.float(), reference.hc_head(residual, fn[:4], scale[:1], base[:4], 1e-6, 1e-6).float()
    )


def test_a_wrong_2x_kernel_fails_verify_where_it_is_used(site: Path) -> None:
    impl = load(site, v2_files(comb="comb_res_mix.transpose(-1, -2)"), "2.1.0")
    status = {(r["op"], r["tokens"]): r["status"] for r in verify_rows(impl, [7])}
    assert status == {("mhc_pre", 7): "pass", ("mhc_post", 7): "fail", ("mhc_fused_post_pre", 7): "fail",
                      ("hc_head", 7): "pass"}  # fmt: skip


def test_a_hidden_size_2x_post_does_not_take_is_a_skip_row_saying_so(site: Path) -> None:
    impl = load(site, v2_files(), "2.1.0")
    rows = verify_rows(impl, [7], Params(200, 4, 1e-6, 1e-6, 1e-6, 2.0, 20))
    reason = "TileKernels 2.x mhc_post_fwd takes a hidden size divisible by 128, not 200"
    assert [(r["op"], r["status"], r.get("reason")) for r in rows] == [
        ("mhc_pre", "pass", None), ("mhc_post", "skip", reason), ("mhc_fused_post_pre", "skip", reason),
        ("hc_head", "pass", None),
    ]  # fmt: skip


def test_neither_layout_is_unavailable_naming_what_is_missing(site: Path) -> None:
    with pytest.raises(PathUnavailable) as caught:
        load(site, NEITHER_FILES, "3.0.0")
    assert str(caught.value) == (
        "tile_kernels 3.0.0 has no mHC API this adapter knows: 1.x's tile_kernels.modeling.mhc lacks "
        "no module tile_kernels.modeling.mhc; 2.x's tile_kernels.mhc lacks mhc_pre_big_fuse_fwd, "
        "mhc_post_fwd(x, residual, post_layer_mix, comb_res_mix) (it takes (a, b, c, d)), "
        "mhc_reduce_partials_and_rmsnorm_fwd, mhc_head_compute_mix_fwd, mhc_pre_apply_mix_fwd"
    )


def test_a_1x_modeling_layout_missing_an_op_falls_through_to_2x(site: Path) -> None:
    files = {**v2_files(), **{k: v for k, v in V1_FILES.items() if "functional" not in k and "mhc/__init__" not in k}}
    files["tile_kernels/modeling/mhc/__init__.py"] = ""
    assert load(site, files, "1.5.0").notes[0].startswith("TileKernels 2.x API")


def test_a_kernel_module_that_fails_to_import_is_a_reason_with_the_evidence(site: Path) -> None:
    files = {**v2_files(), "tile_kernels/__init__.py": ""}
    files["tile_kernels/mhc/__init__.py"] = "from .pre_big_fuse_cuda import mhc_pre_big_fuse_fwd_cuda\n"
    with pytest.raises(PathUnavailable) as caught:
        load(site, files, "2.1.0")
    assert str(caught.value) == (
        "tile_kernels 2.1.0: importing tile_kernels.mhc fails: "
        "ModuleNotFoundError: No module named 'tile_kernels.mhc.pre_big_fuse_cuda'"
    )


# --- through the real CLI -------------------------------------------------------------------------------------------


def cli_verify(site: Path) -> tuple[int, dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(REPO)]))
    proc = doctor.run("verify", "--path", "tilekernels", "--device", "cpu", "--json", env=env)
    return proc.returncode, json.loads(proc.stdout)["paths"][0]


@pytest.mark.parametrize(
    ("files", "version", "reason"),
    [
        (V1_FILES, "1.0.0", "tile_kernels 1.0.0 (1.x API tile_kernels.modeling.mhc): its tilelang kernels need a GPU "
                            "(pass --device N, not cpu)"),
        (v2_files(), "2.1.0", "tile_kernels 2.1.0 (2.x API tile_kernels.mhc): its tilelang kernels need a GPU "
                              "(pass --device N, not cpu)"),
        (NEITHER_FILES, "3.0.0", "tile_kernels 3.0.0 has no mHC API this adapter knows: 1.x's "
                                 "tile_kernels.modeling.mhc lacks no module tile_kernels.modeling.mhc; 2.x's "
                                 "tile_kernels.mhc lacks mhc_pre_big_fuse_fwd, mhc_post_fwd(x, residual, "
                                 "post_layer_mix, comb_res_mix) (it takes (a, b, c, d)), "
                                 "mhc_reduce_partials_and_rmsnorm_fwd, mhc_head_compute_mix_fwd, "
                                 "mhc_pre_apply_mix_fwd"),
    ],
    ids=["1.x", "2.x", "neither"],
)  # fmt: skip
def test_verify_on_the_cpu_names_the_layout_it_found_or_what_is_missing(
    tmp_path: Path, files: dict[str, str], version: str, reason: str
) -> None:
    returncode, path = cli_verify(write_site(tmp_path / "site", files, version))
    assert (returncode, path["status"], path["reason"]) == (3, "unavailable", reason)


def test_a_tilelang_without_utils_target_makes_the_path_unavailable_with_the_evidence(tmp_path: Path) -> None:
    site = write_site(tmp_path / "site", {"tilelang/__init__.py": "", "tilelang/utils/__init__.py": ""}, "0.1.12",
                      name="tilelang")  # fmt: skip
    write_site(site, {"tile_kernels/__init__.py": "from tilelang.utils.target import determine_target\n"}, "1.0.0")
    returncode, path = cli_verify(site)
    assert (returncode, path["status"]) == (3, "unavailable")
    assert path["reason"] == (
        "tile_kernels 1.0.0 does not import with tilelang 0.1.12: "
        "ModuleNotFoundError: No module named 'tilelang.utils.target'"
    )


# --- the 1.x adapter alone, with stand-ins in memory (bench's GPU test uses the same) --------------------------------


def test_the_1x_adapter_takes_post_mix_back_in_either_shape() -> None:
    import torch

    from mhcdoctor import reference

    def big_fuse(*args):  # 1.0.0 returns post_mix as [..., n, 1]
        return reference.mhc_pre(*args)

    ops = tk._Ops(SimpleNamespace(mhc_pre_big_fuse=big_fuse), SimpleNamespace())
    impl = PathImpl("tilekernels", ops.as_dict())
    assert check_case(impl, "mhc_pre", 7, P, "cpu")["status"] == "pass"
    with pytest.raises(OpUnsupported, match="bf16 residual, not torch.float32"):
        impl.ops["mhc_pre"](torch.zeros(1, 4, 256), torch.zeros(24, 1024), torch.zeros(3), torch.zeros(24),
                            1e-6, 1e-6, 1e-6, 2.0, 20)  # fmt: skip
