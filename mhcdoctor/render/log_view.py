"""The text and Markdown views of a log/1 document (`mhcdoctor log`): the same sections, in the same order.

Header (what was read, versions, phases), the path per op (all processes, then each), the proof lines, what the log
cannot tell, compiles at start-up and while serving, the fatal error, the findings with their fixes, and the
report's prediction against the log. Renderers only format: every word of judgement is in the document.
"""

from __future__ import annotations

from collections.abc import Callable

from mhcdoctor.documents.log import (
    FoundDocument,
    LogDocument,
    OpEvidenceDocument,
)
from mhcdoctor.documents.vocabulary import OP_LABEL, OPS, finding_docs
from mhcdoctor.render.markdown import details_block  # one Markdown escaping for every report
from mhcdoctor.render.md_escape import cell, prose  # one Markdown escaping for every report
from mhcdoctor.render.term import SEVERITY_LEVEL, VERDICT_LEVEL, Style

_MAX_PROCESS_ROWS = 16
_MAX_PROOF = 60  # proof lines in Markdown: an issue body stays far below GitHub's 65,536 characters
_SEVERITY_ICON = {"fail": "❌", "warn": "⚠️", "info": "ℹ️"}
_VERDICT_ICON = {"ok": "✅", "degraded": "⚠️", "fail": "❌"}


def render_text(doc: LogDocument, style: Style) -> str:
    out: list[str] = []
    out += _header(doc)
    out += ["", style.bold("mHC path per op, as the log shows it")]
    out += _table(doc)
    out += ["", style.bold("Proof")]
    evidence = sorted(doc["evidence"], key=lambda e: e["line"])
    out += [f"  line {e['line']}  {e['process']}: {e['text']}" for e in evidence[:24]] or ["  (none)"]
    if len(doc["evidence"]) > 24:
        out.append(f"  … {len(doc['evidence']) - 24} more in --json")
    if doc["unknowns"]:
        out += ["", style.bold("What the log cannot tell")] + [f"  - {note}" for note in doc["unknowns"]]
    out += ["", style.bold("Kernel compiles")] + _compiles(doc, style)
    if doc["deepgemm"]:
        out += ["", style.bold("DeepGEMM")] + [f"  line {k['line']}: {k['text']}" for k in doc["deepgemm"]]
    if doc["fatal"] or doc["engine_death"]:
        out += ["", style.bold("Errors")]
        for fatal in doc["fatal"][:5]:
            known = f"  → {fatal['finding']}" if fatal["finding"] else "  (no known mHC cause)"
            known += f" (failing op: {OP_LABEL.get(fatal['op'], fatal['op'])})" if fatal["op"] else ""
            out.append(f"  line {fatal['line']}  {fatal['process']}: {fatal['text']}{known}")
            out += [f"      line {k['line']}: {k['text']}" for k in fatal["context"][-6:]]
        out += [f"  line {k['line']}  {k['process']}: {k['text']}" for k in doc["engine_death"]]
    out += ["", style.bold("Findings")]
    for f in doc["findings"]:
        out.append(f"  {style.mark(SEVERITY_LEVEL.get(f['severity'], 'info'))} {f['id']}: {f['title']}")
        out.append(f"      {f['detail']}")
        out.append(f"      fix: {f['fix']}")
        out.append(style.dim(f"      docs: {finding_docs(f['id'])}"))
        out.append(f"      refs: {', '.join(f['refs'])}")
    if not doc["findings"]:
        out.append("  none")
    for prediction in doc["prediction"]:
        out += ["", style.bold(f"Prediction ({prediction['report']}, {prediction['model']}) against the log")]
        for row in prediction["ops"]:
            level = {True: "ok", False: "fail", None: "info"}[row["agrees"]]
            out.append(f"  {style.mark(level)} {row['text']}")
        out += [f"  note: {note}" for note in prediction["notes"]]
    verdict = doc["verdict"]
    out += ["", f"{style.mark(VERDICT_LEVEL.get(verdict, 'info'))} verdict: {verdict}"]
    return "\n".join(out) + "\n"


