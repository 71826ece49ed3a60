"""Tolerances per output, with their reasoning, and the comparison against the oracle.

Two kinds of output:
- Mixing coefficients (post_mix in (0, 2), comb_mix in (0, 1)), float32: judged by absolute error.
  Production kernels round fn to tf32 for the GEMM (unit roundoff 2^-11 ≈ 4.9e-4 per product; DeepSeek
  TileKernels `round_to_tf32`, vLLM DeepGEMM `tf32_hc_prenorm_gemm`). Over the K = hc*H terms of a mix the
  rounding errors are independent, so a mix moves by about 2^-11/√3 · |mix| ≈ 3e-4 for |mix| ~ 1. A sigmoid's
  slope is at most 1/4 (post_mix: times the multiplier 2), so post_mix moves by ≲ 1.5e-4 typically and
  4.8e-4 at worst on an H200 over T ≤ 16384 (measured against a float32 torch reference at H = 7168);
  a tf32 stand-in here reaches 4e-4.
  Sinkhorn amplifies logit errors where it has not converged: with comb logits spread as verify makes them
  (std √10 ≈ 3.2: a unit-variance mix times hc_scale 3 plus a unit-variance base), tf32 moves comb_mix by up
  to 6.7e-4 over 4096 tokens. Float32-only paths land below 1e-5.
  Tolerances: post_mix 1.5e-3, comb_mix 1.25e-3. What they must catch is larger: a row that takes another
  row's RMS factor moves its mixes by the ratio of the rows' scales (up to 16x here): post_mix by 0.05 to 0.5;
  one Sinkhorn iteration short moves comb_mix by 2.4e-3 or more at 80 tokens (4.4e-3 at 4096).
- Wide bf16 outputs (layer_input, the new residual, hc_head's output): judged relative to the largest
  magnitude in the same token row, because rows are scaled differently on purpose. Storing to bf16 alone costs
  up to half an ulp, 2^-8 ≈ 3.9e-3 of the value; a float32 result a hair from a rounding boundary can land one
  ulp (2^-7 ≈ 7.8e-3) away; tf32 pre-mix errors add ~1e-3 (5.4e-3 measured for
  layer_input on the same H200 run).
  Tolerance: 1e-2 of the row's largest |value|. What it must catch: a √2 scale error is 0.41, a transposed
  comb or another row's data is O(1).
The fused op is judged against two oracles, its pre from the bf16 residual it returns or from the float32 sum before
rounding (oracle.mhc_fused_post_pre: both are correct, and they differ by up to 1.9e-3 in comb_mix on the H200, more
than comb_mix's tolerance): it passes if all its outputs fit one; the tolerances stay as they are.
Anything non-finite where the oracle is finite fails, whatever the tolerance: a dropped epsilon turns the
all-zero token row into NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.verify import OutputVerdict, ToleranceDocument

if TYPE_CHECKING:  # numpy is an extra (`kernels`): check and report read this module's types without it
    import numpy as np


@dataclass(frozen=True)
class Tolerance:
    abs: float  # |out - ref| allowed, absolute
    rel: float  # |out - ref| allowed, as a fraction of the largest |ref| in the same token row

    def to_dict(self) -> ToleranceDocument:
        return as_document(self, ToleranceDocument)


TOLERANCES: dict[str, Tolerance] = {
    "post_mix": Tolerance(abs=1.5e-3, rel=0.0),
    "comb_mix": Tolerance(abs=1.25e-3, rel=0.0),
    "layer_input": Tolerance(abs=0.0, rel=1e-2),
    "residual_out": Tolerance(abs=0.0, rel=1e-2),
    "output": Tolerance(abs=0.0, rel=1e-2),
}


def compare(name: str, out: np.ndarray, ref: np.ndarray, row_ids: list[int] | None = None) -> OutputVerdict:
    """One output against the oracle: its errors, the tolerance, and whether it passes (with why not).

    `out` and `ref` hold the checked token rows along the first axis; `row_ids` are their token indices.
    """
    import numpy as np

    ids = row_ids if row_ids is not None else list(range(ref.shape[0]))
    tol = TOLERANCES[name]
    if out.shape != ref.shape:
        # (its members in this order: the JSON a failing shape has always had)
        return {
            "name": name,
            "tolerance": tol.to_dict(),
            "passed": False,
            "max_abs_err": None,
            "max_rel_err": None,
            "reason": f"shape {out.shape} != {ref.shape}",
        }
    rows = ref.reshape(ref.shape[0], -1) if ref.size else ref.reshape(0, 1)
    got = out.reshape(rows.shape).astype(np.float64)
    nonfinite = ~np.isfinite(got)
    bad = nonfinite & np.isfinite(rows) if nonfinite.any() else None  # inf or NaN where the oracle is finite
    err = np.abs(got - rows)
    finite_err = err if bad is None else np.where(bad, 0.0, err)
    # Per token row: the largest error, and the row's scale (its largest |value|); relative error is their ratio.
    scale = np.abs(rows).max(axis=1, keepdims=True) if rows.size else rows
    row_err = finite_err.max(axis=1, keepdims=True) if err.size else finite_err
    with np.errstate(divide="ignore", invalid="ignore"):
        row_rel = np.where(scale > 0, row_err / scale, np.where(row_err > 0, np.inf, 0.0))
    allowed = tol.abs + tol.rel * scale  # per row; broadcast against err
    result: OutputVerdict = {
        "name": name,
        "tolerance": tol.to_dict(),
        "max_abs_err": float(row_err.max()) if err.size else 0.0,
        "max_rel_err": float(row_rel.max()) if err.size else 0.0,
        "passed": True,
    }
    if bad is not None and bad.any():
        row = ids[int(np.argwhere(bad)[0][0])]
        result["passed"] = False
        result["reason"] = f"{name}: {int(bad.sum())} non-finite values (first in token row {row})"
        return result
    over = err > allowed
    if over.any():
        worst = np.unravel_index(int(np.argmax(err - allowed)), err.shape)
        result["passed"] = False
        result["reason"] = (
            f"{name}: {int(over.sum())} of {err.size} values over tolerance; worst in token row"
            f" {ids[int(worst[0])]}:"
            f" |err| {err[worst]:.3g} > {allowed[worst[0], 0]:.3g}"
        )
        result["bad_rows"] = sorted({ids[int(r)] for r in np.argwhere(over)[:, 0]})[:20]
    return result
