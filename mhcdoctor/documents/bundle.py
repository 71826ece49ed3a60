"""A bundle's own documents: its manifest (mhcdoctor.bundle/1, manifest.json) and what redaction replaced
(mhcdoctor.redactions/1, redactions.json).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from mhcdoctor.documents.vocabulary import Count, Pattern, Positive

SCHEMA = "mhcdoctor.bundle/1"
REDACTIONS_SCHEMA = "mhcdoctor.redactions/1"


class ManifestFile(TypedDict):
    path: str
    bytes: Count
    sha256: Annotated[str, Pattern("^[0-9a-f]{64}$")]  # hashlib's hexdigest


class Truncation(TypedDict):
    path: str
    note: str


class BundleManifest(TypedDict):
    """mhcdoctor.bundle/1 (manifest.json), made in one place: `build_files`."""

    schema: str
    mhcdoctor_version: str
    created: str
    redacted: bool
    limit_bytes: Positive
    files: list[ManifestFile]
    truncated: list[Truncation]


class EnvRedactionsDocument(TypedDict):
    kept: Count
    dropped: Count
    masked: list[str]


# What a replacement hid (the kinds redact.Redactions.note counts).
RedactionKind = Literal["home", "user", "host", "secret", "gpu uuid"]

# redactions.json of a bundle (mhcdoctor.redactions/1); "with" is a Python keyword, hence the functional form.
ReplacementDocument = TypedDict("ReplacementDocument", {"kind": RedactionKind, "with": str, "strings": Positive})


class RedactionsDocument(TypedDict):
    schema: str
    redacted: bool
    rules: list[str]
    env: EnvRedactionsDocument | None
    replaced: list[ReplacementDocument]
