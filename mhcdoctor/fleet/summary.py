"""Merge per-node check/1 reports into one fleet/1 summary: what support needs first about many nodes.

Pure: no I/O. The summary holds, in this order: the fleet verdict (the worst node's; a node that could not be
checked counts as fail), the facts that differ between nodes with the odd nodes named (the largest group of
nodes is "the others"), the facts every checked node shares, once, and the findings grouped by id with the nodes
that raised each. Only the facts that decide the mHC path or its correctness are compared (GPU arch and count,
driver, ROCm/CUDA, torch, the Python version, aiter and its sqrsum fix, tilelang, triton, vLLM, the path per op,
the verdict): the full per-node detail stays in each node's report, and `mhcdoctor diff` compares two of them
field by field.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from mhcdoctor import __version__
from mhcdoctor.clock import created_now
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
    SEVERITIES,
    SEVERITY_RANK,
    VERDICTS,
    Verdict,
    one_of,
    worst_verdict,
)
from mhcdoctor.text import cut, visible

MAX_TEXT = 200  # characters of any one value, title or fix shown
# Models compared per report, and across the fleet (a report has one per built-in model, or the one asked for): each
# model compared is a row per node, so 500 reports of 16 models each, all named differently, made 8000 rows of 500.
MAX_MODELS = 16


@dataclass
class NodeResult:
    """One node: its name in the summary, and either its check/1 report or why there is none.

    The report is read as untyped JSON (`Mapping[str, object]`), each member checked where it is read: merge's come
    through load_report (a CheckDocument), but a node's check/1 over Ray is the node's JSON as it came back."""

    name: str
    status: NodeStatus
    report: Mapping[str, object] | None = None
    error: str | None = None
    seconds: float | None = None
    source: str | None = None  # the file it was read from, or the Ray node id
    verify: list[VerifyRun] = field(default_factory=list)  # fleet --verify: one entry per GPU

    @property
    def verdict(self) -> Verdict:
        if self.report is None:
            return "fail"
        verdicts = [self.report.get("verdict"), *(v["verdict"] for v in self.verify)]
        return worst_verdict(v if v in VERDICTS else "fail" for v in verdicts)  # a verdict not known counts as fail


def _get(doc: Mapping[str, object], *keys: str) -> object:
    value: object = doc
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _or(value: object, missing: str = "unknown") -> str:
    return missing if value is None else str(value)


def _package(name: str) -> Callable[[Mapping[str, object]], str]:
    def read(doc: Mapping[str, object]) -> str:
        facts = _get(doc, "facts", name)
        if not isinstance(facts, dict) or facts.get("present") is None:
            return "unknown"
        if not facts.get("present"):
            return "none"
        text = _or(facts.get("version"), "version unknown")
        return text if facts.get("imports") is not False else f"{text} (does not import)"

    return read


def _aiter(doc: Mapping[str, object]) -> str:
    text = _package("aiter")(doc)
    if text in ("none", "unknown"):
        return text
    if _get(doc, "facts", "aiter", "genuine") is False:
        return f"{text} (not AMD's aiter)"
    fix = {"present": "fixed", "absent": "race"}.get(str(_get(doc, "facts", "aiter", "sqrsum_fix")), "fix unknown")
    return f"{text} ({fix})"


def _gpus(doc: Mapping[str, object]) -> str:
    devices = _get(doc, "facts", "devices")
    if not isinstance(devices, list):
        return "unknown"
    if not devices:
        return "none"
    kinds = Counter(str(d.get("arch") or d.get("name") or "?") for d in devices if isinstance(d, dict))
    return ", ".join(f"{n}x {kind}" for kind, n in sorted(kinds.items()))


def _driver(doc: Mapping[str, object]) -> str:
    if _get(doc, "facts", "nvidia_driver"):
        return f"nvidia {_get(doc, 'facts', 'nvidia_driver')}"
    devices = _get(doc, "facts", "devices")
    drivers = sorted({str(d["driver"]) for d in _list(devices) if isinstance(d, dict) and d.get("driver")})
    return ", ".join(drivers) or "unknown"


def _torch(doc: Mapping[str, object]) -> str:
    text = _package("torch")(doc)
    build = _get(doc, "facts", "torch", "hip"), _get(doc, "facts", "torch", "cuda")
    if build[0]:
        return f"{text} (hip {build[0]})"
    return f"{text} (cuda {build[1]})" if build[1] else text


def _model_name(model: Mapping[str, object]) -> str:
    info = model.get("model")
    if not isinstance(info, dict):
        info = {}
    return str(info.get("name") or f"hidden {info.get('hidden_size')}")


def _paths(model: Mapping[str, object]) -> str:
    ops = model.get("ops")
    if not isinstance(ops, dict):
        ops = {}
    paths = [str(_get(ops, op, "path") or "-") for op in OPS if op in ops]
    if paths and len(set(paths)) == 1:
        return f"{paths[0]} (all ops)"
    return " ".join(f"{OP_SHORT.get(op, op)}={_get(ops, op, 'path') or '-'}" for op in OPS if op in ops)


# (key, label, how to read it from a check/1 document), in the order support reads them.
FACTS: tuple[tuple[str, str, Callable[[Mapping[str, object]], str]], ...] = (
    ("gpus", "GPUs", _gpus),
    ("platform", "platform", lambda d: _or(_get(d, "facts", "platform"))),
    ("driver", "driver", _driver),
    ("rocm", "ROCm", lambda d: _or(_get(d, "facts", "rocm_version"), "none")),
    ("cuda", "CUDA (driver)", lambda d: _or(_get(d, "facts", "cuda_driver_version"), "none")),
    ("torch", "torch", _torch),
    # the interpreter decides which wheels work (tile-kernels 2.x needs 3.12+)
    ("python", "Python", lambda d: _or(_get(d, "host", "python_version"))),
    ("aiter", "aiter", _aiter),
    ("tilelang", "tilelang", _package("tilelang")),
    ("triton", "triton", _package("triton")),
    ("vllm", "vLLM", _package("vllm")),
)


def clean(text: object, limit: int = MAX_TEXT) -> str:
    """Text from a report as one printable line of bounded length: a hostile report cannot drive the terminal."""
    return cut(visible(str(text), one_line=True), limit)


def node_facts(doc: Mapping[str, object]) -> dict[str, tuple[str, str]]:
    """key -> (label, value as text) for one report: the compared facts, then each model's paths, then verdicts."""
    out = {key: (label, read(doc)) for key, label, read in FACTS}
    for model in _list(doc.get("models"))[:MAX_MODELS]:
        if isinstance(model, dict):
            name = clean(_model_name(model), 80)
            out[f"paths:{name}"] = (f"paths {name}", _paths(model))
    verify = doc.get("verify")
    if isinstance(verify, dict):
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
    report: Mapping[str, object] = node.report or {}
    return {
        "name": node.name,
        "status": node.status,
        "verdict": node.verdict,
        "error": None if node.error is None else clean(node.error, 400),
        "seconds": node.seconds,
        "source": None if node.source is None else clean(node.source, 1000),  # a file name, maybe not UTF-8
        "host": None if _get(report, "host", "hostname") is None else clean(_get(report, "host", "hostname"), 80),
        "findings": sorted({clean(f.get("id"), 80) for f in _list(report.get("findings")) if isinstance(f, dict)}),
        "verify": node.verify,
    }


def _findings(checked: list[NodeResult]) -> list[FleetFinding]:
    """Each finding id once: its worst severity, first wording, and the nodes that raised it, most severe first."""
    by_id: dict[str, FleetFinding] = {}
    for node in checked:
        for finding in _list((node.report or {}).get("findings")):
            if not isinstance(finding, dict):
                continue
            fid = clean(finding.get("id"), 80)
            if not isinstance(severity := finding.get("severity"), str) or severity not in SEVERITY_RANK:
                continue
            entry = by_id.setdefault(
                fid,
                {
                    "id": fid,
                    "severity": one_of(severity, SEVERITIES),
                    "title": clean(finding.get("title") or ""),
                    "fix": clean(finding.get("fix") or "", 400),
                    "nodes": [],
                },
            )
            if SEVERITY_RANK[severity] > SEVERITY_RANK[entry["severity"]]:
                entry["severity"] = one_of(severity, SEVERITIES)
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
