"""What mhcdoctor's vLLM plugin costs: off (per process), on (per eager call), at CUDA-graph replay (must be zero).

    python bench/vllm_plugin_bench.py [--runs 7] [--kernels FOLDER] [--out results.json]

- off: a fresh interpreter imports mhcdoctor.vllm_plugin and calls register() with MHCDOCTOR_VLLM unset (what vLLM
  does in each process), against one that only starts; and register() itself, in-process, per call.
- on, per eager call: a recorded call (its key seen already, as in serving) against the same function unwrapped,
  on a small CPU tensor: the wrapper's own cost.
- with --kernels (a folder tests/bench/vllm_fixture.py built from a vLLM wheel) and a CUDA GPU: vLLM's own tilelang
  kernels under the plugin, eager (records per op and bucket, results bit-identical to the unwrapped kernel, time
  per call on and off) and under CUDA-graph capture and replay (the capture is recorded as graph=capture; replays
  call the recorder zero times and take the time of a graph captured without the plugin).
Each number is the median of --runs repeats; the JSON holds every repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def off_per_process(runs: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("MHCDOCTOR_VLLM", "MHCDOCTOR_VLLM_DIR")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    code = "import mhcdoctor.vllm_plugin as p; p.register()"

    def timed(source: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", source], env=env, check=True)
        return time.perf_counter() - start

    bare = [timed("pass") for _ in range(runs)]
    plugin = [timed(code) for _ in range(runs)]
    import mhcdoctor.vllm_plugin as plugin_module

    os.environ.pop("MHCDOCTOR_VLLM", None)
    calls = 200_000
    per_call = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            plugin_module.register()
        per_call.append((time.perf_counter() - start) / calls * 1e9)
    return {
        "process_seconds_bare": bare,
        "process_seconds_with_plugin": plugin,
        "added_ms_per_process": (statistics.median(plugin) - statistics.median(bare)) * 1e3,
        "register_off_ns_per_call": per_call,
        "register_off_ns_median": statistics.median(per_call),
    }


def _per_call_ns(fn: Any, args: tuple[Any, ...], calls: int, sync: Any = None) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    if sync is not None:
        sync()
    return (time.perf_counter() - start) / calls * 1e9


def on_per_call(runs: int) -> dict[str, Any]:
    import torch

    from mhcdoctor.vllm_plugin import hooks

    hooks.install("observe")

    def mhc_post_torch(x: Any, residual: Any, post: Any, comb: Any) -> Any:
        return x

    wrapped = hooks.observe(mhc_post_torch, "mhc_post", "torch", "mhc_post_torch")
    args = (torch.zeros(4, 8), torch.zeros(4, 4, 8), torch.zeros(4, 4, 1), torch.zeros(4, 4, 4))
    wrapped(*args)  # its key is seen: what every later call of this bucket costs
    calls = 100_000
    raw = [_per_call_ns(mhc_post_torch, args, calls) for _ in range(runs)]
    on = [_per_call_ns(wrapped, args, calls) for _ in range(runs)]
    return {
        "raw_ns_per_call": raw,
        "observed_ns_per_call": on,
        "added_ns_per_call": statistics.median(on) - statistics.median(raw),
    }


# vLLM's function name -> the op; the inputs are verify's (mhcdoctor/verify/cases.py: vLLM's argument order).
OPS = {
    "mhc_pre_tilelang": "mhc_pre",
    "mhc_post_tilelang": "mhc_post",
    "mhc_fused_post_pre_tilelang": "mhc_fused_post_pre",
    "hc_head_fused_kernel_tilelang": "hc_head",
}


def _inputs(name: str, tokens: int) -> tuple[Any, ...]:
    from mhcdoctor.models import BUILTIN_MODELS
    from mhcdoctor.verify.cases import Params, make_inputs, scalar_args

    op = OPS[name]
    params = Params.from_model(BUILTIN_MODELS["deepseek-v4-flash"])  # hidden 4096, hc_mult 4
    tensors = make_inputs(op, tokens, params, seed=tokens, device="cuda")
    return (*tensors.values(), *scalar_args(op, params).values())


def _same(a: Any, b: Any) -> bool:
    import torch

    if isinstance(a, torch.Tensor):
        return bool(torch.equal(a, b))
    return all(_same(x, y) for x, y in zip(a, b, strict=True))


def gpu(kernels: str, runs: int, result: dict[str, Any]) -> None:
    """Fills `result` as it goes: what was measured before a failure is kept."""
    import torch

    sys.path.insert(0, kernels)
    from mhcdoctor.vllm_plugin import hooks

    hooks.install("observe")
    recorder = hooks.RECORDER
    assert recorder is not None
    from vllm.model_executor.kernels.mhc import tilelang as tl  # imported after the hook: wrapped as it loads

    names = tuple(OPS)
    result.update(device=torch.cuda.get_device_name(), wrapped={}, eager={}, graph={})
    for name in names:
        result["wrapped"][name] = bool(getattr(getattr(tl, name), hooks.MARKER, False))
    for tokens in (1, 20, 1024):
        for name in names:
            fn = getattr(tl, name)
            args = _inputs(name, tokens)
            out, raw = fn(*args), fn.__wrapped__(*args)
            result["eager"][f"{name}@{tokens}"] = {"bit_identical": _same(out, raw)}
    sync = torch.cuda.synchronize
    for name in names:
        fn = getattr(tl, name)
        args = _inputs(name, 20)
        on = [_per_call_ns(fn, args, 200, sync) for _ in range(runs)]
        raw = [_per_call_ns(fn.__wrapped__, args, 200, sync) for _ in range(runs)]
        result["eager"][f"{name}@20"].update(
            observed_us=[v / 1e3 for v in on],
            raw_us=[v / 1e3 for v in raw],
            added_us=(statistics.median(on) - statistics.median(raw)) / 1e3,
        )
    calls = {"n": 0}
    seen_call = recorder.seen_call

    def counting(*args: Any, **kwargs: Any) -> None:
        calls["n"] += 1
        seen_call(*args, **kwargs)

    recorder.seen_call = counting  # type: ignore[method-assign]
    for name in names:
        fn = getattr(tl, name)
        args = _inputs(name, 8)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # JIT and warm-up before capture, as vLLM does
            fn(*args)
            fn.__wrapped__(*args)
        torch.cuda.current_stream().wait_stream(stream)
        sync()
        graphs = {}
        before = calls["n"]
        for label, f in (("observed", fn), ("raw", fn.__wrapped__)):
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                f(*args)
            graphs[label] = graph
        captured = calls["n"] - before
        capture_records = [r for r in recorder.records if r.kernel == name and r.graph == "capture"]
        before = calls["n"]
        replay: dict[str, list[float]] = {"observed": [], "raw": []}
        for _ in range(runs):
            for label, graph in graphs.items():
                sync()
                start = time.perf_counter()
                for _ in range(500):
                    graph.replay()
                sync()
                replay[label].append((time.perf_counter() - start) / 500 * 1e6)
        result["graph"][name] = {
            "recorder_calls_during_capture": captured,
            "capture_records": [r.line() for r in capture_records],
            "recorder_calls_during_replays": calls["n"] - before,
            "replays": 500 * runs * 2,
            "replay_us_observed": replay["observed"],
            "replay_us_raw": replay["raw"],
            "replay_added_us": statistics.median(replay["observed"]) - statistics.median(replay["raw"]),
        }
    result["records"] = [r.line() for r in recorder.records]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--kernels", help="a kernel folder built by tests/bench/vllm_fixture.py (GPU part)")
    parser.add_argument("--out", help="write every repeat as JSON here")
    parser.add_argument("--skip-off", action="store_true", help="leave out the per-process measurement")
    options = parser.parse_args()
    results: dict[str, Any] = {"python": sys.version.split()[0], "runs": options.runs}
    if not options.skip_off:
        results["off"] = off_per_process(options.runs)
        print(
            f"off: +{results['off']['added_ms_per_process']:.1f} ms per process (import and register), "
            f"register() {results['off']['register_off_ns_median']:.0f} ns per call"
        )
    results["on"] = on_per_call(options.runs)
    print(f"on: +{results['on']['added_ns_per_call']:.0f} ns per recorded eager call (wrapper, key already seen)")
    if options.kernels:
        import torch

        if torch.cuda.is_available():
            results["gpu"] = {}
            try:
                gpu(options.kernels, options.runs, results["gpu"])
            except Exception:  # keep what was measured, say where it stopped
                results["gpu"]["error"] = traceback.format_exc()
                print(results["gpu"]["error"], file=sys.stderr)
                if options.out:
                    Path(options.out).write_text(json.dumps(results, indent=1) + "\n")
                return 1
            for name, row in results["gpu"]["graph"].items():
                eager = results["gpu"]["eager"][f"{name}@20"]
                print(
                    f"{name}: eager +{eager['added_us']:.2f} us/call (bit-identical: "
                    f"{all(v['bit_identical'] for k, v in results['gpu']['eager'].items() if k.startswith(name))}); "
                    f"capture recorded {len(row['capture_records'])}; recorder calls in {row['replays']} replays: "
                    f"{row['recorder_calls_during_replays']}; replay +{row['replay_added_us']:.3f} us"
                )
            print("\n".join(results["gpu"]["records"]))
        else:
            print("--kernels: no CUDA GPU here, GPU part skipped")
    if options.out:
        Path(options.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
