"""nvcc and hipcc, the compilers tilelang's JIT needs: where they are, and (not in --fast) what `--version` says.

Search order follows tilelang's env.py (`_find_cuda_home`, `_find_rocm_home`): the environment variable, then PATH,
then the default install folder, then (nvcc) the `nvidia-cuda-nvcc` wheel. `--version` runs under a short
timeout in its own process group; in --fast nothing is run, the compiler is only found.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mhcdoctor import childproc
from mhcdoctor.documents.check import Status
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.packages import distribution
from mhcdoctor.probes.rocm import rocm_roots

# Seconds allowed for `nvcc --version`: it answers in well under a second when it works.
VERSION_TIMEOUT = 10.0


def nvcc_candidates(ctx: ProbeContext) -> list[tuple[str, Path]]:
    found = [(var, Path(ctx.env[var]) / "bin" / "nvcc") for var in ("CUDA_HOME", "CUDA_PATH") if ctx.env.get(var)]
    on_path = ctx.which("nvcc")
    if on_path:
        found.append(("PATH", Path(on_path)))
    found.append(("/usr/local/cuda", ctx.path("/usr/local/cuda/bin/nvcc")))
    wheel = distribution("nvidia-cuda-nvcc", ctx.search_path)
    if wheel is not None:  # only nvidia-cuda-nvcc >= 13 ships nvcc itself (tilelang env.py)
        found.extend(("nvidia-cuda-nvcc wheel", wheel.locate(f)) for f in wheel.files() if f.endswith("bin/nvcc"))
    return found


def hipcc_candidates(ctx: ProbeContext) -> list[tuple[str, Path]]:
    found = [(via, root / "bin" / "hipcc") for via, root in rocm_roots(ctx) if via != "/opt/rocm"]
    on_path = ctx.which("hipcc")
    if on_path:
        found.append(("PATH", Path(on_path)))
    found.append(("/opt/rocm", ctx.path("/opt/rocm/bin/hipcc")))
    return found


def probe_nvcc(ctx: ProbeContext) -> ProbeResult:
    return _probe("nvcc", nvcc_candidates, ctx)


def probe_hipcc(ctx: ProbeContext) -> ProbeResult:
    return _probe("hipcc", hipcc_candidates, ctx)


def _probe(name: str, candidates: Callable[[ProbeContext], list[tuple[str, Path]]], ctx: ProbeContext) -> ProbeResult:
    searched: list[tuple[str, Path]] = []
    for via, path in candidates(ctx):  # CUDA_HOME and PATH often name the same nvcc: list it once
        if all(path != seen for _, seen in searched):
            searched.append((via, path))
    evidence = [f"looked in: {', '.join(f'{path} ({via})' for via, path in searched)}"]
    usable = [(via, path) for via, path in searched if path.is_file() and os.access(path, os.X_OK)]
    if not usable:
        return ProbeResult(
            name,
            "missing",
            {"found": False, "path": None, "version": None},
            evidence,
            "files: " + name,
            error=f"{name} not found",
        )
    via, path = usable[0]
    data: dict[str, Any] = {"found": True, "path": str(path), "via": via, "version": None}
    if ctx.fast:
        evidence.append(f"{path}: found; `{name} --version` not run in --fast mode")
        return ProbeResult(name, "ok", data, evidence, f"file: {path}")
    status, output, error = run_tool([str(path), "--version"], ctx.env, min(ctx.timeout, VERSION_TIMEOUT))
    data["version"] = parse_version(name, output)
    evidence.append(f"{path} --version: {output.strip()[-500:]}")
    return ProbeResult(name, status, data, evidence, f"run: {name} --version", error=error)


def parse_version(name: str, output: str) -> str | None:
    """`Cuda compilation tools, release 13.0, V13.0.48` -> 13.0.48; `HIP version: 6.4.43482-0f2d602` -> 6.4.43482."""
    pattern = r"\bV(\d+\.\d+(?:\.\d+)?)" if name == "nvcc" else r"HIP version:\s*(\d+\.\d+(?:\.\d+)?)"
    match = re.search(pattern, output) or re.search(r"release (\d+\.\d+)", output)
    return match.group(1) if match else None


def run_tool(argv: list[str], env: dict[str, str], timeout: float) -> tuple[Status, str, str | None]:
    """Run a small command under childproc: everything it starts (hipcc starts clang and perl) dies with it."""
    done = childproc.run(argv, env, timeout)
    shown = " ".join(argv)
    if done.status == "error":
        return "error", "", done.error
    if done.status == "timeout":
        return "timeout", "", f"`{shown}` did not finish within {timeout:g} s"
    output = done.stdout + done.stderr
    code = done.returncode
    assert code is not None
    if code < 0:
        return "crash", output, f"`{shown}` was killed by signal {-code}"
    if code != 0:
        return "error", output, f"`{shown}` exited with code {code} after {done.seconds:g} s"
    return "ok", output, None
