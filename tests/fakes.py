"""Real fake installs for tests: dist-info folders, package folders, sysfs/procfs trees and tools in tmp_path.

Nothing here mocks importlib or the probes; every builder writes the files a real install or a real kernel
driver would, so the probes (and children importing the fakes) read them exactly as on a user's machine.
Typical use:

    site = fakes.site(tmp_path)
    fakes.aiter(site, version="0.1.13", kernel="racy")
    fakes.kfd(tmp_path / "root", [0, 90402, 90402])
    ctx = fakes.context(tmp_path, site=site, root=tmp_path / "root")

`context` gives a ProbeContext that sees only the fakes: its search path is the fake site, its root the fake
`/`, its environment a bare PATH (plus what you pass), and a short child timeout.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from mhcdoctor.probes.context import ProbeContext

# Bodies for a fake package's __init__.py that fail the way broken installs do when imported.
HANG = "import time\ntime.sleep(600)\n"
SEGFAULT = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
NVRTC_MISSING = 'raise OSError("libnvrtc.so.13: cannot open shared object file: No such file or directory")\n'


def raises(exc: str) -> str:
    """An __init__.py body raising `exc`, e.g. raises('ImportError("undefined symbol: cuModuleLoad")')."""
    return f"raise {exc}\n"


def site(tmp_path: Path, name: str = "site-packages") -> Path:
    """An empty site-packages folder under tmp_path."""
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write(path: Path, text: str) -> Path:
    """Write `text` to `path`, creating folders; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def dist_info(
    site_dir: Path,
    name: str,
    version: str,
    top_level: list[str] | None = None,
    files: list[str] | None = None,
    editable_root: Path | None = None,
    requires: list[str] | None = None,
) -> Path:
    """A `<name>-<version>.dist-info` folder with METADATA, RECORD and (when given) top_level.txt.

    `files` are RECORD's paths relative to the site folder; `editable_root` adds a PEP 610 direct_url.json
    marking an editable install of that source folder; `requires` are METADATA's Requires-Dist lines.
    """
    folder = site_dir / f"{name.replace('-', '_')}-{version}.dist-info"
    headers = "".join(f"Requires-Dist: {r}\n" for r in requires or [])
    write(
        folder / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{headers}\nA fake for tests.\n"
    )
    record = [*(files or []), f"{folder.name}/METADATA,,", f"{folder.name}/RECORD,,"]
    write(folder / "RECORD", "".join(f"{line if ',' in line else line + ',,'}\n" for line in record))
    write(folder / "INSTALLER", "pip\n")
    if top_level is not None:
        write(folder / "top_level.txt", "".join(f"{t}\n" for t in top_level))
    if editable_root is not None:
        url = {"url": editable_root.as_uri(), "dir_info": {"editable": True}}
        write(folder / "direct_url.json", json.dumps(url))
    return folder


def package(site_dir: Path, name: str, files: dict[str, str] | None = None, init: str = "") -> Path:
    """A package folder `<site>/<name>/` with `__init__.py` (body `init`) and more files by relative path."""
    folder = site_dir / name
    write(folder / "__init__.py", init)
    for relative, text in (files or {}).items():
        write(folder / relative, text)
    return folder


def library(
    site_dir: Path, name: str, version: str, init: str = "", dist: str | None = None, requires: list[str] | None = None
) -> Path:
    """An installed library: package `name` whose __init__ runs `init` (and sets __version__), plus its dist-info
    (with `requires` as its Requires-Dist)."""
    folder = package(site_dir, name, init=f"__version__ = {version!r}\n{init}")
    dist_info(site_dir, dist or name, version, top_level=[name], files=[f"{name}/__init__.py"], requires=requires)
    return folder


# The mhc_pre_gemm_sqrsum_kernel store guard in each state (aiter #3033), inside a little surrounding code.
_KERNEL_GUARDS = {
    "racy": "if ((warp_id * mfma_m + lane_id < m_oob)) {",
    "fixed": "if (lane_id < mfma_m && (warp_id * mfma_m + lane_id < m_oob)) {",
    "v0.1.11": "if (lane_id < mfma_m) {",
    "fixed-reflowed": "if (lane_id <  mfma_m &&\n                (warp_id*mfma_m + lane_id < m_oob)) {",
    "unrecognised": "if (row < rows) {",
}


