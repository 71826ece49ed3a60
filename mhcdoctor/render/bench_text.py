"""bench/1 document → the text a person reads. Formatting only: every number comes from the document."""

from __future__ import annotations

from mhcdoctor.documents.bench import BenchDocument


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if value < 1 else f"{value:.2f}"


def _tb(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"  # a CPU's decode sizes reach millionths of a TB/s


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _bytes(value: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def peak_line(doc: BenchDocument) -> str:
    peak = doc["peak"]
    if peak["tb_per_s"] is None:
        return f"peak bandwidth: unknown ({peak['source']})"
    if peak["how"] == "table":
        return f"peak bandwidth: {peak['tb_per_s']:g} TB/s ({peak['device']} data sheet: {peak['source']})"
    return f"peak bandwidth: {peak['tb_per_s']:.3f} TB/s ({peak['source']}; {peak['device']} is not in the table)"


def render_text(doc: BenchDocument) -> str:
    model = doc["model"]
    name = model["name"] or "custom model"
    timer = "device events" if doc["timer"] == "cuda-events" else "time.perf_counter (CPU: no device events)"
    lines = [
        f"mhcdoctor bench: {name} (hidden {model['hidden_size']}, hc_mult {model['hc_mult']}) on {doc['device']}"
        + (f" ({doc['device_name']})" if doc["device_name"] else ""),
        f"timed with {timer}; median of repeated runs after warm-up; each timed output checked against the oracle",
        peak_line(doc),
    ]
    for p in doc["paths"]:
        version = f" {p['version']}" if p.get("version") else ""
        if p["status"] == "unavailable":
            lines.append(f"  {p['path']}: not run: {p['reason']}")
        else:
            lines.append(f"  {p['path']}{version}: {p['seconds']:.1f} s" + (f" ({p['reason']})" if p["reason"] else ""))
    header = (
        f"{'path':<14}{'op':<20}{'tokens':>7}  {'status':<8}{'median ms':>11}{'bytes':>10}{'TB/s':>8}{'of peak':>9}"
    )
    lines += ["", header, "-" * len(header)]
    for r in doc["results"]:
        status = "WRONG" if r["status"] == "fail" else r["status"]
        lines.append(
            f"{r['path']:<14}{r['op']:<20}{r['tokens']:>7}  {status:<8}{_ms(r['median_ms']):>11}"
            f"{_bytes(r['bytes']):>10}{_tb(r['tb_per_s']):>8}{_pct(r['fraction_of_peak']):>9}"
        )
        if r["status"] != "pass" and r["reason"]:
            lines.append(f"{'':<14}  ↳ {r['reason']}")
    lines += ["", *step_lines(doc)]
    lines += ["", f"verdict: {doc['verdict']} ({doc['seconds']:.1f} s)"]
    return "\n".join(lines)


def step_lines(doc: BenchDocument) -> list[str]:
    step, name = doc["step"], doc["model"]["name"] or "this model"
    if step["plan"] is None:
        return [f"cost per decode step: not computed: {step['reason']}"]
    plan = ", ".join(f"{count} × {op}" for op, count in step["plan"].items())
    lines = [f"cost per decode step ({plan}; ops a path lacks run on torch):"]
    for batch in step["batches"]:
        best = batch["best"]
        if best is None:
            lines.append(f"  batch {batch['tokens']}: no path timed every op")
            continue
        best_by = "/".join(dict.fromkeys(best["ops"].values()))
        lines.append(f"  batch {batch['tokens']}: best here {_ms(best['ms'])} ms ({best_by})")
        rows = [("selected by the rules", batch["selected"])] if batch["selected"] else []
        rows += list(batch["paths"].items())
        for label, cost in rows:
            if cost is None:
                continue
            times = f", ×{cost['times_best']:.1f} the best" if cost.get("times_best") else ""
            lines.append(
                f"    {label}: {_ms(cost['ms'])} ms per decode step on {name} at batch {batch['tokens']} "
                f"(+{_ms(cost['vs_best_ms'])} ms{times})"
            )
    return lines
