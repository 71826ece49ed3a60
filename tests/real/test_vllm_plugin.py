"""mhcdoctor's vLLM plugin inside real vLLM releases (0.25.0, 0.30.0, 0.34.0), on the CPU.

Each release is `pip install --no-deps vllm==X` into the test cache (conftest.install), beside the packages its
import of layers/mhc.py needs (IMPORT_NEEDS, each cached the same way: mostly pure Python; pydantic-core, tokenizers,
xgrammar, llguidance and apache-tvm-ffi bring binaries) and this venv's CPU torch.
A child (vllm_plugin_child.py) lets vLLM load its general plugins through `vllm.plugins.load_general_plugins()`,
which finds the entry point of the installed mhcdoctor distribution, then calls the real CustomOps; once without
the plugin on, once with it. What it adds to CI: 2.2 GB of cache (the three vLLM releases unpacked: 628, 801 and
547 MB; IMPORT_NEEDS, shared by the three and tests/fleet/test_vllm_plugin_ray.py: 269 MB), several minutes the
first time (46 pip installs), then about 80 s for the three tests (six vLLM imports) on two cores; the platform
tests below (vllm_platform_child.py: forward_hip on ROCm, forward_cpu) about 70 s more (eleven imports).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import doctor
import fakes
import jsonschema
import pytest
from vllm_wheels import IMPORT_NEEDS

from mhcdoctor.vllm_plugin.startup import WRONG_RESULTS
from mhcdoctor.vllmlog.observed import bucket

# One xdist worker runs the real-vLLM children in turn: each imports a whole vLLM, and several at once on two cores
# pushed other tests' 20 s import limits over (tests/probes/test_run.py, tests/real/test_real_packages.py).
pytestmark = [pytest.mark.real, pytest.mark.slow, pytest.mark.xdist_group("vllm-wheels")]

HERE = Path(__file__).parent
REPO = HERE.parents[1]
RELEASES = ("0.25.0", "0.30.0", "0.34.0")
# The torch paths the child's calls take: forward_native, and forward_hip's fallback to it (no aiter, no tilelang).
EXPECTED = {
    ("mhc_pre", "torch", "17-64", "MHCPreOp.forward_native"),
    ("mhc_pre", "torch", "1", "MHCPreOp.forward_native"),
    ("mhc_post", "torch", "17-64", "MHCPostOp.forward_native"),
    ("mhc_post", "torch", "1", "MHCPostOp.forward_native"),
    ("mhc_fused_post_pre", "torch", "17-64", "MHCFusedPostPreOp.forward_native"),
    ("mhc_fused_post_pre", "torch", "1", "MHCFusedPostPreOp.forward_native"),
}


def _run(installed, release: str, tmp_path: Path, **env: str) -> tuple[dict, str]:
    folders = [installed(f"vllm=={release}"), *(installed(spec) for spec in IMPORT_NEEDS)]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("MHCDOCTOR_", "VLLM_", "PYTHONPATH"))}
    child_env.update(env, HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(str(f) for f in folders), NO_COLOR="1")
    child_env["VLLM_CONFIGURE_LOGGING"] = "1"
    done = subprocess.run(
        [sys.executable, str(HERE / "vllm_plugin_child.py")],
        env=child_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stdout + done.stderr


@pytest.mark.parametrize("release", RELEASES)
def test_observe_records_the_torch_paths_the_real_custom_ops_ran(installed, release, tmp_path):
    off, output = _run(installed, release, tmp_path)
    assert off["vllm"] == release
    assert (off["patched"], off["finder"], off["records"]) == (False, False, [])
    assert "mhcdoctor" not in output
    folder = tmp_path / "observed"
    report, output = _run(installed, release, tmp_path, MHCDOCTOR_VLLM="observe", MHCDOCTOR_VLLM_DIR=str(folder))
    assert report["flags"] == {"HAS_TILELANG_MHC": False, "HAS_AITER_MHC": False}  # vLLM's own, on this CPU
    assert report["patched"] and report["finder"]
    assert report["results"] == off["results"]  # every output bit-identical to vLLM's without the plugin
    seen = {tuple(r.split()[1:5]) for r in report["records"]}
    assert seen == {(f"op={o}", f"path={p}", f"tokens={t}", f"kernel={k}") for o, p, t, k in EXPECTED}
    # the fused op's own post and pre (mhc_post_torch, mhc_pre_torch) run inside it: no record of their own
    assert all(r.endswith("graph=eager") for r in report["records"])
    assert report["startup"].startswith("mhcdoctor check --fast for this model (hidden 256, hc_mult 4; rules ")
    (written,) = folder.glob("mhcdoctor-observed-*.json")
    document = json.loads(written.read_text())
    jsonschema.validate(document, json.loads((REPO / "mhcdoctor/schemas/observed.schema.json").read_text()))
    assert document["schema"] == "mhcdoctor.observed/1" and document["vllm"] == release
    assert len(document["records"]) == len(EXPECTED) and document["startup"] == report["startup"]
    # vLLM's logger wrote the lines; `mhcdoctor log` reads them back as observed
    (tmp_path / "vllm.log").write_text(output)
    log = json.loads(doctor.run("log", str(tmp_path / "vllm.log"), "--json").stdout)
    for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre"):
        assert (log["ops"][op]["path"], log["ops"][op]["certain"]) == ("torch", True), op
    assert {e["kind"] for e in log["evidence"]} == {"observed"}
    assert log["ops"]["hc_head"]["path"] == "unknown"


# --- forward_hip and forward_cpu inside the real releases, against `mhcdoctor explain` -----------------------------
# vllm_platform_child.py makes each release's own code choose ROCm (a stand-in amdsmi) or its CpuPlatform
# (VLLM_TARGET_DEVICE=cpu), then calls every CustomOp through its dispatch at the model's shape and two that leave
# aiter's gate (hidden 640; hc_mult 2). One child per machine and release: a layers/mhc.py computes its flags once
# per process, and custom_op.py binds the platform at import. CPU: 0.30 and 0.34 only, as 0.25 has no forward_cpu and
# no DeepSeek-V4 model for the CPU (explain: vllm-no-platform-model). Cost: eleven more vLLM imports, about 70 s.
HIDDEN = 2048  # a multiple of 256 where the model folds no RMSNorm into mhc_pre (explain's "aiter folds it" gate)
SHAPES = {"model": (HIDDEN, 4), "hidden640": (640, 4), "hc2": (HIDDEN, 2)}  # the child's labels: (hidden, hc_mult)


class Gpu(NamedTuple):
    arch: str
    target: int  # kfd's gfx_target_version
    aiter: tuple[str, str, bool, bool]  # fakes.computing_aiter's version, kernel, norm_args, fused
    tilelang: str | None


# MI300X with PyPI's aiter 0.1.12 (its racy sqrsum store, aiter #3033; no norm arguments, no fused op) and no
# tilelang: check --fast fails it with aiter-sqrsum-race, a wrong-results finding. MI355X with aiter 0.1.16 (fixed)
# and a tilelang: no wrong-results finding for the model's shape in any of the three releases.
MACHINES = {
    "mi300x": Gpu("gfx942", 90402, ("0.1.12", "racy", False, False), None),
    "mi355x": Gpu("gfx950", 90500, ("0.1.16", "fixed", True, True), "0.1.12"),
}


def _platform_run(installed, release: str, tmp_path: Path, scenario: str, machine: str | None, mode: str):
    """The child on `machine` (MACHINES, for rocm): (its report or None, stdout + stderr, return code)."""
    site, root = fakes.site(tmp_path / machine if machine else tmp_path), tmp_path / "root"
    env = {"MHCDOCTOR_VLLM": mode, "MHCDOCTOR_SYSROOT": str(root)}
    root.mkdir(exist_ok=True)
    if scenario == "rocm":
        gpu = MACHINES[machine or ""]
        fakes.amdsmi(site, gpu.arch)
        fakes.kfd(root, [0, gpu.target])  # what the plugin's check --fast reads of the GPUs
        fakes.computing_aiter(site, *gpu.aiter)
        if gpu.tilelang:  # imports and nothing more: on a CPU a tilelang kernel cannot be built anyway
            fakes.library(site, "tilelang", gpu.tilelang)
    else:
        env["VLLM_TARGET_DEVICE"] = "cpu"
    folders = [site, installed(f"vllm=={release}"), *(installed(spec) for spec in IMPORT_NEEDS)]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("MHCDOCTOR_", "VLLM_", "PYTHONPATH"))}
    child_env.update(env, HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(str(f) for f in folders), NO_COLOR="1")
    child_env["VLLM_CONFIGURE_LOGGING"] = "1"
    done = subprocess.run(
        [sys.executable, str(HERE / "vllm_platform_child.py"), scenario, str(HIDDEN)],
        env=child_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = done.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    return report, done.stdout + done.stderr, done.returncode


def _predicted(release: str, *what_if: str) -> dict[str, dict[str, str]]:
    """`mhcdoctor explain --json` for each shape the child calls: {label: {op: path}}."""
    paths = {}
    for label, (hidden, hc) in SHAPES.items():
        args = ("explain", *what_if, "--hidden", str(hidden), "--hc-mult", str(hc), "--vllm", release, "--json")
        doc = json.loads(doctor.run(*args).stdout)
        paths[label] = {op: entry["path"] for op, entry in doc["ops"].items()}
    return paths


def _observed(report: dict) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], str]]:
    """Each call's path as the plugin saw it ({label@tokens: {op: path}}), and each record's kernel by (op, tokens).
    A call that raised has no record; its path is the kernels/mhc/ module its traceback reached (where vLLM sent it)."""
    records: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for line in report["records"]:
        fields = dict(field.split("=", 1) for field in line.split()[1:])
        records.setdefault((fields["op"], fields["tokens"]), []).append((fields["path"], fields["kernel"]))
    assert all(len(seen) == 1 for seen in records.values()), records  # one path per op and bucket
    seen: dict[str, dict[str, str]] = {}
    for key, result in report["results"].items():
        op, call = key.split(".")
        if call == "forward_native":
            continue
        tokens = bucket(int(call.split("@")[1]))
        if "raised" in result:
            assert (op, tokens) not in records, (key, result)  # a call that raised recorded nothing
            reached = [f for f in result["files"] if f.startswith("model_executor/kernels/mhc/")]
            path = reached[0].rsplit("/", 1)[1].removesuffix(".py") if reached else f"raised: {result['raised']}"
        else:
            assert result["shapes"] and result["max_error"] == 0.0, (key, result)  # as mhcdoctor.reference
            path = records[(op, tokens)][0][0]
        seen.setdefault(call, {})[op] = path
    kernels = {key: seen_paths[0][1] for key, seen_paths in records.items()}
    return seen, kernels


def _startup_paths(startup: str) -> dict[str, str]:
    """The paths the plugin's own start-up line (this machine's check --fast) predicts for the model's shape."""
    return dict(re.findall(r"\b(mhc_pre|mhc_post|mhc_fused_post_pre|hc_head)=(\w+)", startup))


