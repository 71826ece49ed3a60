"""The human view of a check/1 document: the machine, the path per op for each model, the findings, the verdict."""

from __future__ import annotations

from mhcdoctor.documents.check import (
    AiterDocument,
    CheckDocument,
    FactsDocument,
    HostDocument,
    PackageDocument,
    ProbeDocument,
    TorchDocument,
    VllmDocument,
    VllmPlatformDocument,
)
from mhcdoctor.documents.explain import DecisionDocument, FindingDocument
from mhcdoctor.documents.models import BUILTIN_NAMES
from mhcdoctor.documents.vocabulary import OPS, SEVERITIES, finding_docs, token_scope
from mhcdoctor.render.decision_text import fix_once
from mhcdoctor.render.term import SEVERITY_LEVEL, VERDICT_LEVEL, Style
from mhcdoctor.text import plural

_GIB = 1 << 30
_OP_COLUMN = {"mhc_fused_post_pre": "fused post+pre"}  # a column's heading, where not the op's name
_STATUS_LEVEL = {"ok": "ok", "missing": "info", "skipped": "info", "error": "fail", "timeout": "fail", "crash": "fail"}


def render_check(doc: CheckDocument, style: Style, verbose: bool = False) -> str:
    facts = doc["facts"]
    lines: list[str] = []
    mode = doc["mode"]
    head = f"mhcdoctor {doc['mhcdoctor_version']} {style.dash()} check ({mode}, {doc['seconds']:.2f} s)"
    lines += [style.bold(head), ""]
    lines += _machine(facts, style, doc.get("vllm_platform"), doc["host"], doc["findings"], doc["probes"])
    lines += [""] + _models(doc["models"], style)
    findings = doc["findings"]
    if findings:
        lines += [""] + render_findings(findings, style)
    verify = doc["verify"]
    if verify:
        from mhcdoctor.render.verify_text import render_text as render_verify  # only with --verify: not for --fast

        lines += ["", style.bold("Verify")] + ["  " + line for line in render_verify(verify).splitlines()]
    if verbose:
        lines += [""] + _probes(doc["probes"], style)
    lines += [""] + _footer(doc, style)
    return "\n".join(lines) + "\n"


def _machine(
    facts: FactsDocument,
    style: Style,
    vllm_platform: VllmPlatformDocument | None = None,
    host: HostDocument | None = None,
    findings: list[FindingDocument] | None = None,
    probes: list[ProbeDocument] | None = None,
) -> list[str]:
    rows: list[tuple[str, str, str]] = []
    devices = facts["devices"]
    if devices:
        for dev in devices:
            parts = [dev["name"] or dev["vendor"], dev["arch"] or "arch unknown"]
            if dev["memory_bytes"]:
                parts.append(f"{dev['memory_bytes'] / _GIB:.0f} GiB")
            if dev["driver"]:
                parts.append(f"driver {dev['driver']}")
            rows.append(("ok", f"GPU {dev['index']}", " · ".join(str(p) for p in parts)))
    elif devices is None:
        rows.append(("info", "GPU", "unknown (not probed)"))
    else:
        rows.append(("fail", "GPU", "no GPU visible (AMD, NVIDIA or Intel)"))
    rows.append(("info", "platform", _runtime_line(facts)))
    if host and host.get("python"):  # the environment probed: vLLM's (--python), or the doctor's own
        rows.append(("info", "Python", f"{host.get('python_version', '?')} ({host['python']})"))
    rows.append(_torch_row(facts["torch"]))
    for key, comp in (("nvcc", facts["nvcc"]), ("hipcc", facts["hipcc"])):
        ran = next((p for p in probes or [] if p["name"] == key), None)
        if comp["found"] and ran is not None and ran["status"] in ("timeout", "crash", "error"):
            rows.append(("warn", key, f"{comp['path']}: {ran['error']}"))  # a JIT that starts it would fail alike
        elif comp["found"]:
            rows.append(("ok", key, " ".join(x for x in (comp["version"], comp["path"]) if x)))
    rows.append(_aiter_row(facts["aiter"], facts["platform"]))
    for label, package in (("tilelang", facts["tilelang"]), ("triton", facts["triton"]), ("vLLM", facts["vllm"])):
        rows.append(_package_row(label, package))
    pins = next((f for f in findings or [] if f["id"] == "vllm-pin-mismatch"), None)
    if pins is not None and rows[-1][0] == "ok":  # what vLLM requires is missing or other: not a plain ✓
        level, label, text = rows[-1]
        rows[-1] = (
            SEVERITY_LEVEL[pins["severity"]],
            label,
            f"{text} (its Requires-Dist is not met: vllm-pin-mismatch)",
        )
    if facts["vllm"]["present"]:
        rows.append(_vllm_build_row(facts["vllm"], vllm_platform))
    width = max(len(label) for _, label, _ in rows)
    out = [style.bold("Machine")]
    for level, label, text in rows:
        out.append(f"  {style.mark(level)} {label.ljust(width)}  {text}")
    return out


