"""The cost of one decode step: layers × sublayers × the ops the model runs, per path, selected and best."""

from __future__ import annotations

import pytest

from mhcdoctor.bench import step_costs, step_plan
from mhcdoctor.documents.bench import BenchResult, StepCost
from mhcdoctor.models import BUILTIN_MODELS, ModelConfig


def test_deepseek_v4_pro_runs_122_pre_and_post_per_step_without_the_fused_op() -> None:
    assert step_plan(BUILTIN_MODELS["deepseek-v4-pro"], fused=False) == {"mhc_pre": 122, "mhc_post": 122, "hc_head": 1}


def test_with_the_fused_op_one_pre_and_one_post_remain() -> None:
    assert step_plan(BUILTIN_MODELS["deepseek-v4-flash"], fused=True) == {
        "mhc_pre": 1,
        "mhc_fused_post_pre": 85,
        "mhc_post": 1,
        "hc_head": 1,
    }


def test_no_plan_without_a_layer_count() -> None:
    assert step_plan(ModelConfig(None, 4096), fused=False) is None


def row(path: str, op: str, tokens: int, ms: float | None, status: str = "pass") -> BenchResult:
    return {
        "path": path,
        "op": op,
        "tokens": tokens,
        "status": status,
        "median_ms": ms,
        "min_ms": ms,
        "runs": 3,
        "bytes": 1,
        "tb_per_s": None,
        "fraction_of_peak": None,
        "max_abs_err": None,
        "max_rel_err": None,
        "reason": None,
    }


def cost(found: StepCost | None) -> StepCost:
    assert found is not None
    return found


PLAN = {"mhc_pre": 10, "mhc_post": 10, "hc_head": 1}
RESULTS = [
    row("tilelang", "mhc_pre", 64, 0.02),
    row("tilelang", "mhc_post", 64, 0.01),
    row("torch", "mhc_pre", 64, 0.5),
    row("torch", "mhc_post", 64, 0.2),
    row("torch", "hc_head", 64, 0.3),
    row("triton", "mhc_post", 64, 0.015),
    row("triton", "hc_head", 64, 0.05),
]


def test_each_path_costs_its_own_ops_and_torch_for_those_it_lacks() -> None:
    batch = step_costs(RESULTS, PLAN, None, [64])["batches"][0]
    assert batch["paths"]["torch"]["ms"] == pytest.approx(10 * 0.5 + 10 * 0.2 + 0.3)
    assert batch["paths"]["tilelang"]["ms"] == pytest.approx(10 * 0.02 + 10 * 0.01 + 0.3)  # hc_head from torch
    assert batch["paths"]["tilelang"]["ops"]["hc_head"] == "torch"


def test_the_best_takes_the_fastest_correct_path_per_op_and_the_others_are_measured_against_it() -> None:
    batch = step_costs(RESULTS, PLAN, None, [64])["batches"][0]
    best = 10 * 0.02 + 10 * 0.01 + 0.05
    assert cost(batch["best"])["ops"] == {"mhc_pre": "tilelang", "mhc_post": "tilelang", "hc_head": "triton"}
    assert cost(batch["best"])["ms"] == pytest.approx(best)
    torch_cost = 10 * 0.5 + 10 * 0.2 + 0.3
    assert batch["paths"]["torch"]["vs_best_ms"] == pytest.approx(torch_cost - best)
    assert batch["paths"]["torch"]["times_best"] == pytest.approx(torch_cost / best)


def test_the_selected_paths_prefer_vllms_own_kernels_when_they_were_timed() -> None:
    results = [*RESULTS, row("vllm:tilelang", "mhc_pre", 64, 0.03)]
    selected = {"mhc_pre": "tilelang", "mhc_post": "tilelang", "hc_head": "triton"}
    chosen = cost(step_costs(results, PLAN, selected, [64])["batches"][0]["selected"])
    assert chosen["ops"] == {"mhc_pre": "vllm:tilelang", "mhc_post": "tilelang", "hc_head": "triton"}
    assert chosen["ms"] == pytest.approx(10 * 0.03 + 10 * 0.01 + 0.05)


def test_a_path_that_computed_an_op_wrong_gets_no_cost_and_is_never_the_best() -> None:
    results = [*RESULTS, row("fast", "mhc_pre", 64, None, status="fail"), row("fast", "mhc_post", 64, 0.001)]
    batch = step_costs(results, PLAN, None, [64])["batches"][0]
    assert "fast" not in batch["paths"]
    assert cost(batch["best"])["ops"]["mhc_pre"] == "tilelang"


def test_no_plan_no_batches() -> None:
    assert step_costs(RESULTS, None, None, [64]) == {"plan": None, "reason": None, "batches": []}
