"""The torch reference agrees with the independent float64 oracle on CPU, leading batch dims included.

Each test imports torch itself: every xdist worker collects this module, and only the one that runs it should pay
for torch (tests/needs.py).
"""

from __future__ import annotations

import needs
import numpy as np
import pytest

from mhcdoctor import oracle
from mhcdoctor.documents.vocabulary import OPS
from mhcdoctor.kernels import Op
from mhcdoctor.models import ModelConfig
from mhcdoctor.verify import cases
from mhcdoctor.verify.tolerance import compare

PARAMS = cases.Params.from_model(ModelConfig(None, 512))
pytestmark = [needs.library("torch"), pytest.mark.slow, pytest.mark.xdist_group("torch-in-process")]  # conftest.py


@pytest.mark.parametrize("op", OPS)
def test_reference_matches_the_oracle_on_every_output(op: str) -> None:
    from mhcdoctor import reference

    inputs = cases.make_inputs(op, 40, PARAMS, seed=1, device="cpu")
    scalars = cases.scalar_args(op, PARAMS)
    got = getattr(reference, op)(*inputs.values(), **scalars)
    got = got if isinstance(got, tuple) else (got,)
    expected = getattr(oracle, op)(*(v.float().numpy() for v in inputs.values()), **scalars)
    names = cases.OUTPUTS[op]
    verdicts = [compare(name, t.float().numpy(), expected[name]) for name, t in zip(names, got, strict=True)]
    assert [(v["name"], v["passed"]) for v in verdicts] == [(name, True) for name in cases.OUTPUTS[op]]


def test_leading_batch_dims_give_the_same_rows_as_flat_tokens() -> None:
    import torch

    from mhcdoctor import reference

    inputs = cases.make_inputs("mhc_pre", 6, PARAMS, seed=2, device="cpu")
    scalars = cases.scalar_args("mhc_pre", PARAMS)
    mhc_pre: Op = reference.mhc_pre  # called with the cases' tensors and scalars, as verify calls every path
    flat = mhc_pre(*inputs.values(), **scalars)
    batched_residual = inputs["residual"].view(2, 3, *inputs["residual"].shape[1:])
    batched = mhc_pre(batched_residual, *list(inputs.values())[1:], **scalars)
    assert isinstance(flat, tuple) and isinstance(batched, tuple)
    assert [tuple(t.shape) for t in batched] == [(2, 3, 4, 1), (2, 3, 4, 4), (2, 3, 512)]
    assert all(torch.equal(b.reshape(f.shape), f) for b, f in zip(batched, flat, strict=True))


def test_mhc_post_reads_comb_with_the_input_stream_first() -> None:
    """out[j] = Σ_i comb[i, j] R_i: with comb = e_{0,1} only stream 1 receives stream 0."""
    import torch

    from mhcdoctor import reference

    residual = torch.zeros(1, 4, 8, dtype=torch.bfloat16)
    residual[0, 0] = 1.0
    comb = torch.zeros(1, 4, 4)
    comb[0, 0, 1] = 1.0
    out = reference.mhc_post(torch.zeros(1, 8, dtype=torch.bfloat16), residual, torch.zeros(1, 4, 1), comb)
    assert out[0].float().sum(dim=-1).tolist() == [0.0, 8.0, 0.0, 0.0]


def test_oracle_rounds_to_bf16_ties_to_even() -> None:
    values = np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8, -(1.0 + 2**-9)], dtype=np.float64)
    assert oracle.round_bf16(values).tolist() == [1.0, 1.0 + 4 * 2**-8, -1.0]


@pytest.mark.parametrize("op", ["mhc_pre", "mhc_fused_post_pre"])
def test_the_folded_rms_norm_matches_the_oracle_and_changes_only_layer_input(op: str) -> None:
    """vLLM 0.29+ and aiter 0.1.15+ fold an RMSNorm (norm_weight, norm_eps) into mhc_pre's layer_input."""
    import torch

    from mhcdoctor import reference

    inputs = cases.make_inputs(op, 24, PARAMS, seed=3, device="cpu")
    scalars = cases.scalar_args(op, PARAMS)
    weight = torch.linspace(0.5, 1.5, PARAMS.hidden)
    plain = getattr(reference, op)(*inputs.values(), **scalars)
    normed = getattr(reference, op)(*inputs.values(), **scalars, norm_weight=weight, norm_eps=1e-6)
    expected = getattr(oracle, op)(
        *(v.float().numpy() for v in inputs.values()), **scalars, norm_weight=weight.numpy(), norm_eps=1e-6
    )
    names = cases.OUTPUTS[op]
    verdicts = [compare(name, t.float().numpy(), expected[name]) for name, t in zip(names, normed, strict=True)]
    assert all(v["passed"] for v in verdicts), verdicts
    changed = [name for name, a, b in zip(names, plain, normed, strict=True) if not torch.equal(a, b)]
    assert changed == ["layer_input"]
    rms = normed[-1].float().div(weight).square().mean(dim=-1).sqrt()
    nonzero = plain[-1].float().abs().amax(dim=-1) > 0  # the inputs plant an all-zero token row
    assert torch.allclose(rms[nonzero], torch.ones_like(rms[nonzero]), rtol=2e-2), "each row comes out normalised"
    assert torch.equal(normed[-1][~nonzero], plain[-1][~nonzero]), "a zero row stays zero"


def test_bf16_rounding_matches_torch_everywhere_including_overflow_and_specials() -> None:
    import torch

    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            rng.standard_normal(20000).astype(np.float32) * np.float32(2.0) ** rng.integers(-30, 30, 20000),
            np.array([3.3895314e38, -3.3895314e38, 1e-45, -0.0, np.inf, -np.inf, np.nan], dtype=np.float32),
        ]
    )
    expected = torch.from_numpy(values).to(torch.bfloat16).double().numpy()
    assert np.array_equal(oracle.round_bf16(values), expected, equal_nan=True)
