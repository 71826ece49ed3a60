"""A dataclass written out as its document, so the members are declared in the dataclass and its TypedDict only."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

D = TypeVar("D")


def as_document(obj: DataclassInstance, document: type[D]) -> D:
    """`obj` as its `document` (a TypedDict): every field in declaration order, nested dataclasses too
    (dataclasses.asdict); tests/test_documents.py holds each dataclass and its TypedDict together."""
    return cast(D, dataclasses.asdict(obj))
