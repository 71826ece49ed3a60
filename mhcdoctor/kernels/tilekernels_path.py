"""DeepSeek's TileKernels (PyPI `tile-kernels`, github.com/deepseek-ai/TileKernels): its mHC kernels as a path.

Two public layouts are known, and `load` finds which one is installed (1.x first, then 2.x):

**1.x** (tile-kernels 1.0.0; `tile_kernels/modeling/mhc/`), autograd ops over tilelang kernels:
- `ops.mhc_pre_big_fuse(residual, fn, mhc_scale, mhc_base, rms_eps, mhc_pre_eps, mhc_sinkhorn_eps,
  mhc_post_mult_value, sinkhorn_repeat)` (`modeling/mhc/ops/pre_big_fuse.py`) returns (post_mix, comb_mix,
  layer_input); post_mix comes back as [..., n, 1] in 1.0.0 and as [T, n] in other builds, so it is reshaped to the
  reference's [..., n, 1]. It runs its own tilelang GEMM on fn rounded to tf32 (`round_to_tf32`), which verify's
  tolerances allow for.
- `ops.mhc_post(x, residual, post_layer_mix, comb_res_mix)` takes a leading batch axis
  (`num_seqs, num_tokens, mhc, hidden = residual.shape` in `mhc/post_kernel.py`): the token axis gets one.
- `functional.mhc_head(residual, fn, scale, base, norm_eps=, pre_eps=)`: its mix kernel asserts a 3-D mix
  ([batch, tokens, n], `modeling/mhc/ops/head_compute_mix.py`), so the residual gets a leading batch axis too.

**2.x** (tile-kernels 2.1.0 from PyPI, read from its wheel; `tile_kernels/mhc/*_kernel.py`): `modeling/mhc` is gone
and `tile_kernels.mhc` exports forward kernels that write into tensors the caller allocates. The prenorm GEMM moved
to DeepGEMM (`deep_gemm.tf32_hc_prenorm_gemm`; 2.x's own `tests/mhc/test_pre_big_fuse.py` builds its split-K
partials with torch), so here it is DeepGEMM's where `deep_gemm` imports, else one split of torch's float32
`x @ fn.T` and `sum(x²)`: then those ops have a torch piece (`torch_pieces`; the notes and bench's rows say so).
The ops, composed as 2.x's tests compose them:
- mhc_pre: `mhc_pre_big_fuse_fwd(gemm_out_mul [S, T, m], gemm_out_sqrsum [S, T], mhc_scale [3], mhc_base [m],
  residual [T, n, H] bf16, post_mix [T, n], comb_mix [T, n*n], layer_input [T, H] bf16, rms_eps, mhc_pre_eps,
  mhc_sinkhorn_eps, mhc_post_mult_value, sinkhorn_repeat, n_splits=S)` (`mhc/pre_big_fuse_kernel.py`, shapes from
  `mhc/pre_big_fuse_cuda.py`) fills the last three in place (float32, bf16); the reference's outer axes are
  flattened to T and restored, post_mix [T, n] -> [..., n, 1], comb_mix [T, n*n] -> [..., n, n].
- mhc_post: `mhc_post_fwd(x [B, T, H], residual [B, T, n, H], post_layer_mix [B, T, n, 1], comb_res_mix
  [B, T, n, n])` (`mhc/post_kernel.py`) returns the new residual; it asserts these shapes, float32 mixes and
  contiguous inputs, and `hidden % 128 == 0` (its `h_blk = gcd(hidden, 1024)`): B = 1 is added, another hidden
  size is `OpUnsupported`.
- hc_head: the GEMM on fn [n, n*H] gives [S, T, 1, n] partials; `mhc_reduce_partials_and_rmsnorm_fwd(out_mul_splitted
  [S, T, 1, n], sqrsum_splitted [S, T, 1], out_mul [T, 1, n], sqrsum [T, 1], out [T, n], rms_group_size=n*H,
  rms_eps, n_splits=S)` (`mhc/norm_fn_kernel.py`, shapes from `mhc/norm_fn_cuda.py`) the RMS-scaled mixes;
  `mhc_head_compute_mix_fwd(input_mix [T, n], mhc_scale [1], mhc_base [n], output_mix [T, n], mhc_pre_eps)`
  (`mhc/head_compute_mix_kernel.py`) the sigmoid + eps; `mhc_pre_apply_mix_fwd(x [T, n, H] bf16, mix [T, n],
  o [T, H] bf16)` (`mhc/pre_apply_mix_kernel.py`) the weighted sum.

Neither layout has a fused post+pre op: the fused op is post, then pre, as a model without one runs them. A
tile_kernels with neither layout (or 2.x names taking other arguments) is unavailable, naming what is missing.
`import tile_kernels` imports every subpackage (both layouts), and 1.0.0's `tile_kernels/quant/common.py` imports
`tilelang.utils.target`; a tilelang where that moved fails the import: the path is unavailable with that reason.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from mhcdoctor.kernels import OpUnsupported, PathImpl, PathUnavailable, Progress

OPS = ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")

# 1.x: tile_kernels.modeling.mhc.<module>.<function>
_V1 = {"ops": ("mhc_pre_big_fuse", "mhc_post"), "functional": ("mhc_head",)}
# 2.x: tile_kernels.mhc.<function> -> the leading parameters this adapter passes by position.
_V2: dict[str, tuple[str, ...]] = {
    "mhc_pre_big_fuse_fwd": (
        "gemm_out_mul", "gemm_out_sqrsum", "mhc_scale", "mhc_base", "residual", "post_mix", "comb_mix",
        "layer_input", "rms_eps", "mhc_pre_eps", "mhc_sinkhorn_eps", "mhc_post_mult_value", "sinkhorn_repeat",
        "n_splits",
    ),
    "mhc_post_fwd": ("x", "residual", "post_layer_mix", "comb_res_mix"),
    "mhc_reduce_partials_and_rmsnorm_fwd": (
        "out_mul_splitted", "sqrsum_splitted", "out_mul", "sqrsum", "out", "rms_group_size", "rms_eps", "n_splits",
    ),
    "mhc_head_compute_mix_fwd": ("input_mix", "mhc_scale", "mhc_base", "output_mix", "mhc_pre_eps"),
    "mhc_pre_apply_mix_fwd": ("x", "mix", "o"),
}  # fmt: skip


def load(name: str, device: str, progress: Progress) -> PathImpl:
    from importlib import metadata

    try:
        version: str | None = metadata.version("tile-kernels")
    except metadata.PackageNotFoundError:
        version = None
    label = f"tile_kernels {version or '(version unknown)'}"
    progress("importing tile_kernels")
    try:
        importlib.import_module("tile_kernels")
    except Exception as exc:  # a tilelang API that moved, a missing CUDA runtime: a reason with its evidence
        raise PathUnavailable(
            f"{label} does not import with tilelang {_tilelang_version()}: {type(exc).__name__}: {exc}"
        ) from None
    impl = _find_api(label)
    if not device.startswith("cuda"):
        raise PathUnavailable(f"{label} ({impl.api}): its tilelang kernels need a GPU (pass --device N, not cpu)")
    return PathImpl(
        name=name, ops=impl.as_dict(), version=version, notes=impl.notes(), torch_pieces=impl.torch_pieces()
    )


def _tilelang_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tilelang")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _module(module: str, label: str) -> Any:
    """The module, or None where it (or a package above it) does not exist; any other failure is a reason."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            return None
        raise PathUnavailable(f"{label}: importing {module} fails: {type(exc).__name__}: {exc}") from None
    except Exception as exc:
        raise PathUnavailable(f"{label}: importing {module} fails: {type(exc).__name__}: {exc}") from None


