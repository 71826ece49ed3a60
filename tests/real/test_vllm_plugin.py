"""mhcdoctor's vLLM plugin inside real vLLM releases (0.25.0, 0.30.0, 0.34.0), on the CPU.

Each release is `pip install --no-deps vllm==X` into the test cache (conftest.install), beside the packages its
import of layers/mhc.py needs (IMPORT_NEEDS, each cached the same way: mostly pure Python; pydantic-core, tokenizers,
xgrammar, llguidance and apache-tvm-ffi bring binaries) and this venv's CPU torch.
A child (vllm_plugin_child.py) lets vLLM load its general plugins through `vllm.plugins.load_general_plugins()`,
which finds the entry point of the installed mhcdoctor distribution, then calls the real CustomOps; once without
the plugin on, once with it. What it adds to CI: 2.2 GB of cache (the three vLLM releases unpacked: 628, 801 and
547 MB; IMPORT_NEEDS, shared by the three and tests/fleet/test_vllm_plugin_ray.py: 269 MB), several minutes the
first time (46 pip installs), then about 80 s for the three tests (six vLLM imports) on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import doctor
import jsonschema
import pytest

pytestmark = [pytest.mark.real, pytest.mark.slow]

HERE = Path(__file__).parent
REPO = HERE.parents[1]
RELEASES = ("0.25.0", "0.30.0", "0.34.0")
# What `import vllm.model_executor.layers.mhc` needs beyond torch and the standard library (found by importing it
# in 0.25.0, 0.30.0 and 0.34.0 until it imported), pinned to what the index resolved them to.
IMPORT_NEEDS = (
    "aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 annotated-doc==0.0.7 annotated_types==0.8.0 "
    "anyio==4.16.0 apache-tvm-ffi==0.1.15.post2 cachetools==8.0.2 cbor2==6.3.0 cloudpickle==3.1.3 fastapi==0.165.0 "
    "frozenlist==1.8.0 h11==0.16.0 httpcore2==2.17.0 httpx2==2.17.0 huggingface_hub==2.4.0 llguidance==1.9.1 "
    "msgspec==0.23.0 multidict==7.2.1 openai==3.63.0 openai-harmony==0.0.8 opentelemetry-api==1.45.3 "
    "partial-json-parser==0.2.1.1.post7 prometheus_client==0.26.0 propcache==0.5.4 psutil==7.2.2 py-cpuinfo==9.0.0 "
    "pybase64==1.5.1 pydantic==2.14.4 pydantic_core==2.50.5 pyzmq==27.3.0 regex==2026.12.2 safetensors==0.8.0 "
    "sniffio==1.3.1 starlette==1.10.0 tokenizers==0.23.3 tqdm==4.70.1 transformers==5.25.0 truststore==0.10.5 "
    "typing_inspection==0.4.5 uvloop==0.23.0 xgrammar==0.2.9 yarl==1.25.1"
).split()
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