def _differences(seen: dict[str, dict[str, str]], predicted: dict[str, dict[str, str]]) -> list[str]:
    return [
        f"{call} {op}: observed {path}, explain says {predicted[call.split('@')[0]][op]}"
        for call, paths in seen.items()
        for op, path in paths.items()
        if path != predicted[call.split("@")[0]][op]
    ]


@pytest.mark.parametrize("release", RELEASES)
def test_forward_hip_on_an_mi300x_with_a_racy_aiter_observe_records_and_strict_refuses(installed, release, tmp_path):
    """The aiter branch of forward_hip, for real: vLLM's own flags, _aiter_ops.py and kernels/mhc/aiter.py reach the
    stand-in aiter; the shapes off aiter's gate fall to the next branch (no tilelang here: torch). Then strict on the
    same machine refuses at the first CustomOp with the one-line StrictRefusal."""
    report, output, code = _platform_run(installed, release, tmp_path, "rocm", "mi300x", "observe")
    assert code == 0, output[-3000:]
    assert report["platform"] == "RocmPlatform"
    assert report["flags"]["HAS_AITER_MHC"] and not report["flags"]["HAS_TILELANG_MHC"]  # vLLM's, from its code
    seen, kernels = _observed(report)
    predicted = _predicted(release, "--platform", "rocm", "--arch", "gfx942", "--aiter", "0.1.12", "--tilelang", "none")
    assert _differences(seen, predicted) == []
    assert seen["model@20"]["mhc_pre"] == "aiter" and seen["hidden640@5"]["mhc_pre"] == "torch"
    assert kernels[("mhc_pre", "17-64")] == "mhc_pre_aiter" and kernels[("mhc_post", "1")] == "mhc_post_aiter"
    assert kernels[("mhc_pre", "2-8")] == "MHCPreOp.forward_native"  # hidden 640: aiter's gate failed, then torch
    assert seen["model@20"]["hc_head"] == "triton"  # reached kernels/mhc/triton.py; no triton on this CPU
    assert report["results"]["hc_head.forward_native"]["raised"].startswith("NotImplementedError")
    assert "aiter-sqrsum-race (fail)" in report["startup"]
    assert _startup_paths(report["startup"]) == seen["model@20"]  # the plugin's check --fast, against what ran
    assert f"mhcdoctor check --fast for this model (hidden {HIDDEN}, hc_mult 4" in output  # the start-up line, logged
    refused, output, code = _platform_run(installed, release, tmp_path, "rocm", "mi300x", "strict")
    assert refused is None and code == 1
    last = output.strip().splitlines()[-1]
    assert last.startswith(
        "mhcdoctor.vllm_plugin.startup.StrictRefusal: mhcdoctor (MHCDOCTOR_VLLM=strict) refuses to start: "
        "aiter-sqrsum-race: "
    ), last
    assert "Fix: Build aiter v0.1.14 or later from source" in last
    assert "mhcdoctor-observed" not in output  # nothing ran


