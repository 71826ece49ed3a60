"""DeepSeek-V4.1 on ROCm with vLLM 0.30–0.34 runs its seams through rocm_aiter_ops.mhc_pre_delayed, which needs
aiter's GEMM API of aiter #4115 (is_fn_pack_bf16, v0.1.18) and the helpers of v0.1.16: `aiter-delayed-api-too-old`
fails an older aiter, told by the installed aiter/ops/mhc.py (the real text of ROCm/aiter's tags in
tests/data/aiter_code), else by the version, and stays silent everywhere the call is not made."""

from __future__ import annotations

import json

import doctor
import fakes
import pytest
from aiter_labels import ROWS, honest_label
from fakemachine import Machine, check_json, model

from mhcdoctor.models import builtin
from mhcdoctor.probes import aiter as aiter_probe
from mhcdoctor.probes import facts_from_probes
from mhcdoctor.rules import decide
from mhcdoctor.verify.known_bugs import matching
from mhcdoctor.whatif import WhatIf, build_facts

ID = "aiter-delayed-api-too-old"
MI300X = 90402  # kfd's gfx_target_version
# the command of issue 30's report: aiter 0.1.16 on an MI300X serving DeepSeek-V4.1 with vLLM 0.34.0
BASE = {
    "--model": "deepseek-v4.1-flash", "--platform": "rocm", "--arch": "gfx942", "--aiter": "0.1.16",
    "--aiter-fix": "present", "--tilelang": "none", "--vllm": "0.34.0",
}  # fmt: skip


def explain(tmp_path, **changes: str) -> tuple[int, dict]:
    options = {**BASE, **{f"--{key.replace('_', '-')}": value for key, value in changes.items()}}
    done = doctor.run("explain", "--json", *(part for pair in options.items() for part in pair), cwd=tmp_path)
    return done.returncode, json.loads(done.stdout)


def test_the_reported_command_fails_with_the_finding_and_says_it_judged_by_the_version(tmp_path):
    code, doc = explain(tmp_path)
    finding = next(f for f in doc["findings"] if f["id"] == ID)
    assert (code, doc["verdict"], finding["severity"], finding["ops"]) == (3, "fail", "fail", ["mhc_pre"])
    assert "is_fn_pack_bf16" in finding["detail"]
    # what vLLM's real code raises at v0.1.16–v0.1.17 (tests/real/test_vllm_delayed.py): torch's check of aiter's schema
    assert "v0.1.16–v0.1.17, torch's RuntimeError 'aiter::mhc_pre_gemm_sqrsum() expected at most 5" in finding["detail"]
    assert "Judged by the version label" in finding["detail"] and "no aiter/ops/mhc.py was read" in finding["detail"]
    assert "v0.1.18" in finding["fix"]


@pytest.mark.parametrize(
    "changes",
    [
        {"vllm": "0.30.0"},  # the first release with models/deepseek_v41
        {"aiter": "0.1.14"},  # no helpers at all: ImportError, though vLLM moves the fused op off aiter
        {"aiter": "0.1.17"},
        {"arch": "gfx1250"},  # CDNA-class for HAS_AITER_MHC from 0.27
        {"arch": "gfx950", "vllm": "0.31.0"},  # before 0.32 gfx950's seams take mhc_pre_delayed too
    ],
    ids=str,
)
def test_every_release_and_arch_that_makes_the_call_fails(tmp_path, changes):
    code, doc = explain(tmp_path, **changes)
    assert ID in {f["id"] for f in doc["findings"]} and code == 3


