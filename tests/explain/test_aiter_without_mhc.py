"""aiter installed without the mHC ops, and an aiter whose import raises what vLLM's probe does not catch (issue 8 §1).

vLLM 0.25–0.29 select aiter by find_spec and the arch and call `aiter.ops.mhc` at the first forward; 0.30+ probe
aiter.ops.mhc for mhc_pre's norm arguments and the fused op (those fall back), but send mhc_post unprobed.
"""

from __future__ import annotations

import fakes
import pytest
from fakemachine import Machine

from mhcdoctor.knowledge import aiter_releases
from mhcdoctor.rules.findings import escaping_exception

GFX942 = ["--platform", "rocm", "--arch", "gfx942", "--model", "deepseek-v4-pro"]


@pytest.mark.parametrize(
    ("version", "mhc", "norm", "fused"),
    [
        ("0.1.7.post2.dev18", False, False, False),  # PyPI's amd-aiter
        ("0.1.10.post3", False, False, False),  # the last tag without aiter/ops/mhc.py
        ("0.1.11", True, False, False),  # #2136 first tagged here
        ("0.1.14.post1", True, False, False),
        ("0.1.15rc0", True, True, False),  # tag v0.1.15-rc0 already has norm_weight/norm_eps
        ("0.1.15.post3", True, True, False),
        ("0.1.16", True, True, True),
    ],
)
def test_each_tag_carries_what_its_code_carries(version, mhc, norm, fused):
    known = aiter_releases.release(version)
    assert known is not None
    assert (known.has_mhc_ops, known.mhc_pre_norm_args, known.has_fused_post_pre) == (mhc, norm, fused)


def test_the_pypi_wheel_is_not_called_a_source_build():
    _, why = aiter_releases.sqrsum_fix_from_version("0.1.7.post2.dev18")
    assert "source build" not in why and "no mHC ops" in why


@pytest.mark.parametrize("vllm", ["0.25.0", "0.27.0", "0.29.0"])
def test_vllm_025_to_029_send_pre_and_post_to_an_aiter_without_mhc_and_fail(run_cli, vllm):
    doc = run_cli("explain", "--json", *GFX942, "--aiter", "0.1.7", "--vllm", vllm).json()
    finding = next(f for f in doc["findings"] if f["id"] == "aiter-no-mhc")
    assert finding["severity"] == "fail" and "ModuleNotFoundError" in finding["detail"]
    assert {"mhc_pre", "mhc_post"} <= set(finding["ops"])
    assert doc["verdict"] == "fail"
    assert not {"aiter-sqrsum-unknown", "aiter-api-too-old", "aiter-no-compiler"} & {f["id"] for f in doc["findings"]}


def test_vllm_030_falls_back_for_probed_ops_but_mhc_post_still_calls_aiter(run_cli):
    result = run_cli("explain", *GFX942, "--aiter", "0.1.7", "--vllm", "0.30.0")
    answer = result.stdout.split("Trace")[0].splitlines()
    rows = {line.split()[1]: line for line in answer if line.split()[1:2] and line.split()[1].startswith(("mhc", "hc"))}
    assert result.returncode == 3
    assert rows["mhc_pre"].split()[2] == "torch"  # the norm-argument probe fails: falls back
    assert rows["mhc_post"].split()[0] == "✗" and "[aiter-no-mhc]" in rows["mhc_post"]
    assert "mhc_post is sent to aiter unprobed" in result.stdout


def test_an_op_row_is_marked_by_the_fail_finding_that_names_it(run_cli):
    result = run_cli("explain", *GFX942, "--aiter", "0.1.13", "--vllm", "0.25.0")
    pre = next(line for line in result.stdout.split("Trace")[0].splitlines() if line.split()[1:2] == ["mhc_pre"])
    assert pre.split()[0] == "✗" and "[aiter-sqrsum-race, aiter-big-fuse-sync]" in pre


def test_a_pre_release_tag_has_its_code_not_its_sort_order(run_cli):
    doc = run_cli("explain", "--json", *GFX942, "--aiter", "0.1.15rc0", "--vllm", "0.30.0").json()
    assert doc["ops"]["mhc_pre"]["path"] == "aiter"  # 0.1.15rc0 takes norm_weight/norm_eps
    assert doc["ops"]["mhc_fused_post_pre"]["path"] != "aiter"  # mhc_fused_post_pre only from 0.1.16


@pytest.mark.parametrize(
    ("error", "escapes"),
    [
        ("RuntimeError: Get GPU arch from rocminfo failed: ...", "RuntimeError"),
        ("OSError: libamdhip64.so: cannot open shared object file", "OSError"),
        ("ModuleNotFoundError: No module named 'torch'", None),
        ("ImportError: undefined symbol", None),
        ("timed out after 20 s", None),
        (None, None),
    ],
)
def test_which_import_errors_escape_vllms_aiter_probe(error, escapes):
    assert escaping_exception(error) == escapes


def test_an_aiter_whose_import_raises_runtimeerror_stops_vllm_030_from_importing_layers_mhc(tmp_path):
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, 90402])
    fakes.aiter(
        machine.site, version="0.1.16", init=fakes.raises('RuntimeError("No gfx arch found in rocminfo output.")')
    )
    fakes.library(machine.site, "vllm", "0.30.0")
    doc, proc = machine.check_json()
    finding = next(f for f in doc["findings"] if f["id"] == "aiter-import-breaks-vllm")
    assert finding["severity"] == "fail" and "RuntimeError" in finding["detail"]
    assert set(finding["ops"]) >= {"mhc_pre", "mhc_post", "hc_head"}  # nothing runs
    assert "aiter-not-importable" not in {f["id"] for f in doc["findings"]}
    assert proc.returncode == 3


def test_an_aiter_import_error_vllm_catches_is_not_called_fatal_to_vllm(tmp_path):
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, 90402])
    fakes.aiter(machine.site, version="0.1.16", init=fakes.raises("ImportError('libamdhip64.so: cannot open')"))
    fakes.library(machine.site, "vllm", "0.30.0")
    doc, _ = machine.check_json()
    assert "aiter-import-breaks-vllm" not in {f["id"] for f in doc["findings"]}
    assert "aiter-not-importable" in {f["id"] for f in doc["findings"]}  # mhc_post still calls it
