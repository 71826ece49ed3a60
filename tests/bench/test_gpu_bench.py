"""On a GPU: bench times every path that runs there, each output right, the bandwidth physically possible.

Skipped where no GPU is visible (CI); scripts/gpu-bench runs them on the GPU machine.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import needs
import pytest

from mhcdoctor.kernels import REGISTRY

pytestmark = needs.gpu("needs a CUDA or ROCm GPU")
SCHEMA = json.loads((Path(__file__).parents[2] / "mhcdoctor/schemas/bench.schema.json").read_text())
RUN_HERE = {"torch", "triton", "tilelang"} | ({"tilekernels"} if importlib.util.find_spec("tile_kernels") else set())
PATHS = [p for p in REGISTRY.names() if p in RUN_HERE]  # bench reports the paths in the registry's order


@pytest.fixture(scope="module")
def doc() -> dict:
    args = [a for p in PATHS for a in ("--path", p)]
    proc = subprocess.run(
        [sys.executable, "-m", "mhcdoctor", "bench", "--model", "deepseek-v4-pro", "--tokens", "1,64,16384",
         "--repeats", "20", "--json", *args],
        capture_output=True, text=True, timeout=1200,
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


def test_the_torch_fallback_costs_more_per_decode_step_than_the_best_path(doc: dict) -> None:
    batch = next(b for b in doc["step"]["batches"] if b["tokens"] == 64)
    assert batch["paths"]["torch"]["times_best"] > 2
    assert batch["best"]["ops"]["mhc_pre"] != "torch"
