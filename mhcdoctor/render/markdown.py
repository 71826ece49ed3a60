"""The Markdown view of a check/1 document, ready to paste into a GitHub issue.

Top: one summary line and a fingerprint table a support engineer can read at a glance; then the findings with
their fixes, the paths per model and the devices; then the full check (and the decision trace per model, and
verify when it ran) folded inside <details>. The whole stays under GitHub's 65,536-character limit for an issue
body: the folded part is cut first, and the bundle keeps everything.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable

from mhcdoctor.documents.check import (
    REPLAY_TITLE,
    AiterDocument,
    CheckDocument,
    DeviceDocument,
    FactsDocument,
    PackageDocument,
)
from mhcdoctor.documents.explain import DecisionDocument, FindingDocument, OpDocument
from mhcdoctor.documents.vocabulary import OP_SHORT, OPS, finding_docs
from mhcdoctor.render.check_text import aiter_fixes, render_check, runtime_parts
from mhcdoctor.render.md_escape import cell, code, html_text, prose
from mhcdoctor.render.term import Style
from mhcdoctor.render.verify_text import render_text as render_verify
from mhcdoctor.text import cut

# GitHub refuses issue bodies over 65,536 characters; keep room for the user's own words.
GITHUB_LIMIT = 60_000

_SEVERITY_ICON = {"fail": "❌", "warn": "⚠️", "info": "ℹ️"}
_VERDICT_ICON = {"ok": "✅", "degraded": "⚠️", "fail": "❌"}
_PLAIN = Style(colour=False, unicode=True)
_COMMANDS = ("pip ", "python ", "python3 ", "mhcdoctor ", "export ", "git ", "sudo ", "conda ")

# A renderer for one model's decision trace (the rules package's text view), plugged in by the caller.
TraceRenderer = Callable[[DecisionDocument], str]


def render_markdown(
    doc: CheckDocument,
    trace: TraceRenderer | None = None,
    note: str | None = None,
    limit: int = GITHUB_LIMIT,
) -> str:
    """The report: `trace` renders each model's explain trace for the folded part; `note` ends the report.

    The folded replay block (a compact report.json) is never cut; the other folded blocks share what room is
    left, short ones whole, so only the longest text is cut.
    """
    head = [summary_line(doc), ""] + _fingerprint(doc) + [""]
    head += _findings(doc.get("findings") or [])
    head += _paths(doc.get("models") or [])
    head += _devices(doc["facts"]["devices"])
    replay = details_block(REPLAY_TITLE, json.dumps(compact_report(doc), separators=(",", ":")), "json")
    tail = [replay, _footer(doc, note)]
    folded = [("Full check", render_check(doc, _PLAIN, verbose=True))]
    if trace is not None:
        for model in doc.get("models") or []:
            folded.append((f"Decision trace: {_model_label(model)}", trace(model)))
    verify = doc.get("verify")
    if verify:
        folded.append(("Verify", render_verify(verify)))
    room = limit - len("\n".join(head + tail)) - sum(len(details_block(title, "")) + 2 for title, _ in folded)
    rooms: dict[int, int] = {}
    for left, i in enumerate(sorted(range(len(folded)), key=lambda i: len(folded[i][1]))):
        rooms[i] = min(len(folded[i][1]), max(0, room) // (len(folded) - left))
        room -= rooms[i]
    details = [details_block(title, _cut(text, rooms[i])) for i, (title, text) in enumerate(folded)]
    return "\n".join(head + details + tail) + "\n"


def compact_report(doc: CheckDocument) -> dict[str, object]:
    """The report without what the other blocks show in full (probe evidence, gate traces, verify evidence):
    enough to replay (`explain --from`) and compare (`diff`); the bundle's report.json has everything."""
    probes = [{**p, "data": {}, "evidence": []} for p in doc.get("probes") or [] if isinstance(p, dict)]
    models = [
        {**m, "ops": {op: {**entry, "why": []} for op, entry in (m.get("ops") or {}).items()}}
        for m in doc.get("models") or []
        if isinstance(m, dict)
    ]
    compact = {**doc, "probes": probes, "models": models}
    verify = doc.get("verify")
    if isinstance(verify, dict):  # the Verify block shows each row; keep statuses and errors, not the evidence
        results = [{**r, "evidence": [], "outputs": []} for r in verify.get("results") or [] if isinstance(r, dict)]
        paths = [{**p, "evidence": []} for p in verify.get("paths") or [] if isinstance(p, dict)]
        compact["verify"] = {**verify, "results": results, "paths": paths}
    return compact


