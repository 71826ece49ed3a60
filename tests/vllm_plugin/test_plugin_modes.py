"""The plugin's modes in a real child process, against a stand-in `vllm` (vLLM's module names, the calls the hooks
target): off patches and imports nothing; observe records each op, path, bucket and prenorm once, leaves helpers and
torch.compile's traced code alone, and logs the start-up line once; strict stops the model's build; a bad value or
a broken plugin never stops vLLM. tests/real/test_vllm_plugin.py runs the same hooks inside real vLLM releases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import doctor
import fakes
import jsonschema
import pytest

from mhcdoctor.vllm_plugin.startup import refusal

HERE = Path(__file__).parent
REPO = HERE.parents[1]
OBSERVED_SCHEMA = json.loads((REPO / "mhcdoctor/schemas/observed.schema.json").read_text())

TILELANG = """
from vllm.utils.torch_utils import direct_register_custom_op


def compute_num_split(block_k, k, grid):  # a helper: not an op
    return 1


def mhc_pre_tilelang(residual, use_deep_gemm):
    if use_deep_gemm:  # vLLM imports DeepGEMM's GEMM inside the call (kernels/mhc/tilelang.py)
        from vllm.utils.deep_gemm import tf32_hc_prenorm_gemm

        tf32_hc_prenorm_gemm(residual)
    return residual


def mhc_post_tilelang(x, residual):
    return x + residual.sum(dim=1)