def runtime_parts(facts: FactsDocument) -> list[str]:
    """The GPU runtime in words: ROCm version, the CUDA version the driver supports, the NVIDIA driver."""
    parts = []
    if facts["rocm_version"]:
        parts.append(f"ROCm {facts['rocm_version']}")
    if facts["cuda_driver_version"]:
        parts.append(f"CUDA driver {facts['cuda_driver_version']}")
    if facts["nvidia_driver"]:
        parts.append(f"NVIDIA driver {facts['nvidia_driver']}")
    return parts


def _runtime_line(facts: FactsDocument) -> str:
    return " · ".join([facts["platform"], *runtime_parts(facts)])


def _torch_row(torch: TorchDocument) -> tuple[str, str, str]:
    if not torch["version"]:
        return ("info", "torch", "not installed")
    build = f"CUDA {torch['cuda']}" if torch["cuda"] else f"HIP {torch['hip']}" if torch["hip"] else "CPU build"
    return _with_import("torch", f"{torch['version']} ({build})", torch)


def aiter_fixes(aiter: AiterDocument) -> str:
    """`4 of 5 present, big-fuse-sync unknown`: each of aiter's mHC fixes as the probe read it (sqrsum_fix and
    `fixes`); a report from before `fixes` has the sqrsum fix alone, and this says so."""
    states = {"sqrsum": aiter["sqrsum_fix"], **(aiter.get("fixes") or {})}
    parts = [f"{sum(state == 'present' for state in states.values())} of {len(states)} present"]
    for state in ("absent", "unknown"):
        ids = [fix for fix, told in states.items() if told == state]
        if ids:
            parts.append(f"{', '.join(ids)} {state}")
    if len(states) == 1:
        parts.append("the others not in this report")
    return ", ".join(parts)


def _aiter_row(aiter: AiterDocument, platform: str) -> tuple[str, str, str]:
    if not aiter["present"]:
        return ("info", "aiter", "not installed")
    if aiter["genuine"] is False:
        who = aiter["distribution"] or "another package"
        level = "fail" if platform == "rocm" else "info"  # as aiter-impostor: only a ROCm vLLM would call it
        return (level, "aiter", f"not AMD's aiter: `aiter` belongs to {who} {aiter['version'] or ''}".rstrip())
    version = aiter["version"] or "version unknown"
    if aiter["has_mhc_ops"] is False:
        return _with_import("aiter", f"{version}: AMD's aiter without mHC ops (no aiter/ops/mhc.py)", aiter, "warn")
    text = f"{version}, fixes: {aiter_fixes(aiter)}"
    row = _with_import("aiter", text, aiter)
    if row[0] == "ok" and aiter["sqrsum_fix"] == "absent":
        return ("warn", row[1], row[2])
    return row


_BUILDS = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "cpu": "CPU"}
_PLATFORMS = {
    "cuda": "CudaPlatform",
    "rocm": "RocmPlatform",
    "xpu": "XPUPlatform",
    "cpu": "CpuPlatform",
    "unspecified": "UnspecifiedPlatform",
    "conflict": "two platforms at once",
}


def _vllm_build_row(vllm: VllmDocument, decided: VllmPlatformDocument | None) -> tuple[str, str, str]:
    """Which build of vLLM this is, the platform it detects here, and whether it can run here at all (`decided`
    None: a report from before check/1 carried vllm_platform says only the build)."""
    build = vllm["build"]
    text = f"{_BUILDS[build]} build" if build is not None and build in _BUILDS else "build not established"
    if vllm["build_evidence"]:
        text += f" ({vllm['build_evidence']})"
    if vllm["code"] not in (None, "new") and vllm["code_evidence"]:  # new code is the rules' note
        text += f"; {vllm['code_evidence']}"
    platform = decided["platform"] if decided is not None else None
    if platform:
        text += f"; detects {_PLATFORMS[platform]} here"
    check = vllm["selfcheck"]
    if check is not None and check["platform"]:
        text += f" (vLLM itself says {check['platform']})"
    if decided is None:
        return ("info", "vLLM build", text)
    if not decided["runs_here"]:
        return ("fail", "vLLM build", f"{text}: cannot run here ({', '.join(decided['blocked_by'])})")
    return ("ok", "vLLM build", f"{text}: can run here")


def _package_row(label: str, pkg: PackageDocument) -> tuple[str, str, str]:
    if not pkg["present"] and not pkg["version"]:
        return ("info", label, "not installed")
    return _with_import(label, pkg["version"] or "version unknown", pkg)


