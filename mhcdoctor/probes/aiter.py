"""aiter: is the importable `aiter` AMD's, which version, does it carry the sqrsum race fix, which mHC API it has.

Probe `aiter` reads files only: the package folder found on the search path, the distributions that own it,
aiter/_version.py, aiter/ops/mhc.py (parsed with `ast`, never imported), jit/optCompilerConfig.json, the
installed kernel source mhc_kernels.cu and a JIT-built module_mhc.so. Probe `aiter.import` imports aiter and
aiter.ops.mhc in a child (importing aiter runs rocminfo and may start JIT builds); skipped with --fast.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from mhcdoctor.documents.check import FixState
from mhcdoctor.knowledge.aiter_releases import sqrsum_fix_from_version
from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.libraries import version_from_files
from mhcdoctor.probes.packages import find_package, normalize, owners
from mhcdoctor.probes.probe_child import run_probe_child, skipped

NAME = "aiter"
IMPORT_NAME = "aiter.import"
SOURCE = "files: aiter package, metadata, kernel source"
AMD_DIST = "amd-aiter"  # AMD's distribution; PyPI's `aiter` (async iterators, 0.13.20191203) is unrelated

# Which releases carry what: mhcdoctor.aiter_releases. Here, the installed source decides.
# aiter #3033 (commit b639cb6, 2026-05-06) fixed a race in mhc_pre_gemm_sqrsum_kernel: lanes 16-63 of a 64-lane
# warp stored row sums into other warps' rows. It adds `lane_id < mfma_m &&` to the store guard. #2533 (6f68709)
# introduced the race with the bare bounds check. Guards checked in csrc/kernels/mhc_kernels.cu at ROCm/aiter's
# tags v0.1.11 (plain `if (lane_id < mfma_m)`), v0.1.12 to v0.1.13.post1 (racy), v0.1.14-rc0 to v0.1.19 (fixed).
_RACY_GUARD = re.compile(r"if\s*\(\s*\(\s*warp_id\s*\*\s*mfma_m\s*\+\s*lane_id\s*<\s*m_oob\s*\)\s*\)")
_FIXED_GUARD = re.compile(r"lane_id\s*<\s*mfma_m\s*&&\s*\(\s*warp_id\s*\*\s*mfma_m\s*\+\s*lane_id\s*<\s*m_oob\s*\)")
_PRE_RACE_GUARD = re.compile(r"if\s*\(\s*lane_id\s*<\s*mfma_m\s*\)")


def sqrsum_fix_from_source(text: str) -> tuple[FixState, int, str] | None:
    """(state, line, what) from mhc_kernels.cu's sqrsum store guard, or None when no known guard is there."""
    for pattern, state, what in (
        (_RACY_GUARD, "absent", "racy store guard `if ((warp_id * mfma_m + lane_id < m_oob))` (before aiter #3033)"),
        (_FIXED_GUARD, "present", "fixed store guard `lane_id < mfma_m && (...)` (aiter #3033)"),
        (_PRE_RACE_GUARD, "present", "store guard `if (lane_id < mfma_m)` of v0.1.11, before the race existed"),
    ):
        match = pattern.search(text)
        if match:
            return state, text.count("\n", 0, match.start()) + 1, what  # type: ignore[return-value]
    return None


def kernel_source_candidates(package: Path, env: dict[str, str]) -> list[Path]:
    """mhc_kernels.cu where aiter's jit/core.py finds its sources: $AITER_META_DIR, aiter_meta/ (install), the root."""
    root = package.parent
    develop = (read_text(package / "install_mode") or "develop").strip() == "develop"
    folders = [root, root / "aiter_meta"] if develop else [root / "aiter_meta", root]
    if env.get("AITER_META_DIR"):
        folders.insert(0, Path(env["AITER_META_DIR"]))
    return [folder / "csrc" / "kernels" / "mhc_kernels.cu" for folder in folders]


def module_mhc_candidates(package: Path, env: dict[str, str]) -> list[Path]:
    """Where aiter's get_user_jit_dir() puts module_mhc.so: $AITER_JIT_DIR, aiter/jit/, ~/.aiter/jit."""
    folders = [Path(env["AITER_JIT_DIR"])] if env.get("AITER_JIT_DIR") else []
    folders.append(package / "jit")
    if env.get("HOME"):
        folders.append(Path(env["HOME"]) / ".aiter" / "jit")
    return [folder / "module_mhc.so" for folder in folders]


