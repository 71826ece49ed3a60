"""Facts survive a round trip through JSON, and a malformed facts document is one readable error."""

import json

import pytest

from mhcdoctor.facts import Device, Facts, FactsError, TorchFacts
from mhcdoctor.whatif import WhatIf, build_facts


def test_round_trip_through_json_keeps_every_fact_and_source():
    facts = Facts(platform="rocm", arch="gfx942", devices=[Device(0, "amd", "gfx942", "AMD Instinct MI300X")])
    facts.set("aiter.version", "0.1.13", "user:--aiter")
    facts.set("aiter.sqrsum_fix", "absent", "user:--aiter")
    again = Facts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert again == facts
    assert again.sources["aiter.version"] == "user:--aiter"


def test_unknown_keys_are_ignored_for_forward_compatibility():
    facts = Facts.from_dict({"platform": "cuda", "a_future_fact": 1, "tilelang": {"version": "0.1.12", "x": 2}})
    assert (facts.platform, facts.tilelang.version) == ("cuda", "0.1.12")


@pytest.mark.parametrize(
    "document, message",
    [
        ([], "facts must be a JSON object"),
        ({"platform": "metal"}, r"facts.platform: expected one of \('rocm', 'cuda', 'xpu', 'cpu'\)"),
        ({"aiter": {"version": 14}}, "facts.aiter.version: expected str, not int"),
        ({"aiter": "0.1.14"}, "facts.aiter: expected an object"),
        ({"aiter": {"sqrsum_fix": "maybe"}}, "facts.aiter.sqrsum_fix: expected one of"),
        ({"devices": [{"index": "zero", "vendor": "amd"}]}, r"facts.devices\[0\].index: expected int, not str"),
        ({"devices": {"0": {}}}, "facts.devices: expected a list"),
        ({"torch": {"present": "yes"}}, "facts.torch.present: expected bool, not str"),
        ({"torch": {"build": "metal"}}, r"facts.torch.build: expected one of \('rocm', 'cuda', 'xpu', 'cpu'\)"),
        ({"sources": {"arch": 3}}, "facts.sources.arch: expected str, not int"),
    ],
)
def test_malformed_facts_name_the_bad_field(document, message):
    with pytest.raises(FactsError, match=message):
        Facts.from_dict(document)


def test_set_rejects_a_fact_that_does_not_exist():
    with pytest.raises(KeyError):
        Facts().set("aiter.colour", "red", "user:--colour")


@pytest.mark.parametrize(
    "torch, build",
    [
        ({"version": "2.11.0+cu130", "cuda": "13.0", "hip": None}, "cuda"),
        ({"version": "2.9.1+rocm7.2", "cuda": None, "hip": "7.2"}, "rocm"),
        ({"version": "2.11.0+xpu", "cuda": None, "hip": None}, "xpu"),
        ({"version": "2.13.0", "cuda": None, "hip": None}, "cpu"),
        ({"version": None, "cuda": None, "hip": None}, None),
        ({"version": "2.13.0"}, None),  # torch/version.py's fields not recorded: the build is unknown
    ],
)
def test_a_report_from_before_torch_build_gets_it_derived_from_version_py(torch, build):
    assert Facts.from_dict({"torch": torch}).torch.build == build


def test_a_recorded_torch_build_is_kept_even_when_unknown():
    torch = {"version": "2.13.0", "cuda": None, "hip": None, "build": None}  # forgotten by a what-if
    assert Facts.from_dict({"torch": torch}).torch.build is None


def test_a_what_if_that_changes_the_platform_forgets_torch_build():
    def machine() -> Facts:
        facts = Facts(platform="cuda")
        facts.torch = TorchFacts(present=True, version="2.11.0+cu130", cuda="13.0", build="cuda")
        facts.sources["torch.build"] = "probe:torch"
        return facts

    facts = build_facts(WhatIf(platform="rocm"), machine)
    assert facts.torch.build is None and facts.sources["torch.build"] == "assumed:--platform"  # said so in explain
    assert build_facts(WhatIf(platform="cuda"), machine).torch.build == "cuda"


def test_each_facts_document_has_its_dataclass_fields_in_order():
    """FactsDocument & co. are the JSON form of the facts dataclasses: the same members, in the same order."""
    import dataclasses

    from mhcdoctor import facts as facts_module
    from mhcdoctor.documents.check import AiterDocument, FactsDocument

    for name, document in facts_module.DOCUMENTS.items():
        fields = [f.name for f in dataclasses.fields(getattr(facts_module, name))]
        assert list(document.__annotations__) == fields, name
    doc = build_facts(WhatIf(platform="rocm", arch="gfx942", aiter="0.1.13"), Facts).to_dict()
    assert list(doc) == list(FactsDocument.__annotations__)
    assert list(doc["aiter"]) == list(AiterDocument.__annotations__)


def test_normalising_facts_fills_every_member_and_drops_unknown_ones():
    from mhcdoctor.facts import read_report_facts

    read = read_report_facts({"platform": "rocm", "aiter": {"version": "0.1.13", "later": 1}, "future": True})
    doc = read.facts.to_dict()
    assert doc == Facts.from_dict(doc).to_dict()
    assert "future" not in doc and "later" not in doc["aiter"]
    assert doc["aiter"]["sqrsum_fix"] == "unknown" and doc["torch"]["version"] is None
    assert "torch" in read.absent and not {"platform", "aiter"} & read.absent  # unknown because never recorded