# Real regions of ROCm/aiter's mhc_kernels.cu and the signatures of aiter/ops/mhc.py, per tag and per commit of main
# that changed them, as scripts/aiter-code-table cut them (each file names its tag and commit).
AITER_CODE = Path(__file__).resolve().parent / "data" / "aiter_code"
AITER_TAGS = sorted(p.stem for p in AITER_CODE.glob("*.cu"))
# The tag whose other fixes go with each guard state: the racy guard's v0.1.12 (every other bug too), the fixed one's
# v0.1.16 (every fix, before the code aiter #4633 was reported on).
_GUARD_TAG = {"racy": "v0.1.12", "fixed": "v0.1.16", "v0.1.11": "v0.1.11", "fixed-reflowed": "v0.1.16"}


def mhc_kernels_cu(state: str) -> str:
    """A small mhc_kernels.cu whose sqrsum store guard (line 4) is in `state`: racy, fixed, v0.1.11, fixed-reflowed,
    unrecognised (no known guard at all, nor any other known code); then the real regions of the tag that goes with
    it, so that the other fixes are told alike."""
    return (
        "// fake aiter mHC kernels for tests\n"
        "__global__ void mhc_pre_gemm_sqrsum_kernel(float* sqrsum, int m_oob) {\n"
        "    float sqrsum_ = cross_row_sum_4(sqrsum_part, lane_id);\n"
        f"    {_KERNEL_GUARDS[state]}\n"
        "        sqrsum[k_split_idx * m + idx + warp_id * mfma_m + lane_id] = sqrsum_;\n"
        "    }\n"
        "}\n"
    ) + (real_kernels(_GUARD_TAG[state]) if state in _GUARD_TAG else "")


def real_kernels(tag: str) -> str:
    """The regions of mhc_kernels.cu that mhcdoctor reads, at `tag` (one of AITER_TAGS)."""
    return (AITER_CODE / f"{tag}.cu").read_text()


def real_mhc_ops(tag: str) -> str:
    """aiter/ops/mhc.py at `tag`, cut to its function signatures (plain defaults, so it imports)."""
    return (AITER_CODE / f"{tag}.mhc_py").read_text()


def mhc_ops_py(norm_args: bool, fused: bool) -> str:
    """An aiter/ops/mhc.py: mhc_pre (with norm_weight/norm_eps if `norm_args`), mhc_fused_post_pre if `fused`."""
    norm = ", norm_weight=None, norm_eps=1e-6" if norm_args else ""
    text = (
        "def compile_ops(name):\n    return lambda fn: fn\n\n\n"
        f"def mhc_pre(residual, fn, hc_scale, hc_base, rms_eps=1e-6, hc_pre_eps=1e-6, hc_sinkhorn_eps=1e-6,\n"
        f"            hc_post_mult_value=1.0, sinkhorn_repeat=20{norm}):\n    return None\n\n\n"
        "@compile_ops('module_mhc')\ndef mhc_post(out, x, residual, post_layer_mix, comb_res_mix):\n    return None\n"
    )
    if fused:
        text += "\n\ndef mhc_fused_post_pre(*args, norm_weight=None, norm_eps=1e-6):\n    return None\n"
    return text


