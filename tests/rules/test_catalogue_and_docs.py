"""The findings catalogue is complete, the explain/1 documents match their schema, and the docs match the data."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from mhcdoctor.docsgen import SCENARIOS, scenario_facts, stale_pages
from mhcdoctor.models import BUILTIN_MODELS, ModelConfig
from mhcdoctor.rules import RULE_SETS, decide
from mhcdoctor.rules.dispatch import dispatch
from mhcdoctor.rules.findings import CATALOGUE, IDS, FindingContext, evaluate

pytestmark = pytest.mark.xdist_group("catalogue")

CONTRACT_IDS = {
    "aiter-impostor",
    "aiter-sqrsum-race",
    "aiter-sqrsum-unknown",
    "aiter-hidden-unsupported",
    "aiter-rocm-compiler",
    "tilelang-missing",
    "tilelang-wrong-arch",
    "tilelang-no-compiler",
    "torch-fallback",
    "no-gpu",
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(resources.files("mhcdoctor").joinpath("schemas/explain.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_catalogue_has_every_contract_id_once():
    assert CONTRACT_IDS <= set(IDS)
    assert len(IDS) == len(set(IDS))


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda s: s.id)
def test_every_finding_has_title_summary_fix_and_refs(spec):
    assert spec.title and spec.fix and spec.summary
    assert spec.refs and all(ref.startswith("https://") for ref in spec.refs)


def test_every_finding_that_holds_has_text_and_a_fix():
    """Each finding's decide runs on the docs' scenarios under every rule set; what it finds is explained."""
    ids = set()
    for rule_set in RULE_SETS:
        for _, platform, arch, aiter, tilelang, build in SCENARIOS:
            facts = scenario_facts(platform, arch, aiter, tilelang)
            model = ModelConfig("m", 7168)
            ctx = FindingContext(
                facts, model, rule_set, dispatch(rule_set, facts, model), rule_set.first + build, "installed"
            )
            for finding in evaluate(ctx):
                assert finding.title and finding.detail and finding.fix and finding.refs, finding.id
                ids.add(finding.id)
    assert {"torch-fallback", "tilelang-pdl-unsupported", "rocm-dsv4-unusable", "aiter-api-fallback"} <= ids


@pytest.mark.parametrize("rule_set", RULE_SETS, ids=lambda r: r.id)
def test_every_rule_set_cites_its_sources(rule_set):
    assert rule_set.summary
    assert rule_set.refs


@pytest.mark.parametrize("label, platform, arch, aiter, tilelang, build", SCENARIOS)
@pytest.mark.parametrize("rule_set", RULE_SETS, ids=lambda r: r.id)
def test_explain_documents_match_the_schema(validator, rule_set, label, platform, arch, aiter, tilelang, build):
    for model in BUILTIN_MODELS.values():
        facts = scenario_facts(platform, arch, aiter, tilelang)
        document = decide(facts, model, rule_set.first + build).to_explain_document()
        validator.validate(document)


def test_generated_docs_are_up_to_date():
    assert stale_pages() == [], "run: python -m mhcdoctor.docsgen"
