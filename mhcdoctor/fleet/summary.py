"""Merge per-node check/1 reports into one fleet/1 summary: what support needs first about many nodes.

Pure: no I/O. The summary holds, in this order: the fleet verdict (the worst node's; a node that could not be
checked counts as fail), the facts that differ between nodes with the odd nodes named (the largest group of
nodes is "the others"), the facts every checked node shares, once, and the findings grouped by id with the nodes
that raised each. Only the facts that decide the mHC path or its correctness are compared (GPU arch and count,
driver, ROCm/CUDA, torch, the Python version, aiter and the state of each of its fixes, tilelang, triton, vLLM, the
path per op, the verdict): the full per-node detail stays in each node's report, and `mhcdoctor diff` compares two
of them field by field.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from mhcdoctor import __version__
from mhcdoctor.clock import created_now
from mhcdoctor.documents.check import CheckDocument, FactsDocument
from mhcdoctor.documents.explain import DecisionDocument
from mhcdoctor.documents.fleet import (
    SCHEMA,
    Difference,
    FleetDocument,
    FleetFinding,
    FleetSource,
    NodeRow,
    NodeStatus,
    SharedFact,
    VerifyRun,
)
from mhcdoctor.documents.vocabulary import (
    OP_SHORT,
    OPS,
    SEVERITY_RANK,
    Verdict,
    worst_verdict,
)
from mhcdoctor.render.check_text import aiter_fixes
from mhcdoctor.text import cut, visible

MAX_TEXT = 200  # characters of any one value, title or fix shown
# Models compared per report, and across the fleet (a report has one per built-in model, or the one asked for): each
# model compared is a row per node, so 500 reports of 16 models each, all named differently, made 8000 rows of 500.
MAX_MODELS = 16


@dataclass
class NodeResult:
    """One node: its name in the summary, and either its check/1 report or why there is none.

    The report has passed the one reader's checks (reportfile: merge's through load_report, a node's over Ray
    through validate_report): its facts are complete; a top-level member or a model's or finding's member that an
    older release did not write is absent, and is read with `.get`."""

    name: str
    status: NodeStatus
    report: CheckDocument | None = None
    error: str | None = None
    seconds: float | None = None
    source: str | None = None  # the file it was read from, or the Ray node id
    verify: list[VerifyRun] = field(default_factory=list)  # fleet --verify: one entry per GPU

    @property
    def verdict(self) -> Verdict:
        if self.report is None:
            return "fail"
        verdicts = [self.report.get("verdict", "fail"), *(v["verdict"] for v in self.verify)]
        return worst_verdict(verdicts)  # a report without a verdict counts as fail


def _or(value: object, missing: str = "unknown") -> str:
    return missing if value is None else str(value)


def _package(name: Literal["torch", "aiter", "tilelang", "triton", "vllm"]) -> Callable[[FactsDocument], str]:
    def read(facts: FactsDocument) -> str:
        package = facts[name]
        if package["present"] is None:
            return "unknown"
        if not package["present"]:
            return "none"
        text = _or(package["version"], "version unknown")
        return text if package["imports"] is not False else f"{text} (does not import)"

    return read


def _aiter(facts: FactsDocument) -> str:
    text = _package("aiter")(facts)
    if text in ("none", "unknown"):
        return text
    return f"{text} (not AMD's aiter)" if facts["aiter"]["genuine"] is False else text


def _aiter_fixes(facts: FactsDocument) -> str:
    """Each fix's state, where an AMD aiter with mHC ops is installed (elsewhere there is none to compare)."""
    aiter = facts["aiter"]
    if not aiter["present"] or aiter["genuine"] is False or aiter["has_mhc_ops"] is False:
        return "none"
    return aiter_fixes(aiter)


def _gpus(facts: FactsDocument) -> str:
    devices = facts["devices"]
    if devices is None:
        return "unknown"
    if not devices:
        return "none"
    kinds = Counter(str(d["arch"] or d["name"] or "?") for d in devices)
    return ", ".join(f"{n}x {kind}" for kind, n in sorted(kinds.items()))


