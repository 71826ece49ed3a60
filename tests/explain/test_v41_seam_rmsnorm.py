"""DeepSeek-V4.1 on ROCm gfx950 with vLLM 0.32–0.34 folds each seam's RMSNorm into aiter's Triton kernel, imported at
the call from aiter/ops/triton/fusions/mhc_fused_post_pre_delayed_rmsnorm.py, which no ROCm/aiter tag up to
v0.1.20.post1 ships: `aiter-seam-rmsnorm-missing` fails such an aiter, told by the installed files, else by the
version (a newer label is unknown, never a fail), and stays silent everywhere the import is not made."""

from __future__ import annotations

import json
from pathlib import Path

import doctor
import fakes
import pytest
from fakemachine import Machine, check_json, model

ID = "aiter-seam-rmsnorm-missing"
DELAYED = "aiter-delayed-api-too-old"  # skips gfx950 on 0.32+: the two never name the same seam
MI355X = 90500  # kfd's gfx_target_version of gfx950
SEAM = Path("ops", "triton", "fusions", "mhc_fused_post_pre_delayed_rmsnorm.py")
# `git ls-tree --name-only v0.1.20 aiter/ops/triton/fusions/` in ROCm/aiter (fc2e5d57fb): no seam module
FUSIONS_V0_1_20 = (Path(__file__).parents[1] / "data" / "aiter_fusions_v0.1.20.txt").read_text().split()
BASE = {
    "--model": "deepseek-v4.1-flash", "--platform": "rocm", "--arch": "gfx950", "--aiter": "0.1.19",
    "--tilelang": "none", "--vllm": "0.34.0",
}  # fmt: skip


def explain(tmp_path, *extra: str, **changes: str) -> tuple[int, dict]:
    options = {**BASE, **{f"--{key.replace('_', '-')}": value for key, value in changes.items()}}
    args = (part for pair in options.items() for part in pair)
    done = doctor.run("explain", "--json", *args, *extra, cwd=tmp_path)
    return done.returncode, json.loads(done.stdout)


def ids(doc: dict) -> set[str]:
    return {f["id"] for f in doc["findings"]}


@pytest.mark.parametrize("vllm", ["0.32.0", "0.34.0"])
def test_an_aiter_up_to_v0_1_20_post1_fails_v41_on_gfx950_by_its_label(tmp_path, vllm):
    code, doc = explain(tmp_path, vllm=vllm)
    finding = next(f for f in doc["findings"] if f["id"] == ID)
    assert (code, doc["verdict"], finding["severity"], finding["ops"]) == (3, "fail", "fail", ["mhc_pre"])
    assert "raises ModuleNotFoundError" in finding["detail"]
    assert "Judged by the version label (no ROCm/aiter tag up to v0.1.20.post1 has" in finding["detail"]
    assert DELAYED not in ids(doc)
    # the info finding keeps its approximation note and no longer says the crash itself
    approximate = next(f for f in doc["findings"] if f["id"] == "model-v41-approximate")
    assert "mhc_fused_post_pre_delayed_rmsnorm" in approximate["detail"]
    assert "ModuleNotFoundError" not in approximate["detail"]


@pytest.mark.parametrize(
    "changes",
    [
        {"vllm": "0.31.0"},  # the seam takes mhc_pre_delayed: no import of the Triton module
        {"arch": "gfx942"},  # vLLM's gate is on_gfx950()
        {"model": "deepseek-v4-flash"},  # DeepSeek-V4's model has no delayed seam
        {"aiter": "0.1.23"},  # newer than every tag read: its code may ship the module (unknown, not a fail)
        {"aiter": "none"},  # no HAS_AITER_MHC
        {"aiter_fix": "seam-rmsnorm=present"},  # what a user states of their build beats the label
        {"aiter_fix": "seam-rmsnorm=unknown"},
    ],
    ids=str,
)
def test_no_finding_where_the_import_is_not_made_or_may_succeed(tmp_path, changes):
    _, doc = explain(tmp_path, **changes)
    assert ID not in ids(doc)


def test_a_newer_label_stated_without_the_module_fails_as_stated(tmp_path):
    code, doc = explain(tmp_path, aiter="0.1.23", aiter_fix="seam-rmsnorm=absent")
    finding = next(f for f in doc["findings"] if f["id"] == ID)
    assert code == 3 and finding["detail"].endswith("As stated: --aiter-fix seam-rmsnorm=absent.")


