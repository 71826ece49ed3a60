"""From what one pass kept (scan.Scan) to the log/1 document: the path per op with its proof, compiles at start-up
and while serving, the fatal error and its finding, what the log cannot tell, and (with a saved check report) the
prediction against the evidence. Pure: no I/O.
"""

from __future__ import annotations

from mhcdoctor.documents.check import CheckDocument
from mhcdoctor.documents.explain import OpDocument
from mhcdoctor.documents.log import (
    LOG_SCHEMA,
    CompileDocument,
    CompilesDocument,
    EvidenceDocument,
    FatalDocument,
    FoundDocument,
    LineDocument,
    LogDocument,
    LogFindingDocument,
    OpEvidenceDocument,
    PhaseCompilesDocument,
    PhasesDocument,
    PredictedOpDocument,
    PredictionDocument,
    ProcessDocument,
    TilelangDocument,
    VersionsDocument,
)
from mhcdoctor.documents.vocabulary import OP_LABEL, OPS, worst_verdict
from mhcdoctor.knowledge import versions, vllm_releases
from mhcdoctor.vllmlog import formats as F
from mhcdoctor.vllmlog.findings import text_of
from mhcdoctor.vllmlog.scan import Compile, Evidence, Found, Kept, Scan
from mhcdoctor.vllmlog.stream import Source

_SEVERITY_VERDICT = {"fail": "fail", "warn": "degraded", "info": "ok"}
# The built-in models by the name a Hugging Face repo gives them (deepseek-ai/DeepSeek-V4-Flash).
_MODEL_NAMES = (("v4.1-flash", "deepseek-v4.1-flash"), ("v4-pro", "deepseek-v4-pro"), ("v4-flash", "deepseek-v4-flash"))


def analyse(scan: Scan, source: Source) -> LogDocument:
    """The log/1 document of one scanned log (no prediction: `compare` adds it)."""
    evidence = [_evidence_doc(e) for e in scan.evidence]
    processes = sorted({e.process for e in scan.evidence})
    findings = _findings(scan)
    fatal = [
        FatalDocument(
            line=f.line, process=f.process, text=f.text, finding=f.finding, context=[_line(k) for k in f.context]
        )
        for f in scan.fatal
    ]
    document = LogDocument(
        schema=LOG_SCHEMA,
        source={
            "name": source.label,
            "gzip": source.gzip,
            "bytes": source.bytes_read,
            "lines": source.lines,
            "long_lines": source.long_lines,
            "ended_early": source.ended_early,
            "recognised": scan.recognised,
        },
        versions=_versions(scan),
        phases=_phases(scan),
        ops=_ops(scan.evidence),
        processes=[
            ProcessDocument(name=name, ops=_ops([e for e in scan.evidence if e.process == name])) for name in processes
        ],
        evidence=evidence,
        compiles=CompilesDocument(
            startup=_compiles(scan, "startup"), serving=_compiles(scan, "serving"), unknown=_compiles(scan, "unknown")
        ),
        deepgemm=[_line(k) for k in scan.deepgemm],
        fatal=fatal,
        engine_death=[_line(k) for k in scan.engine_death],
        findings=findings,
        unknowns=[],
        prediction=[],
        verdict="ok",
    )
    document["unknowns"] = _unknowns(scan, document)
    document["verdict"] = _verdict(document)
    return document


# --- versions and phases -------------------------------------------------------------------------------------------


def _found(found: Found | None, note: str, missing: str) -> FoundDocument:
    if found is None:
        return FoundDocument(value=None, line=None, note=missing)
    return FoundDocument(value=found.value, line=found.line, note=note)


def _versions(scan: Scan) -> VersionsDocument:
    return VersionsDocument(
        vllm=_found(
            scan.vllm,
            "vLLM's start-up banner",
            "no vLLM version banner in the log (it is the API server's first lines; an excerpt may start later)",
        ),
        vllm_others=[_found(f, "a later start-up banner", "") for f in scan.vllm_others],
        tilelang=_tilelang(scan),
        model=_found(
            scan.model, "the served model, from vLLM's banner", "the banner naming the model is not in the log"
        ),
        architecture=_found(
            scan.architecture, "vLLM's 'Resolved architecture' line", "no 'Resolved architecture' line"
        ),
        platform=_found(
            scan.platform,
            "vLLM's platform detection (a DEBUG line)",
            "not in the log: vLLM logs the platform it detects at DEBUG only (vLLM #26740); start vLLM with "
            "VLLM_LOGGING_LEVEL=DEBUG to have it",
        ),
    )


