"""The mechanism that plants bugs in this project's own kernels (kernel_mutants.py), checked without a GPU.

The GPU tests that run the tilelang and triton mutants are in test_gpu_kernel_mutants.py. Here: every mutation
still finds its target exactly once, a verify run from a mutant tree really runs the mutated code (shown with the
torch reference on the CPU), and, where tilelang or triton is installed, the mutated kernels still compile:
tilelang lowers each one to CUDA source without a GPU, and triton's interpreter (TRITON_INTERPRET=1) runs the
triton mutants on the CPU through verify's own judging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from kernel_mutants import MUTATIONS, PACKAGE, Mutation, finish_verify, mutant_tree, mutate, start_verify, variants

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_every_mutation_finds_its_target_exactly_once_and_changes_the_kernel(name: str) -> None:
    mutation = MUTATIONS[name]
    source = (PACKAGE / mutation.module).read_text(encoding="utf-8")
    mutated = mutate(source, mutation)
    assert mutated != source and mutation.new in mutated
    compile(mutated, mutation.module, "exec")  # still Python


def test_a_mutation_whose_target_is_gone_or_repeated_fails_loudly() -> None:
    gone = Mutation("tilelang:gone", "kernels/tilelang_path.py", "no such expression", "x")
    with pytest.raises(AssertionError, match="occurs 0 times in kernels/tilelang_path.py, not once"):
        mutate("a = 1\n", gone)
    twice = Mutation("tilelang:twice", "kernels/tilelang_path.py", "a = 1", "a = 2")
    with pytest.raises(AssertionError, match="occurs 2 times"):
        mutate("a = 1\na = 1\n", twice)


@pytest.mark.slow
def test_verify_run_from_a_mutant_tree_runs_the_mutated_code(tmp_path: Path) -> None:
    tokens = ["--path", "torch", "--device", "cpu", "--hidden", "256", "--tokens", "1,7"]
    clean = start_verify(mutant_tree(tmp_path / "clean", None), *tokens)
    planted = start_verify(mutant_tree(tmp_path / "planted", "torch:dropped-eps"), *tokens)
    code, doc, _ = finish_verify(clean, timeout=120)
    assert (code, doc["summary"]["fail"], doc["summary"]["pass"]) == (0, 0, 8)
    code, doc, _ = finish_verify(planted, timeout=120)
    failing = {(r["op"], r["tokens"]) for r in doc["results"] if r["status"] == "fail"}
    # every op but mhc_post computes an RMS factor; 1 token has no all-zero row, 7 tokens have row 3
    # exit 3 where the rules select torch (no GPU path here), 1 where they select a GPU path (the H200 run)
    assert doc["verdict"] in ("fail", "degraded") and code == {"fail": 3, "degraded": 1}[doc["verdict"]]
    assert failing == {("mhc_pre", 7), ("mhc_fused_post_pre", 7), ("hc_head", 7)}
    assert all("non-finite values (first in token row 3)" in p for p in doc["problems"])


@pytest.mark.slow
def test_every_tilelang_mutant_still_lowers_to_cuda_and_changes_the_generated_code(tmp_path: Path) -> None:
    pytest.importorskip("tilelang")
    import tilelang
    from tvm.target import Target

    def cuda(module: ModuleType) -> dict[str, str]:
        builds = {
            "prenorm_gemm": lambda: module._prenorm_gemm(4 * 4096, 24),
            "pre_fuse": lambda: module._pre_fuse(4096, 4, 1e-6, 1e-6, 1e-6, 2.0, 20),
            "post": lambda: module._post(4096, 4),
        }
        target = Target({"kind": "cuda", "arch": "sm_90"})
        with target:
            return {name: str(tilelang.lower(build(), target=target).kernel_source) for name, build in builds.items()}

    sources = {name: cuda(module) for name, module in variants(tmp_path, "tilelang").items()}
    clean = sources.pop(None)
    changed = {name: sorted(k for k in clean if code[k] != clean[k]) for name, code in sources.items()}
    assert changed == {
        "tilelang:sqrsum-tile-offset": ["pre_fuse"],
        "tilelang:dropped-eps": ["pre_fuse"],
        "tilelang:comb-transposed": ["post"],
        "tilelang:sinkhorn-short": ["pre_fuse"],
    }


@pytest.mark.slow
def test_triton_mutants_fail_verify_where_they_should_under_the_interpreter(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    # TRITON_INTERPRET must be set before triton is imported (triton.language's own helpers are jitted then): a child
    code = "import json, sys, kernel_mutants; print(json.dumps(kernel_mutants.interpreted_triton(sys.argv[1])))"
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {name: sorted(map(tuple, rows)) for name, rows in json.loads(proc.stdout).items()}
    assert got == {
        "unmutated": [],
        "triton:comb-transposed": [("mhc_post", 1), ("mhc_post", 7), ("mhc_post", 80)],
        "triton:sqrsum-tile-offset": [("hc_head", 80)],
        "triton:dropped-eps": [("hc_head", 7), ("hc_head", 80)],
    }