def _driver(facts: FactsDocument) -> str:
    if facts["nvidia_driver"]:
        return f"nvidia {facts['nvidia_driver']}"
    drivers = sorted({d["driver"] for d in facts["devices"] or [] if d["driver"]})
    return ", ".join(drivers) or "unknown"


def _torch(facts: FactsDocument) -> str:
    text = _package("torch")(facts)
    hip, cuda = facts["torch"]["hip"], facts["torch"]["cuda"]
    if hip:
        return f"{text} (hip {hip})"
    return f"{text} (cuda {cuda})" if cuda else text


def _model_name(model: DecisionDocument) -> str:
    info = model.get("model") or {}
    return str(info.get("name") or f"hidden {info.get('hidden_size')}")


def _paths(model: DecisionDocument) -> str:
    ops = model.get("ops") or {}
    paths = [ops[op].get("path") or "-" for op in OPS if op in ops]
    if paths and len(set(paths)) == 1:
        return f"{paths[0]} (all ops)"
    return " ".join(f"{OP_SHORT.get(op, op)}={ops[op].get('path') or '-'}" for op in OPS if op in ops)


def _of_facts(read: Callable[[FactsDocument], str]) -> Callable[[CheckDocument], str]:
    return lambda doc: read(doc["facts"])


# (key, label, how to read it from a check/1 document), in the order support reads them.
FACTS: tuple[tuple[str, str, Callable[[CheckDocument], str]], ...] = (
    ("gpus", "GPUs", _of_facts(_gpus)),
    ("platform", "platform", lambda d: d["facts"]["platform"]),
    ("driver", "driver", _of_facts(_driver)),
    ("rocm", "ROCm", lambda d: _or(d["facts"]["rocm_version"], "none")),
    ("cuda", "CUDA (driver)", lambda d: _or(d["facts"]["cuda_driver_version"], "none")),
    ("torch", "torch", _of_facts(_torch)),
    # the interpreter decides which wheels work (tile-kernels 2.x needs 3.12+)
    ("python", "Python", lambda d: _or((d.get("host") or {}).get("python_version"))),
    ("aiter", "aiter", _of_facts(_aiter)),
    ("aiter_fixes", "aiter fixes", _of_facts(_aiter_fixes)),
    ("tilelang", "tilelang", _of_facts(_package("tilelang"))),
    ("triton", "triton", _of_facts(_package("triton"))),
    ("vllm", "vLLM", _of_facts(_package("vllm"))),
)


def clean(text: object, limit: int = MAX_TEXT) -> str:
    """Text from a report as one printable line of bounded length: a hostile report cannot drive the terminal."""
    return cut(visible(str(text), one_line=True), limit)


def node_facts(doc: CheckDocument) -> dict[str, tuple[str, str]]:
    """key -> (label, value as text) for one report: the compared facts, then each model's paths, then verdicts."""
    out = {key: (label, read(doc)) for key, label, read in FACTS}
    for model in (doc.get("models") or [])[:MAX_MODELS]:
        name = clean(_model_name(model), 80)
        out[f"paths:{name}"] = (f"paths {name}", _paths(model))
    verify = doc.get("verify")
    if verify is not None:
        out["verify"] = ("verify", _or(verify.get("verdict")))
    out["mode"] = ("check mode", _or(doc.get("mode")))
    out["mhcdoctor"] = ("mhcdoctor", _or(doc.get("mhcdoctor_version")))
    return {key: (label, clean(value)) for key, (label, value) in out.items()}