@pytest.mark.parametrize("release", RELEASES)
def test_forward_hip_on_an_mi355x_takes_aiter_then_tilelang_and_strict_starts(installed, release, tmp_path):
    """The tilelang branch of forward_hip: on gfx950 with a tilelang (a stand-in that only imports: its kernels
    cannot be built on a CPU), the shapes aiter does not serve go to torch.ops.vllm.*_tilelang, whose error names
    kernels/mhc/tilelang.py, and the plugin records nothing for them; the model's shape stays on aiter. No
    wrong-results finding holds for this machine, so strict starts."""
    report, output, code = _platform_run(installed, release, tmp_path, "rocm", "mi355x", "strict")
    assert code == 0, output[-3000:]
    assert report["flags"]["HAS_AITER_MHC"] and report["flags"]["HAS_TILELANG_MHC"]
    seen, kernels = _observed(report)
    what_if = ("--platform", "rocm", "--arch", "gfx950", "--aiter", "0.1.16", "--tilelang", "0.1.12")
    assert _differences(seen, _predicted(release, *what_if)) == []
    assert seen["hidden640@5"] == dict.fromkeys(("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"), "tilelang")
    assert kernels[("mhc_pre", "17-64")] == "mhc_pre_aiter"
    assert all("tilelang" not in kernel for kernel in kernels.values())  # a call that raised is never recorded
    assert "StrictRefusal" not in output
    assert _startup_paths(report["startup"]) == seen["model@20"]
    # its fails are crashes (the stand-ins' CPU torch and CUDA wheel, tilelang's missing compiler), no wrong results
    assert "(fail)" in report["startup"] and not any(f"{bug} (fail)" in report["startup"] for bug in WRONG_RESULTS)


