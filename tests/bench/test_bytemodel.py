"""The byte model: each op's inputs read once and outputs written once, at the dtypes vLLM passes."""

from __future__ import annotations

import pytest

from mhcdoctor.bench.bytemodel import op_bytes, total_bytes

H, N = 7168, 4  # DeepSeek-V4-Pro


def test_mhc_post_at_one_token_counted_by_hand() -> None:
    # reads x 7168·2, residual 4·7168·2, post_mix 4·4, comb_mix 16·4; writes the new residual 4·7168·2
    assert op_bytes("mhc_post", 1, H, N) == {"read": 14336 + 57344 + 16 + 64, "written": 57344}


def test_mhc_pre_at_one_token_is_dominated_by_fn() -> None:
    # fn is 24 × 28672 float32 = 2,752,512 bytes: the weights, not the token, set decode traffic
    fn, scale, base = 24 * 4 * H * 4, 3 * 4, 24 * 4
    assert op_bytes("mhc_pre", 1, H, N) == {"read": 57344 + fn + scale + base, "written": 16 + 64 + 14336}


def test_hc_head_reads_an_n_by_nh_fn() -> None:
    read = 16384 * 57344 + 4 * 4 * H * 4 + 4 + 16
    assert op_bytes("hc_head", 16384, H, N) == {"read": read, "written": 16384 * 14336}


@pytest.mark.parametrize("tokens", [1, 64, 16384])
def test_fused_post_pre_saves_exactly_one_read_of_the_new_residual(tokens: int) -> None:
    separate = total_bytes("mhc_post", tokens, H, N) + total_bytes("mhc_pre", tokens, H, N)
    assert separate - total_bytes("mhc_fused_post_pre", tokens, H, N) == tokens * N * H * 2


def test_token_traffic_grows_linearly() -> None:
    per_token = total_bytes("mhc_post", 2, H, N) - total_bytes("mhc_post", 1, H, N)
    assert total_bytes("mhc_post", 16384, H, N) == total_bytes("mhc_post", 1, H, N) + 16383 * per_token


def test_an_unknown_op_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown op"):
        op_bytes("mhc_nope", 1, H, N)