def _find_api(label: str) -> _Ops:
    """1.x's modeling API when it is complete, else 2.x's kernels when they are all there, else why neither."""
    v1_missing: list[str] = []
    v1_modules: dict[str, Any] = {}
    if _module("tile_kernels.modeling.mhc", label) is None:
        v1_missing.append("no module tile_kernels.modeling.mhc")
    else:
        for sub, functions in _V1.items():
            mod = _module(f"tile_kernels.modeling.mhc.{sub}", label)
            v1_modules[sub] = mod
            v1_missing += [f"{sub}.{f}" for f in functions if mod is None or not callable(getattr(mod, f, None))]
        if not v1_missing:
            return _Ops(v1_modules["ops"], v1_modules["functional"])
    v2 = _module("tile_kernels.mhc", label)
    v2_missing: list[str] = []
    if v2 is None:
        v2_missing.append("no module tile_kernels.mhc")
    else:
        for function, params in _V2.items():
            kernel = getattr(v2, function, None)
            if not callable(kernel):
                v2_missing.append(function)
            elif (taken := _leading_params(kernel, len(params))) is not None and taken != params:
                v2_missing.append(f"{function}({', '.join(params)}) (it takes ({', '.join(taken)}))")
        if not v2_missing:
            return _OpsV2(v2)
    raise PathUnavailable(
        f"{label} has no mHC API this adapter knows: 1.x's tile_kernels.modeling.mhc lacks "
        f"{', '.join(v1_missing)}; 2.x's tile_kernels.mhc lacks {', '.join(v2_missing)}"
    )


