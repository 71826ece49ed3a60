"""The JSON Schemas published under docs/schemas are the ones the package ships and the tests validate against."""

import json
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "mhcdoctor/schemas").glob("*.schema.json"))


def test_every_shipped_schema_is_published_unchanged():
    published = {p.name: p.read_text() for p in (REPO / "docs/schemas").glob("*.schema.json")}
    assert published == {p.name: p.read_text() for p in SHIPPED}, "copy mhcdoctor/schemas/*.json to docs/schemas/"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_each_schema_is_a_valid_draft_2020_12_schema(path):
    jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))
