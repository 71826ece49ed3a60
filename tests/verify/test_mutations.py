"""The mutation suite: verify catches every planted bug at the shapes where it shows, and no correct kernel fails.

Stand-ins run on the CPU in-process (tests/verify/mutants.py); the same judging runs in verify's GPU children.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhcdoctor.documents.vocabulary import OPS
from mhcdoctor.kernels import PathImpl
from mhcdoctor.models import ModelConfig
from mhcdoctor.verify import cases, worker
from mhcdoctor.verify.rows import CaseRow, is_case_row

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("torch-in-process")]  # conftest.py

PARAMS = cases.Params.from_model(ModelConfig(None, 256))


def mutant(name: str) -> PathImpl:
    """The stand-in with this bug; mutants.py imports torch, so only a worker that runs these tests pays for it."""
    import mutants

    return mutants.mutant(name)


def checked(rows: Iterable[dict[str, object]]) -> list[CaseRow]:
    """The rows as the parent reads them back: each must be a CaseRow (what the child writes fits verify.rows)."""
    out = []
    for row in rows:
        assert is_case_row(row), row
        out.append(row)
    return out


def statuses(bug: str, ops: list[str], tokens: list[int]) -> dict[tuple[str, int], str]:
    rows = checked(worker.run_path(mutant(bug), ops, tokens, PARAMS, "cpu"))
    return {(r["op"], r["tokens"]): r["status"] for r in rows}


def test_sqrsum_race_fails_only_past_16_tokens() -> None:
    got = statuses("sqrsum-race", ["mhc_pre", "mhc_fused_post_pre"], [7, 16, 80])
    assert got == {
        ("mhc_pre", 7): "pass",
        ("mhc_pre", 16): "pass",
        ("mhc_pre", 80): "fail",
        ("mhc_fused_post_pre", 7): "pass",
        ("mhc_fused_post_pre", 16): "pass",
        ("mhc_fused_post_pre", 80): "fail",
    }


def test_layer_input_sqrt2_too_large_fails_at_one_token() -> None:
    assert statuses("layer-input-sqrt2", ["mhc_pre"], [1]) == {("mhc_pre", 1): "fail"}


def test_transposed_comb_fails_mhc_post_and_the_fused_op() -> None:
    got = statuses("comb-transposed", ["mhc_pre", "mhc_post", "mhc_fused_post_pre"], [1])
    assert got == {("mhc_pre", 1): "pass", ("mhc_post", 1): "fail", ("mhc_fused_post_pre", 1): "fail"}


def test_one_sinkhorn_iteration_short_fails_at_80_tokens() -> None:
    assert statuses("sinkhorn-short", ["mhc_pre"], [80]) == {("mhc_pre", 80): "fail"}


def test_dropped_epsilon_fails_on_the_all_zero_token_row() -> None:
    rows = checked(worker.run_path(mutant("dropped-eps"), ["mhc_pre", "hc_head"], [7], PARAMS, "cpu"))
    assert [(r["status"], "non-finite" in str(r.get("reason"))) for r in rows] == [("fail", True), ("fail", True)]


def test_stale_padding_rows_fail_where_the_last_group_is_partial() -> None:
    got = statuses("stale-padding", ["mhc_post"], [7, 80])
    assert got == {("mhc_post", 7): "fail", ("mhc_post", 80): "pass"}


def test_a_fused_op_that_computes_its_pre_before_rounding_passes_and_its_row_says_so() -> None:
    # vLLM's single-kernel fused op takes its pre from the float32 residual; the reference from the bf16 one
    rows = checked(worker.run_path(mutant("unrounded"), ["mhc_fused_post_pre"], [1, 7, 80], PARAMS, "cpu"))
    assert [(r["status"], r.get("reason")) for r in rows] == [("pass", None)] * 3
    orders = [{o["name"]: o.get("pre_from") for o in r.get("outputs", [])} for r in rows]
    assert orders[1] == {
        "residual_out": None,
        "post_mix": "float32 residual",
        "comb_mix": "float32 residual",
        "layer_input": "float32 residual",
    }
    [row] = checked(worker.run_path(mutant("reference"), ["mhc_fused_post_pre"], [7], PARAMS, "cpu"))
    assert {o.get("pre_from") for o in row.get("outputs", []) if o["name"] != "residual_out"} == {"bf16 residual"}


def test_a_wrong_fused_op_in_the_unrounded_order_still_fails() -> None:
    assert statuses("unrounded-sinkhorn-short", ["mhc_fused_post_pre"], [80]) == {("mhc_fused_post_pre", 80): "fail"}


def test_a_failing_row_names_the_token_rows_that_are_wrong() -> None:
    [row] = checked(worker.run_path(mutant("sqrsum-race"), ["mhc_pre"], [80], PARAMS, "cpu"))
    bad_rows = {r for out in row.get("outputs", []) for r in out.get("bad_rows", [])}
    assert bad_rows and all(r % 64 >= 16 for r in bad_rows)


@settings(max_examples=25, deadline=None)
@given(
    variant=st.sampled_from(["reference", "tf32", "unrounded"]),
    op=st.sampled_from(OPS),
    tokens=st.integers(min_value=1, max_value=100),
    hidden=st.sampled_from([128, 256, 512]),
    seed=st.integers(min_value=0, max_value=2**20),
)
def test_correct_kernels_never_raise_a_false_alarm(variant: str, op: str, tokens: int, hidden: int, seed: int) -> None:
    params = cases.Params.from_model(ModelConfig(None, hidden))
    rows = checked(worker.run_path(mutant(variant), [op], [tokens], params, "cpu", seed=seed))
    assert [(r["status"], r.get("reason")) for r in rows] == [("pass", None)]
