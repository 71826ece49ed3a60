"""bench on vLLM's own kernels, loaded from a wheel's kernel files (tests/bench/vllm_fixture.py), on the CPU.

The wheel here is a small one built by the test, laid out as vLLM's (`vllm-X.dist-info/METADATA`,
`vllm/model_executor/kernels/mhc/tilelang.py`), whose functions compute with mhcdoctor's torch reference: what is
tested is the fixture's stand-ins and how bench calls the functions vLLM's model calls (norm_weight, the
`_reuse_residual` form that overwrites its residual, a fused op slower than post then pre). The real kernel files
run on the GPU machine (scripts/gpu-vllm-kernels, tests/bench/test_gpu_bench.py).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import doctor
import jsonschema
import needs
import pytest
import vllm_fixture
from synthetic_vllm import KERNELS, make_wheel

HERE = Path(__file__).parent
SCHEMA = json.loads((HERE.parents[1] / "mhcdoctor" / "schemas" / "bench.schema.json").read_text())


def test_the_fixture_copies_the_kernel_files_and_names_the_release_and_its_tilelang_pin(tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert vllm_fixture.build(make_wheel(tmp_path), out) == "9.9.0"
    init = (out / "vllm/__init__.py").read_text()
    assert "__version__ = '9.9.0'" in init and "TILELANG_PIN = 'tilelang==0.1.12'" in init
    assert (out / "vllm/model_executor/kernels/mhc/tilelang.py").read_text() == KERNELS
    assert not (out / "vllm/model_executor/kernels/mhc/torch.py").exists()


def test_a_wheel_without_the_tilelang_kernels_is_refused_with_the_reason(tmp_path: Path) -> None:
    wheel = tmp_path / "vllm-0.19.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("vllm-0.19.0.dist-info/METADATA", "Name: vllm\n")
    with pytest.raises(ValueError, match=r"vLLM 0.19.0 has no vllm/model_executor/kernels/mhc/tilelang.py"):
        vllm_fixture.build(wheel, tmp_path / "site")


@pytest.fixture(scope="module")
def bench_doc(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    folder = tmp_path_factory.mktemp("vllm")
    vllm_fixture.build(make_wheel(folder), folder / "site")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder / "site"), str(HERE.parents[1])]))
    args = ["--model", "deepseek-v4-flash", "--hidden", "256", "--device", "cpu", "--tokens", "1", "--repeats", "3"]
    proc = doctor.run("bench", *args, "--path", "vllm:tilelang", "--path", "torch", "--json", env=env)
    text = doctor.run("bench", *args, "--path", "vllm:tilelang", "--path", "tilelang", env=env)
    return json.loads(proc.stdout), text.stdout


@pytest.mark.slow
def test_vllms_ops_are_called_as_its_model_calls_them_and_each_output_is_right(bench_doc: tuple[dict, str]) -> None:
    doc, _ = bench_doc
    jsonschema.validate(doc, SCHEMA)
    rows = {r["op"]: r for r in doc["results"] if r["path"] == "vllm:tilelang"}
    assert {op: (r["status"], r["called"]) for op, r in rows.items()} == {
        "mhc_pre": ("pass", "mhc_pre_tilelang (norm_weight)"),
        "mhc_post": ("pass", "mhc_post_tilelang"),
        # checked on fresh copies of its inputs: the residual it overwrote is not what the oracle is given
        "mhc_fused_post_pre": ("pass", "mhc_fused_post_pre_tilelang_reuse_residual (norm_weight)"),
        "hc_head": ("pass", "hc_head_fused_kernel_tilelang"),
    }
    assert (doc["vllm"], doc["roles"]) == ("9.9.0", {"vllm:tilelang": "vllm", "torch": "torch"})
    notes = next(p["notes"] for p in doc["paths"] if p["path"] == "vllm:tilelang")
    assert "vLLM is not installed: vLLM 9.9.0's kernel files from its wheel, with stand-ins for the rest" in notes
    assert "prenorm GEMM: vLLM's tilelang GEMM (DeepGEMM is off here)" in notes


@pytest.mark.slow
def test_a_fused_op_slower_than_post_then_pre_is_reported_per_step(bench_doc: tuple[dict, str]) -> None:
    doc, _ = bench_doc
    (batch,) = doc["step"]["batches"]
    slow = [s for s in batch["fused_slower"] if s["path"] == "vllm:tilelang"]
    assert len(slow) == 1 and slow[0]["fused_ms"] > max(500, slow[0]["separate_ms"])  # the 0.5 s it sleeps
    # DeepSeek-V4-Flash: 43 layers, 86 sublayers, 85 fused ops per decode step
    assert slow[0]["per_step_ms"] == pytest.approx(85 * (slow[0]["fused_ms"] - slow[0]["separate_ms"]))


@pytest.mark.slow
def test_the_text_names_vllms_release_and_labels_the_probe_kernels(bench_doc: tuple[dict, str]) -> None:
    _, text = bench_doc
    assert "vLLM 9.9.0: its own kernels timed as its DeepSeek-V4 model calls them" in text
    assert "tilelang (probe) [mhcdoctor's probe kernels, not what vLLM runs; out of the per-step comparison]" in text
    assert "finding: vllm:tilelang's fused post+pre takes" in text


@pytest.mark.slow
def test_without_vllm_the_header_says_so_and_probes_are_not_timed_unless_named() -> None:
    if not needs.installed("torch"):
        pytest.skip("needs torch")
    env = dict(os.environ, PYTHONPATH=str(HERE.parents[1]))
    proc = doctor.run("bench", "--hidden", "256", "--device", "cpu", "--tokens", "1", "--repeats", "3", env=env)
    assert "vLLM is not installed: its own kernels could not be timed; stand-ins are timed instead" in proc.stdout
    assert "(probe)" not in proc.stdout and "\n  tilelang" not in proc.stdout and "\n  triton" not in proc.stdout