def _tilelang(scan: Scan) -> TilelangDocument:
    """The tilelang release, from the line numbers its kernel.py logs at (tilelang names no version in the log)."""
    releases: set[str] | None = None
    first: int | None = None
    for (what, lineno), line in sorted(scan.tilelang_lines.items(), key=lambda item: item[1]):
        begins = lineno if what == "begins" else lineno - F.TILELANG_COMPLETES_OFFSET
        known = set(F.TILELANG_BEGINS_LINE.get(begins, ()))
        releases = known if releases is None else releases & known
        first = line if first is None else first
    if releases is None:
        if scan.tilelang_unnumbered is not None:
            return TilelangDocument(
                releases=["<=0.1.8"],
                line=scan.tilelang_unnumbered,
                note="tilelang's log format has no (kernel.py:N) before 0.1.9",
            )
        return TilelangDocument(
            releases=[], line=None, note="no tilelang compile line, so no tilelang version (a warm cache logs nothing)"
        )
    numbers = ", ".join(f"{w} at kernel.py:{n}" for (w, n) in sorted(scan.tilelang_lines))
    if not releases:
        return TilelangDocument(
            releases=[], line=first, note=f"tilelang logs {numbers}: no tilelang release 0.1.9–0.1.15 logs there"
        )
    return TilelangDocument(
        releases=sorted(releases, key=versions.parse_strict),
        line=first,
        note=f"tilelang/jit/kernel.py logs {numbers} in these releases only",
    )


def _phases(scan: Scan) -> PhasesDocument:
    warmup = scan.warmup_start
    return PhasesDocument(
        startup_complete=list(scan.startup_complete),
        restarts=list(scan.restarts),
        first_request=scan.first_request,
        requests=scan.requests,
        mhc_warmup=FoundDocument(
            value=warmup.text if warmup else None,
            line=warmup.line if warmup else None,
            note="token sizes vLLM warmed the mHC ops for (vLLM 0.24–0.29; the line says TileLang whichever path ran)"
            if warmup
            else "no mHC warmup line (vLLM 0.24–0.29 write one where the warmup runs)",
        ),
        mhc_warmup_seconds=_found(scan.warmup_done, "seconds the mHC warmup took", "no mHC warmup-finished line"),
        jit_warmup_seconds=_found(
            scan.jit_warmup_done, "seconds vLLM's JIT warmup took (0.30+)", "no 'JIT kernel warmup finished' line"
        ),
        jit_monitor=[k.line for k in scan.monitor_on],
    )


# --- ops ---------------------------------------------------------------------------------------------------------


def _evidence_doc(e: Evidence) -> EvidenceDocument:
    return EvidenceDocument(line=e.line, process=e.process, path=e.path, kind=e.kind, ops=list(e.ops), text=e.text)


def _ops(evidence: list[Evidence]) -> dict[str, OpEvidenceDocument]:
    """Per op: the paths lines prove it took (certain), or that a shared kernel or module shows (one of its ops)."""
    result: dict[str, OpEvidenceDocument] = {}
    for op in OPS:
        mine = [e for e in evidence if op in e.ops]
        certain = [e for e in mine if len(e.ops) == 1]
        chosen = certain or mine
        paths = sorted({e.path for e in chosen})
        lines = sorted({e.line for e in chosen})[:10]
        if not paths:
            result[op] = OpEvidenceDocument(
                path="unknown", certain=False, paths=[], lines=[], text="no line of the log shows its path"
            )
            continue
        path = paths[0] if len(paths) == 1 else "mixed"
        where = ", ".join(str(n) for n in lines[:5])
        if certain:
            text = f"{' and '.join(paths)}: line {where}"
        else:
            others = sorted({o for e in chosen for o in e.ops if o != op}, key=OPS.index)
            text = (
                f"{' or '.join(paths)} ran one of {', '.join(OP_LABEL[o] for o in [op, *others])} "
                f"(line {where} shows a kernel or module they share)"
            )
        result[op] = OpEvidenceDocument(path=path, certain=bool(certain), paths=paths, lines=lines, text=text)
    return result


# --- compiles ----------------------------------------------------------------------------------------------------


