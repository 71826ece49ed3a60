"""fleet --verify keeps one small row per GPU, not each GPU's whole outcome (issue 33 §6): a node advertising many
GPUs grew the driver by its verify output per GPU (24 MiB each in the review). The collector runs as in a fleet run,
on outcomes handed over as Ray hands them (JSON bytes in an object buffer), through a stand-in for Ray's calls."""

from __future__ import annotations

import json
import tracemalloc
from types import SimpleNamespace
from typing import Any

from mhcdoctor.fleet.ray_runner import MAX_NOT_PASS, NodeRun, _collect
from mhcdoctor.fleet.summary import NodeResult

GPUS = 48
OUTPUT = 1 << 20  # each GPU's verify prints 1 MiB besides its document


class _Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def to_pybytes(self) -> bytes:
        return self.data


def _outcome(gpu: int) -> bytes:
    rows = [{"path": f"path{i}", "op": "mhc_pre", "status": "fail"} for i in range(200)]
    doc = {"schema": "mhcdoctor.verify/1", "verdict": "fail", "results": rows, "log": "x" * OUTPUT}
    outcome = {"python": "python3", "gpus": [str(gpu)], "bundle": None, "timed_out": False, "code": 3,
               "stdout": json.dumps(doc), "stderr": "", "seconds": 1.0}  # fmt: skip
    return json.dumps(outcome).encode()


def _ray(objects: dict[int, bytes]) -> Any:
    def get_objects(refs: list[int], timeout_ms: int) -> list[tuple[_Buffer, bytes]]:
        return [(_Buffer(objects.pop(refs[0])), b"RAW")]  # Ray's store hands each object over once

    worker = SimpleNamespace(core_worker=SimpleNamespace(get_objects=get_objects))
    return SimpleNamespace(
        wait=lambda pending, num_returns, timeout: (pending[:1], pending[1:]),
        cancel=lambda ref, force: None,
        _private=SimpleNamespace(worker=SimpleNamespace(global_worker=worker)),
    )


def test_each_gpus_verify_is_kept_as_a_bounded_row_and_its_output_is_let_go() -> None:
    objects = {gpu: _outcome(gpu) for gpu in range(GPUS)}
    ray = _ray(objects)
    runs = [NodeRun(NodeResult("node-00", "timeout"))]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _collect(ray, {gpu: (0, "verify") for gpu in range(GPUS)}, runs, limit=60.0, progress=lambda _: None)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    rows = runs[0].result.verify
    assert rows is not None and len(rows) == GPUS and not objects
    assert all(row["status"] == "checked" and row["verdict"] == "fail" for row in rows)
    assert len(rows[0]["not_pass"]) == MAX_NOT_PASS + 1 and rows[0]["not_pass"][-1] == "... and 168 more"
    # kept: about 3 KiB a row; every outcome kept whole was GPUS MiB and more
    assert kept < GPUS * 16 * 1024, f"{kept / GPUS / 1024:.0f} KiB kept per GPU"
    print(f"\n{GPUS} GPUs' verify outcomes of {OUTPUT >> 20} MiB each: {kept / 1024:.0f} KiB kept")
