"""The explain decision as text: the answer first (one line per op), then the trace table, then the findings.

A view of the explain/1 document only, so the text and `--json` cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping

from mhcdoctor.documents.explain import DecisionDocument, FindingDocument, OpDocument
from mhcdoctor.documents.vocabulary import JsonValue, finding_docs, token_scope
from mhcdoctor.render.term import SEVERITY_LEVEL, VERDICT_LEVEL, Style

_OP_WIDTH = 19


def render_decision(doc: DecisionDocument, style: Style) -> str:
    lines = [*_header(doc, style), "", *answer_lines(doc, style), "", style.bold("Trace (every gate, in vLLM's order)")]
    lines += _trace_table(doc, style)
    lines += ["", *_findings(doc, style), "", _verdict_line(doc, style)]
    return "\n".join(lines) + "\n"


def answer_lines(doc: DecisionDocument, style: Style) -> list[str]:
    """One line per op: its path and, in a few words, why."""
    out = []
    for op, decision in doc["ops"].items():
        path = decision["path"]
        preferred = decision.get("preferred")
        fallback = preferred is not None and path != preferred
        level = "fail" if path == "unavailable" else ("warn" if fallback or path == "torch" else "ok")
        note = f" (preferred: {preferred})" if fallback and path != "unavailable" else ""
        if op == "mhc_fused_post_pre" and not doc["fused_post_pre"]:
            level, note = "info", " (not run: the model calls mhc_post then mhc_pre)"
        else:
            level, named = _marked_by_findings(doc, op, level)
            note += f" [{', '.join(named)}]" if named else ""
        out.append(f"  {style.mark(level)} {op:<{_OP_WIDTH}} {path:<11} {reason(decision)}{note}")
    fused = "yes" if doc["fused_post_pre"] else "no"
    out.append(f"  {style.dim('fused post+pre between sublayers:')} {fused}")
    out.append(f"  {_verdict_line(doc, style)}{_worst(doc)}")
    return out


def _marked_by_findings(doc: DecisionDocument, op: str, level: str) -> tuple[str, list[str]]:
    """An op's mark raised to the worst warn/fail finding that names it, and those findings' ids."""
    named = [f for f in doc["findings"] if op in f.get("ops", ()) and f["severity"] in ("warn", "fail")]
    if any(f["severity"] == "fail" for f in named):
        level = "fail"
    elif named and level == "ok":
        level = "warn"
    return level, [f["id"] for f in named]


def _worst(doc: DecisionDocument) -> str:
    """The findings behind the verdict, by id (their text and fixes follow the trace)."""
    rank = {"fail": "fail", "degraded": "warn"}.get(doc["verdict"])
    ids = [_with_scope(f["id"], f) for f in doc["findings"] if f["severity"] == rank]
    if ids:
        return f" ({', '.join(ids)}; fixes below)"
    if doc["verdict"] == "degraded":
        return " (an op runs on a fallback path)"
    return ""


def _with_scope(text: str, finding: FindingDocument) -> str:
    """ "aiter-sqrsum-race: wrong from 17 tokens" where a finding shows only from some token count."""
    scope = token_scope(finding.get("from_tokens"))
    return f"{text}: {scope}" if scope else text


def reason(decision: OpDocument) -> str:
    """The deciding gate: why a better path was passed over, or what chose this one."""
    why, path = decision["why"], decision["path"]
    failed = [g for g in why if not g["passed"] and g["path"] not in ("model",)]
    if path == "unavailable":
        return str(failed[0]["text"]) if failed else "no path applies"
    skipped = [g for g in failed if g["path"] != path]
    if skipped:
        return f"{skipped[0]['path']} passed over: {skipped[0]['text']}"
    own = [g["gate"] for g in why if g["path"] == path]
    if len(own) == 1:
        return next(str(g["text"]) for g in why if g["path"] == path)
    return ", ".join(own) + " all hold"


def _header(doc: DecisionDocument, style: Style) -> list[str]:
    m, f = doc["model"], doc["facts"]
    vllm = f["vllm"]
    name = m["name"] or "custom config"
    lines = [
        style.bold(f"mHC paths for {name} (hidden {m['hidden_size']}, hc_mult {m['hc_mult']})"),
        f"  platform {f['platform']}, arch {f['arch'] or 'unknown'}; vLLM {vllm['version'] or 'not installed'}; "
        f"aiter {_package(f['aiter'])}; tilelang {_package(f['tilelang'])}",
        f"  rules: {doc['rules']}",
    ]
    if doc.get("rules_note"):
        lines.append(f"  {style.mark('warn')} {doc['rules_note']}")
    sources = doc.get("sources", {})
    given = sorted({v for v in sources.values() if v.startswith(("user:", "report:"))})
    if given:
        lines.append(style.dim(f"  facts given by {', '.join(given)}"))
    assumed = sorted({_ASSUMED_LABEL.get(k, k) for k, v in sources.items() if v.startswith("assumed:")})
    if assumed:  # whatif.ASSUMED: the machine's own are not the what-if's, so the rules take these as fitting it
        lines.append(f"  assumed to fit the what-if's platform (unknown, not this machine's): {', '.join(assumed)}")
    return lines


_ASSUMED_LABEL = {
    "devices": "GPUs",
    "arch": "GPU arch",
    "rocm_version": "ROCm",
    "cuda_driver_version": "CUDA driver",
    "nvidia_driver": "NVIDIA driver",
    "nvcc": "nvcc",
    "hipcc": "hipcc",
    "torch.cuda": "torch's build",
    "torch.hip": "torch's build",
    "torch.xpu": "torch's build",
    "torch.build": "torch's build",
    "torch.gpus_visible": "GPUs torch sees",
    "xpu_kernels": "vllm-xpu-kernels",
    "vllm.build": "vLLM's build (its CPU build)",
}


def _package(facts: Mapping[str, object]) -> str:
    if facts.get("genuine") is False:  # PyPI's async-iterator `aiter`: its version is not an aiter version
        return f"not AMD's ({facts.get('distribution') or 'another package'} {facts['version'] or ''})".replace(
            " )", ")"
        )
    if facts.get("has_mhc_ops") is False:
        return f"{facts['version'] or 'version unknown'} (no mHC ops)"
    if facts["version"]:
        return str(facts["version"])
    return "not installed" if facts.get("present") is False else "unknown"


def _trace_table(doc: DecisionDocument, style: Style) -> list[str]:
    rows = [("op", "path", "gate", "observed", "", "why")]
    for op, decision in doc["ops"].items():
        for i, g in enumerate(decision["why"]):
            rows.append(
                (
                    op if i == 0 else "",
                    g["path"],
                    g["gate"],
                    observed(g["observed"]),
                    "ok" if g["passed"] else "no",
                    g["text"],
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    out = []
    for n, row in enumerate(rows):
        cells = [row[i].ljust(widths[i]) for i in range(5)]
        if n and row[4]:
            cells[4] = style.mark("ok" if row[4] == "ok" else "fail") + " " * (widths[4] - 1)
        line = "  " + "  ".join(cells) + "  " + row[5]
        out.append(style.dim(line) if n == 0 else line.rstrip())
    return out


def observed(value: JsonValue) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={observed(v)}" for k, v in value.items())
    return str(value)


def _findings(doc: DecisionDocument, style: Style) -> list[str]:
    if not doc["findings"]:
        return [style.bold("Findings: none")]
    out = [style.bold(f"Findings ({len(doc['findings'])})")]
    fixed_by: dict[str, str] = {}
    for f in doc["findings"]:
        scope = token_scope(f.get("from_tokens"))
        title = f"{f['title']} ({scope})" if scope else f["title"]
        out.append(f"  {style.mark(SEVERITY_LEVEL[f['severity']])} [{f['severity']}] {f['id']}: {title}")
        out.append(f"      {f['detail']}")
        out.append(f"      fix: {fix_once(f['fix'], f['id'], fixed_by)}")
        out.append(style.dim(f"      docs: {finding_docs(f['id'])}"))
        out.append(style.dim(f"      refs: {' '.join(f['refs'])}"))
    return out


def fix_once(fix: str, finding_id: str, fixed_by: dict[str, str]) -> str:
    """A finding's fix, or where it was already shown: three aiter findings shared one long fix, printed three
    times. `fixed_by` maps each fix shown so far to its finding, for one list of findings."""
    first = fixed_by.setdefault(fix, finding_id)
    return fix if first == finding_id else f"as for {first} above"


def _verdict_line(doc: DecisionDocument, style: Style) -> str:
    verdict = doc["verdict"]
    return f"{style.mark(VERDICT_LEVEL[verdict])} verdict: {style.bold(verdict)}"
