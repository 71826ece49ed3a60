"""Hardware ids and variables a bundle must not carry (issue 33 §2): AMD's GPU UUIDs as ROCm takes them in
ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, and DeepGEMM's DG_* variables beyond the allowlist's three names."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import doctor
import fakes
from fakemachine import Machine

from mhcdoctor.redact import Identity, new_salt, redact

AMD_UUID = "GPU-4b2f1c2d3e4f5a6b"  # ROCm's unique id: GPU- and 16 hex digits
NVIDIA_UUID = "GPU-12345678-1234-1234-1234-123456789abc"


def test_amd_and_nvidia_gpu_uuids_become_one_pseudonym_each_with_or_without_no_redact():
    text = f"ROCR_VISIBLE_DEVICES=0,{AMD_UUID},GPU-4B2F1C2D3E4F5A6C CUDA_VISIBLE_DEVICES={NVIDIA_UUID}"
    for identities in (True, False):
        shown, record = redact({"x": text}, Identity(), identities=identities, salt=b"s")
        assert AMD_UUID[4:] not in shown["x"] and "4B2F1C2D3E4F5A6C" not in shown["x"]
        assert NVIDIA_UUID[4:] not in shown["x"] and shown["x"].startswith("ROCR_VISIBLE_DEVICES=0,gpu-")
        assert shown["x"].count("gpu-") == 3 and record.counts["gpu uuid"] == 1
    same, _ = redact({"a": AMD_UUID, "b": f"device {AMD_UUID}"}, Identity(), salt=new_salt())
    assert same["b"] == "device " + same["a"]  # one GPU, one pseudonym within a report
    kept, _ = redact({"x": "GPU-4b2f1c2d3e4f5a6b7 sha GPU-0123"}, Identity())  # not the id's shape: left
    assert kept["x"] == "GPU-4b2f1c2d3e4f5a6b7 sha GPU-0123"


def _report(machine: Machine, tmp_path: Path, *args: str) -> dict[str, bytes]:
    bundle = tmp_path / f"r{len(args)}.tar.gz"
    done = doctor.run("report", "--fast", "--bundle", str(bundle), *args, env=machine)
    assert done.returncode in (0, 3), done.stderr
    with tarfile.open(bundle) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_a_bundle_carries_no_amd_gpu_uuid_and_only_the_allowlisted_dg_variables(tmp_path):
    machine = Machine(tmp_path)
    fakes.kfd(machine.root, [0, 90402])
    env = {
        "ROCR_VISIBLE_DEVICES": AMD_UUID, "HIP_VISIBLE_DEVICES": f"0,{AMD_UUID}",
        "DG_JIT_CACHE_DIR": "/srv/dg-cache", "DG_JIT_DEBUG": "1", "DG_JIT_PRINT_COMPILER_COMMAND": "planted-dg",
    }  # fmt: skip
    original = machine.env
    machine.env = lambda: {**original(), **env}  # type: ignore[method-assign]
    for args in ((), ("--no-redact",)):
        files = _report(machine, tmp_path, *args)
        everything = b"".join(files.values())
        assert AMD_UUID[4:].encode() not in everything, args
        assert b"DG_JIT_DEBUG" not in everything and b"planted-dg" not in everything, args
        report = json.loads(next(v for k, v in files.items() if k.endswith("report.json")))
        assert report["env"]["ROCR_VISIBLE_DEVICES"].startswith("gpu-")
        assert report["env"]["DG_JIT_CACHE_DIR"] == "/srv/dg-cache"  # on the allowlist: the doctor reads it
        assert report["facts"]["vllm_env"]["DG_JIT_CACHE_DIR"] == "/srv/dg-cache"
