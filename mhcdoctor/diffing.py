"""What differs between two check/1 reports, a user's broken machine and one that works: the diff/1 document
(render.diff_text is its text view).

Differences are ordered by how much they explain: the verdict first, then which path each op takes, the
findings, the verify results, then the facts that drive the rules (platform and arch, aiter, vLLM, tilelang
before compilers and install locations), the devices one by one, probe outcomes and the environment.
Things that differ between any two runs (creation time, timings, the host's name) are never differences, and
neither is a home folder shown as `~` in a redacted report and spelt out in a raw (`--no-redact`) one.

Both reports come through mhcdoctor.reportfile, checked to their check/1 types all the way down: their facts and
probes are complete; any other member an older release did not write may be absent, and is looked up with the
TypedDict's `.get`. A difference's two values are what the reports held (`object`: any JSON value).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from mhcdoctor.documents.check import CheckDocument, DeviceDocument, FactsDocument
from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.diff import SCHEMA, DiffDocument, DifferenceDocument, ReportAbout
from mhcdoctor.documents.explain import DecisionDocument, OpDocument
from mhcdoctor.documents.vocabulary import SEVERITY_RANK
from mhcdoctor.text import visible

if TYPE_CHECKING:  # as documents.check: the verify documents load only where verify runs
    from mhcdoctor.documents.verify import VerifyDocument

# Facts in the order that matters to the rules; anything not listed follows, alphabetically.
FACT_ORDER: tuple[str, ...] = (
    "platform",
    "arch",
    "aiter.present",
    "aiter.genuine",
    "aiter.version",
    "aiter.sqrsum_fix",
    "aiter.fixes",
    "aiter.imports",
    "aiter.has_mhc_ops",
    "aiter.mhc_pre_norm_args",
    "aiter.has_fused_post_pre",
    "aiter.has_seam_rmsnorm",
    "vllm.present",
    "vllm.version",
    "vllm.imports",
    "tilelang.present",
    "tilelang.version",
    "tilelang.imports",
    "rocm_version",
    "cuda_driver_version",
    "nvidia_driver",
    "torch.version",
    "torch.hip",
    "torch.cuda",
    "torch.imports",
    "hipcc.found",
    "nvcc.found",
    "triton.present",
    "triton.version",
)
# Facts that only say where something came from, not what it is.
_IGNORED_FACTS = ("sources",)
# Per-device keys, most telling first.
DEVICE_ORDER: tuple[str, ...] = ("vendor", "arch", "name", "driver", "memory_bytes")
K = TypeVar("K")
Pair = tuple[str, object, object]  # (key, A's value, B's value), values as the reports held them


@dataclass
class Difference:
    section: str
    key: str
    a: object
    b: object

    def to_dict(self) -> DifferenceDocument:
        return as_document(self, DifferenceDocument)


def diff_reports(a: CheckDocument, b: CheckDocument) -> list[Difference]:
    """Every difference between two check/1 documents, most important first."""
    sections: list[tuple[str, list[Pair]]] = [
        ("verdict", [("verdict", a.get("verdict"), b.get("verdict"))]),
        ("ops", _model_pairs(a, b)),
        ("findings", _finding_pairs(a, b)),
        ("verify", _verify_pairs(a.get("verify"), b.get("verify"))),
        ("facts", _fact_pairs(a["facts"], b["facts"])),
        # the interpreter decides which wheels install and work (tile-kernels 2.x needs Python 3.12+)
        ("python", [("python_version", _python_version(a), _python_version(b))]),
        ("devices", _device_pairs(a["facts"], b["facts"])),
        ("probes", _keyed_pairs(_probe_status(a), _probe_status(b))),
        ("env", _keyed_pairs(a.get("env") or {}, b.get("env") or {})),
    ]
    home = _spelt_out_home([pair for _, pairs in sections for pair in pairs])
    return [
        Difference(section, key, va, vb)
        for section, pairs in sections
        for key, va, vb in pairs
        if va != vb and (home is None or _as_tilde(va, home) != _as_tilde(vb, home))
    ]


def _python_version(doc: CheckDocument) -> object:
    return (doc.get("host") or {}).get("python_version")


def _spelt_out_home(pairs: list[Pair]) -> str | None:
    """The home folder one report spells out where the other, redacted, shows `~` (`~/venv` against
    `/home/ann/venv` gives `/home/ann`): the one most pairs agree on, or None."""
    found: Counter[str] = Counter()
    for _, x, y in pairs:
        if not (isinstance(x, str) and isinstance(y, str)):
            continue
        # a search path (PATH) may hold `~` only past its first entry: its entries are compared one by one
        entries = zip(x.split(":"), y.split(":"), strict=True) if x.count(":") == y.count(":") else [(x, y)]
        for one, other in entries:
            for short, full in ((one, other), (other, one)):
                if short.startswith("~/") and full.startswith("/") and full.endswith(short[1:]):
                    home = full[: len(full) - len(short) + 1]
                    if len(home) > 1 and not home.endswith("/") and ":" not in home:
                        found[home] += 1
    return found.most_common(1)[0][0] if found else None


def _as_tilde(value: object, home: str) -> object:
    """`value` with `home` written as `~` where it stands as a whole folder, as redaction writes it."""
    if not isinstance(value, str):
        return value
    return re.sub(re.escape(home) + r"(?=[/:\s]|$)", "~", value)


def notes(a: CheckDocument, b: CheckDocument) -> list[str]:
    """What makes two reports less comparable without being a difference of the machines."""
    out = []
    if a.get("mode") != b.get("mode"):
        out.append(
            f"A was a {a.get('mode')} check and B a {b.get('mode')} one: facts only a full check probes "
            "(imports) may differ for that reason alone"
        )
    if a.get("mhcdoctor_version") != b.get("mhcdoctor_version"):
        versions = f"{a.get('mhcdoctor_version')} and {b.get('mhcdoctor_version')}"
        out.append(f"made by mhcdoctor {versions}; its rules may differ (replay both with one version)")
    return out


def to_document(
    differences: list[Difference], a: CheckDocument, b: CheckDocument, labels: tuple[str, str]
) -> DiffDocument:
    return {
        "schema": SCHEMA,
        "a": _about(a, labels[0]),
        "b": _about(b, labels[1]),
        "same": not differences,
        "notes": notes(a, b),
        "differences": [d.to_dict() for d in differences],
    }


def _model_key(doc: DecisionDocument) -> str:
    model = doc.get("model") or {}
    name = model.get("name")
    return str(name) if name else f"hidden {model.get('hidden_size')}, hc_mult {model.get('hc_mult')}"


def _model_pairs(a: CheckDocument, b: CheckDocument) -> list[Pair]:
    """Per model: its verdict, each op's path, whether it runs the fused post+pre op, and the rule set."""
    models_a = {_model_key(m): m for m in a.get("models") or []}
    models_b = {_model_key(m): m for m in b.get("models") or []}
    pairs: list[Pair] = []
    for name in list(models_a) + [n for n in models_b if n not in models_a]:
        ma, mb = models_a.get(name), models_b.get(name)
        if ma is None or mb is None:
            pairs.append((f"{name}: model", "checked" if ma else None, "checked" if mb else None))
            continue
        pairs.append((f"{name}: verdict", ma.get("verdict"), mb.get("verdict")))
        ops_a, ops_b = ma.get("ops") or {}, mb.get("ops") or {}
        for op in list(ops_a) + [o for o in ops_b if o not in ops_a]:
            pairs.append((f"{name}: {op}", _path(ops_a.get(op)), _path(ops_b.get(op))))
        pairs.append((f"{name}: fused_post_pre", ma.get("fused_post_pre"), mb.get("fused_post_pre")))
        pairs.append((f"{name}: rules", ma.get("rules"), mb.get("rules")))
    return pairs