def aiter(
    site_dir: Path,
    version: str | None = "0.1.14",
    kernel: str | None = "fixed",
    checkout: Path | None = None,
    norm_args: bool = False,
    fused: bool = False,
    version_file: str | None = None,
    module_mhc_so: Path | None = None,
    init: str = "",
    code: str | None = None,
) -> Path:
    """AMD's aiter: package `aiter` with jit/core.py, jit/optCompilerConfig.json (module_mhc), ops/mhc.py.

    - `version`: the amd-aiter dist-info's version; None installs no metadata (a source tree on PYTHONPATH).
    - `kernel`: state of mhc_kernels.cu (see `mhc_kernels_cu`), or None for no kernel source. An install puts it
      under `<site>/aiter_meta/csrc/kernels/`.
    - `checkout`: an editable install (`pip install -e`): the package and csrc/kernels/ go into this source folder
      (put it on the search path too), the dist-info into the site, marked editable (direct_url.json).
    - `version_file`: writes aiter/_version.py with this __version__ (setuptools_scm's file).
    - `module_mhc_so`: a folder in which to place a built module_mhc.so.
    - `init`: body of aiter/__init__.py (e.g. HANG or SEGFAULT).
    - `code`: one of AITER_TAGS: the real mhc_kernels.cu regions and aiter/ops/mhc.py signatures of that tag (or
      build of main) instead of `kernel`, `norm_args` and `fused`.
    """
    files = {
        "jit/__init__.py": "",
        "jit/core.py": "# aiter's JIT driver\n",
        "jit/optCompilerConfig.json": json.dumps({"module_aiter_enum": {}, "module_mhc": {"srcs": []}}),
        "ops/__init__.py": "",
        "ops/mhc.py": real_mhc_ops(code) if code else mhc_ops_py(norm_args, fused),
        "install_mode": "develop" if checkout else "install",
    }
    if version_file is not None:
        files["_version.py"] = f"__version__ = version = {version_file!r}\n"
    folder = package(checkout or site_dir, "aiter", files, init=init)
    if kernel is not None or code is not None:
        meta = checkout if checkout else site_dir / "aiter_meta"
        source = real_kernels(code) if code else mhc_kernels_cu(kernel or "")
        write(meta / "csrc" / "kernels" / "mhc_kernels.cu", source)
    if version is not None:
        # An editable install records only its .pth/finder files: ownership comes from direct_url.json.
        recorded = ["__editable__.amd_aiter.pth"] if checkout else ["aiter/__init__.py", "aiter_meta/__init__.py"]
        dist_info(
            site_dir,
            "amd-aiter",
            version,
            top_level=None if checkout else ["aiter", "aiter_meta"],
            files=recorded,
            editable_root=checkout,
        )
    if module_mhc_so is not None:
        write(module_mhc_so / "module_mhc.so", "not really a shared object\n")
    return folder


def impostor_aiter(site_dir: Path) -> Path:
    """PyPI's unrelated `aiter` (async iterators), distribution `aiter` 0.13.20191203."""
    folder = package(
        site_dir, "aiter", {"version.py": "__version__ = '0.13.20191203'\n"}, init="from .version import *\n"
    )
    dist_info(site_dir, "aiter", "0.13.20191203", top_level=["aiter"], files=["aiter/__init__.py", "aiter/version.py"])
    return folder


def torch(
    site_dir: Path, version: str = "2.11.0+cu130", cuda: str | None = "13.0", hip: str | None = None, init: str = ""
) -> Path:
    """A torch package whose torch/version.py is what a `+cu130` (or, with hip=..., a `+rocm`) build writes.

    `init` is the body of torch/__init__.py; see `fake_torch_gpus` for one that answers device queries.
    """
    version_py = (
        "from typing import Optional\n\n"
        f"__version__ = {version!r}\ndebug = False\n"
        f"cuda: Optional[str] = {cuda!r}\ngit_version = 'abc123'\nhip: Optional[str] = {hip!r}\n"
    )
    folder = package(site_dir, "torch", {"version.py": version_py}, init=init)
    dist_info(site_dir, "torch", version, top_level=["torch"], files=["torch/__init__.py", "torch/version.py"])
    return folder


def fake_torch_gpus(devices: list[dict[str, object]], hip: str | None = None, cuda: str | None = "13.0") -> str:
    """A torch/__init__.py body with `torch.version` and `torch.cuda` answering for these device properties.

    Each device is a dict of torch device-property attributes: name, major, minor, total_memory, gcnArchName,
    pci_bus_id, pci_device_id, pci_domain_id.
    """
    return (
        "import types\n"
        f"version = types.SimpleNamespace(cuda={cuda!r}, hip={hip!r})\n"
        f"_DEVICES = {devices!r}\n"
        "cuda = types.SimpleNamespace(\n"
        "    is_available=lambda: bool(_DEVICES),\n"
        "    device_count=lambda: len(_DEVICES),\n"
        "    get_device_properties=lambda i: types.SimpleNamespace(**_DEVICES[i]),\n"
        ")\n"
    )


