"""Which archs DeepGEMM's tf32_hc_prenorm_gemm has a kernel for, read from its compiled library (the deepgemm probe,
files only): in every vLLM wheel's vendored library where the wheels are unpacked (/work/cache/vllm-files, or
$MHCDOCTOR_VLLM_FILES), against knowledge/vllm_releases.py; and on fake installs: a symbol across a read chunk, a
FIFO and a device under the library's name, and what the finding says on sm_12x from what was read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import fakes
import pytest

from mhcdoctor.facts import Facts
from mhcdoctor.knowledge import vllm_releases
from mhcdoctor.models import BUILTIN_MODELS
from mhcdoctor.probes import PROBES, facts_from_probes
from mhcdoctor.probes.deepgemm import _CHUNK, prenorm_archs
from mhcdoctor.rules import decide
from mhcdoctor.whatif import WhatIf, build_facts

FILES = Path(os.environ.get("MHCDOCTOR_VLLM_FILES", "/work/cache/vllm-files"))
LIB = "_C.cpython-312-x86_64-linux-gnu.so"


@pytest.mark.parametrize("release", [r.version for r in vllm_releases.RELEASES])
def test_each_wheels_vendored_library_holds_the_archs_its_release_record_says(release: str) -> None:
    folder = FILES / release / "vllm" / "third_party" / "deep_gemm"
    if not folder.is_dir():
        pytest.skip(f"vLLM {release}'s wheel is not unpacked under {FILES}")
    archs, read = prenorm_archs(folder)
    record = vllm_releases.release_of(release)
    assert record is not None and archs == list(record.deepgemm_prenorm_archs or ()), read


def _vendored(tmp_path: Path, library: bytes, name: str = LIB) -> Path:
    site = fakes.site(tmp_path)
    folder = fakes.package(site, "vllm", {"third_party/deep_gemm/__init__.py": "from ._C import tf32_hc_prenorm_gemm\n"
                                          "__version__ = '2.6.1'\n"})  # fmt: skip
    (folder / "third_party" / "deep_gemm" / name).write_bytes(library)
    return site


def test_a_symbol_split_across_two_read_chunks_is_found(tmp_path: Path) -> None:
    symbol = b"sm120_tf32_hc_prenorm_gemm"
    body = b"\0" * (_CHUNK - 10) + symbol + b"\0sm90_tf32_hc_prenorm_gemm\0"
    site = _vendored(tmp_path, body)
    result = PROBES["deepgemm"](fakes.context(tmp_path, site, fast=True))
    assert result.data["prenorm_archs"] == ["sm_90", "sm_120"]
    assert f"{LIB}: tf32_hc_prenorm_gemm kernels for sm_90, sm_120" in result.evidence


def test_a_fifo_or_a_device_named_as_the_library_is_not_read_and_does_not_hang(tmp_path: Path) -> None:
    site = _vendored(tmp_path, b"", name="_C.cpython-311-x86_64-linux-gnu.so")
    folder = site / "vllm" / "third_party" / "deep_gemm"
    (folder / "_C.cpython-311-x86_64-linux-gnu.so").unlink()
    os.mkfifo(folder / "_C.cpython-311-x86_64-linux-gnu.so")  # opened without O_NONBLOCK this blocks forever
    (folder / "_C.cpython-312-x86_64-linux-gnu.so").symlink_to("/dev/zero")  # endless if read
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(PROBES["deepgemm"](fakes.context(tmp_path, site))))
    worker.start()
    worker.join(10)
    assert done, "the probe hung on a FIFO or a device"
    assert done[0].data["prenorm_archs"] is None  # type: ignore[attr-defined]


def _sm120_finding(tmp_path: Path, release: str, library: bytes | None) -> str | None:
    site = fakes.site(tmp_path)
    fakes.library(site, "vllm", release)
    folder = site / "vllm" / "third_party" / "deep_gemm"
    fakes.write(folder / "__init__.py", "from ._C import tf32_hc_prenorm_gemm\n__version__ = '2.6.1'\n")
    if library is not None:
        (folder / LIB).write_bytes(library)
    probed = facts_from_probes([PROBES["deepgemm"](fakes.context(tmp_path, site, fast=True))])
    # an RTX 5090 with tilelang 0.1.12 and this vLLM (what-ifs), and the DeepGEMM the probe read from the files
    facts = build_facts(WhatIf("cuda", "sm_120", "none", None, "0.1.12", None, None), base=Facts)
    facts.deepgemm, facts.vllm.present, facts.vllm.version = probed.deepgemm, True, release
    found = [f for f in decide(facts, BUILTIN_MODELS["deepseek-v4-pro"], release).findings
             if f.id == "deepgemm-prenorm-broken"]  # fmt: skip
    return found[0].detail if found else None


def test_on_sm_12x_the_installed_library_decides_over_the_release(tmp_path: Path) -> None:
    sm90_100 = b"\0sm90_tf32_hc_prenorm_gemm\0sm100_tf32_hc_prenorm_gemm\0"
    # 0.28.0's wheel vendors an sm120 kernel, but the library installed here holds none: the library decides
    detail = _sm120_finding(tmp_path / "a", "0.28.0", sm90_100)
    assert detail is not None and "its library holds kernels for sm_90, sm_100" in detail
    assert _sm120_finding(tmp_path / "b", "0.28.0", sm90_100 + b"sm120_tf32_hc_prenorm_gemm\0") is None
    # no library to read: the release's record says (0.27.x's vendored build lacks sm_120, 0.26.0's has it)
    detail = _sm120_finding(tmp_path / "c", "0.27.1", None)
    assert detail is not None and "vLLM 0.27.1's wheel vendors kernels for sm_90, sm_100" in detail
    assert _sm120_finding(tmp_path / "d", "0.26.0", None) is None