@pytest.mark.parametrize(
    "changes",
    [
        {"aiter": "0.1.18"},  # aiter #4115's API
        # the aiter vLLM 0.30.0's and 0.31.0's ROCm images build (Dockerfile.rocm_base's AITER_BRANCH, as a third-party
        # CI fixture records it): newer than every tag read, so v0.1.20.post1's code decides
        {"aiter": "0.1.22.post1", "vllm": "0.30.0"},
        {"aiter": "0.1.23", "vllm": "0.31.0"},
        {"model": "deepseek-v4-flash"},  # DeepSeek-V4's model calls no mhc_pre_delayed
        {"vllm": "0.29.0"},  # no models/deepseek_v41 (model-v41-unsupported says so)
        {"arch": "gfx90a"},  # CDNA2: vLLM sends nothing to aiter
        {"aiter_fix": "delayed-api=present"},  # what a user states of their build beats the label
        {"arch": "gfx950"},  # 0.32+: every seam passes norm_weight to aiter's Triton kernel instead
        {"aiter": "0.1.17.dev5"},  # a build of main between v0.1.16 and v0.1.18: may hold #4115, not guessed
    ],
    ids=str,
)
def test_no_finding_where_the_call_is_not_made_or_the_api_is_there(tmp_path, changes):
    _, doc = explain(tmp_path, **changes)
    assert ID not in {f["id"] for f in doc["findings"]}


def machine_with(tmp_path, code: str, label: str) -> Machine:
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, MI300X])
    fakes.rocm(machine.root, "7.2.3-42")
    fakes.aiter(machine.site, version=label, code=code)
    fakes.library(machine.site, "vllm", "0.34.0")
    return machine


def test_the_installed_v0_1_17_code_fails_v41_under_a_fixed_release_label_and_names_its_line(tmp_path):
    machine = machine_with(tmp_path, "v0.1.17-rc0", "0.1.18")  # v0.1.17's aiter/ops/mhc.py is v0.1.17-rc0's
    doc, proc = check_json(machine, "--fast")
    finding = next(f for f in doc["findings"] if f["id"] == ID)
    installed = machine.site / "aiter" / "ops" / "mhc.py"
    told = f"Told by the installed code: {installed}:"
    assert told in finding["detail"]
    line, what = finding["detail"].split(told, 1)[1].split(": ", 1)
    assert what.startswith("mhc_pre_gemm_sqrsum(out, sqrsum, x, fn, tile_k=128): five arguments")
    source = installed.read_text().splitlines()[int(line) - 1 : int(line) + 6]  # the def and its five parameters
    assert source[0] == "def mhc_pre_gemm_sqrsum(" and source[-1] == ") -> None: ..."
    assert doc["facts"]["aiter"]["fixes"]["delayed-api"] == "absent"
    assert model(doc, "deepseek-v4.1-flash")["verdict"] == "fail"
    assert model(doc, "deepseek-v4-pro")["verdict"] != "fail", "DeepSeek-V4 calls no mhc_pre_delayed"
    assert proc.returncode == 3


def test_the_installed_v0_1_18_code_passes_under_an_old_label_and_a_replay_keeps_it(tmp_path):
    doc, _ = check_json(machine_with(tmp_path, "v0.1.18", "0.1.16"), "--fast")
    assert ID not in {f["id"] for f in doc["findings"]}
    assert doc["facts"]["aiter"]["fixes"]["delayed-api"] == "present"
    report = tmp_path / "report.json"
    report.write_text(json.dumps(doc))
    replay = doctor.run("explain", "--from", str(report), "--model", "deepseek-v4.1-flash", "--json", cwd=tmp_path)
    assert ID not in {f["id"] for f in json.loads(replay.stdout)["findings"]}
    stated = doctor.run(
        "explain", "--from", str(report), "--model", "deepseek-v4.1-flash", "--json", "--aiter-fix",
        "delayed-api=absent", cwd=tmp_path,
    )  # fmt: skip
    assert stated.returncode == 3 and ID in {f["id"] for f in json.loads(stated.stdout)["findings"]}