def mi355x(tmp_path, label: str, seam: bool) -> Machine:
    """A gfx950 machine with aiter v0.1.20's real ops/mhc.py and kernels, and its real triton/fusions/ listing."""
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, MI355X])
    fakes.rocm(machine.root, "7.2.3-42")
    fakes.aiter(machine.site, version=label, code="v0.1.20")
    fusions = machine.site / "aiter" / "ops" / "triton" / "fusions"
    fusions.mkdir(parents=True, exist_ok=True)
    (fusions.parent / "__init__.py").touch()
    for name in FUSIONS_V0_1_20:
        (fusions / name).touch()
    if seam:
        (machine.site / "aiter" / SEAM).write_text("def mhc_fused_post_pre_delayed_rmsnorm(*args, **kwargs): ...\n")
    fakes.library(machine.site, "vllm", "0.34.0")
    return machine


def test_v0_1_20s_installed_tree_fails_v41_under_a_newer_label_and_says_where_it_looked(tmp_path):
    machine = mi355x(tmp_path, "0.1.23", seam=False)  # the label alone would be unknown: the files decide
    doc, proc = check_json(machine, "--fast")
    finding = next(f for f in doc["findings"] if f["id"] == ID)
    assert finding["detail"].endswith(f"{machine.site / 'aiter'}: no ops/triton/fusions/{SEAM.name} in it.")
    assert doc["facts"]["aiter"]["has_seam_rmsnorm"] is False
    assert model(doc, "deepseek-v4.1-flash")["verdict"] == "fail"
    assert model(doc, "deepseek-v4-pro")["verdict"] != "fail", "DeepSeek-V4 has no delayed seam"
    assert proc.returncode == 3


def test_an_install_with_the_module_passes_under_an_old_label_and_a_replay_keeps_it(tmp_path):
    doc, _ = check_json(mi355x(tmp_path, "0.1.19", seam=True), "--fast")
    assert ID not in ids(doc) and doc["facts"]["aiter"]["has_seam_rmsnorm"] is True
    report = tmp_path / "report.json"
    report.write_text(json.dumps(doc))
    replay = doctor.run("explain", "--from", str(report), "--model", "deepseek-v4.1-flash", "--json", cwd=tmp_path)
    assert ID not in ids(json.loads(replay.stdout))
    del doc["facts"]["aiter"]["has_seam_rmsnorm"]  # a report from before the fact: the label decides
    report.write_text(json.dumps(doc))
    older = doctor.run("explain", "--from", str(report), "--model", "deepseek-v4.1-flash", "--json", cwd=tmp_path)
    assert older.returncode == 3 and ID in ids(json.loads(older.stdout))


# A worker's traceback as vLLM 0.34.0 would print it (frames: kernels/mhc/aiter.py:232 and vllm/_aiter_ops.py:5038, the
# import, at 0.34.0; the message is Python's for a module missing from an existing package, aiter.ops.triton.fusions).
PREFIX = "(EngineCore_DP0 pid=4121) ERROR 12-05 01:40:11 [core.py:1011]"
TRACEBACK = [
    f"{PREFIX} EngineCore failed to start.",
    f"{PREFIX} Traceback (most recent call last):",
    f'{PREFIX}   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/mhc.py", line 415, in '
    "forward_hip",
    f'{PREFIX}   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/kernels/mhc/aiter.py", line 232, in '
    "mhc_fused_post_pre_delayed_rms_norm_aiter",
    f'{PREFIX}   File "/usr/local/lib/python3.12/dist-packages/vllm/_aiter_ops.py", line 5038, in '
    "mhc_fused_post_pre_delayed_rms_norm",
    f"{PREFIX}     from aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm import (",
    f"{PREFIX} ModuleNotFoundError: No module named 'aiter.ops.triton.fusions.mhc_fused_post_pre_delayed_rmsnorm'",
]


def test_the_log_reader_names_the_bug_from_the_module_not_found_error(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(TRACEBACK) + "\n")
    done = doctor.run("log", str(log), "--json")
    doc = json.loads(done.stdout)
    assert [f["finding"] for f in doc["fatal"]] == [ID]
    assert ID in ids(doc) and done.returncode == 3
