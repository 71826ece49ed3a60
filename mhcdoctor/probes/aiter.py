"""aiter: is the importable `aiter` AMD's, which version, does it carry the sqrsum race fix, which mHC API it has.

Probe `aiter` reads files only: the package folder found on the search path, the distributions that own it,
aiter/_version.py, aiter/ops/mhc.py (parsed with `ast`, never imported), jit/optCompilerConfig.json, the
installed kernel source mhc_kernels.cu and a JIT-built module_mhc.so. Probe `aiter.import` imports aiter and
aiter.ops.mhc in a child (importing aiter runs rocminfo and may start JIT builds); skipped with --fast.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from mhcdoctor.documents.check import FixState
from mhcdoctor.knowledge import aiter_code, aiter_releases
from mhcdoctor.knowledge.aiter_releases import fix_states_from_version
from mhcdoctor.probes.base import ProbeResult, read_text
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.probes.files import is_regular
from mhcdoctor.probes.libraries import version_from_files
from mhcdoctor.probes.packages import find_package, normalize, owners
from mhcdoctor.probes.probe_child import run_probe_child, skipped

NAME = "aiter"
IMPORT_NAME = "aiter.import"
SOURCE = "files: aiter package, metadata, kernel source"
AMD_DIST = "amd-aiter"  # AMD's distribution; PyPI's `aiter` (async iterators, 0.13.20191203) is unrelated

# Which releases carry what: mhcdoctor.knowledge. Here, the installed source decides: each fix of aiter_code by its
# content signature in mhc_kernels.cu (the headers it includes hold none: each fix commit changed mhc_kernels.cu
# alone) or, for an API vLLM calls, in aiter/ops/mhc.py; the version only where no source is installed.
KERNEL_READ_LIMIT = 4 << 20  # a real mhc_kernels.cu is about 120 kB (v0.1.20); a bigger file is read up to this
KERNEL_FIXES = tuple(fix for fix in aiter_code.FIXES if fix.file == aiter_code.KERNELS)


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
    ops_path = folder / "ops" / "mhc.py"
    ops_text = read_text(ops_path)  # a real one is 23 kB (v0.1.20); read up to read_text's bound, as before
    data.update(mhc_api(ops_text or ""))
    states, told = code_states(package, version, ctx.env, evidence)
    _ops_states(ops_path, ops_text, version, states, told, evidence)
    data["sqrsum_fix"], data["sqrsum_fix_evidence"] = states.pop("sqrsum"), told.pop("sqrsum")
    data["fixes"], data["fix_evidence"] = states, told
    data["module_mhc_so"] = next((str(p) for p in module_mhc_candidates(package, ctx.env) if p.is_file()), None)
    evidence.append(f"module_mhc.so: {data['module_mhc_so'] or 'not built'}")
    # the installed file decides (vLLM 0.32+ imports it at the call, _aiter_ops.py:4518 in 0.32.0); the rules fall
    # back to the version only where it could not be stat'ed (None)
    seam = folder.parent / aiter_releases.SEAM_RMSNORM
    data["has_seam_rmsnorm"] = is_regular(seam)
    evidence.append(f"{seam}: {({True: 'present', False: 'absent'}).get(data['has_seam_rmsnorm'], 'not readable')}")
    return ProbeResult(NAME, "ok", data, evidence, SOURCE)


def _has_module_mhc(text: str | None) -> bool:
    if not text:
        return False
    try:
        config = json.loads(text)
    except ValueError:
        return False
    return isinstance(config, dict) and "module_mhc" in config


def code_states(
    package: Path, version: str | None, env: dict[str, str], evidence: list[str]
) -> tuple[dict[str, FixState], dict[str, str]]:
    """Per fix of aiter_code.FIXES in mhc_kernels.cu: (state, how it was told), from the first mhc_kernels.cu aiter
    would compile; by the version label only when none is installed."""
    for source in kernel_source_candidates(package, env):
        text = read_text(source, limit=KERNEL_READ_LIMIT)
        if text is not None:
            return _from_source(source, aiter_code.Normalised(text), evidence)
    evidence.append("mhc_kernels.cu not found in aiter_meta/csrc/kernels or csrc/kernels; judging by version")
    states: dict[str, FixState] = {}
    told: dict[str, str] = {}
    for fix_id, (states[fix_id], rule) in fix_states_from_version(version).items():
        if aiter_code.BY_ID[fix_id].file == aiter_code.KERNELS:
            told[fix_id] = f"by version: {rule}"
        else:
            del states[fix_id]
    return states, told


def _from_source(
    source: Path, code: aiter_code.Normalised, evidence: list[str]
) -> tuple[dict[str, FixState], dict[str, str]]:
    states: dict[str, FixState] = {}
    told: dict[str, str] = {}
    found_commit: set[str] = set()
    for fix in KERNEL_FIXES:
        found = aiter_code.tell(fix, code)
        if found is None:
            states[fix.id] = "unknown"
            told[fix.id] = f"{source}: no known form of the code aiter #{fix.pr} is about (new or changed code)"
            evidence.append(told[fix.id])
            continue
        states[fix.id], told[fix.id] = found.state, f"{source}:{found.line}: {found.what}"
        if found.at_commit:
            found_commit.add(fix.id)
    for fix_id, why in aiter_code.fill_by_ancestry(states, found_commit).items():
        told[fix_id] = f"{source}: by git ancestry: {why}"
    return states, told


def _ops_states(
    path: Path,
    text: str | None,
    version: str | None,
    states: dict[str, FixState],
    told: dict[str, str],
    evidence: list[str],
) -> None:
    """The fixes of aiter/ops/mhc.py's API (the Python vLLM imports), told by that installed file."""
    code = aiter_code.Normalised(text) if text is not None else None
    for fix in aiter_code.FIXES:
        if fix.file == aiter_code.KERNELS:
            continue
        found = aiter_code.tell(fix, code) if code is not None else None
        if found is not None:
            states[fix.id], told[fix.id] = found.state, f"{path}:{found.line}: {found.what}"
        elif code is None:
            states[fix.id], rule = aiter_code.state_from_version(version, fix.id)
            told[fix.id] = f"by version: {rule}"
        else:
            states[fix.id] = "unknown"
            told[fix.id] = f"{path}: no known form of the code aiter #{fix.pr} is about (new or changed code)"
            evidence.append(told[fix.id])


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