def _leading_params(function: Any, count: int) -> tuple[str, ...] | None:
    """The names of a function's first `count` parameters; None where Python cannot say (a C function)."""
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    return tuple(parameters[:count])


def _check(residual: Any) -> None:
    import torch

    if residual.dtype != torch.bfloat16:
        raise OpUnsupported(f"TileKernels' mHC kernels take a bf16 residual, not {residual.dtype}")


class _Ops:
    """TileKernels 1.x: `tile_kernels.modeling.mhc.ops` and `.functional`."""

    api = "1.x API tile_kernels.modeling.mhc"

    def __init__(self, ops: Any, functional: Any) -> None:
        self._ops = ops
        self._functional = functional

    def notes(self) -> list[str]:
        return [f"TileKernels {self.api}; fused post+pre is its mhc_post then its mhc_pre"]

    def torch_pieces(self) -> frozenset[str]:
        return frozenset()

    def as_dict(self) -> dict[str, Any]:
        return {
            "mhc_pre": self.mhc_pre,
            "mhc_post": self.mhc_post,
            "mhc_fused_post_pre": self.mhc_fused_post_pre,
            "hc_head": self.hc_head,
        }

    def mhc_pre(
        self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_pre_eps: float,
        hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any]:  # fmt: skip
        _check(residual)
        hc, outer = residual.shape[-2], residual.shape[:-2]
        post, comb, layer_input = self._ops.mhc_pre_big_fuse(
            residual.contiguous(), fn.float().contiguous(), hc_scale.float().contiguous(),
            hc_base.float().contiguous(), rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat,
        )  # fmt: skip
        return post.reshape(*outer, hc, 1), comb.reshape(*outer, hc, hc), layer_input.reshape(*outer, -1)

    def mhc_post(self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
        _check(residual)
        hc, hidden = residual.shape[-2], residual.shape[-1]
        out = self._post(
            x.reshape(1, -1, hidden).contiguous(),
            residual.reshape(1, -1, hc, hidden).contiguous(),
            post_layer_mix.reshape(1, -1, hc, 1).float().contiguous(),
            comb_res_mix.reshape(1, -1, hc, hc).float().contiguous(),
        )
        return out.reshape(residual.shape)

    def _post(self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
        return self._ops.mhc_post(x, residual, post_layer_mix, comb_res_mix)

    def mhc_fused_post_pre(
        self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any, fn: Any, hc_scale: Any, hc_base: Any,
        rms_eps: float, hc_pre_eps: float, hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any, Any]:  # fmt: skip
        new_residual = self.mhc_post(x, residual, post_layer_mix, comb_res_mix)
        pre = self.mhc_pre(new_residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                           hc_post_mult_value, sinkhorn_repeat)  # fmt: skip
        return (new_residual, *pre)

    def hc_head(self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_eps: float) -> Any:
        _check(residual)
        hc, hidden = residual.shape[-2], residual.shape[-1]
        out = self._functional.mhc_head(
            residual.reshape(1, -1, hc, hidden).contiguous(), fn.float().contiguous(),
            hc_scale.float().reshape(1).contiguous(), hc_base.float().contiguous(),
            norm_eps=rms_eps, mhc_mult=hc, pre_eps=hc_eps,
        )  # fmt: skip
        return out.reshape(*residual.shape[:-2], hidden)


def _deep_gemm() -> Any:
    """DeepGEMM when it imports and has the prenorm GEMM TileKernels 2.x is written against, else None."""
    try:
        module = importlib.import_module("deep_gemm")
    except Exception:  # not installed, or no CUDA build: the GEMM runs on torch and the rows say so
        return None
    return module if callable(getattr(module, "tf32_hc_prenorm_gemm", None)) else None


def _prenorm_gemm(flat: Any, fn: Any) -> tuple[Any, Any]:
    """residual [T, n, H] bf16, fn [m, n*H] → one split-K partial: (x @ fn.T [1, T, m], sum(x²) [1, T]), float32.

    DeepGEMM's `tf32_hc_prenorm_gemm(x, fn, out, sqrsum, num_split)` where it imports (as vLLM calls it in
    `_hc_prenorm_gemm_outputs`, kernels/mhc/tilelang.py, 0.34), else torch's float32 matmul.
    """
    import torch

    deep_gemm = _deep_gemm()
    if deep_gemm is not None:
        x2 = flat.reshape(flat.shape[0], -1)
        out = torch.empty(1, x2.shape[0], fn.shape[0], dtype=torch.float32, device=flat.device)
        sqrsum = torch.empty(1, x2.shape[0], dtype=torch.float32, device=flat.device)
        deep_gemm.tf32_hc_prenorm_gemm(x2, fn.float().contiguous(), out, sqrsum, 1)
        return out, sqrsum
    x = flat.reshape(flat.shape[0], -1).float()
    mul = (x @ fn.float().t()).unsqueeze(0).contiguous()
    sqrsum = x.square().sum(dim=-1).unsqueeze(0).contiguous()
    return mul, sqrsum


class _OpsV2(_Ops):
    """TileKernels 2.x: the forward kernels of `tile_kernels.mhc`, with the caller's output tensors."""

    api = "2.x API tile_kernels.mhc"

    def __init__(self, mhc: Any) -> None:
        super().__init__(None, None)
        self._mhc = mhc

    def notes(self) -> list[str]:
        gemm = (
            "DeepGEMM's tf32_hc_prenorm_gemm"
            if _deep_gemm() is not None
            else "torch's float32 matmul here (deep_gemm does not import): those rows have a torch piece"
        )
        return [
            f"TileKernels {self.api}: mhc_pre_big_fuse_fwd, mhc_post_fwd, mhc_reduce_partials_and_rmsnorm_fwd, "
            f"mhc_head_compute_mix_fwd, mhc_pre_apply_mix_fwd; their prenorm GEMM (DeepGEMM's in 2.x) is {gemm}; "
            "fused post+pre is mhc_post then mhc_pre"
        ]

    def torch_pieces(self) -> frozenset[str]:
        return frozenset() if _deep_gemm() is not None else frozenset({"mhc_pre", "mhc_fused_post_pre", "hc_head"})

    def mhc_pre(
        self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_pre_eps: float,
        hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any]:  # fmt: skip
        import torch

        _check(residual)
        hc, hidden, outer = residual.shape[-2], residual.shape[-1], residual.shape[:-2]
        flat = residual.reshape(-1, hc, hidden).contiguous()
        tokens, device = flat.shape[0], flat.device
        mul, sqrsum = _prenorm_gemm(flat, fn)
        post = torch.empty(tokens, hc, dtype=torch.float32, device=device)
        comb = torch.empty(tokens, hc * hc, dtype=torch.float32, device=device)
        layer_input = torch.empty(tokens, hidden, dtype=torch.bfloat16, device=device)
        self._mhc.mhc_pre_big_fuse_fwd(
            mul, sqrsum, hc_scale.float().contiguous(), hc_base.float().contiguous(), flat, post, comb, layer_input,
            rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat, mul.shape[0],
        )  # fmt: skip
        return post.reshape(*outer, hc, 1), comb.reshape(*outer, hc, hc), layer_input.reshape(*outer, hidden)

    def _post(self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
        hidden = residual.shape[-1]
        if hidden % 128:
            raise OpUnsupported(f"TileKernels 2.x mhc_post_fwd takes a hidden size divisible by 128, not {hidden}")
        return self._mhc.mhc_post_fwd(x, residual, post_layer_mix, comb_res_mix)

    def hc_head(self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_eps: float) -> Any:
        import torch

        _check(residual)
        hc, hidden, outer = residual.shape[-2], residual.shape[-1], residual.shape[:-2]
        flat = residual.reshape(-1, hc, hidden).contiguous()
        tokens, device = flat.shape[0], flat.device
        mul, sqrsum = _prenorm_gemm(flat, fn)
        splits = mul.shape[0]
        f32 = {"dtype": torch.float32, "device": device}
        mixes = torch.empty(tokens, hc, **f32)
        self._mhc.mhc_reduce_partials_and_rmsnorm_fwd(
            mul.view(splits, tokens, 1, hc), sqrsum.view(splits, tokens, 1), torch.empty(tokens, 1, hc, **f32),
            torch.empty(tokens, 1, **f32), mixes, hc * hidden, rms_eps, splits,
        )  # fmt: skip
        mix = torch.empty(tokens, hc, **f32)
        self._mhc.mhc_head_compute_mix_fwd(
            mixes, hc_scale.float().reshape(1).contiguous(), hc_base.float().contiguous(), mix, hc_eps
        )
        out = torch.empty(tokens, hidden, dtype=torch.bfloat16, device=device)
        self._mhc.mhc_pre_apply_mix_fwd(flat, mix, out)
        return out.reshape(*outer, hidden)
