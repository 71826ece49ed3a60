"""What scripts/aiter-mhc-exec recorded (each ROCm/aiter tag's aiter/ops/mhc.py executed on the CPU per arch, and the
launches its calls give) agrees with the tags read, with the audit table in docs/known-bugs.md and with what
`aiter-mhc-pre-invalid-config` tells a user was ruled out."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import doctor
from packaging.version import Version

from mhcdoctor.knowledge import aiter_code
from mhcdoctor.rules.dispatch import AITER_FOLD_SIZES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "known-bugs.md"
REPORTED = ("v0.1.18", "v0.1.19.post2")  # aiter #4633's code: v0.1.18 to v0.1.19.post2 (main at the report = .post1)


def _groups() -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = aiter_code.executed()["groups"]
    return groups


def _executed_rows() -> dict[tuple[str, str], list[str]]:
    """docs/known-bugs.md's "executed on the CPU" table: (tags, "ARCH/CUS") -> cells."""
    text = DOCS.read_text()
    section = text[text.index("Per arch, executed on the CPU") :]
    rows = {}
    for line in section.split("\n\n", 2)[1].splitlines()[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        arch = re.fullmatch(r"(gfx\w+) \((\d+) CUs.*\)", cells[1])
        assert arch, cells[1]
        rows[(cells[0], f"{arch[1]}/{arch[2]}")] = cells
    return rows


def test_every_tag_read_from_v0_1_11_was_executed_at_the_same_commit():
    read = {row["tag"]: row["commit"] for row in aiter_code.table()["tags"] if Version(row["tag"]) >= Version("0.1.11")}
    executed = [tag for group in _groups() for tag in group["tags"]]
    assert sorted(executed) == sorted([*read, "main"])
    for group in _groups():
        if group["tags"][0] != "main":
            assert group["commit"] == read[group["tags"][0]], group["tags"]


def test_the_audit_table_says_what_each_arch_executed_and_which_launches_hip_refuses():
    rows = _executed_rows()
    assert "read at the tags, not run" not in DOCS.read_text()
    for group in _groups():
        tags = group["tags"]
        span = tags[0] if len(tags) == 1 else f"{tags[0]} … {tags[-1]} ({len(tags)})"
        for arch, entry in group["archs"].items():
            cells = rows.pop((span, arch))
            assert cells[2] == f"{entry['cases']} ({entry['kernel_calls']})"
            if group["launchers_modelled"]:
                assert cells[6].startswith(f"{entry['launches']} (")
                assert (cells[7] == "none") is (entry["invalid"] == [])
            else:
                assert cells[6].startswith("not computed")
    assert not rows, f"rows of no recorded group: {list(rows)}"


def test_the_reported_code_gives_no_launch_past_hips_limits_on_gfx942_and_the_finding_says_so():
    first, last = (aiter_code.tags()[[r.tag for r in aiter_code.tags()].index(t)].version for t in REPORTED)
    reported = [g for g in _groups() if g["tags"][0] != "main" and first <= Version(g["tags"][0]) <= last]
    assert reported, "no executed group holds the code aiter #4633 was reported on"
    entries = [entry for group in reported for arch, entry in group["archs"].items() if arch.startswith("gfx942/")]
    assert {e["cus"] for e in entries} == {304, 80}
    assert all(e["invalid"] == [] for e in entries)
    launches = {e["launches"] for e in entries}
    peak = {key: max(e["peak"][key] for e in entries) for key in ("block", "grid_y", "grid_z", "lds")}
    splits = (
        min(e["summary"]["pre_split_k"][0] for e in entries),
        max(e["summary"]["pre_split_k"][1] for e in entries),
    )
    shown = doctor.run("help", "aiter-mhc-pre-invalid-config").stdout
    assert len(launches) == 1 and f"each of the {launches.pop()} launches per CU count" in " ".join(shown.split())
    assert (
        f"block at most {peak['block']} threads, grid.y {peak['grid_y']}, grid.z {peak['grid_z']}, "
        f"LDS {peak['lds'] // 1024} KiB, no zero dim" in " ".join(shown.split())
    )
    assert f"split-K {splits[0]}-{splits[1]}" in shown


def test_the_hidden_sizes_aiters_rmsnorm_kernel_refuses_are_those_the_rules_never_fold_into_it():
    folded = set()
    for group in _groups():
        for entry in group["archs"].values():
            refused = " ".join(
                r for r in entry.get("refused", []) if r.startswith("mhc_pre_big_fuse_rmsnorm: no instance")
            )
            named = {int(h) for h in re.findall(r"\d+", refused.rpartition("hidden ")[2])} if refused else set()
            if group["launchers_modelled"] and "mhc_pre+norm" in entry["calls"]:
                folded |= set(aiter_code.executed()["hidden"]) - named
                assert not named & AITER_FOLD_SIZES, (group["tags"], named)
    assert folded and folded <= AITER_FOLD_SIZES
