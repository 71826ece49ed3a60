"""Outside facts.py (tests/test_facts.py holds those), a dataclass written out as JSON has a TypedDict of its JSON
form (mhcdoctor.documents) and a `to_dict`/`to_json_dict` that writes it with documents.dataclass_json.as_document:
this checks the TypedDict against the dataclass, so a field added to one and not the other fails here, not in a
user's saved report."""

from __future__ import annotations

import dataclasses

import pytest

from mhcdoctor.decision import Finding, Gate, OpDecision
from mhcdoctor.diffing import Difference
from mhcdoctor.documents.check import ProbeDocument
from mhcdoctor.documents.diff import DifferenceDocument
from mhcdoctor.documents.explain import FindingDocument, GateDocument, OpDocument
from mhcdoctor.documents.models import ModelConfigDocument
from mhcdoctor.documents.verify import ParamsDocument, ToleranceDocument
from mhcdoctor.models import ModelConfig
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.verify.cases import Params
from mhcdoctor.verify.tolerance import Tolerance


@pytest.mark.parametrize(
    ("cls", "document"),
    [
        (Params, ParamsDocument),
        (ModelConfig, ModelConfigDocument),
        (Gate, GateDocument),
        (OpDecision, OpDocument),
        (Finding, FindingDocument),
        (Tolerance, ToleranceDocument),
        (ProbeResult, ProbeDocument),
        (Difference, DifferenceDocument),
    ],
)
def test_a_dataclass_and_its_json_form_have_the_same_members_in_order(cls: type, document: type) -> None:
    assert list(document.__annotations__) == [f.name for f in dataclasses.fields(cls)]
