"""Check/1 documents for the triage tests, written by hand after INTERFACES.md, with identity and secrets planted.

`rocm_report()` is a user's MI300X machine with aiter 0.1.13 (the sqrsum race) under vLLM 0.25.0; every planted
name below must vanish from anything `report` shares.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from mhcdoctor.facts import Facts, rules_view

HOME = "/home/zed.planted"
USER = "zed.planted"
HOST = "gpunode-planted17"
FQDN = "gpunode-planted17.corp-planted.example"
SECRET_TOKEN = "hf_PLANTEDsecretTOKENvalue0123456789"
SECRET_KEY = "vllm-planted-api-key-98765"
PLANTED = (HOME, USER, HOST, FQDN, SECRET_TOKEN, SECRET_KEY, "corp-planted")


def _finding(fid: str, severity: str, title: str) -> dict[str, Any]:
    return {"id": fid, "severity": severity, "title": title, "detail": f"{title}.", "fix": "see docs", "refs": []}


def _model(name: str, hidden: int, paths: dict[str, str], findings: list[dict[str, Any]], verdict: str) -> dict:
    ops = {
        op: {"path": path, "why": [{"path": path, "gate": "installed", "observed": True, "passed": True, "text": "ok"}]}
        for op, path in paths.items()
    }
    return {
        "model": {"name": name, "hidden_size": hidden, "hc_mult": 4},
        "facts": rules_view(  # as explain/1 writes it: every member its RulesFactsDocument declares
            Facts.from_dict(
                {
                    "platform": "rocm",
                    "arch": "gfx942",
                    "aiter": {"version": "0.1.13", "sqrsum_fix": "absent"},
                    "tilelang": {"version": "0.1.9"},
                }
            ),
            {"version": "0.25.0", "build": "rocm", "platform": "rocm", "runs_here": True, "blocked_by": []},
        ),
        "rules": "vllm-0.25-0.28",
        "rules_note": None,
        "ops": ops,
        "fused_post_pre": False,
        "findings": findings,
        "verdict": verdict,
        "sources": {},
    }


def _device(index: int, arch: str = "gfx942", driver: str = "6.10.5") -> dict[str, Any]:
    return {
        "index": index,
        "vendor": "amd",
        "arch": arch,
        "name": "AMD Instinct MI300X",
        "memory_bytes": 192 << 30,
        "driver": driver,
        "source": "kfd",
    }


def rocm_report() -> dict[str, Any]:
    race = _finding("aiter-sqrsum-race", "fail", "aiter lacks the mhc_pre_gemm_sqrsum race fix")
    paths = {"mhc_pre": "aiter", "mhc_post": "aiter", "mhc_fused_post_pre": "tilelang", "hc_head": "tilelang"}
    package = {"present": True, "imports": True, "import_error": None}
    return {
        "schema": "mhcdoctor.check/1",
        "mhcdoctor_version": "0.1.0",
        "created": "2026-12-02T12:00:00Z",
        "mode": "full",
        "seconds": 3.2,
        "host": {
            "hostname": HOST,
            "user": USER,
            "python": f"{HOME}/venvs/vllm/bin/python",
            "python_version": "3.12.3",
            "os": "Linux-6.8.0-x86_64-with-glibc2.39",
            "cwd": f"{HOME}/work",
        },
        "env": {
            "HIP_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
            "VLLM_API_KEY": SECRET_KEY,
            "PATH": f"{HOME}/.local/bin:/opt/rocm/bin:/usr/bin",
            "AITER_JIT_DIR": f"{HOME}/.aiter/jit",
        },
        # In full, as Facts.to_dict() writes it (and reportfile normalises a saved one to): the views trust that.
        "facts": Facts.from_dict(
            {
                "platform": "rocm",
                "arch": "gfx942",
                "devices": [_device(i) for i in range(8)],
                "rocm_version": "7.0.2",
                "cuda_driver_version": None,
                "nvidia_driver": None,
                "torch": {
                    **package,
                    "version": "2.9.0+rocm7.0",
                    "location": f"{HOME}/venvs/vllm/lib",
                    "cuda": None,
                    "hip": "7.0.51831",
                },
                "nvcc": {"found": False, "path": None, "version": None},
                "hipcc": {"found": True, "path": "/opt/rocm/bin/hipcc", "version": "7.0.2"},
                "aiter": {
                    **package,
                    "version": "0.1.13",
                    "location": f"{HOME}/src/aiter/aiter",
                    "genuine": True,
                    "distribution": "amd-aiter",
                    "sqrsum_fix": "absent",
                    "sqrsum_fix_evidence": f"{HOME}/src/aiter/csrc/kernels/mhc_kernels.cu: racy store guard",
                    "has_mhc_ops": True,
                    "mhc_pre_norm_args": False,
                    "has_fused_post_pre": False,
                    "module_mhc_so": None,
                },
                "tilelang": {**package, "version": "0.1.9", "location": f"{HOME}/venvs/vllm/lib"},
                "triton": {**package, "version": "3.4.0", "location": None},
                "vllm": {**package, "version": "0.25.0", "location": f"{HOME}/venvs/vllm/lib"},
                "sources": {"aiter.version": "probe:aiter", "arch": "probe:gpu.kfd"},
            }
        ).to_dict(),
        "probes": [
            {
                "name": "gpu.kfd",
                "status": "ok",
                "data": {"devices": 8},
                "evidence": ["/sys/class/kfd/kfd/topology/nodes/1/properties: gfx_target_version 90402"],
                "source": "sysfs",
                "seconds": 0.004,
                "error": None,
            },
            {
                "name": "aiter.import",
                "status": "error",
                "data": {},
                "evidence": [
                    "child exited with code 1",
                    f'stderr: Traceback: File "{HOME}/src/aiter/aiter/__init__.py" on {FQDN} by {USER}@{HOST}\n'
                    f"HF_TOKEN={SECRET_TOKEN} KeyError: 'libamd_smi'",
                ],
                "source": "child: import aiter",
                "seconds": 1.5,
                "error": "import aiter exited with code 1",
            },
        ],
        "models": [
            _model("deepseek-v4-pro", 7168, paths, [race], "fail"),
            _model("deepseek-v4-flash", 4096, paths, [race], "fail"),
        ],
        "findings": [race],
        "verdict": "fail",
        "verify": None,
    }


def write_json(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def variant(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of `doc` with dotted keys replaced: variant(d, **{"facts.aiter.version": "0.1.16"})."""
    out = copy.deepcopy(doc)
    for dotted, value in changes.items():
        target = out
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(leaf)] = value
        else:
            target[leaf] = value
    return out
