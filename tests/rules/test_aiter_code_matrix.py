"""Every aiter kernel-bug finding follows the installed code: the real code of each ROCm/aiter tag and build of main
that changed the mHC files (tests/data/aiter_code), under its honest label and four misleading ones, on MI300X,
MI355X and gfx1250, with vLLM 0.25.0 (aiter serves mhc_pre and mhc_post on MI3xx) at hidden 7168. The expectation is git
ancestry's (the table's `ancestry`, from `git merge-base --is-ancestor` on a clone), not the content signatures."""

from __future__ import annotations

import fakes
import pytest
from aiter_labels import MISLEADING, ROWS, honest_label

from mhcdoctor.models import ModelConfig
from mhcdoctor.probes import aiter as aiter_probe
from mhcdoctor.probes import facts_from_probes
from mhcdoctor.rules import decide
from mhcdoctor.whatif import WhatIf, build_facts

# The finding each fix's bug raises (knowledge/bugs.py), and the op vLLM 0.25 sends to aiter that runs it.
FINDING = {
    "sqrsum": "aiter-sqrsum-race",
    "big-fuse-sync": "aiter-big-fuse-sync",
    "post-race": "aiter-mhc-post-race",
    "big-fuse-rms": "aiter-rocm-compiler",
    "invalid-config": "aiter-mhc-pre-invalid-config",
}
UNKNOWN = {"sqrsum": "aiter-sqrsum-unknown"}  # the others' unknown: aiter-fix-unknown (invalid-config: none)
ARCHS = ("gfx942", "gfx950", "gfx1250")


def expected(code: str, arch: str) -> set[str]:
    if arch == "gfx1250":
        return set()  # vLLM 0.25's HAS_AITER_MHC needs an MI3xx (on_mi3xx): no op runs on aiter
    found = set()
    for fix, state in ROWS[code]["ancestry"].items():
        if fix not in FINDING:
            continue  # aiter/ops/mhc.py's API for DeepSeek-V4.1 (vLLM 0.30+): tests/explain/test_v41_delayed_api.py
        if ROWS[code]["states"][fix] == "unknown" and fix != "invalid-config":  # no code of it to read (v0.1.11)
            found.add(UNKNOWN.get(fix, "aiter-fix-unknown"))
        elif state == "absent" and (fix != "invalid-config" or arch == "gfx942"):  # #4633: reported on MI300X
            found.add(FINDING[fix])
    return found


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("code", fakes.AITER_TAGS)
def test_the_findings_are_what_git_ancestry_says_the_code_holds_under_every_label(tmp_path, code, arch):
    for n, label in enumerate((honest_label(ROWS[code]), *MISLEADING)):
        site = fakes.site(tmp_path, f"site-{n}")
        fakes.aiter(site, version=label, code=code)
        probed = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
        facts = build_facts(WhatIf("rocm", arch, None, None, "none", None, None), base=lambda p=probed: p)
        ids = {f.id for f in decide(facts, ModelConfig("m", 7168), "0.25.0").findings}
        assert ids & (set(FINDING.values()) | {"aiter-sqrsum-unknown", "aiter-fix-unknown"}) == expected(code, arch), (
            label
        )
