"""A finding's documentation, from the catalogue and its known-bug record: the one text that docs/findings.md shows
as the finding's section (docsgen) and `mhcdoctor help ID` prints (commands.help), so a pip-installed user, who has
no docs/ folder and no public page to open, reads the same words offline."""

from __future__ import annotations

import difflib

from mhcdoctor.documents.finding_help import SCHEMA, EvidenceDocument, FindingHelpDocument
from mhcdoctor.documents.vocabulary import Severity, finding_docs, token_scope
from mhcdoctor.knowledge.bugs import BY_ID, KnownBug
from mhcdoctor.knowledge.evidence import Code, Evidence, Measured
from mhcdoctor.rules.findings import CATALOGUE, IDS, FindingSpec

_BY_ID: dict[str, FindingSpec] = {spec.id: spec for spec in CATALOGUE}


def spec_of(finding_id: str) -> FindingSpec | None:
    """The catalogue's finding of that id, or None."""
    return _BY_ID.get(finding_id)


def closest(name: str) -> list[str]:
    """The finding ids nearest a mistyped one, nearest first (none when nothing is near)."""
    return difflib.get_close_matches(name.lower(), IDS, n=3, cutoff=0.6)


def severity_text(spec: FindingSpec) -> str:
    """Its severity, or the range of them where each case gives its own (as the docs pages show it)."""
    if spec.severity is not None:
        return spec.severity
    bug = BY_ID.get(spec.id)
    return f"{bug.worst} or lower" if bug is not None else "fail / warn / info"


def document(spec: FindingSpec) -> FindingHelpDocument:
    """Everything published about a finding (`help ID --json`; `section` renders it)."""
    bug = BY_ID.get(spec.id)
    worst: Severity = spec.severity or (bug.worst if bug is not None else "fail")
    return {
        "schema": SCHEMA,
        "id": spec.id,
        "severity": spec.severity,
        "worst": worst,
        "title": spec.title,
        "summary": spec.summary,
        "applies": _applies(bug) if bug is not None else _scope(spec),
        "fix": spec.fix,
        "refs": list(spec.refs),
        "evidence": [_evidence(e) for e in bug.evidence] if bug is not None else [],
        "docs": finding_docs(spec.id),
    }


def section(spec: FindingSpec) -> list[str]:
    """A finding's documentation in Markdown: docs/findings.md's section (under its anchor) and `help ID`'s text."""
    doc = document(spec)
    fix = doc["fix"] if "`" in doc["fix"] else f"`{doc['fix']}`"
    out = [f"## `{doc['id']}`: {doc['title']}", "", f"Severity: {severity_text(spec)}", "", f"When: {doc['summary']}"]
    if doc["applies"]:
        out += ["", "Applies to:", "", *(f"- {line}" for line in doc["applies"])]
    out += ["", f"Fix: {fix}", "", "References: " + (", ".join(doc["refs"]) or "none")]
    if doc["evidence"]:
        out += ["", "Evidence:", "", *(f"- {_evidence_line(e)}" for e in doc["evidence"])]
    return [*out, ""]


def _scope(spec: FindingSpec) -> list[str]:
    scope = token_scope(spec.from_tokens)
    return [f"calls {scope}"] if scope else []


def _applies(bug: KnownBug) -> list[str]:
    """Where a known bug's record says it applies, one line per condition it sets."""
    out = [f"effect: {bug.effect}", f"{bug.library} code, on the {bug.path} path" if bug.path != "any" else ""]
    out.append(f"versions: {bug.library} {bug.affected}" if bug.affected else "")
    out.append(f"vLLM releases: {bug.vllm}" if bug.vllm else "")
    out.append("models: " + ", ".join(bug.models) if bug.models else "")
    releases = [
        f"first bad {bug.first_bad}" if bug.first_bad else "",
        f"last bad {bug.last_bad}" if bug.last_bad else ("not fixed in a release yet" if bug.first_bad else ""),
        f"fixed in {bug.first_good}" if bug.first_good else "",
        f"fixed by #{bug.fixed_by}" if bug.fixed_by else "",
        f"commit {bug.commit}" if bug.commit else "",
    ]
    out.append(", ".join(r for r in releases if r))
    out.append("ops: " + ", ".join(bug.ops) if bug.ops else "")
    out.append("platforms: " + ", ".join(bug.platforms) if bug.platforms else "")
    out.append("archs: " + ", ".join(bug.archs) if bug.archs else "")
    out.append("hidden sizes: " + ", ".join(map(str, bug.hidden)) if bug.hidden is not None else "")
    out.append("hc_mult: " + ", ".join(map(str, bug.hc_mult)) if bug.hc_mult is not None else "")
    first, last = bug.tokens
    if (first, last) != (1, None):
        out.append(f"calls of {first}–{last} tokens" if last is not None else f"calls of {first} tokens or more")
    out.append(f"told on a machine by: {bug.told_by}")
    return [line for line in out if line]


def _evidence(e: Evidence) -> EvidenceDocument:
    if isinstance(e, Measured):
        return {"kind": "measured", "source": e.machine, "date": e.date, "what": e.command, "result": e.result}
    if isinstance(e, Code):
        where = f"{e.repo} {e.tag} {e.file}" + (f":{e.line}" if e.line is not None else "")
        return {"kind": "code", "source": where, "date": None, "what": e.shows, "result": None}
    return {"kind": "report", "source": e.url, "date": None, "what": e.not_known, "result": None}


def _evidence_line(e: EvidenceDocument) -> str:
    if e["kind"] == "measured":
        return f"Measured on {e['source']}, {e['date']}: `{e['what']}`: {e['result']}"
    if e["kind"] == "code":
        return f"Code at {e['source']}: {e['what']}"
    return f"Reported at {e['source']}; not known: {e['what']}"