def kfd(root: Path, nodes: list[int], memory_bytes: int = 192 * 1024**3, driver: str | None = "6.12.12") -> Path:
    """/sys/class/kfd/kfd/topology/nodes under `root`, one node per gfx_target_version (0 = a CPU node).

    The g-th GPU node gets PCI address 0000:{0x0c + 0x10*g:02x}:00.0 (0000:0c:00.0, 0000:1c:00.0, ...), a
    frame-buffer memory bank of `memory_bytes` and a system-memory bank that must not count; `driver` goes to
    /sys/module/amdgpu/version.
    """
    base = root / "sys/class/kfd/kfd/topology/nodes"
    gpus = 0
    for i, target in enumerate(nodes):
        node = base / str(i)
        bus = 0x0C + 0x10 * gpus
        gpus += 1 if target else 0
        props = {
            "cpu_cores_count": 0 if target else 64,
            "simd_count": 1216 if target else 0,
            "gfx_target_version": target,
            "vendor_id": 4098 if target else 0,
            "device_id": 29857 if target else 0,
            "location_id": (bus << 8) if target else 0,
            "domain": 0,
            "drm_render_minor": 128 + i if target else 0,
        }
        write(node / "properties", "".join(f"{k} {v}\n" for k, v in props.items()))
        if target:
            write(node / "mem_banks/0/properties", f"heap_type 1\nsize_in_bytes {memory_bytes}\nwidth 8192\n")
            write(node / "mem_banks/1/properties", f"heap_type 0\nsize_in_bytes {512 * 1024**3}\n")
    if driver is not None:
        write(root / "sys/module/amdgpu/version", driver + "\n")
    return base


def nvidia_proc(root: Path, driver: str = "580.95.05", gpus: list[tuple[str, str]] | None = None) -> Path:
    """/proc/driver/nvidia under `root`: the version file and gpus/<bdf>/information for (bdf, model) pairs."""
    base = root / "proc/driver/nvidia"
    write(
        base / "version",
        f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build  (dvs-builder@U16)\n"
        "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n",
    )
    for bdf, model in gpus if gpus is not None else [("0000:18:00.0", "NVIDIA H200")]:
        write(
            base / "gpus" / bdf / "information",
            f"Model: \t\t {model}\nIRQ:   \t\t 150\nGPU UUID: \t GPU-1234\nBus Location: \t {bdf}\n",
        )
    return base


def rocm(root: Path, version: str = "7.2.3-42") -> Path:
    """/opt/rocm under `root` with rocm-core's .info/version."""
    write(root / "opt/rocm/.info/version", version + "\n")
    return root / "opt/rocm"


