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


def test_the_schemas_on_disk_are_the_ones_the_document_types_make():
    """Byte for byte: a member added to a document's TypedDict and not to its published schema fails here."""
    from mhcdoctor.docschema import rendered

    want = rendered()
    for folder in (REPO / "mhcdoctor/schemas", REPO / "docs/schemas"):
        on_disk = {p.name: p.read_text() for p in folder.glob("*.schema.json")}
        assert on_disk == want, f"{folder}: run python -m mhcdoctor.docschema"


def test_the_generated_schema_checks_what_the_type_says(tmp_path):
    """A document missing a required member, or with a member of the wrong JSON type, fails its generated schema."""
    schema = json.loads((REPO / "mhcdoctor/schemas/models.schema.json").read_text())
    good = {"schema": "mhcdoctor.models/1", "default": "m", "models": []}
    jsonschema.validate(good, schema)
    for bad in ({**good, "schema": "mhcdoctor.models/2"}, {"schema": "mhcdoctor.models/1", "models": []}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    model = {"name": None, "hidden_size": "7168", "hc_mult": 4, "hc_sinkhorn_iters": 20, "hc_eps": 1e-6}
    model |= {"rms_norm_eps": 1e-6, "num_layers": None, "note": None}
    with pytest.raises(jsonschema.ValidationError, match="'7168' is not of type 'integer'"):
        jsonschema.validate({**good, "models": [model]}, schema)
    jsonschema.validate({**good, "models": [{**model, "hidden_size": 7168}]}, schema)