def _path(op: OpDocument | None) -> object:
    return None if op is None else op.get("path")


def _finding_pairs(a: CheckDocument, b: CheckDocument) -> list[Pair]:
    """Each finding id raised by either report: its severity on each side (None: not raised)."""
    sev_a = {str(f.get("id")): f.get("severity") for f in a.get("findings") or []}
    sev_b = {str(f.get("id")): f.get("severity") for f in b.get("findings") or []}

    def worst(i: str) -> int:  # the more severe side decides a finding's place
        return -max(SEVERITY_RANK.get(sev_a.get(i) or "", -1), SEVERITY_RANK.get(sev_b.get(i) or "", -1))

    return [(i, sev_a.get(i), sev_b.get(i)) for i in sorted(set(sev_a) | set(sev_b), key=lambda i: (worst(i), i))]


def _verify_pairs(a: VerifyDocument | None, b: VerifyDocument | None) -> list[Pair]:
    """The verify verdict and each result's status, keyed by path, op, token count, hidden size and device."""
    pairs: list[Pair] = [
        ("verify verdict", None if a is None else a.get("verdict"), None if b is None else b.get("verdict"))
    ]
    if a is None or b is None:  # verify ran on one side only: that, not every row
        return pairs
    return pairs + _keyed_pairs(_verify_status(a), _verify_status(b))


