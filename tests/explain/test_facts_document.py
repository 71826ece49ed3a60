"""explain/1's `facts` (facts.rules_view) is declared by documents.explain.RulesFactsDocument, so the generated
schema describes it: a real `explain --json` fits it member for member, and a broken member is refused."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import doctor
import jsonschema
import pytest

from mhcdoctor.documents.explain import RulesFactsDocument

SCHEMA = json.loads((Path(__file__).parents[2] / "mhcdoctor/schemas/explain.schema.json").read_text())


def _explain_facts() -> dict:
    done = doctor.run("explain", "--json", "--model", "deepseek-v4-pro")
    assert done.returncode in (0, 1, 3), done.stderr
    return json.loads(done.stdout)


def _facts_schema() -> dict:
    return {**SCHEMA["$defs"]["RulesFactsDocument"], "$defs": SCHEMA["$defs"]}


def test_a_real_explains_facts_are_exactly_the_declared_members_and_fit_the_schema() -> None:
    doc = _explain_facts()
    facts = doc["facts"]
    hints = typing.get_type_hints(RulesFactsDocument)
    assert list(facts) == list(hints)  # rules_view writes exactly the declared members, in their order
    for name in ("aiter", "tilelang", "tvm_ffi", "deepgemm", "vllm", "compilers"):
        assert set(facts[name]) == set(typing.get_type_hints(hints[name])), name
    jsonschema.validate(facts, _facts_schema())
    jsonschema.validate(doc, SCHEMA)


@pytest.mark.parametrize(
    ("member", "value", "message"),
    [
        ("aiter", {"sqrsum_fix": "maybe"}, "'maybe' is not one of"),
        ("vllm", {"runs_here": "yes"}, "'yes' is not of type 'boolean'"),
        ("compilers", {"nvcc": 1}, "1 is not of type"),
    ],
)
def test_a_broken_facts_member_is_refused(member: str, value: dict, message: str) -> None:
    doc = _explain_facts()
    broken = {**doc["facts"], member: {**doc["facts"][member], **value}}
    with pytest.raises(jsonschema.ValidationError, match=message):
        jsonschema.validate(broken, _facts_schema())
    del broken[member]
    with pytest.raises(jsonschema.ValidationError, match=f"'{member}' is a required property"):
        jsonschema.validate(broken, _facts_schema())