def _compile_doc(c: Compile) -> CompileDocument:
    return CompileDocument(line=c.line, process=c.process, library=c.library, kernel=c.kernel, seconds=c.seconds)


def _compiles(scan: Scan, phase: str) -> PhaseCompilesDocument:
    count = sum(int(v[0]) for (_, p), v in scan.compile_totals.items() if p == phase)
    seconds = sum(v[1] for (_, p), v in scan.compile_totals.items() if p == phase)
    events = [c for c in scan.compiles if c.phase == phase]
    longest = scan.compile_longest.get(phase)
    kernels = sorted(
        ((k, v) for (k, p), v in scan.compile_kernels.items() if p == phase), key=lambda item: (-item[1][0], item[0])
    )
    return PhaseCompilesDocument(
        count=count,
        seconds=round(seconds, 1),
        timed=sum(1 for c in events if c.seconds is not None),
        longest=_compile_doc(longest) if longest else None,
        kernels=[{"kernel": k, "count": int(v[0]), "seconds": round(v[1], 1)} for k, v in kernels],
        events=[_compile_doc(c) for c in events[:20]],
        repeats=_repeats(events),
    )


def _repeats(events: list[Compile]) -> list[str]:
    """Kernels one process compiled more than once: tilelang compiles a kernel again for each new set of
    compile-time arguments (vLLM derives some from the token count), so a repeat is a new shape seen."""
    seen: dict[tuple[str, str], list[int]] = {}
    for event in events:
        seen.setdefault((event.process, event.kernel), []).append(event.line)
    return [
        f"{process} compiled {kernel} {len(lines)} times (lines {', '.join(str(n) for n in lines[:6])})"
        for (process, kernel), lines in seen.items()
        if len(lines) > 1
    ][:10]


# --- findings ----------------------------------------------------------------------------------------------------


def _finding(finding_id: str, detail: str, lines: list[int]) -> LogFindingDocument:
    text = text_of(finding_id)
    return LogFindingDocument(
        id=finding_id,
        severity=text.severity,
        title=text.title,
        detail=detail,
        fix=text.fix,
        refs=text.refs,
        lines=sorted(set(lines))[:20],
    )


def _findings(scan: Scan) -> list[LogFindingDocument]:
    found: list[LogFindingDocument] = []
    by_id: dict[str, list[Kept]] = {}
    for fatal in scan.fatal:
        if fatal.finding is not None:
            by_id.setdefault(fatal.finding, []).append(Kept(fatal.line, fatal.process, fatal.text))
    for finding_id, kept in by_id.items():
        processes = sorted({k.process for k in kept})
        detail = f"{kept[0].text} (line {kept[0].line}"
        detail += f"; {len(processes)} processes)" if len(processes) > 1 else f", {processes[0]})"
        found.append(_finding(finding_id, detail, [k.line for k in kept]))
    serving = _compiles(scan, "serving")
    if serving["count"] or scan.during_inference_count:
        longest = serving["longest"]
        detail = f"{serving['count']} kernel compile(s) after start-up"
        if serving["timed"]:
            detail += f", {serving['seconds']:.0f} s of compiling in all (summed over processes)"
        if scan.during_inference_count:
            first = scan.during_inference[0]
            detail += (
                f"; vLLM's JIT monitor reported {scan.during_inference_count} compile(s) during inference, the "
                f"first at line {first.line} ({first.process})"
            )
        if longest is not None:
            detail += (
                f"; the longest, {longest['kernel']} at line {longest['line']}, took {longest['seconds']:.0f} s: "
                "a request waiting on it stalls that long"
            )
        lines = [e["line"] for e in serving["events"]] + [k.line for k in scan.during_inference]
        found.append(_finding("mhc-jit-while-serving", detail, lines))
    if scan.aiter_wrong_arch:
        first = scan.aiter_wrong_arch[0]
        found.append(
            _finding("aiter-jit-stale", f"{first.text} (line {first.line})", [k.line for k in scan.aiter_wrong_arch])
        )
    tilelang = scan.compile_totals.get(("tilelang", "startup"))
    if tilelang:
        timed = [e for e in scan.compiles if e.library == "tilelang" and e.phase == "startup"]
        detail = f"{int(tilelang[0])} tilelang kernel compile(s) before the server was up"
        if any(e.seconds is not None for e in timed):
            detail += f" ({tilelang[1]:.0f} s summed over processes)"
        found.append(_finding("tilelang-cache-cold", detail, [e.line for e in timed][:5]))
    order = {"fail": 0, "warn": 1, "info": 2}
    return sorted(found, key=lambda f: order.get(f["severity"], 3))


