"""Intel GPUs, vLLM's CPU build and the self-check, end to end: `mhcdoctor check` on a fake machine and stand-in vLLMs.

The stand-in vLLM (fakes.vllm) answers the self-check as a real release's code does; one agrees with the rules and
one does not. Real packages are exercised by scripts/real-vllm-selfcheck.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import doctor
import fakes
import pytest
from fakemachine import REPO, Machine, check_json, finding_ids, model


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def machine_rows(text: str) -> dict[str, str]:
    """The Machine section's rows: label → text."""
    rows = {}
    for line in text.split("Paths per model")[0].splitlines()[1:]:
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0] in "✓✗!·":
            label, _, rest = parts[1].partition("  ")
            rows[label.strip()] = rest.strip()
    return rows


def test_vllm_cpu_build_on_a_machine_without_gpu_runs_its_cpu_ops(machine):
    fakes.vllm(machine.site, "0.34.0+cpu")
    doc, proc = check_json(machine)
    pro = model(doc, "deepseek-v4-pro")
    assert {op["path"] for op in pro["ops"].values()} == {"cpu"}
    assert pro["facts"]["vllm"] == {
        "version": "0.34.0+cpu", "build": "cpu", "platform": "cpu", "runs_here": True, "blocked_by": []
    }  # fmt: skip
    assert "no-gpu" not in finding_ids(doc) and "rules-disagree-with-vllm" not in finding_ids(doc)
    assert doc["facts"]["vllm"]["selfcheck"]["platform"] == "CpuPlatform"
    assert doc["facts"]["vllm"]["selfcheck"]["forward"] == "forward_cpu"
    assert pro["verdict"] == "ok"


def test_the_check_says_which_build_and_whether_it_runs_here(machine):
    fakes.vllm(machine.site, "0.34.0+cpu")
    rows = machine_rows(doctor.run("check", env=machine).stdout)
    assert rows["vLLM build"] == (
        "CPU build (version 0.34.0+cpu: local label +cpu); detects CpuPlatform here "
        "(vLLM itself says CpuPlatform): can run here"
    )


def test_pypi_cuda_wheel_on_a_machine_without_gpu_cannot_run(machine):
    # PyPI's wheel: no local label, and CUDA-only extension modules (vllm_flash_attn/)
    fakes.vllm(machine.site, "0.34.0", platform="UnspecifiedPlatform", files={"vllm_flash_attn/__init__.py": ""})
    proc = doctor.run("check", "--fast", env=machine)
    assert proc.returncode == 3
    row = machine_rows(proc.stdout)["vLLM build"]
    assert row.startswith("CUDA build (") and "vllm_flash_attn* ships only in the CUDA build" in row
    assert row.endswith("detects UnspecifiedPlatform here: cannot run here (no-gpu)")
    assert "no-gpu: No GPU, and no CPU build of vLLM to run without one" in proc.stdout


def test_a_self_check_that_disagrees_names_each_gate_and_both_values(machine):
    # This vLLM claims tilelang mHC on its CPU platform, where the rules (and vLLM's real code) say False.
    fakes.vllm(machine.site, "0.34.0+cpu", flags={"HAS_TILELANG_MHC": True})
    doc, proc = check_json(machine, "--model", "deepseek-v4-pro")
    finding = next(f for f in doc["findings"] if f["id"] == "rules-disagree-with-vllm")
    assert finding["severity"] == "warn"
    assert "HAS_TILELANG_MHC: rules False, vLLM True" in finding["detail"]
    assert "use_fused_mhc (hidden 7168): rules False, vLLM True" in finding["detail"]
    assert proc.returncode == 1


def test_the_self_check_compares_the_platform_class(machine):
    fakes.vllm(machine.site, "0.34.0+cpu", platform="XPUPlatform")
    doc, _ = check_json(machine, "--model", "deepseek-v4-pro")
    finding = next(f for f in doc["findings"] if f["id"] == "rules-disagree-with-vllm")
    assert "current_platform: rules CpuPlatform, vLLM XPUPlatform" in finding["detail"]
    assert "CustomOp.dispatch_forward: rules forward_cpu, vLLM forward_xpu" in finding["detail"]


