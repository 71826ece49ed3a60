"""The checks of rows read back from a path child (mhcdoctor.verify.rows) say what their TypedDicts say."""

from __future__ import annotations

import json

import pytest

from mhcdoctor.bench.rows import is_timed_row
from mhcdoctor.models import ModelConfig
from mhcdoctor.verify import rows, worker
from mhcdoctor.verify.cases import Params
from mhcdoctor.verify.rows import is_case_row, is_output_verdict


def test_a_row_with_a_member_of_the_wrong_type_is_not_a_row() -> None:
    row: dict[str, object] = {"op": "mhc_pre", "tokens": 7, "status": "pass", "seconds": 0.1, "reason": None}
    assert is_timed_row(dict(row))  # a stub the runner writes is a row of every task
    assert is_case_row(row)
    assert not is_case_row({**row, "tokens": "7"})
    assert not is_case_row({**row, "tokens": True})
    assert not is_case_row({**row, "evidence": [1]})
    assert not is_case_row({k: v for k, v in row.items() if k != "op"})
    assert not is_case_row({**row, "outputs": [{"name": "post_mix"}]})
    verdict = {"name": "post_mix", "tolerance": {"abs": 1e-3, "rel": 0}, "max_abs_err": 0, "max_rel_err": None}
    assert is_output_verdict({**verdict, "passed": True})
    assert not is_output_verdict({**verdict, "passed": 1})
    assert not is_output_verdict({**verdict, "passed": True, "bad_rows": [1, "2"]})
    assert not is_output_verdict({**verdict, "passed": True, "tolerance": {"abs": 1e-3}})
    assert not is_case_row({**row, "outputs": [{**verdict, "passed": True, "tolerance": {"abs": "x", "rel": 0}}]})
    assert is_case_row({**row, "outputs": [{**verdict, "passed": True}], "evidence": ["ran"]})
    timed = {**row, "median_s": 1e-5, "min_s": 1e-5, "runs": 50, "timer": "cuda-events", "graph_runs": 50}
    assert is_timed_row(timed)
    assert not is_timed_row({**timed, "runs": 50.5})
    assert not is_timed_row({**timed, "torch_piece": "no"})


def test_the_request_a_path_child_gets_is_checked_before_it_is_served() -> None:
    params = Params.from_model(ModelConfig(None, 512)).to_dict()
    request: dict[str, object] = {
        "path": "torch",
        "device": "cpu",
        "ops": ["mhc_pre"],
        "tokens": [1, 7],
        "params": params,
        "seed": 0,
        "spawned_at": 1.5,
    }
    assert rows.is_request(request)
    assert rows.is_request({**request, "task": "mhcdoctor.bench.timing:time_case", "task_options": {}})
    assert not rows.is_request({**request, "tokens": [1, "7"]})
    assert not rows.is_request({**request, "ops": "mhc_pre"})
    for member in rows.WorkerRequest.__required_keys__:  # every member the child reads is there
        assert not rows.is_request({k: v for k, v in request.items() if k != member})
    assert not rows.is_request({**request, "params": {k: v for k, v in params.items() if k != "rms_eps"}})
    with pytest.raises(ValueError, match="not a path child's request"):
        worker.main(["/nonexistent/events", json.dumps({**request, "tokens": "1"})])