def mhc_api(text: str) -> dict[str, bool | None]:
    """From aiter/ops/mhc.py's text: does mhc_pre take norm_weight/norm_eps, is there mhc_fused_post_pre."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {"mhc_pre_norm_args": None, "has_fused_post_pre": None}
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    pre = functions.get("mhc_pre")
    params: set[str] = set()
    if pre is not None:
        args = pre.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    return {
        "mhc_pre_norm_args": {"norm_weight", "norm_eps"} <= params,
        "has_fused_post_pre": "mhc_fused_post_pre" in functions,
    }


def probe(ctx: ProbeContext) -> ProbeResult:
    package = find_package("aiter", ctx.search_path)
    if package is None:
        return ProbeResult(NAME, "missing", {"present": False}, [], SOURCE, error="nothing importable as aiter")
    evidence = [f"import aiter would load {package}"]
    owned_by = owners("aiter", package, ctx.search_path)
    names = [normalize(d.name) for d in owned_by]
    evidence += [f"{d.path}: distribution {d.name} {d.version} owns `aiter`" for d in owned_by]
    folder = package if package.is_dir() else package.parent
    config_text = read_text(folder / "jit" / "optCompilerConfig.json") if package.is_dir() else None
    layout = {
        "jit/core.py": package.is_dir() and (folder / "jit" / "core.py").is_file(),
        "ops/mhc.py": package.is_dir() and (folder / "ops" / "mhc.py").is_file(),
        "module_mhc in jit/optCompilerConfig.json": _has_module_mhc(config_text),
    }
    evidence.append("layout: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in layout.items()))
    # AMD's layout decides: PyPI's stale amd-aiter (0.1.7) is AMD's too, only without mHC.
    genuine = layout["jit/core.py"] or (AMD_DIST in names and "aiter" not in names)
    amd = next((d for d in owned_by if normalize(d.name) == AMD_DIST), None)
    dist = amd if genuine else next(iter(owned_by), None)
    version = dist.version if dist is not None else None
    if version is None and package.is_dir():
        version = version_from_files(package)
        evidence.append(f"{package / '_version.py'}: version {version}")
    data: dict[str, Any] = {
        "present": True,
        "location": str(package),
        "genuine": genuine,
        "distribution": dist.name if dist is not None else None,
        "version": version,
        "has_mhc_ops": layout["ops/mhc.py"],
        "module_mhc_config": layout["module_mhc in jit/optCompilerConfig.json"],
        "mhc_pre_norm_args": False,
        "has_fused_post_pre": False,
        "module_mhc_so": None,
    }
    if not genuine:
        data["sqrsum_fix"] = "unknown"
        data["sqrsum_fix_evidence"] = "not AMD's aiter: it has no mHC kernels"
        return ProbeResult(NAME, "ok", data, evidence, SOURCE)
    if not layout["ops/mhc.py"]:
        data["sqrsum_fix"] = "unknown"
        data["sqrsum_fix_evidence"] = f"no mHC ops: {folder / 'ops' / 'mhc.py'} does not exist"
        return ProbeResult(NAME, "ok", data, evidence, SOURCE)
    data.update(mhc_api(read_text(folder / "ops" / "mhc.py") or ""))
    data["sqrsum_fix"], data["sqrsum_fix_evidence"] = _sqrsum_fix(package, version, ctx.env, evidence)
    data["module_mhc_so"] = next((str(p) for p in module_mhc_candidates(package, ctx.env) if p.is_file()), None)
    evidence.append(f"module_mhc.so: {data['module_mhc_so'] or 'not built'}")
    return ProbeResult(NAME, "ok", data, evidence, SOURCE)


def _has_module_mhc(text: str | None) -> bool:
    if not text:
        return False
    try:
        config = json.loads(text)
    except ValueError:
        return False
    return isinstance(config, dict) and "module_mhc" in config


def _sqrsum_fix(package: Path, version: str | None, env: dict[str, str], evidence: list[str]) -> tuple[FixState, str]:
    """The installed kernel source decides first; the version only when no source says either way."""
    for source in kernel_source_candidates(package, env):
        text = read_text(source, limit=16 << 20)
        if text is None:
            continue
        found = sqrsum_fix_from_source(text)
        if found is not None:
            state, line, what = found
            return state, f"{source}:{line}: {what}"
        evidence.append(f"{source}: no known mhc_pre_gemm_sqrsum store guard; falling back to the version")
        break
    else:
        evidence.append("mhc_kernels.cu not found in aiter_meta/csrc/kernels or csrc/kernels; judging by version")
    state, rule = sqrsum_fix_from_version(version)
    return state, f"by version: {rule}"


AITER_IMPORT_CODE = """
import inspect
try:
    import aiter
except BaseException as exc:
    report(failure(exc, imported=False))
    raise SystemExit(0)
data = {"imported": True, "file": getattr(aiter, "__file__", None)}
report(data)  # kept if importing the mHC ops below hangs or crashes
try:
    from aiter.ops import mhc
except BaseException as exc:
    data.update(mhc_ops_imported=False, mhc_ops_error=failure(exc)["error"])
else:
    data["mhc_ops_imported"] = True
    data["has_fused_post_pre"] = hasattr(mhc, "mhc_fused_post_pre")
    try:
        params = inspect.signature(mhc.mhc_pre).parameters
        data["mhc_pre_norm_args"] = "norm_weight" in params and "norm_eps" in params
    except (AttributeError, TypeError, ValueError) as exc:
        data["mhc_pre_signature_error"] = failure(exc)["error"]
report(data)
"""


def probe_import(ctx: ProbeContext) -> ProbeResult:
    source = "child: import aiter, aiter.ops.mhc"
    if ctx.fast:
        return skipped(IMPORT_NAME, source)
    if find_package("aiter", ctx.search_path) is None:
        return ProbeResult(IMPORT_NAME, "missing", {"imported": False}, [], source, error="aiter is not installed")
    result = run_probe_child(IMPORT_NAME, AITER_IMPORT_CODE, ctx, source)
    if result.data.get("imported") is True:  # what each of the two imports did, for `check -v` and the bundle
        result.evidence.append(f"import aiter: ok ({result.data.get('file')})")
        if result.data.get("mhc_ops_imported") is False:
            result.evidence.append(f"from aiter.ops import mhc: {result.data.get('mhc_ops_error')}")
        elif result.data.get("mhc_ops_imported") is True:
            result.evidence.append("from aiter.ops import mhc: ok")
    return result
