"""diff/1 document -> the text a person reads: the two reports named, notes, then the differences by section."""

from __future__ import annotations

from mhcdoctor.documents.diff import DiffDocument, ReportAbout
from mhcdoctor.render.term import Style

# Values longer than this are shown on lines of their own.
_INLINE = 40


def render_text(document: DiffDocument, style: Style | None = None) -> str:
    style = style or Style()
    lines = [f"A: {_describe(document['a'])}", f"B: {_describe(document['b'])}"]
    lines += [f"note: {note}" for note in document["notes"]]
    differences = document["differences"]
    if not differences:
        same = "no differences in verdict, paths, findings, verify, facts, devices, probes or environment"
        lines.append(style.level(same, "ok"))
        return "\n".join(lines) + "\n"
    lines.append(style.level(f"{len(differences)} difference(s), most important first:", "warn"))
    inline = [max(len(_show(d["a"])), len(_show(d["b"]))) <= _INLINE for d in differences]
    short = [d for d, fits in zip(differences, inline, strict=True) if fits]
    width = min(48, max((len(d["key"]) for d in short), default=0))
    a_width = max((len(_show(d["a"])) for d in short), default=0)
    section = None
    for d, fits in zip(differences, inline, strict=True):
        if d["section"] != section:
            section = d["section"]
            lines.append(style.bold(f"  [{section}]"))
        if fits:  # a flag per difference: `d in short` compared dicts, quadratic in the differences
            lines.append(f"    {d['key']:<{width}}  A: {_show(d['a']):<{a_width}}  B: {_show(d['b'])}")
        else:  # long values (evidence, paths) on lines of their own
            lines += [f"    {d['key']}", f"      A: {_show(d['a'])}", f"      B: {_show(d['b'])}"]
    return "\n".join(lines) + "\n"


def _describe(about: ReportAbout) -> str:
    details = ", ".join(str(value) for value in (about["hostname"], about["created"], about["mode"]) if value)
    return f"{about['source']} ({details})" if details else str(about["source"])


def _show(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