def summarize(nodes: Iterable[NodeResult], source: FleetSource, created: str | None = None) -> FleetDocument:
    """The fleet/1 document for these nodes (`source`: "ray" or "merge")."""
    nodes = list(nodes)
    checked = [n for n in nodes if n.report is not None]
    per_node = {n.name: node_facts(n.report) for n in checked if n.report is not None}
    for n in checked:
        per_node[n.name]["verdict"] = ("verdict", n.verdict)
        for v in n.verify:
            per_node[n.name][f"verify:gpu{v['gpu']}"] = (f"verify GPU {v['gpu']}", _or(v["verdict"]))
    keys: dict[str, None] = {}  # every node's keys, in the order first seen
    for facts in per_node.values():
        keys.update(dict.fromkeys(facts))
    models = [key for key in keys if key.startswith("paths:")]
    for key in models[MAX_MODELS:]:  # the first MAX_MODELS models seen are compared; each report has the rest
        del keys[key]
    differences: list[Difference] = []
    shared: list[SharedFact] = []
    for key in keys:
        label = next(facts[key][0] for facts in per_node.values() if key in facts)
        groups: dict[str, list[str]] = {}
        for name, facts in per_node.items():
            groups.setdefault(facts.get(key, (label, "not reported"))[1], []).append(name)
        if len(groups) == 1:
            shared.append({"key": key, "label": label, "value": next(iter(groups))})
            continue
        ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
        differences.append(
            {
                "key": key,
                "label": label,
                "majority": {"value": ordered[0][0], "count": len(ordered[0][1])},
                "odd": [{"value": value, "count": len(names), "nodes": names} for value, names in ordered[1:]],
            }
        )
    counts = Counter(n.verdict if n.report is not None else "unchecked" for n in nodes)
    return {
        "schema": SCHEMA,
        "mhcdoctor_version": __version__,
        "created": created or created_now(),
        "source": source,
        "verdict": worst_verdict(n.verdict for n in nodes) if nodes else "fail",
        "counts": {
            "nodes": len(nodes),
            "checked": len(checked),
            "ok": counts.get("ok", 0),
            "degraded": counts.get("degraded", 0),
            "fail": counts.get("fail", 0),
            "unchecked": counts.get("unchecked", 0),
        },
        "nodes": [_node_row(n) for n in nodes],
        "differences": differences,
        "shared": shared,
        "findings": _findings(checked),
    }


def _node_row(node: NodeResult) -> NodeRow:
    report = node.report
    hostname = None if report is None else (report.get("host") or {}).get("hostname")
    findings = [] if report is None else report.get("findings") or []
    return {
        "name": node.name,
        "status": node.status,
        "verdict": node.verdict,
        "error": None if node.error is None else clean(node.error, 400),
        "seconds": node.seconds,
        "source": None if node.source is None else clean(node.source, 1000),  # a file name, maybe not UTF-8
        "host": None if hostname is None else clean(hostname, 80),
        "findings": sorted({clean(f.get("id"), 80) for f in findings}),
        "verify": node.verify,
    }


def _findings(checked: list[NodeResult]) -> list[FleetFinding]:
    """Each finding id once: its worst severity, first wording, and the nodes that raised it, most severe first."""
    by_id: dict[str, FleetFinding] = {}
    for node in checked:
        for finding in [] if node.report is None else node.report.get("findings") or []:
            fid, severity = clean(finding.get("id"), 80), finding.get("severity")
            if severity is None:  # an older report's finding without one: not comparable
                continue
            entry = by_id.setdefault(
                fid,
                {
                    "id": fid,
                    "severity": severity,
                    "title": clean(finding.get("title") or ""),
                    "fix": clean(finding.get("fix") or "", 400),
                    "nodes": [],
                },
            )
            if SEVERITY_RANK[severity] > SEVERITY_RANK[entry["severity"]]:
                entry["severity"] = severity
            if not entry["nodes"] or entry["nodes"][-1] != node.name:  # nodes come one by one: no list search
                entry["nodes"].append(node.name)
    ordered = sorted(by_id.values(), key=lambda f: (-SEVERITY_RANK.get(f["severity"], 0), -len(f["nodes"]), f["id"]))
    for entry in ordered:
        entry["count"] = len(entry["nodes"])
    return ordered


def natural_key(name: str) -> list[int | str]:
    """node-2 before node-10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def unique_names(names: Iterable[str]) -> list[str]:
    """Names as given, made printable and unique (a second `node-3` becomes `node-3~2`)."""
    out: list[str] = []
    taken: set[str] = set()
    tries: dict[str, int] = {}  # base -> the next suffix to try: 3000 names with one base cost 3000 tries, not 4.5M
    for raw in names:
        base = re.sub(r"[^\x21-\x7e]", "_", raw)[:64] or "node"
        name, n = base, tries.get(base, 2)
        while name in taken:
            name, n = f"{base}~{n}", n + 1
        tries[base] = n
        taken.add(name)
        out.append(name)
    return out
