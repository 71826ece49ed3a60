# mypy: disable-error-code="valid-type"
# (tilelang kernel signatures annotate with T.Tensor(shape, dtype): DSL, not Python types)
"""The tilelang path: this project's own tilelang kernels for mhc_pre, mhc_post and fused post+pre (bf16, hc 4).

Real kernels, compiled by tilelang's JIT for this GPU, to prove tilelang can compile and run mHC-shaped work
here. They follow the math of vLLM's and DeepSeek's reference ops (vLLM's
`vllm/model_executor/kernels/mhc/torch.py`, TileKernels' `tile_kernels/torch/mhc.py`) but are written apart from them:
- `prenorm_gemm`: mixes = x @ fn.T and sum(x²) per token, in float32 FMAs (no tf32), 16 tokens per block.
- `pre_fuse`: one block per token: the RMS factor, sigmoids and the Sinkhorn loop on one thread, then all
  threads form layer_input = Σ pre_i R_i.
- `post`: one block per (token, slice of the hidden axis): out[j] = post_j x + Σ_i comb[i, j] R_i.
Fused post+pre runs post, then the GEMM and the fuse on its bf16 result, as vLLM does above 16 tokens.
The token count is a dynamic shape, so one compile serves every count; tilelang caches compiled kernels.
"""

import math
from typing import Any

from mhcdoctor.kernels import OpUnsupported, PathImpl, PathUnavailable, Progress

_THREADS = 128
_GEMM_TOKENS = 16  # tokens per block in the GEMM
_GEMM_K = 128  # hc*H elements per step in the GEMM


def load(name: str, device: str, progress: Progress) -> PathImpl:
    progress("importing tilelang")
    try:
        import tilelang
    except Exception as exc:  # a broken tilelang (libnvrtc, tvm-ffi mismatch) is a reason, not a crash
        raise PathUnavailable(f"tilelang does not import: {type(exc).__name__}: {exc}") from None
    if not device.startswith("cuda"):
        raise PathUnavailable("tilelang kernels need a GPU (pass --device N, not cpu)")
    return PathImpl(name=name, ops=_Ops(progress).as_dict(), version=getattr(tilelang, "__version__", None))