def test_vllms_platform_is_asked_only_by_the_full_checks_child(machine, tmp_path):
    # The marker is written by the stand-in's vllm/platforms (what the self-check imports), not by `import vllm`.
    marker = tmp_path / "imported-by"
    fakes.vllm(machine.site, "0.34.0+cpu", marker=marker)
    doctor.run("check", "--fast", env=machine)
    env = {"MHCDOCTOR_SYSROOT": str(machine.root), "PYTHONPATH": str(REPO), "PATH": str(tmp_path / "no-bin")}
    explain = doctor.run("explain", "--python", str(machine.python), "--hidden", "7168", env=env, cwd=tmp_path)
    assert explain.returncode in (0, 1, 3), explain.stderr
    assert not marker.exists(), "--fast and explain without --deep never run the self-check"
    child = subprocess.Popen(
        doctor.argv("check", "--python", str(machine.python), "--json"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    child.communicate(timeout=60)
    pids = marker.read_text().split()
    assert pids and str(child.pid) not in pids, "the self-check imports vLLM in a child, never in the doctor"


def test_an_intel_gpu_is_found_in_sysfs_and_its_integrated_sibling_is_not(machine):
    fakes.intel_gpu(machine.root, 0, "0000:00:02.0", device_id="0xa7a0", pci_class="0x030000")  # the CPU's own
    fakes.intel_gpu(machine.root, 1, "0000:29:00.0", device_id="0x0bd5")
    doc, proc = check_json(machine, "--fast")
    assert doc["facts"]["platform"] == "xpu"
    assert [(d["vendor"], d["name"]) for d in doc["facts"]["devices"]] == [("intel", "Intel GPU 0x0bd5")]
    # no vLLM here: the newest rules, whose XPU platform cannot even load without vllm-xpu-kernels
    pre = model(doc, "deepseek-v4-pro")["ops"]["mhc_pre"]
    assert pre["path"] == "unavailable"
    assert pre["why"][-1]["gate"] == "vllm_xpu_kernels installed" and not pre["why"][-1]["passed"]
    assert "xpu-kernels-missing" in finding_ids(doc) and proc.returncode == 3


def test_the_report_carries_what_vllm_detects_once_and_the_machine_section_reads_it(machine):
    fakes.vllm(machine.site, "0.34.0", platform="UnspecifiedPlatform", files={"vllm_flash_attn/__init__.py": ""})
    doc, _ = check_json(machine, "--fast", "--model", "deepseek-v4-pro", "--model", "deepseek-v4-flash")
    assert doc["vllm_platform"] == {"platform": "unspecified", "runs_here": False, "blocked_by": ["no-gpu"]}
    # the row follows the top-level member, not the first model's decision
    doc["vllm_platform"] = {"platform": "conflict", "runs_here": False, "blocked_by": ["vllm-platform-conflict"]}
    from mhcdoctor.render.check_text import render_check
    from mhcdoctor.render.term import Style

    rows = machine_rows(render_check(doc, Style()))
    assert rows["vLLM build"].endswith("detects two platforms at once here: cannot run here (vllm-platform-conflict)")


def test_a_report_from_before_vllm_platform_still_renders_with_the_build_alone(machine, tmp_path):
    fakes.vllm(machine.site, "0.34.0+cpu")
    doc, _ = check_json(machine)
    del doc["vllm_platform"]  # as mhcdoctor wrote reports before the member
    from mhcdoctor.render.check_text import render_check
    from mhcdoctor.render.markdown import render_markdown
    from mhcdoctor.render.term import Style
    from mhcdoctor.reportfile import validate_report

    old = validate_report(doc, "old.json")
    rows = machine_rows(render_check(old, Style()))
    assert rows["vLLM build"] == "CPU build (version 0.34.0+cpu: local label +cpu) (vLLM itself says CpuPlatform)"
    assert "CPU build (version 0.34.0+cpu" in render_markdown(old)
