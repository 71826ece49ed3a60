"""On a GPU: bench times every path that runs there, each output right, the bandwidth physically possible, and
vLLM's own kernels (a real vLLM, or a wheel's kernel files from tests/bench/vllm_fixture.py on PYTHONPATH) beat
the torch fallback per decode step.

Skipped where no GPU is visible (CI); scripts/gpu-bench runs them on the GPU machine.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import doctor
import jsonschema
import needs
import pytest

from mhcdoctor.kernels import REGISTRY

pytestmark = needs.gpu("needs a CUDA or ROCm GPU")
SCHEMA = json.loads((Path(__file__).parents[2] / "mhcdoctor/schemas/bench.schema.json").read_text())
VLLM = importlib.util.find_spec("vllm") is not None
RUN_HERE = (
    {"torch", "triton", "tilelang"}
    | ({"tilekernels"} if importlib.util.find_spec("tile_kernels") else set())
    | ({"vllm:tilelang"} if VLLM else set())
)
PATHS = [p for p in REGISTRY.names() if p in RUN_HERE]  # bench reports the paths in the registry's order


@pytest.fixture(scope="module")
def doc() -> dict:
    """bench of every path here at 1, 64 and 16384 tokens; or the bench/1 document scripts/gpu-bench just wrote
    (MHCDOCTOR_BENCH_JSON: its default tokens include these), which names the probes too (BENCH_ARGS)."""
    made = os.environ.get("MHCDOCTOR_BENCH_JSON")
    if made:
        return json.loads(Path(made).read_text())
    args = [a for p in PATHS for a in ("--path", p)]
    proc = doctor.spawn(
        "bench", "--model", "deepseek-v4-pro", "--tokens", "1,64,16384", "--repeats", "20", "--json", *args,
        timeout=1200,
    )  # fmt: skip
    assert proc.stdout.startswith("{"), proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_every_gpu_path_is_timed_and_right(doc: dict) -> None:
    jsonschema.validate(doc, SCHEMA)
    assert [p["path"] for p in doc["paths"] if p["status"] == "ran"] == PATHS
    rows = doc["results"]
    wrong = [(r["path"], r["op"], r["tokens"], r["status"], r["reason"]) for r in rows if r["status"] != "pass"]
    assert (doc["verdict"], wrong, doc["timer"]) == ("ok", [], "cuda-events")


def test_no_path_beats_the_peak_of_a_known_device(doc: dict) -> None:
    # an achieved bandwidth above the data sheet's means a byte model or a timer that lies
    assert doc["peak"]["how"] == "table"
    assert max(r["fraction_of_peak"] for r in doc["results"] if r["tokens"] == 16384) < 1.0


def test_this_projects_own_kernels_are_labelled_probes_and_never_costed(doc: dict) -> None:
    assert {doc["roles"][p] for p in ("tilelang", "triton")} == {"probe"}
    for batch in doc["step"]["batches"]:
        costed = {*batch["paths"], *(batch["best"] or {"ops": {}})["ops"].values()}
        assert not {"tilelang", "triton"} & costed, batch


@pytest.mark.skipif(
    not VLLM, reason="needs vLLM's kernels: vLLM, or tests/bench/vllm_fixture.py's folder on PYTHONPATH"
)
def test_vllms_own_kernels_cost_a_decode_step_less_than_half_the_torch_fallback(doc: dict) -> None:
    # What the user asks of bench: does vLLM's own path beat the fallback it would take without tilelang? Both
    # decode costs under CUDA graphs, as vLLM serves decode; every vLLM op its own (none borrowed from torch).
    batch = next(b for b in doc["step"]["batches"] if b["tokens"] == 64)
    vllm, torch = batch["paths"]["vllm:tilelang"], batch["paths"]["torch"]
    assert set(vllm["ops"].values()) == {"vllm:tilelang"} and vllm["timing"] == torch["timing"] == "cuda-graph"
    assert torch["ms"] > 2 * vllm["ms"], (torch, vllm)
