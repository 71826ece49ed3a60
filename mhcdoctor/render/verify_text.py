"""verify/1 document → the text table a person reads. Formatting only: every number comes from the document."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mhcdoctor.render.term import VERDICT_LEVEL, Style
from mhcdoctor.text import plural

if TYPE_CHECKING:  # types only: `check --fast` renders through here and imports no verify module
    from mhcdoctor.documents.verify import ToleranceDocument, VerifyDocument


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def _tol(tol: ToleranceDocument | None) -> str:
    if not tol:
        return "-"
    return f"abs {tol['abs']:.2g}" if tol["abs"] else f"rel {tol['rel']:.2g}"


# A row's status -> the mark level whose colour it is shown in (on a terminal).
_STATUS_LEVEL = {"pass": "ok", "fail": "fail", "error": "fail", "timeout": "fail", "skip": "info"}


def _status(status: str, style: Style) -> str:
    return style.level(f"{status:<8}", _STATUS_LEVEL.get(status, "info"))


def render_text(doc: VerifyDocument, style: Style | None = None) -> str:
    style = style or Style()
    model = doc["model"]
    name = model["name"] or "custom model"
    where = ", ".join(doc["devices"]) or "no device: nothing ran"
    lines = [
        f"mhcdoctor verify: {name} (hidden {model['hidden_size']}, hc_mult {model['hc_mult']}), "
        f"tokens {', '.join(str(t) for t in doc['tokens'])}, on {where}"
    ]
    for p in doc["paths"]:
        if p["status"] == "unavailable":
            continue
        where = f" ({p['device_name']})" if p.get("device_name") else ""
        version = f" {p['version']}" if p.get("version") else ""
        lines.append(f"  {p['path']}{version} on {p['device']}{where}: {p['seconds']:.1f} s")
    header = (
        f"{'path':<14}{'op':<20}{'tokens':>7}  {'status':<8}{'max abs':>10}{'max rel':>10}  {'tolerance':<11}{'s':>7}"
    )
    lines += ["", header, "-" * len(header)]
    shown_unavailable = set()
    reasons: dict[str, str] = {}  # a reason already shown -> the path it was shown for: no GPU was said eight times
    for r in doc["results"]:
        key = (r["path"], r["device"])
        if r["status"] == "skip" and _path_status(doc, key) == "unavailable":
            if key not in shown_unavailable:
                shown_unavailable.add(key)
                first = reasons.setdefault(str(r["reason"]), r["path"])
                why = r["reason"] if first == r["path"] else f"as for {first}"
                lines.append(f"{r['path']:<14}{'(all)':<20}{'-':>7}  {_status('skip', style)}  {why}")
            continue
        lines.append(
            f"{r['path']:<14}{r['op']:<20}{r['tokens']:>7}  {_status(r['status'], style)}{_num(r['max_abs_err']):>10}"
            f"{_num(r['max_rel_err']):>10}  {_tol(r['tolerance']):<11}{r['seconds']:>7.2f}"
        )
        if r["status"] != "pass" and r["reason"]:
            lines.append(f"{'':<14}  ↳ {r['reason']}")
        for bug in r.get("known_bugs", []):  # what the failure means, from the known bug it matches
            lines.append(f"{'':<14}  ↳ known bug {bug['id']} ({bug['proof']}): {bug['title']}")
            lines.append(f"{'':<14}    fix: {bug['fix']}")
    s = dict(doc["summary"])
    not_run = [p for p in doc["paths"] if p["status"] == "unavailable"]
    # rows of a path that never ran are counted once per path, not once per (op, token count)
    s["skip"] -= sum(
        1
        for r in doc["results"]
        if r["status"] == "skip" and _path_status(doc, (r["path"], r["device"])) == "unavailable"
    )
    counts = ", ".join(f"{s[k]} {k}" for k in ("pass", "fail", "error", "timeout", "skip") if s[k])
    if not_run:
        counts = ", ".join(x for x in (counts, f"{plural(len(not_run), 'path')} not run") if x)
    verdict = style.level(doc["verdict"], VERDICT_LEVEL[doc["verdict"]])
    lines += ["", f"verdict: {verdict} ({counts}; {doc['seconds']:.1f} s)"]
    lines += [f"  - {problem}" for problem in doc["problems"]]
    return "\n".join(lines)


def _path_status(doc: VerifyDocument, key: tuple[str, str]) -> str | None:
    for p in doc["paths"]:
        if (p["path"], p["device"]) == key:
            return p["status"]
    return None