def summary_line(doc: CheckDocument) -> str:
    """One line: verdict, platform and GPUs, runtime, torch, aiter and its sqrsum fix, tilelang, vLLM, paths."""
    facts = doc["facts"]
    verdict = str(doc.get("verdict", "unknown"))
    parts = [f"{facts['platform']} {_gpus_short(facts)}".strip(), _runtime(facts) or "no GPU runtime"]
    parts.append(f"torch {facts['torch']['version'] or 'none'}")
    parts.append(_aiter_short(facts["aiter"]))
    parts.append(f"tilelang {facts['tilelang']['version'] or 'none'}")
    parts.append(f"vLLM {facts['vllm']['version'] or 'none'}")
    parts.append(_paths_short(doc.get("models") or []))
    icon = _VERDICT_ICON.get(verdict, "")
    return f"**mhcdoctor: {icon} {prose(verdict.upper())}** · " + " · ".join(prose(p) for p in parts if p)


def fingerprint(doc: CheckDocument) -> str:
    """A short hash of what decides the paths (no identity): equal fingerprints mean the same software stack."""
    facts = doc["facts"]
    aiter = facts["aiter"]
    key = {
        "platform": facts["platform"],
        "archs": sorted(str(d["arch"]) for d in facts["devices"] or []),
        "rocm": facts["rocm_version"],
        "cuda": facts["cuda_driver_version"],
        "torch": facts["torch"]["version"],
        "aiter": [aiter["version"], aiter["genuine"], aiter["sqrsum_fix"]],
        "tilelang": facts["tilelang"]["version"],
        "vllm": facts["vllm"]["version"],
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def _fingerprint(doc: CheckDocument) -> list[str]:
    facts = doc["facts"]
    torch = facts["torch"]
    build = f"HIP {torch['hip']}" if torch["hip"] else f"CUDA {torch['cuda']}" if torch["cuda"] else "CPU"
    aiter = facts["aiter"]
    host = doc.get("host") or {}
    models = doc.get("models") or []
    rules = sorted({str(m.get("rules")) for m in models if m.get("rules")})
    rows = [
        ("fingerprint", f"`{fingerprint(doc)}`"),
        (
            "platform",
            f"{facts['platform']} · {host.get('os', '?')} · Python {host.get('python_version', '?')}",
        ),
        ("GPUs", _gpus_long(facts)),
        ("ROCm / CUDA", _runtime(facts) or "none found"),
        ("torch", f"{torch['version']} ({build})" if torch["version"] else "not installed"),
        ("aiter", _aiter_long(aiter)),
        ("tilelang", _package(facts["tilelang"])),
        ("vLLM", _package(facts["vllm"]) + (f" (rules {', '.join(rules)})" if rules else "")),
        ("paths", _paths_short(models) or "no model checked"),
        ("verdict", f"{_VERDICT_ICON.get(str(doc.get('verdict')), '')} {doc.get('verdict')}"),
    ]
    cells = [(name, value if name == "fingerprint" else prose(value)) for name, value in rows]
    return ["| | |", "| --- | --- |"] + [f"| {name} | {cell(value)} |" for name, value in cells]


def _findings(findings: list[FindingDocument]) -> list[str]:
    if not findings:
        return ["### Findings", "", "None.", ""]
    out = ["### Findings", ""]
    for f in findings:
        icon = _SEVERITY_ICON.get(str(f.get("severity")), "")
        severity = prose(str(f.get("severity")))
        out.append(f"- {icon} **{code(str(f.get('id')))}** ({severity}): {prose(str(f.get('title', '')))}")
        if f.get("detail"):
            out.append(f"  {prose(str(f['detail']))}")
        if f.get("fix"):
            out.append(f"  **Fix:** {_fix(str(f['fix']))}")
        out.append(f"  Docs: {code(finding_docs(str(f.get('id'))))}")  # the reader's own install has them offline
        if f.get("refs"):
            out.append("  Refs: " + ", ".join(prose(str(r)) for r in f.get("refs") or []))
    return out + [""]


def _fix(fix: str) -> str:
    """A fix that is a command is shown as code, so it pastes into a shell as it is; prose stays prose."""
    if fix.startswith(_COMMANDS) and "`" not in fix:
        return code(fix)
    return prose(fix)


def _paths(models: list[DecisionDocument]) -> list[str]:
    if not models:
        return []
    out = ["### Paths per model", "", "| model | hidden | " + " | ".join(OPS) + " | fused post+pre | verdict |"]
    out.append("| --- " * (len(OPS) + 4) + "|")
    for m in models:
        ops = m.get("ops") or {}
        cells = [_model_label(m), str((m.get("model") or {}).get("hidden_size", "?"))]
        cells += [_path_of(ops, op) for op in OPS]
        cells += ["yes" if m.get("fused_post_pre") else "no", str(m.get("verdict"))]
        out.append("| " + " | ".join(cell(prose(c)) for c in cells) + " |")
    return out + [""]


def _devices(devices: list[DeviceDocument] | None) -> list[str]:
    if not devices:
        return []
    out = ["### GPUs", "", "| # | vendor | arch | name | memory | driver |", "| --- | --- | --- | --- | --- | --- |"]
    for d in devices:
        memory = f"{d['memory_bytes'] / (1 << 30):.0f} GiB" if d["memory_bytes"] else "-"
        cells = [d["index"], d["vendor"], d["arch"], d["name"], memory, d["driver"]]
        out.append("| " + " | ".join(cell(prose("-" if c is None else str(c))) for c in cells) + " |")
    return out + [""]


def _footer(doc: CheckDocument, note: str | None) -> str:
    parts = [f"mhcdoctor {doc.get('mhcdoctor_version', '?')}", f"{doc.get('mode', '?')} check", str(doc.get("created"))]
    if note:
        parts.append(note)
    return "<sub>" + prose(" · ".join(parts)) + "</sub>"


def details_block(title: str, text: str, lang: str = "text") -> str:
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"<details><summary>{html_text(title)}</summary>\n\n{fence}{lang}\n{text.rstrip()}\n{fence}\n\n</details>\n"


def _cut(text: str, room: int) -> str:
    """text.cut's middle cut, with a line saying where the rest is."""
    if len(text) <= room:
        return text
    note = f"\n[about {len(text) - room} characters cut to fit a GitHub issue; the bundle has them all]\n"
    return cut(text, max(0, room - len(note)), keep="middle") + note


def _gpus_short(facts: FactsDocument) -> str:
    devices = facts["devices"]
    if devices is None:
        return str(facts["arch"] or "")
    if not devices:
        return "no GPU"
    counts = Counter(str(d["arch"] or "arch?") for d in devices)
    return " + ".join(f"{arch} ×{n}" for arch, n in counts.items())


def _gpus_long(facts: FactsDocument) -> str:
    devices = facts["devices"]
    if devices is None:
        return "unknown (not probed)"
    if not devices:
        return "none visible"
    kinds = Counter(f"{d['arch'] or 'arch?'} ({d['name'] or d['vendor']})" for d in devices)
    text = " + ".join(f"{n} × {kind}" for kind, n in kinds.items())
    drivers = sorted({str(d["driver"]) for d in devices if d["driver"]})
    if drivers:
        text += f" · driver {', '.join(drivers)}"
    return text


def _runtime(facts: FactsDocument) -> str:
    return ", ".join(runtime_parts(facts))


def _aiter_short(aiter: AiterDocument) -> str:
    if not aiter["present"]:
        return "aiter none"
    if aiter["genuine"] is False:
        return f"aiter impostor ({aiter['distribution'] or '?'} {aiter['version'] or ''})".replace(" )", ")")
    return f"aiter {aiter['version'] or '?'} (sqrsum fix {aiter['sqrsum_fix']})"


def _aiter_long(aiter: AiterDocument) -> str:
    """The table's aiter row: each mHC fix as check's aiter row shows it, where line 1 names the sqrsum fix alone."""
    if not aiter["present"]:
        return "not installed"
    text = _aiter_short(aiter).removeprefix("aiter ")
    if aiter["genuine"] is not False:
        text = f"{aiter['version'] or '?'} (fixes: {aiter_fixes(aiter)})"
    if aiter["imports"] is False:
        text += " · import fails"
    return text


def _package(pkg: PackageDocument) -> str:
    if not pkg["present"] and not pkg["version"]:
        return "not installed"
    text = str(pkg["version"] or "version unknown")
    return text + (" · import fails" if pkg["imports"] is False else "")


def _paths_short(models: list[DecisionDocument]) -> str:
    """`pre aiter, post aiter, fused tilelang, head tilelang`, per model only where models differ."""
    per_model = [(_model_label(m), _ops_short(m)) for m in models]
    if len({ops for _, ops in per_model}) == 1:
        return per_model[0][1]
    return "; ".join(f"{label}: {ops}" for label, ops in per_model)


def _ops_short(model: DecisionDocument) -> str:
    ops = model.get("ops") or {}
    return ", ".join(f"{OP_SHORT.get(op, op)} {_path_of(ops, op)}" for op in OPS if op in ops)


def _path_of(ops: dict[str, OpDocument], op: str) -> str:
    entry = ops.get(op)
    return str(entry.get("path", "-")) if entry else "-"


def _model_label(model: DecisionDocument) -> str:
    info = model.get("model") or {}
    return str(info.get("name") or f"hidden {info.get('hidden_size')}")
