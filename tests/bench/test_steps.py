"""The cost of one decode step: layers × sublayers × the ops the model runs, per path, selected and best."""

from __future__ import annotations

import pytest

from mhcdoctor.bench import role, step_costs, step_plan
from mhcdoctor.documents.bench import BenchResult, StepCost
from mhcdoctor.documents.verify import RowStatus
from mhcdoctor.documents.vocabulary import OPS, Op
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


def row(
    path: str, op: Op, tokens: int, ms: float | None, status: RowStatus = "pass", graph: float | None = None,
    torch_piece: bool = False,
) -> BenchResult:  # fmt: skip
    return {
        "path": path,
        "role": role(path),
        "op": op,
        "tokens": tokens,
        "status": status,
        "called": None,
        "torch_piece": torch_piece,
        "median_ms": ms,
        "graph_ms": graph,
        "graph_error": None,
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
PLAN_OPS = tuple(op for op in OPS if op in PLAN)  # PLAN's ops, typed as a row's op
RESULTS = [
    row("tilekernels", "mhc_pre", 64, 0.02),
    row("tilekernels", "mhc_post", 64, 0.01),
    row("torch", "mhc_pre", 64, 0.5),
    row("torch", "mhc_post", 64, 0.2),
    row("torch", "hc_head", 64, 0.3),
    row("aiter", "mhc_post", 64, 0.015),
    row("vllm:triton", "hc_head", 64, 0.05),
]


def test_each_path_costs_its_own_ops_and_torch_for_those_it_lacks() -> None:
    batch = step_costs(RESULTS, PLAN, None, [64])["batches"][0]
    assert batch["paths"]["torch"]["ms"] == pytest.approx(10 * 0.5 + 10 * 0.2 + 0.3)
    assert batch["paths"]["tilekernels"]["ms"] == pytest.approx(10 * 0.02 + 10 * 0.01 + 0.3)  # hc_head from torch
    assert batch["paths"]["tilekernels"]["ops"]["hc_head"] == "torch"
    assert batch["paths"]["torch"]["ms_per_token"] == pytest.approx(batch["paths"]["torch"]["ms"] / 64)


def test_the_best_takes_the_fastest_correct_path_per_op_and_the_others_are_measured_against_it() -> None:
    batch = step_costs(RESULTS, PLAN, None, [64])["batches"][0]
    best = 10 * 0.02 + 10 * 0.01 + 0.05
    assert cost(batch["best"])["ops"] == {"mhc_pre": "tilekernels", "mhc_post": "tilekernels", "hc_head": "vllm:triton"}
    assert cost(batch["best"])["ms"] == pytest.approx(best)
    torch_cost = 10 * 0.5 + 10 * 0.2 + 0.3
    assert batch["paths"]["torch"]["vs_best_ms"] == pytest.approx(torch_cost - best)
    assert batch["paths"]["torch"]["times_best"] == pytest.approx(torch_cost / best)


def test_the_selected_paths_are_vllms_own_kernels_when_timed_else_a_stand_in_never_a_probe() -> None:
    results = [*RESULTS, row("vllm:tilelang", "mhc_pre", 64, 0.03), row("tilelang", "mhc_post", 64, 0.001)]
    selected = {"mhc_pre": "tilelang", "mhc_post": "tilelang", "hc_head": "triton"}
    chosen = cost(step_costs(results, PLAN, selected, [64])["batches"][0]["selected"])
    assert chosen["ops"] == {"mhc_pre": "vllm:tilelang", "mhc_post": "tilekernels", "hc_head": "vllm:triton"}
    assert chosen["ms"] == pytest.approx(10 * 0.03 + 10 * 0.01 + 0.05)


def test_probe_kernels_are_out_of_every_cost_however_fast() -> None:
    results = [*RESULTS, *(row(probe, op, 64, 1e-4) for probe in ("tilelang", "triton") for op in PLAN_OPS)]
    batch = step_costs(results, PLAN, None, [64])["batches"][0]
    assert {"tilelang", "triton"}.isdisjoint(batch["paths"])
    assert {"tilelang", "triton"}.isdisjoint(cost(batch["best"])["ops"].values())


def test_a_row_with_a_torch_piece_is_costed_but_never_the_best() -> None:
    results = [*RESULTS, row("tilekernels", "hc_head", 64, 0.01, torch_piece=True)]
    batch = step_costs(results, PLAN, None, [64])["batches"][0]
    assert batch["paths"]["tilekernels"]["ops"]["hc_head"] == "tilekernels"
    assert cost(batch["best"])["ops"]["hc_head"] == "vllm:triton"


def test_decode_costs_use_cuda_graph_times_where_every_op_was_captured() -> None:
    results = [row("vllm:tilelang", op, 1, 0.05, graph=0.02) for op in PLAN_OPS]
    batch = step_costs(results, PLAN, None, [1])["batches"][0]
    assert batch["paths"]["vllm:tilelang"] == {
        "ms": pytest.approx(21 * 0.02), "ms_per_token": pytest.approx(21 * 0.02), "ops": dict.fromkeys(PLAN,
        "vllm:tilelang"), "timing": "cuda-graph", "vs_best_ms": 0.0, "times_best": 1.0,
    }  # fmt: skip
    eager = step_costs([*results[:2], row("vllm:tilelang", "hc_head", 1, 0.05)], PLAN, None, [1])["batches"][0]
    assert eager["paths"]["vllm:tilelang"]["timing"] == "eager"


FUSED_PLAN = {"mhc_pre": 1, "mhc_fused_post_pre": 121, "mhc_post": 1, "hc_head": 1}


def test_a_fused_op_slower_than_its_own_post_then_pre_is_a_finding_with_its_cost_per_step() -> None:
    # vLLM 0.34 on the H200 at 1 token (issue 24): fused 0.071 ms, pre 0.019 ms, post 0.017 ms
    times: dict[Op, float] = {"mhc_pre": 0.019, "mhc_post": 0.017, "mhc_fused_post_pre": 0.071, "hc_head": 0.021}
    results = [row("vllm:tilelang", op, 1, 0.1, graph=ms) for op, ms in times.items()]
    slower = step_costs(results, FUSED_PLAN, None, [1])["batches"][0]["fused_slower"]
    assert slower == [
        {"path": "vllm:tilelang", "fused_ms": 0.071, "separate_ms": pytest.approx(0.036),
         "per_step_ms": pytest.approx(121 * 0.035)},
    ]  # fmt: skip
    faster = [
        row("vllm:tilelang", op, 1, 0.1, graph=0.03 if op == "mhc_fused_post_pre" else ms) for op, ms in times.items()
    ]
    assert step_costs(faster, FUSED_PLAN, None, [1])["batches"][0]["fused_slower"] == []


def test_a_path_that_computed_an_op_wrong_gets_no_cost_and_is_never_the_best() -> None:
    results = [*RESULTS, row("fast", "mhc_pre", 64, None, status="fail"), row("fast", "mhc_post", 64, 0.001)]
    batch = step_costs(results, PLAN, None, [64])["batches"][0]
    assert "fast" not in batch["paths"]
    assert cost(batch["best"])["ops"]["mhc_pre"] == "tilekernels"


def test_no_plan_no_batches() -> None:
    assert step_costs(RESULTS, None, None, [64]) == {"plan": None, "reason": None, "batches": []}


def test_a_path_whose_child_crashed_gets_no_cost_and_no_stand_in_and_fails_when_selected() -> None:
    """vLLM's kernel crashed (SIGABRT) before its first case: its rows are `not reached`; neither its own cost nor
    the selected cost may be made of torch's or a stand-in's figures, and the verdict is fail."""
    from mhcdoctor.bench import _verdict

    crashed = [
        {**row("vllm:tilelang", op, 64, None, status="skip"), "reason": "not reached: the vllm:tilelang child crashed"}
        for op in PLAN_OPS
    ]
    results: list[BenchResult] = [*RESULTS, *crashed]  # type: ignore[list-item]
    selected = {"mhc_pre": "tilelang", "mhc_post": "tilelang", "hc_head": "tilelang"}
    (batch,) = step_costs(results, PLAN, selected, [64])["batches"]
    assert "vllm:tilelang" not in batch["paths"] and batch["selected"] is None
    verdict, problems = _verdict(results, selected)
    assert verdict == "fail" and "vllm:tilelang mhc_pre at 64 tokens: not reached: the vllm:tilelang child crashed" in (
        problems
    )
