"""verify's token counts reach every known trigger point: each bug's first bad token count and each range of the
tilelang prenorm GEMM's variants has a size in it (default or --stress), and the block-M variant gets an odd count."""

from __future__ import annotations

from mhcdoctor.knowledge import known
from mhcdoctor.rules.findings import CATALOGUE
from mhcdoctor.verify.cases import DEFAULT_TOKENS, STRESS_TOKENS

SIZES = sorted({*DEFAULT_TOKENS, *STRESS_TOKENS})


def test_every_trigger_is_reached_and_every_range_between_triggers_has_a_size():
    bounds = [0, *(t for t, _ in known.TOKEN_TRIGGERS), 1 << 30]
    for low, high in zip(bounds, bounds[1:], strict=False):
        assert any(low <= size < high for size in SIZES), f"no verify size in [{low}, {high})"


def test_the_block_m_variant_meets_an_odd_token_count():
    block_m = next(t for t, why in known.TOKEN_TRIGGERS if "block-M" in why)
    assert any(size >= block_m and size % 2 == 1 for size in STRESS_TOKENS)


def test_every_finding_that_starts_at_a_token_count_is_reached_by_stress_and_is_a_trigger():
    starts = {spec.id: spec.from_tokens for spec in CATALOGUE if spec.from_tokens is not None}
    assert starts["tilelang-prenorm-block-m"] == 1024  # measured wrong at 1024, 4096 and 16384 tokens
    for name, start in starts.items():
        assert start in {t for t, _ in known.TOKEN_TRIGGERS}, name
        assert any(size >= start for size in STRESS_TOKENS), name