def render_markdown(doc: LogDocument) -> str:
    out = [f"### {_VERDICT_ICON.get(doc['verdict'], '')} mhcdoctor log: {prose(doc['source']['name'])}", ""]
    out += [prose(line.strip()) + "  " for line in _header(doc)[1:]]
    out += ["", "| | " + " | ".join(OP_LABEL[op] for op in OPS) + " |", "|---" * (len(OPS) + 1) + "|"]
    out += _rows(doc, lambda cells: "| " + " | ".join(cell(prose(c)) for c in cells) + " |")
    out += [
        "",
        "Paths: `?` the log cannot tell; `*` a kernel or module shared with another op (one of them ran there).",
    ]
    if doc["unknowns"]:
        out += ["", "**What the log cannot tell**", ""] + [f"- {prose(note)}" for note in doc["unknowns"]]
    out += ["", "**Kernel compiles**", ""] + [_md_item(line) for line in _compiles(doc, Style())]
    if doc["fatal"] or doc["engine_death"]:  # what killed the server, outside the folded proof
        out += ["", "**Errors**", ""]
        for fatal in doc["fatal"][:5]:
            known = f" → {fatal['finding']}" if fatal["finding"] else " (no known mHC cause)"
            known += f" (failing op: {OP_LABEL.get(fatal['op'], fatal['op'])})" if fatal["op"] else ""
            out.append(f"- line {fatal['line']}, {prose(fatal['process'])}: `{fatal['text'].replace('`', '')}`{known}")
        out += [
            f"- line {k['line']}, {prose(k['process'])}: `{k['text'].replace('`', '')}`" for k in doc["engine_death"]
        ]
    findings = doc["findings"]
    if findings:
        out += ["", "**Findings**", ""]
        for f in findings:
            out.append(
                f"- {_SEVERITY_ICON.get(f['severity'], '')} **{prose(f['id'])}**: {prose(f['title'])}. "
                f"{prose(f['detail'])}"
            )
            out.append(f"  - fix: `{f['fix'].replace('`', '')}`")
            out.append(f"  - docs: `{finding_docs(f['id']).replace('`', '')}`")
            out.append(f"  - refs: {', '.join(f['refs'])}")
    for prediction in doc["prediction"]:
        out += ["", f"**Prediction ({prose(prediction['report'])}, {prose(prediction['model'])}) against the log**", ""]
        icon = {True: "✅", False: "❌", None: "❔"}
        out += [f"- {icon[row['agrees']]} {prose(row['text'])}" for row in prediction["ops"]]
        out += [f"- note: {prose(note)}" for note in prediction["notes"]]
    rows = {(e["line"], e["process"]): e["text"] for e in doc["evidence"][:_MAX_PROOF]}
    for fatal in doc["fatal"][:5]:
        rows.update({(k["line"], k["process"]): k["text"] for k in fatal["context"][-6:]})
        rows[(fatal["line"], fatal["process"])] = fatal["text"]
    rows.update({(k["line"], k["process"]): k["text"] for k in doc["engine_death"]})
    proof = [f"{line:>8}  {process}: {text}" for (line, process), text in sorted(rows.items())]  # in the log's order
    if len(doc["evidence"]) > _MAX_PROOF:
        proof.append(f"… {len(doc['evidence']) - _MAX_PROOF} more in --json")
    if proof:
        out += [
            "",
            details_block("the log's lines that prove it (line number, process, text)", "\n".join(proof)).rstrip(),
        ]
    out += ["", f"<sub>{prose(doc['schema'])} · verdict {doc['verdict']} · redacted as `mhcdoctor report` is</sub>"]
    return "\n".join(out) + "\n"


# --- parts -------------------------------------------------------------------------------------------------------


def _md_item(line: str) -> str:
    """A text-view line as a Markdown list item, its indent kept as nesting (4 spaces: a sub-item)."""
    depth = 1 if line.startswith("    ") else 0
    return "  " * depth + f"- {prose(line.strip())}"