def executable(path: Path, output: str, code: int = 0, sleep: float = 0) -> Path:
    """A shell script at `path` that prints `output` (after `sleep` seconds) and exits with `code`: a fake nvcc."""
    # Its own PATH: the probes' test contexts have a PATH with nothing on it.
    text = "#!/bin/sh\nPATH=/usr/bin:/bin\n" + (f"sleep {sleep}\n" if sleep else "")
    text += f"cat <<'EOF'\n{output}\nEOF\nexit {code}\n"
    write(path, text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


NVCC_VERSION = (
    "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
    "Cuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0"
)
HIPCC_VERSION = "HIP version: 7.2.26015-fc0010cf6a\nAMD clang version 22.0.0git\nTarget: x86_64-unknown-linux-gnu"


def context(
    tmp_path: Path,
    site: Path | list[Path] | None = None,
    root: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 5.0,
    fast: bool = False,
) -> ProbeContext:
    """A ProbeContext that sees only the fakes: search path `site` (one folder or several), root `root` (an empty
    folder if None), an environment with only a PATH of empty folders plus `env`, and a short timeout."""
    empty = tmp_path / "empty-root"
    empty.mkdir(exist_ok=True)
    base_env = {"PATH": str(tmp_path / "no-bin"), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    base_env.update(env or {})
    if "SYSTEMROOT" in os.environ:  # only matters on Windows, where a child needs it
        base_env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return ProbeContext(
        root=root or empty,
        python=sys.executable,
        search_path=[str(p) for p in ([] if site is None else [site] if isinstance(site, Path) else site)],
        timeout=timeout,
        fast=fast,
        env=base_env,
    )


# A stand-in vLLM whose code answers the self-check the way a real release's does: vllm/platforms resolves a
# platform class, layers/mhc.py holds the module flags, models/deepseek_v4 picks a model module whose decoder layer
# sets use_fused_mhc in __init__. `marker` (a file) records the pid of every process that imports it.
_VLLM_PLATFORMS = """\
import os as _os
_marker = {marker!r}
if _marker:
    with open(_marker, "a") as _f:
        _f.write(str(_os.getpid()) + "\\n")
class {platform}:
    def is_rocm(self): return {platform!r} == "RocmPlatform"
    def is_cpu(self): return {platform!r} == "CpuPlatform"
    def is_tpu(self): return False
    def is_xpu(self): return {platform!r} == "XPUPlatform"
    def is_out_of_tree(self): return False
    def is_cuda(self): return {platform!r} == "CudaPlatform"
current_platform = {platform}()
"""
_VLLM_MODEL = """\
from vllm.model_executor.layers.mhc import HAS_AITER_MHC, HAS_TILELANG_MHC
class DeepseekV4DecoderLayer:
    def __init__(self, config):
        self.hidden_size = config.hidden_size
        self.use_fused_mhc = {fused_expr}
class DeepseekV4ForCausalLM:
    pass
"""


def vllm(
    site_dir: Path,
    version: str = "0.34.0+cpu",
    platform: str = "CpuPlatform",
    flags: dict[str, bool] | None = None,
    has_tilelang: bool = False,
    fused_expr: str = "HAS_TILELANG_MHC and not (HAS_AITER_MHC and self.hidden_size % 256 == 0)",
    marker: Path | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """A stand-in vLLM `version` that resolves `platform` and whose layers/mhc.py sets `flags` (HAS_* names)."""
    values = {"HAS_TILELANG_MHC": False, "HAS_AITER_MHC": False, "HAS_AITER_MHC_FUSED": False,
              "HAS_AITER_MHC_PRE_NORM": False, **(flags or {})}  # fmt: skip
    mhc = "".join(f"{k} = {v!r}\n" for k, v in values.items())
    mhc += "class MHCPreOp:\n    def __init__(self):\n        raise RuntimeError('no vLLM config in this process')\n"
    tree = {
        "platforms/__init__.py": _VLLM_PLATFORMS.format(platform=platform, marker=str(marker or "")),
        "utils/__init__.py": "",
        "utils/import_utils.py": f"def has_tilelang():\n    return {has_tilelang!r}\n",
        "model_executor/__init__.py": "",
        "model_executor/layers/__init__.py": "",
        "model_executor/layers/mhc.py": "import vllm.platforms\n" + mhc,
        "models/__init__.py": "",
        "models/deepseek_v4/__init__.py": "from .cpu.model import DeepseekV4ForCausalLM\n",
        "models/deepseek_v4/cpu/__init__.py": "",
        "models/deepseek_v4/cpu/model.py": _VLLM_MODEL.format(fused_expr=fused_expr),
        **(files or {}),
    }
    folder = package(site_dir, "vllm", tree, init=f"__version__ = {version!r}\n")
    dist_info(site_dir, "vllm", version, top_level=["vllm"], files=["vllm/__init__.py"])
    return folder


def intel_gpu(root: Path, card: int, bdf: str, device_id: str = "0x0bd5", pci_class: str = "0x038000") -> Path:
    """/sys/class/drm/cardN whose `device` links to a PCI device folder named by its address, as sysfs does."""
    device = root / "sys/devices/pci0000:00" / bdf
    write(device / "vendor", "0x8086\n")
    write(device / "class", f"{pci_class}\n")
    write(device / "device", f"{device_id}\n")
    card_dir = root / "sys/class/drm" / f"card{card}"
    card_dir.mkdir(parents=True, exist_ok=True)
    (card_dir / "device").symlink_to(device)
    return card_dir


# aiter/ops/mhc.py that computes: each op with mhcdoctor.reference, with the signatures vLLM's _aiter_ops.py calls
# (rocm_aiter_ops.mhc_pre/mhc_post/mhc_fused_post_pre, vllm/_aiter_ops.py 0.25–0.34) and aiter's ops/mhc.py defines.
_COMPUTING_PRE = """\
\"\"\"A stand-in for aiter.ops.mhc: aiter's signatures, mhcdoctor.reference's arithmetic (tests on a CPU).\"\"\"
from mhcdoctor import reference as _reference


def mhc_pre(residual, fn, hc_scale, hc_base, rms_eps=1e-6, hc_pre_eps=1e-6, hc_sinkhorn_eps=1e-6,
            hc_post_mult_value=1.0, sinkhorn_repeat=20{norm}):
    return _reference.mhc_pre(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
                              hc_post_mult_value, sinkhorn_repeat{pass_norm})


def mhc_post(out, x, residual, post_layer_mix, comb_res_mix):
    out.copy_(_reference.mhc_post(x, residual, post_layer_mix, comb_res_mix))
"""
_COMPUTING_FUSED = """

def mhc_fused_post_pre(x, residual, post_layer_mix, comb_res_mix, fn, hc_scale, hc_base, rms_eps=1e-6,
                       hc_pre_eps=1e-6, hc_sinkhorn_eps=1e-6, hc_post_mult_value=1.0, sinkhorn_repeat=20,
                       norm_weight=None, norm_eps=1e-6):
    residual_cur, post, comb, layer_input = _reference.mhc_fused_post_pre(
        x, residual, post_layer_mix, comb_res_mix, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps,
        hc_post_mult_value, sinkhorn_repeat, norm_weight=norm_weight, norm_eps=norm_eps)
    return post, comb, layer_input, residual_cur  # aiter's order (vllm/_aiter_ops.py: "AITER returns post_mix, ...")
"""


def computing_aiter(site_dir: Path, version: str, kernel: str, norm_args: bool, fused: bool) -> Path:
    """`aiter(site_dir, version, kernel, norm_args, fused)` whose ops/mhc.py runs: mhc_pre, mhc_post (and, if
    `fused`, mhc_fused_post_pre) compute with mhcdoctor.reference, so that vLLM's own code can call them; mhc_pre
    takes norm_weight/norm_eps where `norm_args` (aiter 0.1.15+), the fused op exists where `fused` (0.1.16+)."""
    folder = aiter(site_dir, version=version, kernel=kernel, norm_args=norm_args, fused=fused)
    norm, pass_norm = (", norm_weight=None, norm_eps=1e-6", ", norm_weight=norm_weight, norm_eps=norm_eps")
    text = _COMPUTING_PRE.format(norm=norm if norm_args else "", pass_norm=pass_norm if norm_args else "")
    write(folder / "ops" / "mhc.py", text + (_COMPUTING_FUSED if fused else ""))
    return folder


def amdsmi(site_dir: Path, arch: str) -> Path:
    """AMD's `amdsmi` answering for one GPU of `arch`: what vllm/platforms/__init__.py (rocm_platform_plugin) asks to
    choose ROCm and vllm/platforms/rocm.py (_query_gcn_arch_from_amdsmi) asks to set its _ON_GFX* flags."""
    body = (
        "class AmdSmiException(Exception):\n    pass\n\n\n"
        "class AmdSmiMemoryType:\n    VRAM = 0\n\n\n"
        "def amdsmi_init(*args):\n    return None\n\n\n"
        "def amdsmi_shut_down():\n    return None\n\n\n"
        "def amdsmi_get_processor_handles():\n    return [0]\n\n\n"
        f"def amdsmi_get_gpu_asic_info(handle):\n    return {{'target_graphics_version': {arch!r}}}\n\n\n"
        "def amdsmi_get_gpu_memory_total(handle, kind):\n    return 192 * 1024**3\n\n\n"
        "def __getattr__(name):  # the rest of amdsmi's API: a GPU query this stand-in cannot answer\n"
        "    def unanswered(*args, **kwargs):\n        raise AmdSmiException(name + ' is not in the stand-in')\n"
        "    return unanswered\n"
    )
    return library(site_dir, "amdsmi", "26.2.0", init=body)


# The real text of ROCm/aiter's tags (git show TAG:PATH, MIT licence): aiter/ops/mhc.py, aiter/jit/utils/torch_guard.py
# and the MHC_PYBIND macro of csrc/include/rocm_ops.hpp (v0.1.15 8ddfc75 :2022, v0.1.17 32214c2 :2273, v0.1.18 d6de776
# :2268).
AITER_TAGS_TEXT = Path(__file__).resolve().parent / "data" / "aiter_tags"
AITER_TAG_VERSIONS = sorted(p.name.split(".mhc_py")[0] for p in AITER_TAGS_TEXT.glob("*.mhc_py"))

_TAGGED_CORE = '''\
"""Stand-in for aiter/jit/core.py's compile_ops (pybind branch): the tag's own torch_compile_guard registers the op as
torch.ops.aiter.NAME with the schema of the tag's Python signature, as aiter does; the call then goes to module_mhc,
a stand-in for the built pybind module (no JIT build, no GPU)."""
from .utils.torch_guard import torch_compile_guard


def compile_ops(_md_name, fc_name=None, gen_func=None, gen_fake=None, ffi_type="pybind", develop=False):
    def decorator(func):
        from . import module_mhc

        op = getattr(module_mhc, fc_name or func.__name__)

        @torch_compile_guard(device="cuda", gen_fake=gen_fake, calling_func_=func)
        def custom_wrapper(*args, **kwargs):
            return op(*args, **kwargs)

        return custom_wrapper

    return decorator
'''
_TAGGED_MODULE = '''\
"""Stand-in for aiter's built module_mhc (pybind11): each function of the tag's MHC_PYBIND (MHC_PYBIND.hpp beside this
file) accepts exactly the py::arg names and defaults it declares, refuses anything else with pybind11's TypeError
"NAME(): incompatible function arguments", and computes nothing: it zeroes the tensors it was given."""
import inspect
import re
from pathlib import Path

_TEXT = (Path(__file__).parent / "MHC_PYBIND.hpp").read_text()


def _binding(name, params):
    signature = inspect.Signature(params)

    def call(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            raise TypeError(
                f"{name}(): incompatible function arguments. The following argument types are supported:\\n"
                f"    1. {signature}\\n\\nInvoked with: {len(args)} positional, {sorted(kwargs)} keyword"
            ) from None
        for value in bound.arguments.values():
            if hasattr(value, "zero_") and value.is_floating_point():
                value.zero_()

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{name}{signature} -> None"
    return call


for _def in re.split(r"m\\.def\\(", _TEXT)[1:]:
    _name = re.match(r'\\s*"(\\w+)"', _def).group(1)
    _params = [
        inspect.Parameter(
            arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=eval(default) if default else inspect.Parameter.empty,
        )
        for arg, default in re.findall(r'py::arg\\("(\\w+)"\\)(?:\\s*=\\s*([-\\w.]+))?', _def)
    ]
    globals()[_name] = _binding(_name, _params)
'''


def tagged_aiter(site_dir: Path, tag: str, arch: str, cu_num: int) -> Path:
    """aiter at `tag` (AITER_TAG_VERSIONS) as vLLM reaches its mHC ops. Real: aiter/ops/mhc.py and
    aiter/jit/utils/torch_guard.py, the tag's text unchanged. Stand-in: compile_ops (aiter/jit/core.py's pybind branch
    without the JIT build), module_mhc (the tag's MHC_PYBIND bindings: arguments checked, nothing computed),
    aiter.dtypes, and jit/utils/chip_info.py answering `arch` and `cu_num` for the GPU."""
    folder = aiter(site_dir, version=tag.removeprefix("v"), kernel=None)
    text = {suffix: (AITER_TAGS_TEXT / f"{tag}.{suffix}").read_text() for suffix in ("mhc_py", "torch_guard_py")}
    write(folder / "ops" / "mhc.py", text["mhc_py"])
    write(folder / "jit" / "utils" / "__init__.py", "")
    write(folder / "jit" / "utils" / "torch_guard.py", text["torch_guard_py"])
    chip = f"def get_gfx_runtime():\n    return {arch!r}\n\n\ndef get_cu_num():\n    return {cu_num}\n"
    write(folder / "jit" / "utils" / "chip_info.py", chip)
    write(folder / "jit" / "core.py", _TAGGED_CORE)
    write(folder / "jit" / "module_mhc.py", _TAGGED_MODULE)
    write(folder / "jit" / "MHC_PYBIND.hpp", (AITER_TAGS_TEXT / f"{tag}.MHC_PYBIND.hpp").read_text())
    write(folder / "dtypes.py", "import torch\n\nbf16, fp16, fp32 = torch.bfloat16, torch.float16, torch.float32\n")
    return folder