def _with_import(label: str, text: str, pkg: PackageDocument, level: str = "ok") -> tuple[str, str, str]:
    if pkg["imports"] is False:
        error = (pkg["import_error"] or "").strip().splitlines()
        return ("fail", label, f"{text}; import fails: {error[-1] if error else 'no error text'}")
    if pkg["imports"] is None:
        return (level, label, f"{text} (import not tried)")
    return (level, label, text)


def _models(models: list[DecisionDocument], style: Style) -> list[str]:
    if not models:
        return []
    rules = sorted({m["rules"] for m in models if m.get("rules")})
    out = [style.bold("Paths per model") + style.dim(f"  (vLLM rules {', '.join(rules)})")]
    header = ["", *(_OP_COLUMN.get(op, op) for op in OPS), "verdict"]
    rows = []
    for m in models:
        cells = [f"{m['model'].get('name') or 'custom'} (hidden {m['model']['hidden_size']})"]
        for op in OPS:
            entry = m["ops"].get(op)
            path = entry["path"] if entry is not None else "-"
            cells.append(path if op != "mhc_fused_post_pre" or m.get("fused_post_pre") else "not used")
        cells.append(m["verdict"])
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out.append("    " + style.dim("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()))
    for m, cells in zip(models, rows, strict=True):
        line = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
        out.append(f"  {style.mark(VERDICT_LEVEL[m['verdict']])} {line}")
    notes = {str(m["rules_note"]) for m in models if m.get("rules_note")}
    out += [f"    {style.dim(note)}" for note in sorted(notes)]
    not_ok = [m["model"] for m in models if m["verdict"] != "ok"]
    if not_ok:
        first = not_ok[0]
        name = first.get("name")
        example = f"--model {name}" if name in BUILTIN_NAMES else f"--hidden {first['hidden_size']}"
        out.append(f"    {style.dim('why each op takes its path, gate by gate: mhcdoctor explain ' + example)}")
    return out


def render_findings(findings: list[FindingDocument], style: Style) -> list[str]:
    out = [style.bold("Findings")]
    fixed_by: dict[str, str] = {}
    for f in findings:
        scope = token_scope(f.get("from_tokens"))
        title = f"{f['title']} ({scope})" if scope else f["title"]
        out.append(f"  {style.mark(SEVERITY_LEVEL[f['severity']])} {f['id']}: {title}")
        if f.get("detail"):
            out.append(f"      why: {f['detail']}")
        if f.get("fix"):
            out.append(f"      fix: {fix_once(f['fix'], f['id'], fixed_by)}")
        out.append(style.dim(f"      docs: {finding_docs(f['id'])}"))
    return out


def _probes(probes: list[ProbeDocument], style: Style) -> list[str]:
    out = [style.bold("Probes")]
    width = max((len(p["name"]) for p in probes), default=0)
    for p in probes:
        level = _STATUS_LEVEL.get(p["status"], "info")
        source = f" [{p['source']}]" if p["source"] else ""
        line = f"  {style.mark(level)} {p['name'].ljust(width)}  {p['status']:<7} {p['seconds']:6.3f} s{source}"
        out.append(line)
        if p["error"]:
            out.append(f"      error: {p['error']}")
        for ev in p["evidence"]:
            for i, text in enumerate(str(ev).splitlines()[:12]):
                out.append(f"      {'' if i == 0 else '  '}{text}")
    return out


def summary_line(doc: CheckDocument) -> str:
    """What the check found, counted: "2 fail, 1 warning, 1 info; 1 of 3 models not ok"."""
    worst_first = reversed(SEVERITIES)
    counts = {severity: sum(1 for f in doc["findings"] if f["severity"] == severity) for severity in worst_first}
    words = {"fail": ("fail", "fail"), "warn": ("warning", "warnings"), "info": ("info", "info")}
    found = ", ".join(f"{n} {words[s][n != 1]}" for s, n in counts.items() if n) or "no findings"
    models = doc["models"]
    not_ok = sum(1 for m in models if m["verdict"] != "ok")
    if not_ok:
        return f"{found}; {not_ok} of {plural(len(models), 'model')} not ok"
    return f"{found}; {plural(len(models), 'model')}, all ok"


def _footer(doc: CheckDocument, style: Style) -> list[str]:
    verdict = doc["verdict"]
    text = {
        "ok": "ok: the preferred path is selected and nothing is wrong",
        "degraded": "degraded: it will run correctly, but on a fallback path or with a warning",
        "fail": "fail: a selected path will crash or compute wrong results, or no GPU path can run",
    }[verdict]
    out = [f"{style.mark(VERDICT_LEVEL[verdict])} {style.bold('Verdict')}: {text}", "  " + summary_line(doc)]
    if doc["mode"] == "fast":
        out.append(style.dim("  --fast: nothing was imported, no GPU initialised; plain `check` imports too."))
    return out