def _verdict(document: LogDocument) -> str:
    """fail: a fail finding, or the engine died; degraded: a warning, an error no finding explains, or a
    prediction the log contradicts."""
    verdicts = [_SEVERITY_VERDICT.get(f["severity"], "ok") for f in document["findings"]]
    if document["engine_death"]:
        verdicts.append("fail")
    if any(f["finding"] is None for f in document["fatal"]):
        verdicts.append("degraded")
    if any(p["agrees"] is False for pred in document["prediction"] for p in pred["ops"]):
        verdicts.append("degraded")
    return worst_verdict(verdicts)


# --- what the log cannot tell --------------------------------------------------------------------------------------


def _unknowns(scan: Scan, document: LogDocument) -> list[str]:
    notes: list[str] = []
    if not scan.recognised:
        notes.append(
            "no line of this input is one mhcdoctor knows from vLLM, tilelang or aiter: is it a vLLM server log "
            "(the output of `vllm serve`, or of its container)?"
        )
    if scan.architecture is not None and not scan.architecture.value.startswith("DeepseekV4"):
        notes.append(
            f"line {scan.architecture.line}: vLLM serves {scan.architecture.value}, not DeepSeek-V4 "
            "(DeepseekV4ForCausalLM, DeepseekV41ForCausalLM): that model has no mHC ops"
        )
    silent = [OP_LABEL[op] for op in OPS if document["ops"][op]["path"] == "unknown"]
    if silent:
        notes.append(
            f"{', '.join(silent)}: no line shows the path. A kernel tilelang finds in its disk cache logs nothing, "
            "aiter logs its module once per process, and vLLM's torch and triton ops log nothing, so silence is no "
            "evidence of any path"
        )
    shared = [
        OP_LABEL[op] for op in OPS if document["ops"][op]["path"] != "unknown" and not document["ops"][op]["certain"]
    ]
    if shared:
        notes.append(
            f"{', '.join(shared)}: only a kernel or module shared with another op was seen, so the log shows that one "
            "of them took that path, not which"
        )
    if any(e.process == "(no process prefix)" for e in scan.evidence):
        notes.append(
            "some lines of evidence carry no process prefix (vLLM 0.31+ prefixes only its own log records, not "
            "tilelang's or aiter's; an excerpt may have lost it): they are counted under '(no process prefix)'"
        )
    if scan.engine_death and not any(f.finding for f in scan.fatal):
        notes.append(
            f"the engine died (line {scan.engine_death[0].line}) and no known mHC failure is in the log: its root "
            "cause is in lines the log does not hold (a worker's traceback before it), or is not one mhcdoctor knows"
        )
    if scan.platform is None:
        notes.append(document["versions"]["platform"]["note"])
    if not scan.startup_complete and document["compiles"]["unknown"]["count"]:
        notes.append(
            f"{document['compiles']['unknown']['count']} compile(s) with neither a start-up banner nor "
            "'Application startup complete.' before them: the log does not show whether they came at start-up or "
            "while serving"
        )
    if scan.vllm is None:
        notes.append(document["versions"]["vllm"]["note"])
    elif (
        versions.within(scan.vllm.value, vllm_releases.MHC_WARMUP_MODULE_RELEASES)
        and scan.warmup_start is None
        and scan.startup_complete
    ):
        notes.append(
            f"vLLM {scan.vllm.value} logs 'Warming up DeepSeek V4 mHC TileLang kernels' where its mHC warmup runs, and "
            "this start-up has no such line: the warmup did not run (it finds no decoder layer with hc_pre/hc_post on "
            "NVIDIA, vLLM #51790, so the kernels compile at the first requests instead) or its line was filtered out"
        )
    return notes


def _line(k: Kept) -> LineDocument:
    return LineDocument(line=k.line, process=k.process, text=k.text)


# --- prediction against evidence ----------------------------------------------------------------------------------


