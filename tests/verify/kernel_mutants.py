"""Planted bugs in this project's OWN GPU kernels (mhcdoctor/kernels/tilelang_path.py and triton_path.py).

Each mutation is a named, minimal textual edit of one expression in a kernel's source. `mutant_tree` copies the
mhcdoctor package into a folder, applies the edit there (the target text must occur exactly once, so a refactor
of the kernel makes the mutation fail loudly instead of silently becoming a no-op) and returns the folder: with it
first on PYTHONPATH, `python -m mhcdoctor verify` and its children import the mutated kernel, and nothing in the
production code knows about mutants.

The mutations, and where each must show at verify's default token counts (1, 7, 80):
- tilelang sqrsum-tile-offset: pre_fuse reads the sum of squares at a row-tile offset, so every odd 16-row tile
  of the GEMM takes the even tile's sums before it (the aiter sqrsum race, #3033, in this kernel): rows 16-31
  and 48-63 are wrong at 80 tokens; 1 and 7 tokens are one tile and pass.
- tilelang dropped-eps: the RMS epsilon dropped, so the all-zero token row 3 gets rsqrt(0) = inf, 0·inf = NaN.
- tilelang comb-transposed: mhc_post reads comb[t, j, i] instead of comb[t, i, j]; wrong at every count.
- tilelang sinkhorn-short: one Sinkhorn iteration short; comb_mix off by more than its tolerance at 80 tokens.
- triton comb-transposed: the same transposition in the triton mhc_post (its comb load swaps the two axes).
- triton sqrsum-tile-offset: hc_head's mix uses its own row but the sum of squares of the row a tile offset
  away (odd 16-row tiles read the even tile before them): wrong at 80 tokens only.
- triton dropped-eps: hc_head's RMS epsilon dropped: NaN in the all-zero token row 3.
And one in the torch reference (torch:dropped-eps), which the CPU suite uses to prove the mechanism itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import doctor

import mhcdoctor

PACKAGE = Path(mhcdoctor.__file__).resolve().parent


@dataclass(frozen=True)
class Mutation:
    name: str  # "tilelang:sqrsum-tile-offset"
    module: str  # file under mhcdoctor/
    old: str  # text that must occur exactly once in that file
    new: str

    @property
    def path(self) -> str:
        """The verify path the mutated module implements."""
        return self.name.split(":", 1)[0]


MUTATIONS: dict[str, Mutation] = {
    m.name: m
    for m in (
        Mutation(
            "tilelang:sqrsum-tile-offset",
            "kernels/tilelang_path.py",
            "rs[0] = T.rsqrt(sqrsum[t] / k + rms_eps)",
            "rs[0] = T.rsqrt(sqrsum[t // 32 * 32 + t % 16] / k + rms_eps)",
        ),
        Mutation(
            "tilelang:dropped-eps",
            "kernels/tilelang_path.py",
            "rs[0] = T.rsqrt(sqrsum[t] / k + rms_eps)",
            "rs[0] = T.rsqrt(sqrsum[t] / k)",
        ),
        Mutation(
            "tilelang:comb-transposed",
            "kernels/tilelang_path.py",
            "acc[hh] += comb[t, i, j] * T.cast(",
            "acc[hh] += comb[t, j, i] * T.cast(",
        ),
        Mutation(
            "tilelang:sinkhorn-short",
            "kernels/tilelang_path.py",
            "for _ in T.serial(repeat - 1):",
            "for _ in T.serial(repeat - 2):",
        ),
        Mutation(
            "triton:comb-transposed",
            "kernels/triton_path.py",
            "comb_ptr + t * HC * HC + streams[:, None] * HC + streams[None, :],",
            "comb_ptr + t * HC * HC + streams[None, :] * HC + streams[:, None],",
        ),
        Mutation(
            "triton:sqrsum-tile-offset",
            "kernels/triton_path.py",
            "            sq += x * x\n",
            "            xo = tl.load(res_ptr + (t // 32 * 32 + t % 16) * K + ks, mask=k_ok, other=0.0)\n"
            "            xo = xo.to(tl.float32)\n"
            "            sq += xo * xo\n",
        ),
        Mutation(
            "triton:dropped-eps",
            "kernels/triton_path.py",
            "inv_rms = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / K + rms_eps)",
            "inv_rms = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / K)",
        ),
        # Not a GPU kernel: the torch reference, so that the CPU suite can show that verify run from a mutant tree
        # really runs the mutated code (tests/verify/test_kernel_mutants.py).
        Mutation(
            "torch:dropped-eps",
            "reference.py",
            "return mixes_raw * torch.rsqrt(sqrsum / numel + rms_eps)",
            "return mixes_raw * torch.rsqrt(sqrsum / numel)",
        ),
    )
}
GPU_MUTATIONS = tuple(name for name in MUTATIONS if not name.startswith("torch:"))


def mutate(source: str, mutation: Mutation) -> str:
    """`source` with the mutation applied; AssertionError unless its target occurs exactly once."""
    count = source.count(mutation.old)
    assert count == 1, (
        f"mutation {mutation.name}: {mutation.old.strip()!r} occurs {count} times in {mutation.module}, not once "
        "(the kernel changed: update the mutation so that it still plants its bug)"
    )
    return source.replace(mutation.old, mutation.new)


def mutant_tree(root: Path, name: str | None) -> Path:
    """A copy of the mhcdoctor package under `root` with mutation `name` applied (None: unmutated); the folder to
    put first on PYTHONPATH."""
    shutil.copytree(PACKAGE, root / "mhcdoctor", ignore=shutil.ignore_patterns("__pycache__"))
    if name is not None:
        mutation = MUTATIONS[name]
        target = root / "mhcdoctor" / mutation.module
        target.write_text(mutate(target.read_text(encoding="utf-8"), mutation), encoding="utf-8")
    return root


def start_verify(tree: Path, *args: str) -> subprocess.Popen[str]:
    """`python -m mhcdoctor verify --json ARGS` with `tree` first on the search path, so the parent and its children
    import the package there. JIT caches go to private folders under `tree`: runs started at once never share one."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH", "")) if p)
    env["TILELANG_CACHE_DIR"] = str(tree / "tilelang-cache")
    env["TRITON_CACHE_DIR"] = str(tree / "triton-cache")
    return subprocess.Popen(
        doctor.argv("verify", "--json", *args),
        cwd=tree,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_verify(proc: subprocess.Popen[str], timeout: float) -> tuple[int, dict[str, Any], str]:
    """The exit code, the verify/1 document and stderr of a run `start_verify` began."""
    out, err = proc.communicate(timeout=timeout)
    try:
        doc = json.loads(out)
    except ValueError:
        raise AssertionError(
            f"verify printed no JSON document (exit {proc.returncode}); stderr:\n{err[-3000:]}"
        ) from None
    return proc.returncode, doc, err


def variants(folder: Path, prefix: str) -> dict[str | None, ModuleType]:
    """The unmutated kernel module `prefix` ("tilelang", "triton") and each of its GPU mutants, loaded in-process
    by mutation name (None: unmutated). Each is written to a file under `folder` first: tilelang and triton read a
    kernel's source from its file."""
    module = f"kernels/{prefix}_path.py"
    source = (PACKAGE / module).read_text(encoding="utf-8")
    loaded: dict[str | None, ModuleType] = {}
    for i, name in enumerate([None, *(n for n in GPU_MUTATIONS if n.startswith(prefix + ":"))]):
        path = folder / f"{prefix}_variant{i}.py"
        path.write_text(source if name is None else mutate(source, MUTATIONS[name]), encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"mhcdoctor_mutant_{prefix}_{i}", path)
        assert spec is not None and spec.loader is not None
        loaded[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded[name])
    return loaded


def interpreted_triton(folder: str) -> dict[str, list[tuple[str, int]]]:
    """Run the unmutated triton kernels and each triton mutant through verify's judging on the CPU (hidden 256,
    tokens 1, 7, 80); the (op, tokens) cases that did not pass, by mutation ("unmutated" for the original).
    Needs TRITON_INTERPRET=1 set before triton is first imported."""
    from mhcdoctor.kernels import PathImpl
    from mhcdoctor.models import ModelConfig
    from mhcdoctor.verify import cases, worker
    from mhcdoctor.verify.rows import is_case_row

    params = cases.Params.from_model(ModelConfig(None, 256))
    got: dict[str, list[tuple[str, int]]] = {}
    for name, module in variants(Path(folder), "triton").items():
        kernels = module._build()
        impl = PathImpl(name="triton", ops={"mhc_post": kernels.mhc_post, "hc_head": kernels.hc_head})
        rows = worker.run_path(impl, ["mhc_post", "hc_head"], [1, 7, 80], params, "cpu")
        got[name or "unmutated"] = []
        for r in rows:
            assert is_case_row(r), r
            if r["status"] != "pass":
                got[name or "unmutated"].append((r["op"], r["tokens"]))
    return got