@pytest.mark.parametrize("release", ("0.30.0", "0.34.0"))
def test_forward_cpu_on_vllms_cpu_platform_records_the_cpu_kernels(installed, release, tmp_path):
    """forward_cpu under vLLM's real CpuPlatform: every op, hc_head too, through kernels/mhc/cpu.py to the
    torch.ops._C CPU ops (stand-ins computing with mhcdoctor.reference: the CUDA wheel has no CPU _C library)."""
    report, output, code = _platform_run(installed, release, tmp_path, "cpu", None, "observe")
    assert code == 0, output[-3000:]
    assert report["platform"] == "CpuPlatform"
    seen, kernels = _observed(report)
    # a CPU build's version carries +cpu (what explain reads for the platform); VLLM_TARGET_DEVICE chose it here
    assert _differences(seen, _predicted(f"{release}+cpu", "--platform", "cpu")) == []
    assert {kernels[(op, "17-64")] for op in ("mhc_pre", "hc_head")} == {"MHCPreOp.forward_cpu", "HCHeadOp.forward_cpu"}
    assert len(kernels) == 4 * 4  # four ops at four buckets, each once
    (tmp_path / "vllm.log").write_text(output)  # vLLM's logger wrote the records: `mhcdoctor log` reads them back
    log = json.loads(doctor.run("log", str(tmp_path / "vllm.log"), "--json").stdout)
    assert {op: (entry["path"], entry["certain"]) for op, entry in log["ops"].items()} == {
        op: ("cpu", True) for op in ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")
    }