def compare(document: LogDocument, report: CheckDocument, report_name: str) -> LogDocument:
    """`document` with the report's prediction set against the log's evidence, op by op, for the model the log
    serves (or each model of the report, when the log does not name one the report has)."""
    models = report["models"]
    served = (document["versions"]["model"]["value"] or "").lower()
    wanted = next((builtin for key, builtin in _MODEL_NAMES if key in served), None)
    chosen = [m for m in models if m["model"]["name"] == wanted] or models
    notes = _version_notes(document, report)
    predictions: list[PredictionDocument] = []
    for model in chosen:
        rows: list[PredictedOpDocument] = []
        for op in OPS:
            predicted: str = model["ops"][op]["path"] if op in model["ops"] else "unavailable"
            if op == "mhc_fused_post_pre" and not model["fused_post_pre"]:
                predicted = "not used"
            rows.append(_compare_op(op, predicted, document["ops"][op]))
        rows += _shared_disagreements(document, model["ops"], model["fused_post_pre"])
        name = str(model["model"]["name"] or f"hidden {model['model']['hidden_size']}")
        predictions.append(PredictionDocument(report=report_name, model=name, ops=rows, notes=notes))
    out = document.copy()
    out["prediction"] = predictions
    out["verdict"] = _verdict(out)
    return out


def _compare_op(op: str, predicted: str, seen: OpEvidenceDocument) -> PredictedOpDocument:
    label = OP_LABEL[op]
    if seen["path"] == "unknown":
        return PredictedOpDocument(
            op=op,
            predicted=predicted,
            seen="unknown",
            agrees=None,
            lines=[],
            text=f"{label}: predicted {predicted}; the log cannot tell",
        )
    if not seen["certain"]:
        agrees: bool | None = True if predicted in seen["paths"] else None
        text = f"{label}: predicted {predicted}; {seen['text']}"
        return PredictedOpDocument(
            op=op, predicted=predicted, seen=seen["path"], agrees=agrees, lines=seen["lines"], text=text
        )
    agrees = seen["paths"] == [predicted]
    verb = "agrees" if agrees else "DISAGREES"
    text = (
        f"{label}: predicted {predicted}, the log shows {' and '.join(seen['paths'])} (line {seen['lines'][0]}): {verb}"
    )
    return PredictedOpDocument(
        op=op, predicted=predicted, seen=seen["path"], agrees=agrees, lines=seen["lines"], text=text
    )


def _shared_disagreements(document: LogDocument, ops: dict[str, OpDocument], fused: bool) -> list[PredictedOpDocument]:
    """A shared kernel or module on a path the report predicts for none of the ops that share it: a disagreement
    even though the log cannot say which of them ran there."""
    rows: list[PredictedOpDocument] = []
    seen_groups: set[tuple[str, tuple[str, ...]]] = set()
    for item in document["evidence"]:
        group = tuple(item["ops"])
        if len(group) < 2 or (item["path"], group) in seen_groups:
            continue
        seen_groups.add((item["path"], group))
        predicted = {
            op: ops[op]["path"] if op in ops else "unavailable" for op in group if op != "mhc_fused_post_pre" or fused
        }
        if item["path"] in predicted.values():
            continue
        named = ", ".join(f"{OP_LABEL[op]} on {path}" for op, path in predicted.items())
        rows.append(
            PredictedOpDocument(
                op="+".join(group),
                predicted=", ".join(sorted(set(predicted.values()))),
                seen=item["path"],
                agrees=False,
                lines=[item["line"]],
                text=f"the report predicts {named}, but line {item['line']} shows {item['path']} ran one of them: "
                "DISAGREES",
            )
        )
    return rows


def _version_notes(document: LogDocument, report: CheckDocument) -> list[str]:
    notes: list[str] = []
    facts = report["facts"]
    vllm_report = facts["vllm"]["version"]
    vllm_log = document["versions"]["vllm"]["value"]
    if vllm_report and vllm_log and vllm_report != vllm_log:
        notes.append(
            f"the report is of vLLM {vllm_report}, the log of vLLM {vllm_log}: the prediction is for another install"
        )
    tilelang_report = facts["tilelang"]["version"]
    releases = document["versions"]["tilelang"]["releases"]
    if tilelang_report and releases and releases != ["<=0.1.8"] and tilelang_report not in releases:
        notes.append(
            f"the report is of tilelang {tilelang_report}; the log's tilelang lines come from tilelang "
            f"{' or '.join(releases)}"
        )
    return notes
