"""On a GPU: this project's torch, triton and tilelang paths pass verify for DeepSeek-V4-Pro and -Flash.

Skipped where no GPU is visible (CI); scripts/gpu-tests runs them on the GPU machine.
"""

from __future__ import annotations

import doctor
import needs
import pytest

pytestmark = needs.gpu("needs a CUDA or ROCm GPU")
PATHS = ["--path", "torch", "--path", "triton", "--path", "tilelang"]


def verify(*args: str) -> tuple[int, dict]:
    proc = doctor.spawn("verify", *PATHS, "--json", *args, timeout=1200)
    return proc.returncode, proc.json()


@pytest.mark.parametrize("model", ["deepseek-v4-pro", "deepseek-v4-flash"])
def test_every_gpu_path_passes_at_default_token_counts(model: str) -> None:
    code, doc = verify("--model", model)
    failing = [
        (r["path"], r["op"], r["tokens"], r["status"], r["reason"]) for r in doc["results"] if r["status"] != "pass"
    ]
    assert (code, failing) == (0, [])


def test_a_planted_race_in_a_gpu_path_fails_only_above_16_tokens() -> None:
    from mutants import mutant

    from mhcdoctor.models import builtin
    from mhcdoctor.verify import cases, worker

    params = cases.Params.from_model(builtin("deepseek-v4-flash"))
    impl = mutant("sqrsum-race")
    rows = {r["tokens"]: r["status"] for r in worker.run_path(impl, ["mhc_pre"], [7, 80], params, "cuda:0")}
    assert rows == {7: "pass", 80: "fail"}
