"""Files an environment puts where the files-only probes look are hostile: a FIFO or a link to a device named like a
kernel source or a package's `__init__.py` must not hang the doctor, and metadata must not steer where it looks."""

from __future__ import annotations

import os
import time
from pathlib import Path

import doctor
import fakes
import pytest
from fakemachine import Machine

from mhcdoctor.probes import PROBES
from mhcdoctor.probes.files import open_regular, read_bytes, read_text

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs POSIX")
MHC = 'extern "C" __global__ void mhc_post_tilelang_kernel('


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _device_link(path: Path, device: str = "/dev/zero") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(device)
    return path


@needs_fifo
def test_a_fifo_a_device_and_a_folder_are_not_read_and_a_regular_file_is_read_to_its_limit(tmp_path):
    start = time.perf_counter()
    assert read_text(_fifo(tmp_path / "fifo")) is None  # a plain open() blocks here until a writer comes
    assert read_bytes(_device_link(tmp_path / "zero")) is None  # /dev/zero never ends
    assert read_text(tmp_path) is None and read_text(tmp_path / "absent") is None
    assert read_text(tmp_path / "nul\0byte") is None
    assert time.perf_counter() - start < 2
    regular = fakes.write(tmp_path / "a.txt", "é" * 10)
    assert read_bytes(regular, limit=3) == "é".encode() + b"\xc3"
    assert read_text(regular, limit=4) == "éé"
    linked = tmp_path / "link.txt"
    linked.symlink_to(regular)  # a link to a regular file is read: installs link packages into place
    assert read_text(linked) == "é" * 10
    with pytest.raises(OSError, match="not a regular file"), open_regular(tmp_path / "fifo"):
        pass


@needs_fifo
def test_the_probes_skip_a_fifo_kernel_source_and_a_fifo_deep_gemm_init(tmp_path):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.12")
    cache = tmp_path / "tlcache"
    kernels = cache / "0.1.12-x86_64" / "kernels"
    fakes.write(kernels / "good" / "device_kernel.cu", MHC)
    _fifo(kernels / "fifo" / "device_kernel.cu")
    _device_link(kernels / "tty" / "device_kernel.cu", "/dev/tty")  # opening a tty can make it ours
    _fifo(site / "deep_gemm" / "__init__.py")
    ctx = fakes.context(tmp_path, site, env={"TILELANG_CACHE_DIR": str(cache)})
    start = time.perf_counter()
    tilelang = PROBES["tilelang.cache"](ctx).data
    deepgemm = PROBES["deepgemm"](ctx)
    assert time.perf_counter() - start < 5
    assert (tilelang["entries"], tilelang["mhc_entries"]) == (3, 1)
    assert deepgemm.status == "ok" and deepgemm.data["has_prenorm_gemm"] is None
    assert "unread" in deepgemm.evidence[0]


def _tilelang_with_version(tmp_path: Path, version: str):
    site = fakes.site(tmp_path)
    fakes.library(site, "tilelang", "0.1.12")
    metadata = next(site.glob("tilelang-*.dist-info")) / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 0.1.12", f"Version: {version}"))
    cache = tmp_path / "tlcache"
    fakes.write(cache / "0.1.12-x86_64" / "kernels" / "k" / "device_kernel.cu", MHC)
    return PROBES["tilelang.cache"](fakes.context(tmp_path, site, env={"TILELANG_CACHE_DIR": str(cache)}))


def test_a_tilelang_version_is_not_a_path_or_a_glob(tmp_path):
    """METADATA's `Version: ../outside` made the probe count kernels outside the cache (and `../**/**/x` walk the
    whole disk): the version only picks a namespace folder by name."""
    fakes.write(tmp_path / "a" / "outside-evil" / "kernels" / "k1" / "device_kernel.cu", MHC)
    fakes.write(tmp_path / "a" / "outside-evil" / "kernels" / "k2" / "device_kernel.cu", MHC)
    climbed = _tilelang_with_version(tmp_path / "a", "../outside")
    assert "for tilelang ../outside" in climbed.evidence[0]
    assert climbed.data["mhc_entries"] == 0  # the old layout's reading of the cache folder itself: no kernel there
    for n, pattern in enumerate(("*", "0.1.1?", "[0]*")):  # glob patterns as a version match no namespace either
        assert _tilelang_with_version(tmp_path / f"glob{n}", pattern).data["mhc_entries"] == 0
    assert _tilelang_with_version(tmp_path / "b", "0.1.12").data["mhc_entries"] == 1


@needs_fifo
def test_check_fast_finishes_with_fifos_where_kernel_sources_and_deep_gemm_should_be(tmp_path):
    """As a user meets it: a poisoned cache and site-packages, `mhcdoctor check --fast` in a real subprocess. Before
    the fix it hung until killed (20 s; 0.2 s without the FIFOs)."""
    machine = Machine(tmp_path)
    fakes.nvidia_proc(machine.root, gpus=[("0000:18:00.0", "NVIDIA H200")])
    fakes.library(machine.site, "tilelang", "0.1.12")
    fakes.library(machine.site, "vllm", "0.30.0")
    _fifo(tmp_path / ".tilelang" / "cache" / "0.1.12-x86_64" / "kernels" / "k" / "device_kernel.cu")
    _device_link(tmp_path / ".tilelang" / "cache" / "0.1.12-x86_64" / "kernels" / "z" / "device_kernel.cu")
    _fifo(machine.site / "deep_gemm" / "__init__.py")
    start = time.perf_counter()
    done = doctor.spawn("check", "--fast", "--json", env=machine, timeout=60)  # --python: the machine's
    assert time.perf_counter() - start < 20
    assert done.returncode == 3 and "Traceback" not in done.stderr  # 3: tilelang-missing's fail, not a crash
    assert '"name": "deepgemm"' in done.stdout