class _Ops:
    """Compiles the kernels for a (hidden, hc, params) the first time they are asked for, and calls them."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._cache: dict[tuple[Any, ...], Any] = {}

    def as_dict(self) -> dict[str, Any]:
        return {"mhc_pre": self.mhc_pre, "mhc_post": self.mhc_post, "mhc_fused_post_pre": self.mhc_fused_post_pre}

    def _kernel(self, key: tuple[Any, ...], build: Any) -> Any:
        if key not in self._cache:
            import tilelang

            self._progress(f"compiling {key[0]} for hidden {key[1]} (tilelang JIT; cached after the first run)")
            self._cache[key] = tilelang.compile(build(), out_idx=None)
        return self._cache[key]

    @staticmethod
    def _check(residual: Any) -> tuple[int, int]:
        import torch

        hc, hidden = residual.shape[-2], residual.shape[-1]
        if residual.dtype != torch.bfloat16 or hc != 4 or hidden % _THREADS:
            raise OpUnsupported(
                f"these tilelang kernels take bf16, hc_mult 4, hidden % {_THREADS} == 0; got "
                f"{residual.dtype}, hc_mult {hc}, hidden {hidden}"
            )
        return hc, hidden

    def mhc_pre(
        self, residual: Any, fn: Any, hc_scale: Any, hc_base: Any, rms_eps: float, hc_pre_eps: float,
        hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any]:  # fmt: skip
        import torch

        hc, hidden = self._check(residual)
        flat = residual.reshape(-1, hc, hidden).contiguous()
        tokens, m = flat.shape[0], hc * (hc + 2)
        dev = flat.device
        mixes = torch.empty(tokens, m, dtype=torch.float32, device=dev)
        sqrsum = torch.empty(tokens, dtype=torch.float32, device=dev)
        post = torch.empty(tokens, hc, dtype=torch.float32, device=dev)
        comb = torch.empty(tokens, hc * hc, dtype=torch.float32, device=dev)
        layer_input = torch.empty(tokens, hidden, dtype=torch.bfloat16, device=dev)
        gemm = self._kernel(("prenorm_gemm", hidden, hc), lambda: _prenorm_gemm(hc * hidden, m))
        fuse_key = ("pre_fuse", hidden, hc, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value, sinkhorn_repeat)
        fuse = self._kernel(fuse_key, lambda: _pre_fuse(*fuse_key[1:]))
        if tokens:
            gemm(flat.view(tokens, hc * hidden), fn.float().contiguous(), mixes, sqrsum)
            fuse(mixes, sqrsum, hc_scale.float().contiguous(), hc_base.float().contiguous(), flat, post, comb,
                 layer_input)  # fmt: skip
        outer = residual.shape[:-2]
        return post.view(*outer, hc, 1), comb.view(*outer, hc, hc), layer_input.view(*outer, hidden)

    def mhc_post(self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any) -> Any:
        import torch

        hc, hidden = self._check(residual)
        flat = residual.reshape(-1, hc, hidden).contiguous()
        tokens = flat.shape[0]
        out = torch.empty_like(flat)
        kernel = self._kernel(("post", hidden, hc), lambda: _post(hidden, hc))
        if tokens:
            kernel(
                x.reshape(tokens, hidden).contiguous(),
                flat,
                post_layer_mix.reshape(tokens, hc).float().contiguous(),
                comb_res_mix.reshape(tokens, hc, hc).float().contiguous(),
                out,
            )
        return out.view(residual.shape)

    def mhc_fused_post_pre(
        self, x: Any, residual: Any, post_layer_mix: Any, comb_res_mix: Any, fn: Any, hc_scale: Any, hc_base: Any,
        rms_eps: float, hc_pre_eps: float, hc_sinkhorn_eps: float, hc_post_mult_value: float, sinkhorn_repeat: int,
    ) -> tuple[Any, Any, Any, Any]:  # fmt: skip
        new_residual = self.mhc_post(x, residual, post_layer_mix, comb_res_mix)
        pre = self.mhc_pre(new_residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                           hc_post_mult_value, sinkhorn_repeat)  # fmt: skip
        return (new_residual, *pre)


def _prenorm_gemm(k: int, m: int) -> Any:
    """x [N, k] bf16, fn [m, k] f32 → mixes [N, m] = x @ fn.T, sqrsum [N] = Σ x², float32 throughout."""
    import tilelang.language as T

    bt, bk = _GEMM_TOKENS, math.gcd(k, _GEMM_K)
    n = T.dynamic("num_tokens")

    @T.prim_func
    def prenorm_gemm(
        x: T.Tensor((n, k), "bfloat16"),
        fn: T.Tensor((m, k), "float32"),
        mixes: T.Tensor((n, m), "float32"),
        sqrsum: T.Tensor((n,), "float32"),
    ):
        with T.Kernel(T.ceildiv(n, bt), threads=_THREADS) as block:
            xs = T.alloc_shared((bt, bk), "float32")
            fs = T.alloc_shared((m, bk), "float32")
            acc = T.alloc_fragment((bt, m), "float32")
            sq = T.alloc_fragment((bt, bk), "float32")
            sq_row = T.alloc_fragment((bt,), "float32")
            T.clear(acc)
            T.clear(sq)
            for k0 in T.serial(k // bk):
                for r, c in T.Parallel(bt, bk):
                    xs[r, c] = T.if_then_else(
                        block * bt + r < n, T.cast(x[block * bt + r, k0 * bk + c], "float32"), T.float32(0)
                    )
                for j, c in T.Parallel(m, bk):
                    fs[j, c] = fn[j, k0 * bk + c]
                for r, c in T.Parallel(bt, bk):
                    sq[r, c] += xs[r, c] * xs[r, c]
                # The reduction axis stays outside T.Parallel: tilelang 0.1.9–0.1.13 vectorize a serial loop nested
                # in one, keeping one product in 4 (tile-ai/tilelang #2050 dropped a store guard; #2935 restored it)
                for c in T.serial(bk):
                    for r, j in T.Parallel(bt, m):
                        acc[r, j] += xs[r, c] * fs[j, c]
            T.reduce_sum(sq, sq_row, dim=1)
            for r, j in T.Parallel(bt, m):
                if block * bt + r < n:
                    mixes[block * bt + r, j] = acc[r, j]
            for r in T.Parallel(bt):
                if block * bt + r < n:
                    sqrsum[block * bt + r] = sq_row[r]

    return prenorm_gemm


def _pre_fuse(
    hidden: int, hc: int, rms_eps: float, hc_pre_eps: float, hc_sinkhorn_eps: float, post_mult: float, repeat: int
) -> Any:
    """One block per token: RMS factor, pre/post sigmoids, Sinkhorn (one thread), then layer_input (all threads)."""
    import tilelang.language as T

    m, k, nn = hc * (hc + 2), hc * hidden, hc * hc
    hb = math.gcd(hidden, 512)
    n = T.dynamic("num_tokens")

    @T.prim_func
    def pre_fuse(
        mixes: T.Tensor((n, m), "float32"),
        sqrsum: T.Tensor((n,), "float32"),
        hc_scale: T.Tensor((3,), "float32"),
        hc_base: T.Tensor((m,), "float32"),
        residual: T.Tensor((n, hc, hidden), "bfloat16"),
        post_mix: T.Tensor((n, hc), "float32"),
        comb_mix: T.Tensor((n, nn), "float32"),
        layer_input: T.Tensor((n, hidden), "bfloat16"),
    ):
        with T.Kernel(n, threads=_THREADS) as t:
            pre_s = T.alloc_shared((hc,), "float32")
            cm = T.alloc_local((nn,), "float32")
            rs = T.alloc_local((1,), "float32")
            big = T.alloc_local((1,), "float32")
            tot = T.alloc_local((1,), "float32")
            acc = T.alloc_fragment((hb,), "float32")
            if T.get_thread_binding() == 0:
                rs[0] = T.rsqrt(sqrsum[t] / k + rms_eps)
                for j in T.serial(hc):
                    pre_s[j] = T.sigmoid(mixes[t, j] * rs[0] * hc_scale[0] + hc_base[j]) + hc_pre_eps
                    post_mix[t, j] = T.sigmoid(mixes[t, hc + j] * rs[0] * hc_scale[1] + hc_base[hc + j]) * post_mult
                for e in T.serial(nn):
                    cm[e] = mixes[t, 2 * hc + e] * rs[0] * hc_scale[2] + hc_base[2 * hc + e]
                for j in T.serial(hc):  # softmax over each row, then + eps
                    big[0] = cm[j * hc]
                    for c in T.serial(hc):
                        big[0] = T.max(big[0], cm[j * hc + c])
                    tot[0] = 0.0
                    for c in T.serial(hc):
                        cm[j * hc + c] = T.exp(cm[j * hc + c] - big[0])
                        tot[0] = tot[0] + cm[j * hc + c]
                    for c in T.serial(hc):
                        cm[j * hc + c] = cm[j * hc + c] / tot[0] + hc_sinkhorn_eps
                for c in T.serial(hc):  # first column normalisation
                    tot[0] = 0.0
                    for j in T.serial(hc):
                        tot[0] = tot[0] + cm[j * hc + c]
                    for j in T.serial(hc):
                        cm[j * hc + c] = cm[j * hc + c] / (tot[0] + hc_sinkhorn_eps)
                for _ in T.serial(repeat - 1):
                    for j in T.serial(hc):  # rows
                        tot[0] = 0.0
                        for c in T.serial(hc):
                            tot[0] = tot[0] + cm[j * hc + c]
                        for c in T.serial(hc):
                            cm[j * hc + c] = cm[j * hc + c] / (tot[0] + hc_sinkhorn_eps)
                    for c in T.serial(hc):  # columns
                        tot[0] = 0.0
                        for j in T.serial(hc):
                            tot[0] = tot[0] + cm[j * hc + c]
                        for j in T.serial(hc):
                            cm[j * hc + c] = cm[j * hc + c] / (tot[0] + hc_sinkhorn_eps)
                for e in T.serial(nn):
                    comb_mix[t, e] = cm[e]
            T.sync_threads()
            for h0 in T.serial(hidden // hb):
                T.clear(acc)
                for i in T.serial(hc):
                    for hh in T.Parallel(hb):
                        acc[hh] += pre_s[i] * T.cast(residual[t, i, h0 * hb + hh], "float32")
                for hh in T.Parallel(hb):
                    layer_input[t, h0 * hb + hh] = T.cast(acc[hh], "bfloat16")

    return pre_fuse


def _post(hidden: int, hc: int) -> Any:
    """out[t, j, h] = post[t, j] · x[t, h] + Σ_i comb[t, i, j] · R[t, i, h]; one block per (slice of h, token)."""
    import tilelang.language as T

    hb = math.gcd(hidden, 512)
    n = T.dynamic("num_tokens")

    @T.prim_func
    def post(
        x: T.Tensor((n, hidden), "bfloat16"),
        residual: T.Tensor((n, hc, hidden), "bfloat16"),
        post_mix: T.Tensor((n, hc), "float32"),
        comb: T.Tensor((n, hc, hc), "float32"),
        out: T.Tensor((n, hc, hidden), "bfloat16"),
    ):
        with T.Kernel(hidden // hb, n, threads=_THREADS) as (bh, t):
            acc = T.alloc_fragment((hb,), "float32")
            for j in T.serial(hc):
                for hh in T.Parallel(hb):
                    acc[hh] = post_mix[t, j] * T.cast(x[t, bh * hb + hh], "float32")
                for i in T.serial(hc):
                    for hh in T.Parallel(hb):
                        acc[hh] += comb[t, i, j] * T.cast(residual[t, i, bh * hb + hh], "float32")
                for hh in T.Parallel(hb):
                    out[t, j, bh * hb + hh] = T.cast(acc[hh], "bfloat16")

    return post
