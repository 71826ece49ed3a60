"""bench/1 document → the text a person reads. Formatting only: every number comes from the document."""

from __future__ import annotations

from mhcdoctor.documents.bench import BenchDocument, StepCost


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


# How each role is named beside a path, in every view (text here, the plot's legend, JSON's `roles`).
ROLE_LABELS = {
    "vllm": "vLLM's own kernels",
    "stand-in": "stand-in for vLLM's kernels",
    "torch": "torch reference (vLLM's fallback)",
    "probe": "mhcdoctor's probe kernels, not what vLLM runs; out of the per-step comparison",
    "user": "your kernels",
}


def label(path: str, role: str) -> str:
    """A path's name with what it is, for a table row or a legend: `tilelang (probe)`."""
    return f"{path} (probe)" if role == "probe" else path


def render_text(doc: BenchDocument) -> str:
    model = doc["model"]
    name = model["name"] or "custom model"
    graph = any(r["graph_ms"] is not None for r in doc["results"])
    where = f"on {doc['device']}" if doc["device"] else "on no device: nothing was timed"
    lines = [
        f"mhcdoctor bench: {name} (hidden {model['hidden_size']}, hc_mult {model['hc_mult']}) {where}"
        + (f" ({doc['device_name']})" if doc["device_name"] else ""),
        f"vLLM {doc['vllm']}: its own kernels timed as its DeepSeek-V4 model calls them"
        if doc["vllm"]
        else "vLLM is not installed: its own kernels could not be timed; stand-ins are timed instead",
    ]
    if doc["timer"] is not None:
        timer = (
            "device events"
            if doc["timer"] == "cuda-events"
            else "time.perf_counter (CPU: no device events; CPU times swing with the machine's load and say nothing "
            "of a GPU's)"
        )
        lines.append(
            f"timed with {timer}; median of repeated runs after warm-up"
            + ("; `graph ms`: the same call replayed in a CUDA graph, as vLLM serves decode" if graph else "")
            + "; each timed op's output checked against the oracle"
        )
        lines.append(peak_line(doc))
    roles = doc["roles"]
    for p in doc["paths"]:
        version = f" {p['version']}" if p.get("version") else ""
        what = ROLE_LABELS.get(roles.get(p["path"], ""), "")
        head = f"  {label(p['path'], roles.get(p['path'], ''))}{version}" + (f" [{what}]" if what else "")
        if p["status"] == "unavailable":
            lines.append(f"{head}: not run: {p['reason']}")
        else:
            lines.append(f"{head}: {p['seconds']:.1f} s" + (f" ({p['reason']})" if p["reason"] else ""))
        lines += [f"      {note}" for note in p.get("notes", [])]
    header = (
        f"{'path':<18}{'op':<20}{'tokens':>7}  {'status':<8}{'median ms':>11}{'graph ms':>10}{'bytes':>10}"
        f"{'TB/s':>8}{'of peak':>9}"
    )
    lines += ["", header, "-" * len(header)]
    for r in doc["results"]:
        status = "WRONG" if r["status"] == "fail" else r["status"]
        lines.append(
            f"{label(r['path'], r['role']):<18}{r['op']:<20}{r['tokens']:>7}  {status:<8}{_ms(r['median_ms']):>11}"
            f"{_ms(r['graph_ms']):>10}{_bytes(r['bytes']):>10}{_tb(r['tb_per_s']):>8}{_pct(r['fraction_of_peak']):>9}"
            + ("  (torch GEMM inside)" if r["torch_piece"] else "")
        )
        if r["status"] != "pass" and r["reason"]:
            lines.append(f"{'':<18}  ↳ {r['reason']}")
    lines += ["", *step_lines(doc)]
    lines += ["", f"verdict: {doc['verdict']} ({doc['seconds']:.1f} s)"]
    lines += [f"  - {problem}" for problem in doc["problems"]]
    return "\n".join(lines)


def step_lines(doc: BenchDocument) -> list[str]:
    step, name = doc["step"], doc["model"]["name"] or "this model"
    if step["plan"] is None:
        return [f"cost per decode step: not computed: {step['reason']}"]
    plan = ", ".join(f"{count} × {op}" for op, count in step["plan"].items())
    lines = [
        f"cost per decode step ({plan}; ops a path lacks run on torch; CUDA-graph times where captured; "
        "probes and your kernels left out; rows with a torch piece never best):"
    ]
    for batch in step["batches"]:
        best = batch["best"]
        tokens = batch["tokens"]
        if best is None:
            lines.append(f"  batch {tokens}: no path timed every op")
        else:
            best_by = "/".join(dict.fromkeys(best["ops"].values()))
            lines.append(f"  batch {tokens}: best here {_cost(best)} ({best_by})")
        rows = [("selected by the rules", batch["selected"])] if batch["selected"] else []
        rows += list(batch["paths"].items())
        for who, cost in rows:
            if cost is None:
                continue
            times = f", ×{cost['times_best']:.1f} the best" if cost.get("times_best") else ""
            delta = cost.get("vs_best_ms")
            sign = "+" if delta is None or delta >= 0 else "-"
            versus = f" ({sign}{_ms(abs(delta))} ms{times})" if delta is not None else ""
            lines.append(f"    {who}: {_cost(cost)} on {name} at batch {tokens}{versus}")
        for slow in batch["fused_slower"]:
            lines.append(
                f"    finding: {slow['path']}'s fused post+pre takes {_ms(slow['fused_ms'])} ms at {tokens} "
                f"tokens, its post then pre {_ms(slow['separate_ms'])} ms: the fused op costs "
                f"{_ms(slow['per_step_ms'])} ms more per decode step than the separate ops would"
            )
    return lines


def _cost(cost: StepCost) -> str:
    timing = "CUDA graph" if cost["timing"] == "cuda-graph" else "eager"
    return f"{_ms(cost['ms'])} ms per decode step ({_ms(cost['ms_per_token'])} ms per output token, {timing})"
