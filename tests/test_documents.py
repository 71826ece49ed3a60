"""Outside facts.py (tests/test_facts.py holds those), a dataclass written out as JSON has a TypedDict of its JSON
form and a `to_dict`/`to_json_dict` that names each field: mypy checks the method against the TypedDict, and this
checks the TypedDict against the dataclass, so a field added to one and not the other fails here, not in a
user's saved report."""

from __future__ import annotations

import dataclasses

import pytest

from mhcdoctor.decision import Finding, FindingDocument, Gate, GateDocument, OpDecision, OpDocument
from mhcdoctor.models import ModelConfig, ModelConfigDocument
from mhcdoctor.verify.cases import Params, ParamsDocument


@pytest.mark.parametrize(
    ("cls", "document"),
    [
        (Params, ParamsDocument),
        (ModelConfig, ModelConfigDocument),
        (Gate, GateDocument),
        (OpDecision, OpDocument),
        (Finding, FindingDocument),
    ],
)
def test_a_dataclass_and_its_json_form_have_the_same_members_in_order(cls: type, document: type) -> None:
    assert list(document.__annotations__) == [f.name for f in dataclasses.fields(cls)]
