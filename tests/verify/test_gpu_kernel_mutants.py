"""On a GPU: `mhcdoctor verify` catches real bugs planted in this project's own tilelang and triton kernels.

Each mutant (tests/verify/kernel_mutants.py) is a copy of the package with one kernel expression changed; verify
runs from that copy, exactly as a user runs it, on DeepSeek-V4-Flash's shape at 1, 7 and 80 tokens (80 crosses
the 16-row tiles). The unmutated copy passes every case; each mutant fails where its bug shows, names the token
row, and passes the cases its bug cannot reach. All runs start at once (private JIT caches), so the whole file
takes about as long as one cold verify. Skipped where no GPU is visible; run it with
`python3 -m pytest -q -m gpu tests/verify/test_gpu_kernel_mutants.py` (scripts/gpu-tests does).
"""

from __future__ import annotations

from typing import Any

import needs
import pytest
from kernel_mutants import GPU_MUTATIONS, MUTATIONS, finish_verify, mutant_tree, start_verify

pytestmark = needs.gpu("needs a CUDA GPU")
ARGS = ("--model", "deepseek-v4-flash", "--tokens", "1,7,80")
ODD_TILES = set(range(16, 32)) | set(range(48, 64))  # rows that read the tile before them
# Mutation -> the (op, tokens) cases that must fail; every other case of its path must pass.
EXPECTED_FAILS: dict[str, set[tuple[str, int]]] = {
    "tilelang:sqrsum-tile-offset": {("mhc_pre", 80), ("mhc_fused_post_pre", 80)},
    "tilelang:dropped-eps": {(op, t) for op in ("mhc_pre", "mhc_fused_post_pre") for t in (7, 80)},
    "tilelang:comb-transposed": {(op, t) for op in ("mhc_post", "mhc_fused_post_pre") for t in (1, 7, 80)},
    "tilelang:sinkhorn-short": {("mhc_pre", 80)},
    "triton:comb-transposed": {("mhc_post", 1), ("mhc_post", 7), ("mhc_post", 80)},
    "triton:sqrsum-tile-offset": {("hc_head", 80)},
    "triton:dropped-eps": {("hc_head", 7), ("hc_head", 80)},
}
# Cases a mutant may fail besides those: one Sinkhorn iteration short moves comb_mix by about 2.4e-3 at 80 tokens
# (tolerance 1.25e-3), less at fewer tokens and in the fused op's own inputs, so only mhc_pre at 80 is certain.
MAY_FAIL = {"tilelang:sinkhorn-short": {(op, t) for op in ("mhc_pre", "mhc_fused_post_pre") for t in (1, 7, 80)}}
VERDICT_EXIT = {"ok": 0, "degraded": 1, "fail": 3}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any], str]]:
    """Every mutant and the unmutated copy, verified at once: name ("unmutated") -> (exit code, document, stderr)."""
    root = tmp_path_factory.mktemp("kernel-mutants")
    started = {"unmutated": start_verify(mutant_tree(root / "unmutated", None), *ARGS, "--path", "tilelang",
                                         "--path", "triton")}  # fmt: skip
    for i, name in enumerate(GPU_MUTATIONS):
        tree = mutant_tree(root / f"mutant{i}", name)
        started[name] = start_verify(tree, *ARGS, "--path", MUTATIONS[name].path)
    return {name: finish_verify(proc, timeout=540) for name, proc in started.items()}


def statuses(doc: dict[str, Any]) -> dict[tuple[str, int], str]:
    return {(r["op"], r["tokens"]): r["status"] for r in doc["results"]}


def test_the_unmutated_kernels_pass_every_case(runs: dict[str, tuple[int, dict[str, Any], str]]) -> None:
    code, doc, err = runs["unmutated"]
    bad = [(r["path"], r["op"], r["tokens"], r["status"], r["reason"]) for r in doc["results"] if r["status"] != "pass"]
    assert (code, bad, len(doc["results"])) == (0, [], 15), err[-2000:]  # tilelang 3 ops, triton 2, 3 counts


@pytest.mark.parametrize("name", GPU_MUTATIONS)
def test_verify_catches_each_planted_bug_where_it_shows(
    runs: dict[str, tuple[int, dict[str, Any], str]], name: str
) -> None:
    code, doc, err = runs[name]
    got = statuses(doc)
    failing = {case for case, status in got.items() if status != "pass"}
    expected = EXPECTED_FAILS[name]
    reasons = [r["reason"] for r in doc["results"] if r["reason"]]
    assert expected <= failing <= expected | MAY_FAIL.get(name, set()), (got, reasons, err[-2000:])
    assert set(got.values()) == {"pass", "fail"}  # wrong numbers, not a crash or a compile error
    assert doc["verdict"] in ("degraded", "fail") and code == VERDICT_EXIT[doc["verdict"]]
    # what the user reads: one problem line per failing case, naming the path, op, count and the token row
    for op, tokens in expected:
        line = next(p for p in doc["problems"] if p.startswith(f"{MUTATIONS[name].path} {op} at {tokens} tokens"))
        assert "token row" in line


@pytest.mark.parametrize("name", ["tilelang:sqrsum-tile-offset", "triton:sqrsum-tile-offset"])
def test_a_tile_offset_names_only_rows_of_the_odd_tiles(
    runs: dict[str, tuple[int, dict[str, Any], str]], name: str
) -> None:
    _, doc, _ = runs[name]
    bad = {row for r in doc["results"] if r["tokens"] == 80 for o in r["outputs"] for row in o.get("bad_rows", [])}
    assert bad and bad <= ODD_TILES


@pytest.mark.parametrize("name", ["tilelang:dropped-eps", "triton:dropped-eps"])
def test_a_dropped_epsilon_is_named_as_non_finite_values_in_the_all_zero_row(
    runs: dict[str, tuple[int, dict[str, Any], str]], name: str
) -> None:
    _, doc, _ = runs[name]
    reasons = [r["reason"] for r in doc["results"] if r["status"] == "fail"]
    assert reasons and all("non-finite values (first in token row 3)" in reason for reason in reasons)
