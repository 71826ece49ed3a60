"""The shape rules read from vLLM's code agree with what the H200 measured (scripts/gpu-measure pins09 and pins12,
2026-12-05; bugs.FUSED_SHAPE, bugs.DEEPGEMM_PRENORM_SHAPE): each measured case, wrong or right, as the rule says.

The cases are the run's rows for vLLM 0.21.0-0.28.0's fused post+pre (these wrong cases in each of those releases'
kernel files measured; 0.22.0 is also wrong at 200 tokens at hidden 1280, 2048 and 3072, from tilelang-pre-norm-stages)
and DeepGEMM 2.5.0's tf32_hc_prenorm_gemm under 0.20.0-0.21.0's mhc_pre."""

from __future__ import annotations

import itertools

import pytest

from mhcdoctor.knowledge import bugs, known

SHAPES = [(1280, 4), (2048, 4), (2560, 4), (3072, 4), (5120, 4), (6144, 4), (4096, 2), (4096, 8)]
TOKENS = (1, 16, 200)
# (hidden, hc_mult, tokens) whose fused post+pre the H200 measured wrong (residual_out non-finite or post_mix off)
FUSED_MEASURED_WRONG = {(1280, 4, 1), (1280, 4, 16), (2560, 4, 1), (2560, 4, 16), (3072, 4, 1), (4096, 2, 16),
                        (4096, 8, 16)}  # fmt: skip


@pytest.mark.parametrize("hidden, hc_mult, tokens", [(*s, t) for s, t in itertools.product(SHAPES, TOKENS)])
def test_the_fused_shape_rule_says_what_the_h200_measured(hidden, hc_mult, tokens):
    measured_wrong = (hidden, hc_mult, tokens) in FUSED_MEASURED_WRONG
    assert known.fused_small_fma_lost(hidden, hc_mult, tokens) == measured_wrong
    assert bugs.FUSED_SHAPE.proof == "measured"


@pytest.mark.parametrize("hc_mult, refused", [(2, False), (4, False), (8, True)])  # the hc_mult the run measured
def test_the_deepgemm_shape_rule_says_what_the_h200_measured(hc_mult, refused):
    assert known.deepgemm_prenorm_refuses(4096, hc_mult, 1) == refused


def test_the_deepgemm_rule_admits_only_hc_mult_2_and_4():
    assert [m for m in range(1, 17) if not known.deepgemm_prenorm_refuses(4096, m, 1)] == [2, 4]