def _header(doc: LogDocument) -> list[str]:
    source, versions, phases = doc["source"], doc["versions"], doc["phases"]
    read = f"{source['lines']:,} line{'s' if source['lines'] != 1 else ''}, {source['bytes'] / 1e6:.1f} MB" + (
        ", gzip" if source["gzip"] else ""
    )
    if source["long_lines"]:
        read += f", {source['long_lines']} over-long line(s) read as their head"
    known = f"{source['recognised']:,} line{'s' if source['recognised'] != 1 else ''} recognised"
    head = [f"mhcdoctor log: {source['name']} ({read}; {known})"]
    if source["ended_early"]:
        head.append(f"  the input ends early: {source['ended_early']}")
    parts = [
        _fact("vLLM", versions["vllm"]),
        _fact("model", versions["model"]),
        _fact("architecture", versions["architecture"]),
    ]
    head.append("  " + " · ".join(parts))
    for other in versions["vllm_others"]:
        head.append(f"  also vLLM {other['value']} (line {other['line']}): the server was started again")
    tilelang = versions["tilelang"]
    if tilelang["releases"]:
        head.append(f"  tilelang {' or '.join(tilelang['releases'])} (line {tilelang['line']}: {tilelang['note']})")
    else:
        head.append(f"  tilelang: {tilelang['note']}")
    head.append(
        "  platform: "
        + (_fact("", versions["platform"]).strip() if versions["platform"]["value"] else versions["platform"]["note"])
    )
    started = ", ".join(str(n) for n in phases["startup_complete"])
    serving = f"  start-up complete at line {started}" if started else "  no 'Application startup complete.' line"
    if phases["first_request"]:
        serving += f"; first request at line {phases['first_request']}"
    serving += f"; {phases['requests']:,} request(s) (POST lines; GET /metrics and /health are not counted)"
    if phases["startup_line"]["line"] is not None and not started:
        serving += f"; starting at line {phases['startup_line']['line']} ({phases['startup_line']['value']})"
    if phases["restarts"]:
        serving += f"; started again at line {', '.join(str(n) for n in phases['restarts'])}"
    head.append(serving)
    if phases["mhc_warmup"]["line"] is not None:
        took = phases["mhc_warmup_seconds"]
        done = f", finished in {took['value']} s (line {took['line']})" if took["value"] else ", no finished line"
        head.append(
            f"  mHC warmup at line {phases['mhc_warmup']['line']} for token sizes {phases['mhc_warmup']['value']}"
            f"{done} (vLLM's line says TileLang whichever path ran)"
        )
    if phases["jit_warmup_seconds"]["value"]:
        jit = phases["jit_warmup_seconds"]
        head.append(f"  JIT warmup finished in {jit['value']} s (line {jit['line']})")
    return head


def _fact(name: str, found: FoundDocument) -> str:
    if found["value"] is None:
        return f"{name} ?"
    return f"{name} {found['value']} (line {found['line']})".strip()


def _cellof(op: OpEvidenceDocument) -> str:
    if op["path"] == "unknown":
        return "?"
    return op["path"] + ("" if op["certain"] else "*")


def _rows(doc: LogDocument, fmt: Callable[[list[str]], str]) -> list[str]:
    rows = [fmt(["all processes"] + [_cellof(doc["ops"][op]) for op in OPS])]
    for process in doc["processes"][:_MAX_PROCESS_ROWS]:
        rows.append(fmt([process["name"]] + [_cellof(process["ops"][op]) for op in OPS]))
    if len(doc["processes"]) > _MAX_PROCESS_ROWS:
        rows.append(fmt([f"… {len(doc['processes']) - _MAX_PROCESS_ROWS} more processes in --json"] + [""] * len(OPS)))
    return rows


def _table(doc: LogDocument) -> list[str]:
    labels = ["all processes"] + [p["name"] for p in doc["processes"][:_MAX_PROCESS_ROWS]]
    width = max(len(label) for label in labels) + 2
    cols = [max(len(OP_LABEL[op]), 9) + 2 for op in OPS]
    lines = ["  " + " " * width + "".join(OP_LABEL[op].ljust(c) for op, c in zip(OPS, cols, strict=True))]
    lines += _rows(
        doc,
        lambda cells: "  " + cells[0].ljust(width) + "".join(c.ljust(w) for c, w in zip(cells[1:], cols, strict=True)),
    )
    lines.append("  ? the log cannot tell · * a kernel or module shared with another op (one of them ran there)")
    lines += [f"  {OP_LABEL[op]}: {doc['ops'][op]['text']}" for op in OPS if doc["ops"][op]["path"] != "unknown"]
    return [line.rstrip() for line in lines]


def _compiles(doc: LogDocument, style: Style) -> list[str]:
    lines = []
    compiles = doc["compiles"]
    phases = [("at start-up", compiles["startup"]), ("while serving", compiles["serving"])]
    if compiles["unknown"]["count"]:
        phases.append(("when, the log cannot tell", compiles["unknown"]))
    for label, data in phases:
        if not data["count"]:
            lines.append(f"  {label}: none logged")
            continue
        text = f"  {label}: {data['count']} compile(s)"
        if data["timed"]:
            timed = "" if data["timed"] == data["count"] else f" (the {data['timed']} with an end line)"
            text += f", {data['seconds']:.1f} s summed over processes{timed}"
        longest = data["longest"]
        if longest is not None and longest["seconds"] is not None:
            where = f"{longest['kernel']}, line {longest['line']}, {longest['process']}"
            text += f"; longest {longest['seconds']:.0f} s ({where})"
        lines.append(text)
        kernels = ", ".join(f"{k['kernel']} ×{k['count']}" for k in data["kernels"][:6])
        lines.append(f"    {kernels}")
        lines += [f"    {repeat}" for repeat in data["repeats"][:4]]
    return lines
