"""The aiter probe tells each fix from the real code of ROCm/aiter's tags and of builds of main (each commit that
changed the mHC files), under honest and misleading version labels, and agrees with git ancestry (the table
scripts/aiter-code-table wrote from a clone: `ancestry` is what `git merge-base --is-ancestor` says, independent of
the content signatures)."""

from __future__ import annotations

import time
import tracemalloc

import fakes
import pytest
from aiter_labels import MISLEADING, ROWS, honest_label

from mhcdoctor.probes import aiter as aiter_probe
from mhcdoctor.probes import facts_from_probes


def probed_states(tmp_path, code: str, label: str):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version=label, code=code)
    facts = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
    return {"sqrsum": facts.aiter.sqrsum_fix, **facts.aiter.fixes}, facts


CASES = [(code, label) for code in fakes.AITER_TAGS for label in (honest_label(ROWS[code]), *MISLEADING)]


@pytest.mark.parametrize(("code", "label"), CASES)
def test_each_fix_follows_the_installed_code_and_git_ancestry_whatever_the_label(tmp_path, code, label):
    states, facts = probed_states(tmp_path, code, label)
    row = ROWS[code]
    told = {fix: state for fix, state in row["ancestry"].items() if row["states"][fix] != "unknown"}
    assert {fix: states[fix] for fix in told} == told
    for fix in set(row["ancestry"]) - set(told):  # v0.1.11 has no mhc_post: no form of #2963's code to read
        assert states[fix] == "unknown"
        assert "no known form of the code" in facts.aiter.fix_evidence[fix]


def test_the_evidence_names_the_file_and_line_of_the_real_code(tmp_path):
    _, facts = probed_states(tmp_path, "v0.1.15-rc0", "0.1.0")
    evidence = facts.aiter.fix_evidence["big-fuse-rms"]
    path, line, what = evidence.split(":", 2)
    assert path.endswith("aiter_meta/csrc/kernels/mhc_kernels.cu")
    source = (tmp_path / "site-packages" / "aiter_meta" / "csrc" / "kernels" / "mhc_kernels.cu").read_text()
    assert "hc_mult3_reduce_warp_num && lane_id < warp_num_pow2" in source.splitlines()[int(line) - 1]
    assert "reads lanes outside its guard" in what


def test_a_fix_of_no_known_form_is_filled_from_a_later_fix_by_git_ancestry(tmp_path):
    site = fakes.site(tmp_path)
    # main at #3033 with mhc_post's prefetch rewritten: #2963's form is gone, #3033's guard (a descendant) is there
    text = fakes.real_kernels("main-at-3033").replace("lds_load_residual_tile((i) + 2)", "prefetch_tile(i + 2)")
    text = text.replace("lds_load_x_tile(i + 2)", "prefetch_x(i + 2)")
    fakes.aiter(site, version="0.1.0", kernel=None)
    fakes.write(site / "aiter_meta" / "csrc" / "kernels" / "mhc_kernels.cu", text)
    facts = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
    assert facts.aiter.fixes["post-race"] == "present"
    assert "by git ancestry: aiter #2963 is a git ancestor of #3033" in facts.aiter.fix_evidence["post-race"]


def test_without_source_a_dev_build_of_main_is_unknown_where_the_fix_landed_after_its_tag(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.12.post2.dev5", kernel=None)
    facts = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
    assert (facts.aiter.sqrsum_fix, facts.aiter.fixes["post-race"], facts.aiter.fixes["big-fuse-sync"]) == (
        "unknown", "unknown", "unknown",
    )  # fmt: skip
    assert facts.aiter.fixes["big-fuse-rms"] == "present", "#3396 brought the bug after v0.1.14-rc0, its next tag"
    assert facts.aiter.fix_evidence["post-race"].startswith("by version: ")


def test_a_huge_kernel_source_is_read_up_to_the_bound(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.13", kernel=None)
    source = site / "aiter_meta" / "csrc" / "kernels" / "mhc_kernels.cu"
    source.parent.mkdir(parents=True)
    fixed_guard = "if (lane_id < mfma_m && (warp_id * mfma_m + lane_id < m_oob)) {"
    source.write_text(" " * (aiter_probe.KERNEL_READ_LIMIT + 10) + fixed_guard)  # past the bound: never read
    facts = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
    assert facts.aiter.sqrsum_fix == "unknown"


@pytest.mark.parametrize("line", ["\n", "x\n", "x\\\n", "if(lane_id<mfma_m \n"])
def test_a_hostile_kernel_source_is_read_in_bounded_time_and_memory(tmp_path, line):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.16", kernel=None)
    source = site / "aiter_meta" / "csrc" / "kernels" / "mhc_kernels.cu"
    source.parent.mkdir(parents=True)
    source.write_text(line * (2 * aiter_probe.KERNEL_READ_LIMIT // len(line)))  # twice the bound, short lines
    tracemalloc.start()
    started = time.perf_counter()
    facts = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
    seconds, (_, peak) = time.perf_counter() - started, tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert facts.aiter.sqrsum_fix == "unknown" and set(facts.aiter.fixes.values()) == {"unknown"}
    assert seconds < 5 and peak < 8 * aiter_probe.KERNEL_READ_LIMIT, (seconds, peak)
