"""bench/1 document → a PNG: achieved bandwidth against tokens (both axes logarithmic), one panel per op, one line
per path in the same colour in every panel, the peak as a dashed line. matplotlib is an optional extra
(`pip install 'mhcdoctor[plot]'`)."""

from __future__ import annotations

import importlib.util
import io

from mhcdoctor.documents.bench import BenchDocument, Plot
from mhcdoctor.documents.vocabulary import OPS
from mhcdoctor.errors import InputError
from mhcdoctor.outfiles import write_file

MISSING = "--plot needs matplotlib, which is not installed: pip install 'mhcdoctor[plot]' (or pip install matplotlib)"


def require_matplotlib() -> None:
    """Bad input, before anything is timed, when the plot cannot be drawn."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(MISSING)


def plot(doc: BenchDocument, filename: str) -> Plot:
    """Draw the figure into `filename`; return what it holds: {"file", "panels": {op: [line labels]}}."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [r for r in doc["results"] if r["tb_per_s"] is not None]
    ops: list[str] = [op for op in OPS if any(r["op"] == op for r in timed)] or ["nothing timed"]
    paths = list(dict.fromkeys(r["path"] for r in timed))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {path: cycle[i % len(cycle)] for i, path in enumerate(paths)}  # one colour per path in every panel
    peak = doc["peak"]["tb_per_s"]
    roles = doc["roles"]
    cols = min(2, len(ops))
    rows = -(-len(ops) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.2 * rows), squeeze=False, sharey=True)
    panels: dict[str, list[str]] = {}
    for ax in axes.flat[len(ops) :]:
        ax.set_visible(False)
    for ax, op in zip(axes.flat, ops, strict=False):
        for path in paths:
            points = sorted((r["tokens"], r["tb_per_s"]) for r in timed if r["op"] == op and r["path"] == path)
            if points:
                probe = roles.get(path) == "probe"  # mhcdoctor's own kernels: dotted, and named so
                ax.plot(
                    [t for t, _ in points], [b for _, b in points], marker="o", color=colors[path],
                    label=f"{path} (probe, not vLLM's)" if probe else path, linestyle=":" if probe else "-",
                )  # fmt: skip
        if peak:
            ax.axhline(peak, linestyle="--", color="black", label=f"peak {peak:.3g} TB/s ({doc['peak']['how']})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # decode sizes reach thousandths of a TB/s, prefill most of the peak
        ax.set_title(op)
        ax.set_xlabel("tokens")
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_lines():
            ax.legend(fontsize="small")
        panels[op] = [str(line.get_label()) for line in ax.get_lines()]
    for row in axes:
        row[0].set_ylabel("achieved TB/s (byte model: docs/bench.md)")
    model = doc["model"]["name"] or f"hidden {doc['model']['hidden_size']}"
    fig.suptitle(f"mHC ops on {doc['device_name'] or doc['device'] or 'no device'}: {model}")
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    write_file(filename, png.getvalue(), "--plot", replace=True)  # never through a link, never a cut file
    return {"file": filename, "panels": panels}
