"""Text and Markdown views of a fleet/1 summary: verdict, unchecked nodes, differences, shared facts, findings.

The text stays one screen plus the differences whatever the fleet's size: node lists are cut to a few names
(`node-01, node-02 … and 40 more`), and every node's row is in `--json` and the bundle, not on screen.
"""

from __future__ import annotations

from mhcdoctor.documents.fleet import Difference, FleetDocument, FleetFinding, NodeRow
from mhcdoctor.render.md_escape import cell, code, prose
from mhcdoctor.render.term import SEVERITY_LEVEL, VERDICT_LEVEL, Style

NAMES_SHOWN = 6  # nodes named per line before "… and N more"


def names(nodes: list[str], shown: int = NAMES_SHOWN) -> str:
    if len(nodes) <= shown:
        return ", ".join(nodes)
    return f"{', '.join(nodes[:shown])} ... and {len(nodes) - shown} more"


def difference_lines(diff: Difference, dash: str = "—") -> list[str]:
    """One line per odd group: `node-07: aiter 0.1.13 — 15 others 0.1.14`."""
    majority = diff["majority"]
    others = f"{majority['count']} other{'s' if majority['count'] != 1 else ''} {majority['value']}"
    return [f"{names(odd['nodes'])}: {diff['label']} {odd['value']} {dash} {others}" for odd in diff["odd"]]


def finding_line(finding: FleetFinding, checked: int) -> str:
    plural = "s" if checked != 1 else ""
    return f"{finding['id']} on {finding['count']} of {checked} node{plural}: {names(finding['nodes'])}"


def headline(doc: FleetDocument) -> str:
    c = doc["counts"]
    if not c["nodes"]:  # e.g. --gpu-nodes-only on a cluster without GPUs: a fail, but not of any node
        return f"Fleet of 0 nodes: {doc['verdict']} (no node to check: nothing was checked)"
    parts = [f"{c['ok']} ok", f"{c['degraded']} degraded", f"{c['fail']} fail"]
    if c["unchecked"]:
        parts.append(f"{c['unchecked']} not checked")
    return f"Fleet of {c['nodes']} node{'s' if c['nodes'] != 1 else ''}: {doc['verdict']} ({', '.join(parts)})"


def _unchecked(doc: FleetDocument) -> list[NodeRow]:
    return [n for n in doc["nodes"] if n["status"] != "checked"]


def render_text(doc: FleetDocument, style: Style) -> str:
    lines = [f"{style.mark(VERDICT_LEVEL[doc['verdict']])} {style.bold(headline(doc))}"]
    unchecked = _unchecked(doc)
    if unchecked:
        lines += ["", f"Not checked ({len(unchecked)}, each counts as fail):"]
        lines += [f"  {n['name']}  {n['status']}: {n['error'] or 'no report'}" for n in unchecked]
    checked = doc["counts"]["checked"]
    if doc["differences"]:
        lines += ["", "Differences between nodes (odd nodes first, then what the others have):"]
        lines += [f"  {line}" for diff in doc["differences"] for line in difference_lines(diff, style.dash())]
    if doc["shared"]:
        lines += ["", f"Same on all {checked} checked node{'s' if checked != 1 else ''}:"]
        width = max(len(s["label"]) for s in doc["shared"])
        lines += [f"  {s['label']:<{width}}  {s['value']}" for s in doc["shared"]]
    if doc["findings"]:
        lines += ["", "Findings:"]
        for f in doc["findings"]:
            lines.append(f"  {style.mark(SEVERITY_LEVEL.get(f['severity'], 'info'))} {finding_line(f, checked)}")
            lines.append(style.dim(f"      {f['title']}"))
            if f["fix"]:
                lines.append(style.dim(f"      fix: {f['fix']}"))
    elif checked:
        lines += ["", "No findings on any checked node."]
    return "\n".join(lines) + "\n"


def _cell(text: object) -> str:
    return cell(prose(str(text)))


def render_markdown(doc: FleetDocument) -> str:
    lines = [f"## mhcdoctor fleet: {prose(headline(doc))}", ""]
    unchecked = _unchecked(doc)
    if unchecked:
        lines += ["### Not checked (each counts as fail)", "", "| node | status | error |", "| --- | --- | --- |"]
        lines += [
            f"| {_cell(n['name'])} | {_cell(n['status'])} | {_cell(n['error'] or 'no report')} |" for n in unchecked
        ]
        lines.append("")
    if doc["differences"]:
        lines += ["### Differences between nodes", ""]
        lines += [f"- {prose(line)}" for diff in doc["differences"] for line in difference_lines(diff)]
        lines.append("")
    if doc["shared"]:
        lines += [f"### Same on all {doc['counts']['checked']} checked nodes", "", "| fact | value |", "| --- | --- |"]
        lines += [f"| {_cell(s['label'])} | {_cell(s['value'])} |" for s in doc["shared"]]
        lines.append("")
    if doc["findings"]:
        lines += ["### Findings", ""]
        for f in doc["findings"]:
            line = code(finding_line(f, doc["counts"]["checked"]))
            lines.append(f"- **{prose(f['severity'])}** {line}: {prose(f['title'])}")
            if f["fix"]:
                lines.append(f"  - fix: {prose(f['fix'])}")
        lines.append("")
    footer = f"mhcdoctor {doc['mhcdoctor_version']} · {doc['source']} · {doc['created']}"
    lines.append(f"<sub>{prose(footer)}</sub>")
    return "\n".join(lines) + "\n"