direct_register_custom_op(op_name="mhc_pre_tilelang", op_func=mhc_pre_tilelang)
direct_register_custom_op(op_name="mhc_post_tilelang", op_func=mhc_post_tilelang)
"""


def _fake_vllm(tmp_path: Path) -> Path:
    site = fakes.site(tmp_path, "fake-vllm")
    files = {
        "vllm/__init__.py": '__version__ = "0.34.0"\n',
        "vllm/config.py": "CURRENT = None\n\ndef get_current_vllm_config_or_none():\n    return CURRENT\n",
        "vllm/utils/__init__.py": "",
        "vllm/utils/torch_utils.py": (
            "REGISTERED = {}\n\ndef direct_register_custom_op(op_name, op_func, mutates_args=None, fake_impl=None):\n"
            "    REGISTERED[op_name] = op_func\n"
        ),
        "vllm/utils/deep_gemm.py": "def tf32_hc_prenorm_gemm(*args):\n    return None\n",
        "vllm/model_executor/__init__.py": "",
        "vllm/model_executor/custom_op.py": (
            "class CustomOp:\n    def __init__(self):\n        self.built = True\n\n"
            "CustomOp.original_init = CustomOp.__init__\n"
        ),
        "vllm/model_executor/kernels/__init__.py": "",
        "vllm/model_executor/kernels/mhc/__init__.py": "from .tilelang import mhc_post_tilelang, mhc_pre_tilelang\n",
        "vllm/model_executor/kernels/mhc/tilelang.py": TILELANG,
        "vllm/model_executor/layers/__init__.py": "",
        "vllm/model_executor/layers/mhc.py": "HAS_TILELANG_MHC = True\n",
    }
    for name, text in files.items():
        fakes.write(site / name, text)
    return site


def _child(tmp_path: Path, what: str, mode: str | None, *, broken: bool = False) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MHCDOCTOR_", "PYTHONPATH"))}
    env.update(PYTHONPATH=os.pathsep.join([str(_fake_vllm(tmp_path)), str(REPO)]), HOME=str(tmp_path))
    env["MHCDOCTOR_VLLM_DIR"] = str(tmp_path / "observed")
    if mode is not None:
        env["MHCDOCTOR_VLLM"] = mode
    script = str(HERE / "plugin_child.py")
    command = [sys.executable, script, what]
    if broken:  # the plugin's own module cannot import: register() must still return
        command = [
            sys.executable,
            "-c",
            f"import sys; sys.modules['mhcdoctor.vllm_plugin.hooks'] = None; "
            f"sys.argv = ['x', {what!r}]; exec(open({script!r}).read())",
        ]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_the_distribution_declares_the_entry_point_vllm_loads():
    (plugin,) = [e for e in entry_points(group="vllm.general_plugins") if e.name == "mhcdoctor"]
    assert plugin.value == "mhcdoctor.vllm_plugin:register"
    assert plugin.load().__module__ == "mhcdoctor.vllm_plugin"


@pytest.mark.parametrize("mode", [None, "off", "", "OFF"])
def test_off_imports_and_patches_nothing(tmp_path, mode):
    report, stderr = _child(tmp_path, "register-only", mode)
    assert report["new_modules"] == ["mhcdoctor", "mhcdoctor.vllm_plugin"]  # no torch, no vLLM, no hooks
    assert not report["meta_path_changed"]
    assert stderr == ""


@pytest.mark.slow
def test_off_leaves_vllms_functions_as_they_are(tmp_path):
    report, stderr = _child(tmp_path, "plain", None)
    assert report["records"] == [] and report["startup"] is None and report["refused"] is None
    assert "mhcdoctor" not in stderr and not (tmp_path / "observed").exists()


def test_a_value_it_does_not_know_warns_once_and_stays_off(tmp_path):
    report, stderr = _child(tmp_path, "register-only", "yes")
    assert not report["meta_path_changed"]
    assert stderr.count("MHCDOCTOR_VLLM='yes' is not one of off|observe|strict; the plugin stays off") == 1


def test_a_plugin_that_cannot_load_never_stops_vllm(tmp_path):
    report, stderr = _child(tmp_path, "register-only", "observe", broken=True)
    assert not report["meta_path_changed"]
    # once per register() call
    assert (
        stderr.count("mhcdoctor plugin not installed: ModuleNotFoundError: import of mhcdoctor.vllm_plugin.hooks") == 2
    )


@pytest.mark.slow
def test_observe_records_each_op_path_bucket_and_prenorm_once(tmp_path):
    report, stderr = _child(tmp_path, "plain", "observe")
    assert report["records"] == [
        "mhcdoctor-observed op=mhc_pre path=tilelang tokens=17-64 kernel=mhc_pre_tilelang prenorm=deepgemm graph=eager",
        "mhcdoctor-observed op=mhc_pre path=tilelang tokens=1 kernel=mhc_pre_tilelang prenorm=tilelang graph=eager",
        "mhcdoctor-observed op=mhc_post path=tilelang tokens=17-64 kernel=mhc_post_tilelang graph=eager",
    ]
    assert report["post"] == 20 * 8  # results unchanged: x (ones) plus a zero residual
    assert report["helper_wrapped"] is False
    # the lines go through a vllm.-namespaced logger, once each
    for record in report["records"]:
        assert stderr.count(f"vllm.mhcdoctor INFO {record}\n") == 1
    # the first CustomOp built under a DeepSeek-V4 config logs the verdict once, then CustomOp is vLLM's again
    assert stderr.count("mhcdoctor check --fast for this model (hidden 7168, hc_mult 4; rules vllm-0.30-0.34)") == 1
    assert report["init_restored"] and report["refused"] is None
    assert stderr.count("vllm.model_executor.layers.mhc has none of the mHC targets this plugin knows") == 1
    (written,) = (tmp_path / "observed").glob("mhcdoctor-observed-*.json")
    document = json.loads(written.read_text())
    jsonschema.validate(document, OBSERVED_SCHEMA)
    assert [r["tokens"] for r in document["records"]] == ["17-64", "1", "17-64"]
    assert document["startup"] == report["startup"] and document["vllm"] == "0.34.0"


@pytest.mark.slow
def test_nothing_is_recorded_inside_torch_compile(tmp_path):
    report, _ = _child(tmp_path, "compile", "observe")
    assert report["compiled"] == 2 * 20 * 8
    assert report["records"] == []  # dynamo traced the wrapper as is_compiling(): the record is not in the graph


@pytest.mark.slow
def test_strict_stops_the_build_where_observe_goes_on(tmp_path):
    report, _ = _child(tmp_path, "fake-refusal", "strict")
    assert report["refused"] == "StrictRefusal: mhcdoctor refuses: a wrong-results finding"
    assert report["init_restored"]
    report, _ = _child(tmp_path, "fake-refusal", "observe")
    assert report["refused"] is None and report["startup"] == "line 7168 4"


def _decision(*what_if: str) -> dict:
    done = doctor.run("explain", "--model", "deepseek-v4-pro", "--json", *what_if)
    return json.loads(done.stdout)


def test_strict_refuses_a_known_wrong_results_combination_and_nothing_less():
    mi300x = ("--platform", "rocm", "--arch", "gfx942")
    text = refusal(_decision(*mi300x, "--aiter", "0.1.13", "--aiter-fix", "absent", "--vllm", "0.25.0"))
    assert text is not None and text.startswith("mhcdoctor (MHCDOCTOR_VLLM=strict) refuses to start: aiter-")
    assert "Fix: " in text
    unknown_fix = _decision(*mi300x, "--aiter", "0.1.16", "--aiter-fix", "unknown", "--vllm", "0.25.0")
    assert [f["id"] for f in unknown_fix["findings"]] == ["aiter-sqrsum-unknown"] and refusal(unknown_fix) is None
    assert refusal(_decision(*mi300x, "--aiter", "0.1.13", "--vllm", "0.99.0")) is None  # rules do not know it
    assert (
        refusal(_decision("--platform", "cuda", "--arch", "sm_90", "--tilelang", "0.1.12", "--vllm", "0.34.0")) is None
    )


def test_strict_refuses_every_wrong_results_record_a_shape_limit_too():
    # vLLM 0.26.0's fused post+pre leaves part of hidden 2560 unwritten (tilelang-fused-shape): wrong numbers
    done = doctor.run("explain", "--hidden", "2560", "--json", "--platform", "cuda", "--arch", "sm_90",
                      "--tilelang", "0.1.9", "--vllm", "0.26.0")  # fmt: skip
    text = refusal(json.loads(done.stdout))
    assert text is not None and "tilelang-fused-shape" in text, text


@pytest.mark.slow
def test_kernels_imported_before_the_plugin_are_still_seen_by_name_and_it_says_what_it_cannot_see(tmp_path):
    report, stderr = _child(tmp_path, "early", "observe")
    # the by-name calls are wrapped in place; the torch.ops registrations happened before the plugin and are not
    assert report["records"] == [
        "mhcdoctor-observed op=mhc_pre path=tilelang tokens=1 kernel=mhc_pre_tilelang prenorm=tilelang graph=eager",
        "mhcdoctor-observed op=mhc_post path=tilelang tokens=17-64 kernel=mhc_post_tilelang graph=eager",
    ]
    assert stderr.count("imported before the plugin loaded: calls through torch.ops.vllm are not observed") == 1
