"""Write the published JSON Schemas (mhcdoctor/schemas/, docs/schemas/) from the documents' TypedDicts.

`python -m mhcdoctor.docschema` writes them; `--check` exits 1 when a schema on disk differs from what the types
say (tests/test_published_schemas.py runs the same comparison), so a member added to a document is in its schema.
A TypedDict is an object whose `required` members are its required keys (total-ness, NotRequired), Literal an enum,
`Annotated[int, Minimum(1)]` (documents.vocabulary) a number with that minimum (`Pattern`: a string's pattern),
`NullWhen` an if/then on its object, `X | None` X or null, list an array, dict[str, X] an object of X, JsonValue and
`object` any JSON value; each TypedDict other than the root is a `$defs` entry named after its class, with its
docstring as description; a member's end-of-line comment in its declaration is the member's description.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import re
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path

from mhcdoctor.documents import bench, bundle, check, diff, explain, finding_help, fleet, log, models, verify
from mhcdoctor.documents.vocabulary import JsonValue, Minimum, NullWhen, Pattern
from mhcdoctor.vllmlog import observed

PACKAGE = Path(__file__).resolve().parent / "schemas"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
# Names the documents' modules import only for type checking (check/1's verify part: check --fast loads no verify).
_NAMESPACE: dict[str, object] = {"VerifyDocument": verify.VerifyDocument}


@dataclass(frozen=True)
class Published:
    """One published schema: its file, the root type, the document id (its `schema` member), and its headings."""

    file: str
    root: type
    schema_id: str | None
    title: str
    description: str = ""
    id_host: str = "https://mhcdoctor.invalid"
    extra_defs: tuple[tuple[str, type], ...] = ()  # $defs a reader refers to by name (bundle's probe files)


PUBLISHED: tuple[Published, ...] = (
    Published(
        "bench.schema.json",
        bench.BenchDocument,
        bench.SCHEMA,
        "mhcdoctor bench --json (mhcdoctor.bench/1)",
        id_host="https://mhcdoctor.dev",
    ),
    Published(
        "bundle.schema.json",
        bundle.BundleManifest,
        bundle.SCHEMA,
        "mhcdoctor report --bundle: manifest.json (mhcdoctor.bundle/1); redactions.json is redactions.schema.json",
        "The bundle is a tar.gz holding mhcdoctor-report/{manifest.json, report.json (check.schema.json), report.md, "
        "redactions.json (redactions.schema.json), probes/NAME.json (probe_file)}.",
        extra_defs=(("probe_file", check.ProbeDocument),),
    ),
    Published("check.schema.json", check.CheckDocument, check.SCHEMA, "mhcdoctor check --json (mhcdoctor.check/1)"),
    Published("diff.schema.json", diff.DiffDocument, diff.SCHEMA, "mhcdoctor diff --json (mhcdoctor.diff/1)"),
    Published(
        "explain.schema.json",
        explain.ExplainDocument,
        explain.SCHEMA,
        "mhcdoctor explain --json (mhcdoctor.explain/1)",
        "Which path vLLM takes for each DeepSeek-V4 mHC op, every gate on the way, and the findings. check --json "
        "carries the same object (without `schema`) per model in `models`.",
    ),
    Published(
        "finding-help.schema.json",
        finding_help.FindingHelpDocument,
        finding_help.SCHEMA,
        "mhcdoctor help FINDING-ID --json (mhcdoctor.finding-help/1)",
        "A finding's documentation: what docs/findings.md's section of it and `mhcdoctor help FINDING-ID` show.",
    ),
    Published(
        "fleet.schema.json",
        fleet.FleetDocument,
        fleet.SCHEMA,
        "mhcdoctor fleet --json and mhcdoctor merge --json (mhcdoctor.fleet/1)",
    ),
    Published(
        "log.schema.json",
        log.LogDocument,
        log.LOG_SCHEMA,
        "mhcdoctor log --json (mhcdoctor.log/1)",
        "What a vLLM server log shows about DeepSeek-V4's mHC ops, with the line numbers that prove it.",
    ),
    Published(
        "models.schema.json", models.ModelsDocument, models.SCHEMA, "mhcdoctor models --json (mhcdoctor.models/1)"
    ),
    Published(
        "observed.schema.json",
        observed.ObservedDocument,
        observed.SCHEMA,
        "the vLLM plugin's MHCDOCTOR_VLLM_DIR/mhcdoctor-observed-PID.json (mhcdoctor.observed/1)",
        "Which implementation each mHC op ran in one vLLM process, recorded from inside it (docs/vllm-plugin.md).",
    ),
    Published(
        "redactions.schema.json",
        bundle.RedactionsDocument,
        bundle.REDACTIONS_SCHEMA,
        "redactions.json of a report --bundle, and what report --preview shows as redacted (mhcdoctor.redactions/1)",
        "With --no-redact: redacted false, no rules, env null, nothing replaced (secrets and GPU UUIDs are masked "
        "either way).",
    ),
    Published(
        "verify.schema.json",
        verify.VerifyDocument,
        verify.SCHEMA,
        "mhcdoctor verify --json (mhcdoctor.verify/1)",
        id_host="https://mhcdoctor.dev",
    ),
)

# `name: type  # comment` in a TypedDict's source: the comment describes the member.
_MEMBER_COMMENT = re.compile(r"^\s+(\w+): [^#]*#\s*(.+?)\s*$")

_BOUNDS = ("minimum", "exclusiveMinimum")
_SCALARS: dict[object, dict[str, object]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    object: {},
    typing.Any: {},
}


class _Writer:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, object]] = {}

    def of(self, hint: object) -> dict[str, object]:
        """The JSON Schema of one type."""
        if hint == JsonValue or isinstance(hint, typing.ForwardRef):
            return {}  # any JSON value
        if hint in _SCALARS:
            return dict(_SCALARS[hint])
        if typing.is_typeddict(hint):
            assert isinstance(hint, type)
            if hint.__name__ not in self.defs:
                self.defs[hint.__name__] = {}  # placeholder: a type that refers to itself stops here
                self.defs[hint.__name__] = self.object_of(hint)
            return {"$ref": f"#/$defs/{hint.__name__}"}
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Annotated:
            out = self.of(args[0])
            for mark in getattr(hint, "__metadata__", ()):
                if isinstance(mark, Minimum):
                    out["exclusiveMinimum" if mark.exclusive else "minimum"] = mark.value
                elif isinstance(mark, Pattern):
                    out["pattern"] = mark.regex
            return out
        if origin is typing.Literal:
            return {"enum": list(args)}
        if origin in (typing.Union, types.UnionType):
            return self.union(args)
        if origin in (list, tuple, typing.Sequence) or str(origin) == "<class 'collections.abc.Sequence'>":
            return {"type": "array", "items": self.of(args[0])} if args else {"type": "array"}
        if origin is dict or str(origin) == "<class 'collections.abc.Mapping'>":
            return {"type": "object", "additionalProperties": self.of(args[1])} if args else {"type": "object"}
        raise TypeError(f"no JSON Schema for {hint!r}")

    def union(self, args: tuple[object, ...]) -> dict[str, object]:
        parts = [self.of(a) for a in args]
        if all(isinstance(p.get("type"), str) and set(p) <= {"type", *_BOUNDS} for p in parts):
            bounds = [{k: v for k, v in p.items() if k != "type"} for p in parts]
            if sum(1 for b in bounds if b) <= 1:  # a bound applies to numbers only: null or a string passes it
                return {"type": [p["type"] for p in parts], **{k: v for b in bounds for k, v in b.items()}}
        if any(p == {} for p in parts):
            return {}
        enums = [p for p in parts if set(p) == {"enum"}]
        if len(enums) == 1 and {"type": "null"} in parts and len(parts) == 2:
            enum = enums[0]["enum"]
            assert isinstance(enum, list)
            return {"enum": [*enum, None]}
        return {"anyOf": parts}

    def object_of(self, typed: type, schema_id: str | None = None) -> dict[str, object]:
        hints = typing.get_type_hints(typed, localns=_NAMESPACE, include_extras=True)
        required: frozenset[str] = getattr(typed, "__required_keys__", frozenset())
        comments = _member_comments(typed)
        properties: dict[str, object] = {}
        for key, hint in hints.items():
            member = {"const": schema_id} if key == "schema" and schema_id else self.of(hint)
            properties[key] = {**member, "description": comments[key]} if key in comments else member
        out: dict[str, object] = {"type": "object"}
        doc = typed.__doc__
        if doc and not doc.startswith(f"{typed.__name__}(") and schema_id is None:  # TypedDict's own docstring
            out["description"] = " ".join(doc.split())
        out["required"] = [key for key in hints if key in required]
        out["properties"] = properties
        rules = [
            {
                "if": {"properties": {m.key: {"const": m.value}}, "required": [m.key]},
                "then": {"properties": {k: {"type": "null"}}},
            }
            for k, hint in hints.items()
            for m in getattr(hint, "__metadata__", ())
            if isinstance(m, NullWhen)
        ]
        if len(rules) == 1:
            out.update(rules[0])
        elif rules:
            out["allOf"] = rules
        return out


def _member_comments(typed: type) -> dict[str, str]:
    """The end-of-line comments of a TypedDict's members, its bases' included (a TypedDict keeps no bases in its
    __mro__, so they are read from its module's source)."""
    classes = _classes(sys.modules[typed.__module__])
    out: dict[str, str] = {}

    def collect(name: str) -> None:
        bases, comments = classes.get(name, ((), {}))
        for base in bases:
            collect(base)
        out.update(comments)

    collect(typed.__name__)
    return out


@functools.cache
def _classes(module: types.ModuleType) -> dict[str, tuple[tuple[str, ...], dict[str, str]]]:
    """Each class of `module`: the names of its bases, and its members' end-of-line comments."""
    lines = inspect.getsource(module).splitlines()
    out = {}
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, ast.ClassDef):
            bases = tuple(b.id for b in node.bases if isinstance(b, ast.Name))
            comments = {
                m.group(1): m.group(2)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and (m := _MEMBER_COMMENT.match(lines[item.lineno - 1]))
            }
            out[node.name] = (bases, comments)
    return out


