"""The knowledge's tables agree with what is derived from them: the self-check's values are the members of the facts
and the document, and every vLLM release the knowledge records has a rule set."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

from mhcdoctor.documents.check import VllmSelfCheckDocument
from mhcdoctor.facts import VllmSelfCheck
from mhcdoctor.knowledge import selfcheck
from mhcdoctor.knowledge.vllm_fingerprints import FINGERPRINTS
from mhcdoctor.knowledge.vllm_releases import RELEASES, release_of
from mhcdoctor.probes import vllm_selfcheck
from mhcdoctor.rules.releases import RULE_SETS, is_newer_than_known, rules_for_vllm

WHEELS = Path("/work/cache/vllm-files")  # the unpacked vLLM wheels, on the project's build machines only
OWN = {"model_module", "error"}  # what the child says of itself, not a value of vLLM's dispatch


def test_the_self_check_values_are_the_members_of_the_facts_and_of_the_document():
    keys = {value.key for value in selfcheck.VALUES}
    assert {f.name for f in dataclasses.fields(VllmSelfCheck)} == keys | OWN
    assert set(typing.get_type_hints(VllmSelfCheckDocument)) == keys | OWN


def test_the_child_reads_every_module_flag_of_the_table():
    code = vllm_selfcheck.CODE.format(sizes=[], module_flags=selfcheck.MODULE_FLAGS)
    for key, name in selfcheck.MODULE_FLAGS:
        assert f"({key!r}, {name!r})" in code


def test_every_release_has_a_rule_set_and_every_rule_set_starts_at_a_release():
    assert all(rules_for_vllm(r.version) is not None for r in RELEASES)
    assert {rs.first for rs in RULE_SETS} <= {r.version for r in RELEASES}


def test_a_version_between_releases_gets_the_release_below_it_within_the_known_series():
    assert release_of("0.26.1.dev3+g1234").version == "0.26.0"  # type: ignore[union-attr]
    assert release_of("0.34.2").version == "0.34.0"  # type: ignore[union-attr]
    assert (release_of("0.35.0"), release_of("0.19.1"), release_of("not a version")) == (None, None, None)


def test_a_release_added_to_the_knowledge_needs_its_rules_and_its_fingerprints():
    known = {r.version for r in RELEASES}
    assert set(FINGERPRINTS) == known  # scripts/vllm-fingerprints writes them from the wheels
    assert not [r.version for r in RELEASES if is_newer_than_known(r.version)]  # a rule set covers each
    if WHEELS.is_dir():  # on the build machines: every wheel fetched there is a release the knowledge holds
        assert {d.name for d in WHEELS.iterdir() if (d / "vllm").is_dir()} <= known
