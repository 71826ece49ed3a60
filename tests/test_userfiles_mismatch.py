"""userfiles.mismatch: where a JSON value someone sent first differs from the type a reader of it trusts."""

from __future__ import annotations

from typing import Literal, TypedDict

import pytest

from mhcdoctor.userfiles import TooManyValues, fill_absent, mismatch


class Inner(TypedDict):
    kind: Literal["a", "b"]
    size: float | None


class Outer(TypedDict):
    name: str
    count: int
    flags: dict[str, bool]
    items: list[Inner]


GOOD = {
    "name": "x",
    "count": 2,
    "flags": {"on": True},
    "items": [{"kind": "a", "size": 1}, {"kind": "b", "size": None}],
}


def test_a_value_of_the_documents_types_fits_and_absent_members_are_allowed() -> None:
    assert mismatch(GOOD, Outer, "doc") is None
    assert mismatch({"name": "x"}, Outer, "doc") is None  # an older writer's document, without newer members
    assert mismatch({"name": "x"}, Outer, "doc", complete=True) == "doc: no count"  # what mhcdoctor itself wrote


def test_the_first_member_of_the_wrong_type_is_named_with_its_path() -> None:
    assert mismatch({**GOOD, "count": True}, Outer, "doc") == "doc.count: expected int, not bool"
    assert mismatch({**GOOD, "count": 2.0}, Outer, "doc") == "doc.count: expected int, not float"
    assert mismatch({**GOOD, "flags": {"on": 1}}, Outer, "doc") == "doc.flags.on: expected bool, not int"
    bad_item = {**GOOD, "items": [{"kind": "a"}, {"kind": "c"}]}
    assert mismatch(bad_item, Outer, "doc") == "doc.items[1].kind: expected one of ('a', 'b')"
    assert mismatch({**GOOD, "items": {"kind": "a"}}, Outer, "doc") == "doc.items: expected a list, not object"
    assert mismatch([GOOD], Outer, "doc") == "doc: expected an object, not list"


def test_fill_absent_gives_each_absent_member_none_or_its_empty_value_and_keeps_the_rest() -> None:
    filled = fill_absent({"items": [{"kind": "a"}, {"size": 2}]}, Outer)
    assert filled == {
        "items": [{"kind": "a", "size": None}, {"size": 2}],  # a Literal has no empty value: it stays absent
        "name": "",
        "count": 0,
        "flags": {},
    }
    assert mismatch(filled, Outer, "doc", complete=True) == "doc.items[1]: no kind"


def test_fill_absent_refuses_to_grow_many_empty_objects_past_the_value_bound() -> None:
    """Each `{}` item gains a member when filled in: past `max_values` added, it is refused, not grown."""
    with pytest.raises(TooManyValues):
        fill_absent({"items": [{} for _ in range(60_000)]}, Outer, max_values=50_000)
    assert fill_absent({"items": [{} for _ in range(10)]}, Outer, max_values=50_000) == {
        "items": [{"size": None}] * 10,
        "name": "",
        "count": 0,
        "flags": {},
    }