def schema_of(published: Published) -> dict[str, object]:
    writer = _Writer()
    root = writer.object_of(published.root, published.schema_id)
    for name, typed in published.extra_defs:
        writer.defs[name] = writer.object_of(typed)
    out: dict[str, object] = {
        "$schema": DRAFT,
        "$id": f"{published.id_host}/schemas/{published.file}",
        "title": published.title,
    }
    if published.description:
        out["description"] = published.description
    out.update(root)
    if writer.defs:
        out["$defs"] = dict(sorted(writer.defs.items()))
    return out


def rendered() -> dict[str, str]:
    """Each schema file's text, as the types say."""
    return {p.file: json.dumps(schema_of(p), indent=2, ensure_ascii=False) + "\n" for p in PUBLISHED}


def stale() -> list[str]:
    """The schema files (package and docs) that differ from the types, or are missing, or are not published."""
    want = rendered()
    out = []
    for folder in (PACKAGE, DOCS):
        on_disk = {p.name for p in folder.glob("*.schema.json")}
        for name in sorted(on_disk | want.keys()):
            path = folder / name
            if name not in want or not path.exists() or path.read_text() != want[name]:
                out.append(str(path))
    return out


def main(argv: list[str]) -> int:
    if "--check" in argv:
        out_of_date = stale()
        for path in out_of_date:
            print(f"{path} is out of date: run python -m mhcdoctor.docschema", file=sys.stderr)
        return 1 if out_of_date else 0
    for folder in (PACKAGE, DOCS):
        for name, text in rendered().items():
            (folder / name).write_text(text)
        print(f"wrote {len(PUBLISHED)} schemas to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