@pytest.mark.parametrize("code", fakes.AITER_TAGS)
def test_the_finding_follows_git_ancestry_for_every_tag_and_build_under_misleading_labels(tmp_path, code):
    want = ROWS[code]["ancestry"]["delayed-api"] == "absent"  # `git merge-base --is-ancestor`, not the signature
    for n, label in enumerate((honest_label(ROWS[code]), "0.1.18", "0.1.13")):
        site = fakes.site(tmp_path, f"site-{n}")
        fakes.aiter(site, version=label, code=code)
        probed = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
        facts = build_facts(WhatIf("rocm", "gfx942", None, None, "none", None, None), base=lambda p=probed: p)
        ids = {f.id for f in decide(facts, builtin("deepseek-v4.1-flash"), "0.34.0").findings}
        assert (ID in ids) == want, (code, label)


# A worker's traceback as vLLM 0.34.0 prints it for aiter v0.1.17 (frames: vllm/_aiter_ops.py:4990 and
# kernels/mhc/aiter.py:159 at 0.34.0; the message is pybind11's for MHC_PYBIND's five-argument definition).
TRACEBACK = [
    "(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011] EngineCore failed to start.",
    "(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011] Traceback (most recent call last):",
    '(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011]   File "/usr/local/lib/python3.12/dist-packages/'
    'vllm/models/deepseek_v41/amd/model.py", line 470, in forward',
    '(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011]   File "/usr/local/lib/python3.12/dist-packages/'
    'vllm/model_executor/kernels/mhc/aiter.py", line 159, in mhc_pre_delayed_aiter',
    '(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011]   File "/usr/local/lib/python3.12/dist-packages/'
    'vllm/_aiter_ops.py", line 4990, in mhc_pre_delayed',
    "(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011]     mhc_pre_gemm_sqrsum(gemm_out, sqrsum, "
    "projected, fn, tile_k, 0)",
    "(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011] TypeError: mhc_pre_gemm_sqrsum(): incompatible "
    "function arguments. The following argument types are supported:",
    "(EngineCore_DP0 pid=4121) ERROR 12-05 00:40:11 [core.py:1011]     1. (out: torch.Tensor, sqrsum: torch.Tensor, "
    "x: torch.Tensor, fn: torch.Tensor, tile_k: int = 128) -> None",
]


def log_fatal(tmp_path, lines: list[str]) -> tuple[int, dict]:
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(lines) + "\n")
    done = doctor.run("log", str(log), "--json")
    return done.returncode, json.loads(done.stdout)


def test_the_log_reader_names_the_bug_from_the_type_error_under_mhc_pre_delayed(tmp_path):
    code, doc = log_fatal(tmp_path, TRACEBACK)
    assert [f["finding"] for f in doc["fatal"]] == [ID]
    assert ID in {f["id"] for f in doc["findings"]} and code == 3


def test_the_same_type_error_elsewhere_is_not_this_bug(tmp_path):
    elsewhere = [line.replace("in mhc_pre_delayed", "in some_other_op") for line in TRACEBACK]
    _, doc = log_fatal(tmp_path, elsewhere)
    assert ID not in [f["finding"] for f in doc["fatal"]]


def test_verify_names_no_delayed_api_bug_for_a_crash_of_aiters_own_mhc_pre():
    """verify's aiter path calls aiter's mhc_pre, never vLLM's mhc_pre_delayed: its crash is not this bug."""
    assert ID not in {bug["id"] for bug in matching("aiter", "0.1.16", "mhc_pre", 80, 5120, 4, "error")}


def test_a_huge_ops_file_is_read_up_to_its_bound_and_tells_nothing(tmp_path):
    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.0")
    five_args = fakes.real_mhc_ops("v0.1.17-rc0")
    (site / "aiter" / "ops" / "mhc.py").write_text("#" * (2 << 20) + "\n" + five_args)  # past the bound: never read
    facts = facts_from_probes([aiter_probe.probe(fakes.context(tmp_path, site, fast=True))])
    assert facts.aiter.fixes["delayed-api"] == "unknown"