def _verify_status(doc: VerifyDocument) -> dict[str, object]:
    statuses: dict[str, object] = {}
    for r in doc.get("results") or []:
        key = f"{r.get('path')} {r.get('op')} tokens={r.get('tokens')} hidden={r.get('hidden')} {r.get('device')}"
        statuses[key] = r.get("status")
    return statuses


def _fact_pairs(a: FactsDocument, b: FactsDocument) -> list[Pair]:
    flat_a, flat_b = _flatten(a), _flatten(b)
    keys = set(flat_a) | set(flat_b)
    rank = {key: i for i, key in enumerate(FACT_ORDER)}
    ordered = sorted(keys, key=lambda k: (rank.get(k, len(rank)), k))
    return [(k, flat_a.get(k), flat_b.get(k)) for k in ordered]


def _flatten(facts: Mapping[str, object]) -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in facts.items():
        if key in _IGNORED_FACTS or key == "devices":
            continue
        if isinstance(value, dict):
            flat.update({f"{key}.{sub}": v for sub, v in value.items()})
        else:
            flat[key] = value
    return flat


def _device_pairs(a: FactsDocument, b: FactsDocument) -> list[Pair]:
    """Device by device (by index): the count first, then each device's vendor, arch, name, driver, memory."""
    devs_a = {d["index"]: d for d in a["devices"] or []}
    devs_b = {d["index"]: d for d in b["devices"] or []}
    count = ("count", None if a["devices"] is None else len(devs_a), None if b["devices"] is None else len(devs_b))
    pairs: list[Pair] = [count]
    for index in sorted(set(devs_a) | set(devs_b)):
        da, db = devs_a.get(index), devs_b.get(index)
        if da is None or db is None:
            pairs.append((f"gpu{index}", _device_label(da), _device_label(db)))
            continue
        pairs += [(f"gpu{index}.{key}", da.get(key), db.get(key)) for key in DEVICE_ORDER]
    return pairs


def _device_label(device: DeviceDocument | None) -> str | None:
    if device is None:
        return None
    return " ".join(x for x in (device["arch"], device["name"]) if x) or "present"


def _probe_status(doc: CheckDocument) -> dict[str, object]:
    return {p["name"]: p["status"] for p in doc.get("probes") or []}


def _keyed_pairs(a: Mapping[K, object], b: Mapping[K, object]) -> list[Pair]:
    return [(str(k), a.get(k), b.get(k)) for k in sorted(set(a) | set(b), key=str)]


def _about(doc: CheckDocument, label: str) -> ReportAbout:
    host = doc.get("host") or {}
    return {
        "source": visible(label),  # a file name, as the user gave it
        "hostname": host.get("hostname"),
        "created": doc.get("created"),
        "mode": doc.get("mode"),
        "mhcdoctor_version": doc.get("mhcdoctor_version"),
    }
