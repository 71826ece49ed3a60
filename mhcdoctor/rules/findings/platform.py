"""Findings about the machine and vLLM's platform: GPUs, torch's build, vLLM's platform and build, the torch path."""

from __future__ import annotations

from mhcdoctor.knowledge import aiter_releases, selfcheck
from mhcdoctor.rules.dispatch import (
    arch_has,
)
from mhcdoctor.rules.findings.base import (
    _VLLM_BUILDS,
    AITER_BUILD,
    FindingContext,
    FindingSpec,
    Found,
    _named,
    _vllm_platform,
)
from mhcdoctor.rules.releases import PR


def _torch_mismatch(ctx: FindingContext) -> bool:
    build = ctx.facts.torch.build
    return ctx.facts.platform in ("rocm", "cuda", "xpu") and build is not None and build != ctx.facts.platform


def _torch_sees_no_gpu(ctx: FindingContext) -> bool:
    return ctx.facts.platform in ("rocm", "cuda") and ctx.facts.torch.gpus_visible == 0 and not _torch_mismatch(ctx)


def _torch_fallbacks(ctx: FindingContext) -> list[str]:
    """Ops on the torch reference, except 0.20.0's hc_head, which is a torch.compile function by design."""
    designed = ctx.rules is not None and ctx.rules.hc_head == "torch"
    if _vllm_platform(ctx) == "xpu":  # 0.23–0.26 XPU: forward_xpu is forward_native by design, nothing faster
        return []
    return [op for op in ctx.ops_on("torch") if not (op == "hc_head" and designed)]


TORCH_FALLBACK_FIX = "pip install tilelang  # ROCm MI3xx: AMD's aiter serves mhc_pre/mhc_post first"


def _torch_fallback_fix(ctx: FindingContext, fallbacks: list[str]) -> str:
    """The fix for the gate that sent the first torch op past its kernels: install, repair or build what failed, or
    say that no kernel serves this shape here."""
    for op in fallbacks:
        assert ctx.dispatch is not None  # _torch_fallbacks found ops
        failed = [g for g in ctx.dispatch.ops[op].why if not g.passed and g.path in ("aiter", "tilelang")]
        tilelang = next((g for g in failed if g.path == "tilelang"), None)
        aiter = next((g for g in failed if g.path == "aiter"), None)
        rs = ctx.rules
        tilelang_off = rs is not None and bool(
            (rs.tilelang_mhc_skips_gfx942 and arch_has(ctx.facts, "gfx942"))
            or (rs.tilelang_skips_gfx1250 and arch_has(ctx.facts, "gfx1250"))
        )
        if tilelang is not None and tilelang.kind == "package" and not tilelang_off:
            if ctx.facts.tilelang.present is True:
                return "python -c 'import tilelang'  # read the error; then: pip install --force-reinstall tilelang"
            return "pip install tilelang"
        # tilelang mHC is off on this arch (gfx942, gfx1250): only aiter offers a kernel here
        if aiter is None:
            continue
        if aiter.kind == "package" or ctx.facts.aiter.genuine is False:  # the impostor is no aiter to upgrade
            return "Build AMD's aiter (tilelang mHC is off on this GPU): " + AITER_BUILD
        if aiter.kind == "aiter-api":
            return f"Build aiter {aiter_releases.FUSED_SINCE} or later (this one lacks the API vLLM probes for): " + (
                AITER_BUILD
            )
        return (
            f"Nothing to install: aiter refuses this model ({aiter.text}) and vLLM turns tilelang mHC off on "
            f"{ctx.facts.arch or 'this GPU'}, so the torch path is the only one here"
        )
    return TORCH_FALLBACK_FIX


def _archs(ctx: FindingContext) -> list[str]:
    """Each GPU architecture on the host with its count, e.g. ["gfx942 x2", "gfx90a x1"], in device order."""
    archs = [d.arch or "unknown" for d in ctx.facts.devices or []]
    return [f"{arch} x{archs.count(arch)}" for arch in dict.fromkeys(archs)]


def _mixed_arch(ctx: FindingContext) -> bool:
    known = {d.arch for d in ctx.facts.devices or [] if d.arch}
    return len(known) > 1


def _driver_mismatch(ctx: FindingContext) -> list[str]:
    """Per vendor, the drivers its GPUs report when they are not all the same: ["amd: 6.12.12 (GPU 0, 1), ..."]."""
    out = []
    for vendor in dict.fromkeys(d.vendor for d in ctx.facts.devices or []):
        by_driver: dict[str, list[str]] = {}
        for d in ctx.facts.devices or []:
            if d.vendor == vendor and d.driver:
                by_driver.setdefault(d.driver, []).append(str(d.index))
        if len(by_driver) > 1:
            out += [f"{vendor} {driver} (GPU {', '.join(gpus)})" for driver, gpus in by_driver.items()]
    return out


# Subclasses vLLM may resolve for one of the rules' platforms (vllm/platforms/zen_cpu.py: AMD Zen with zentorch).
_PLATFORM_ALIASES = {"ZenCpuPlatform": "CpuPlatform"}


def selfcheck_disagreements(ctx: FindingContext) -> list[str]:
    """Each gate where the installed vLLM's own value differs from the rules' prediction: "GATE: rules X, vLLM Y".

    Compared only when the rules describe the installed release (not a what-if --vllm) and both sides have a value.
    """
    check, result = ctx.facts.vllm.selfcheck, ctx.dispatch
    if check is None or result is None or ctx.rules_reason not in ("installed", "newer"):
        return []
    if ctx.vllm_version != ctx.facts.vllm.version:
        return []
    out = []
    for key, predicted in result.values.items():
        reported: object = getattr(check, key, None)
        gate = selfcheck.GATES.get(key, key)
        if key == "fused":
            size = f"{ctx.model.hidden_size}x{ctx.model.hc_mult}"
            flag = (check.fused or {}).get(size)
            reported = None if flag is None else flag == "true"
            gate += f" (hidden {ctx.model.hidden_size})"
        elif key == "platform" and isinstance(reported, str):
            reported = _PLATFORM_ALIASES.get(reported, reported)
        if predicted is None or reported is None or predicted == reported:
            continue
        out.append(f"{gate}: rules {predicted}, vLLM {reported}")
    return out


def _no_platform_model(ctx: FindingContext) -> bool:
    if ctx.rules is None:
        return False
    return not ctx.rules.cpu_model if _vllm_platform(ctx) == "cpu" else ctx.rules.xpu == "none"


def _build_mismatch(ctx: FindingContext) -> str | None:
    """A probed CUDA/ROCm/XPU build of vLLM on another GPU platform (a CPU build picks the CPU platform itself)."""
    build, platform = ctx.facts.vllm.build, _vllm_platform(ctx)
    if build is None or build == "cpu" or platform not in ("cuda", "rocm", "xpu") or build == platform:
        return None
    if ctx.vllm_version != ctx.facts.vllm.version:  # a what-if release: the installed build says nothing of it
        return None
    names = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU"}
    return (
        f"vLLM {ctx.vllm_version} is the {names[build]} build ({ctx.facts.vllm.build_evidence}), but vLLM detects "
        f"{names[platform]} here: its compiled ops are for the other platform and the model fails to load"
    )


def _decide_no_gpu(c: FindingContext) -> Found | None:
    if _vllm_platform(c) != "unspecified" or c.facts.platform != "cpu":
        return None
    return Found(
        (f"vLLM {c.vllm_version} reports" if c.facts.vllm.present is not False else "vLLM would report")
        + " an unspecified platform here: its CUDA platform needs an NVIDIA GPU and its CPU platform a CPU build "
        "('cpu' in its version), so it builds no model; the CUDA build also lacks the CPU mHC ops "
        "(hc_pre_fused_cpu & co.)."
    )


def _decide_no_platform_model(c: FindingContext) -> Found | None:
    platform = _vllm_platform(c)
    if platform not in ("cpu", "xpu") or not _no_platform_model(c):
        return None
    return Found(
        f"vLLM {c.vllm_version} runs on its {str(platform).upper()} platform, but has no DeepSeek-V4 "
        f"model for it and imports the CUDA model, which needs NVIDIA kernels (the "
        f"{str(platform).upper()} model arrives in {'0.30.0' if platform == 'cpu' else '0.23.0'})."
    )


def _decide_platform_conflict(c: FindingContext) -> Found | None:
    if _vllm_platform(c) != "conflict":
        return None
    return Found(
        f"vLLM {c.vllm_version} is a CPU build, and this machine's {c.facts.platform.upper()} GPU makes its "
        f"{c.facts.platform} plugin detect too; vllm/platforms/__init__.py refuses two and raises RuntimeError."
    )


def _decide_build_mismatch(c: FindingContext) -> Found | None:
    why = _build_mismatch(c)
    return Found(f"{why}.") if why is not None else None


def _decide_xpu_kernels_missing(c: FindingContext) -> Found | None:
    if _vllm_platform(c) != "xpu" or c.facts.xpu_kernels.present is not False:
        return None
    return Found(
        "vllm/platforms/xpu.py imports vllm_xpu_kernels._C, ._moe_C and ._xpu_C when the platform loads, so "
        "vLLM fails to start; from 0.27 every mHC op's forward_xpu also calls torch.ops._xpu_C."
    )


def _decide_rules_disagree(c: FindingContext) -> Found | None:
    disagreements = selfcheck_disagreements(c)
    if not disagreements:
        return None
    detail = (
        f"vLLM {c.vllm_version} itself says otherwise than the rules ({c.rules.id if c.rules else '?'}) at "
        + "; ".join(disagreements)
        + ". The paths shown follow the rules; vLLM will follow its own values."
    )
    selfcheck = c.facts.vllm.selfcheck
    if selfcheck and selfcheck.error:
        detail += f" (The self-check stopped at {selfcheck.error}.)"
    return Found(detail)


def _decide_torch_build_mismatch(c: FindingContext) -> Found | None:
    if not _torch_mismatch(c):
        return None
    return Found(
        f"torch {c.facts.torch.version} is a {c.facts.torch.build} build, but this machine's GPUs are "
        f"{c.facts.platform}: vLLM, and every mHC path with it, cannot use them. A common cause: "
        "`pip install vllm` on a ROCm host replaces ROCm's torch with PyPI's CUDA build."
    )


def _decide_torch_sees_no_gpu(c: FindingContext) -> Found | None:
    if not _torch_sees_no_gpu(c):
        return None
    return Found(
        f"The {c.facts.platform} GPUs are there, but {_named('torch', c.facts.torch.version)} counts none, so vLLM "
        "cannot start on them. Usual causes: a driver older than torch's "
        f"{'CUDA' if c.facts.platform == 'cuda' else 'ROCm'} runtime needs, CUDA_VISIBLE_DEVICES / "
        "HIP_VISIBLE_DEVICES hiding every GPU, or no access to /dev/nvidia* or /dev/kfd in a container."
    )


def _decide_torch_fallback(c: FindingContext) -> Found | None:
    fallbacks = _torch_fallbacks(c)
    if not fallbacks:
        return None
    detail = (
        f"{', '.join(fallbacks)} run as eager torch: correct, but about 15x slower than the "
        "kernels (1.4 ms vs 0.12 ms per pre+post at one token, H=7168)."
    )
    return Found(detail, fallbacks, fix=_torch_fallback_fix(c, fallbacks))


def _decide_mixed_arch(c: FindingContext) -> Found | None:
    if not _mixed_arch(c):
        return None
    return Found(
        f"This host has {', '.join(_archs(c))}. vLLM picks each mHC path once, from one GPU's arch (on ROCm "
        "amdsmi's first GPU, whatever HIP_VISIBLE_DEVICES says), and runs it on every rank: a tensor-parallel "
        f"group that spans archs runs kernels chosen for {c.facts.arch or 'GPU 0'} on the others."
    )


def _decide_driver_mismatch(c: FindingContext) -> Found | None:
    drivers = _driver_mismatch(c)
    if not drivers:
        return None
    return Found(
        f"Drivers: {'; '.join(drivers)}. One host loads one kernel driver per vendor; differing "
        "versions mean the sources disagree, typically a driver update without a reboot (the loaded module and "
        "the user-space libraries differ), which breaks GPU initialisation or makes ranks behave differently."
    )


PLATFORM: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="no-gpu",
        severity="fail",
        title="No GPU, and this vLLM is not its CPU build",
        summary="No AMD, NVIDIA or Intel GPU was found (or `--platform cpu`) and vLLM's version has no 'cpu' "
        "(PyPI's wheel is the CUDA build): vLLM detects no platform (UnspecifiedPlatform).",
        decide=_decide_no_gpu,
        fix=f"Run on a ROCm, CUDA or Intel XPU machine; or serve on CPU with {_VLLM_BUILDS['cpu']}; replay: "
        "mhcdoctor explain --platform cpu --vllm 0.34.0+cpu",
        refs=(PR + "41946", "https://github.com/vllm-project/vllm/blob/main/vllm/platforms/__init__.py"),
    ),
    FindingSpec(
        id="vllm-no-platform-model",
        severity="fail",
        title="This vLLM has no DeepSeek-V4 model for its platform",
        summary="vLLM's platform is CPU before 0.30.0 or XPU before 0.23.0: models/deepseek_v4/{cpu,xpu}/ do not "
        "exist yet, and the CUDA model it imports instead needs NVIDIA kernels.",
        decide=_decide_no_platform_model,
        fix="pip install -U vllm  # CPU: vLLM's CPU build 0.30+; XPU: 0.27+ runs every mHC op on vllm-xpu-kernels",
        refs=("https://github.com/vllm-project/vllm/tree/main/vllm/models/deepseek_v4",),
    ),
    FindingSpec(
        id="vllm-platform-conflict",
        severity="fail",
        title="Two of vLLM's platform plugins detect at once",
        summary="A CPU build of vLLM ('cpu' in its version) on a machine whose AMD or Intel GPU a plugin also "
        "detects: vLLM raises 'Only one platform plugin can be activated'.",
        decide=_decide_platform_conflict,
        fix="Install the vLLM build for this machine's GPUs, or (vLLM 0.28+) export VLLM_TARGET_DEVICE=cpu to choose "
        "the CPU platform",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/platforms/__init__.py",),
    ),
    FindingSpec(
        id="vllm-build-mismatch",
        severity="fail",
        title="vLLM is built for another platform than the one it runs on here",
        summary="The installed vLLM's build (its version label or extension modules) is CUDA, ROCm or XPU and "
        "vLLM's platform here is another GPU platform: its compiled ops do not fit.",
        decide=_decide_build_mismatch,
        fix="pip uninstall -y vllm, then install the build for this machine (ROCm: "
        f"{_VLLM_BUILDS['rocm']}; XPU: {_VLLM_BUILDS['xpu']}; CUDA: {_VLLM_BUILDS['cuda']})",
        refs=("https://docs.vllm.ai/en/latest/getting_started/installation/",),
    ),
    FindingSpec(
        id="xpu-kernels-missing",
        severity="fail",
        title="vLLM's XPU platform needs vllm-xpu-kernels, and it is not installed",
        summary="vLLM's platform is XPU and the vllm-xpu-kernels package (torch.ops._xpu_C) is not installed.",
        decide=_decide_xpu_kernels_missing,
        fix="pip install vllm-xpu-kernels  # the version vLLM's XPU requirements pin",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/platforms/xpu.py",),
    ),
    FindingSpec(
        id="rules-disagree-with-vllm",
        severity="warn",
        title="The installed vLLM's own dispatch values differ from the rules",
        summary="Full check: vLLM, asked in a child process, reports a platform, forward method, has_tilelang(), "
        "HAS_TILELANG_MHC, HAS_AITER_MHC, aiter API probe or use_fused_mhc other than the rules predict.",
        decide=_decide_rules_disagree,
        fix="mhcdoctor check -v  # the vllm.selfcheck probe's evidence; report it with mhcdoctor report --bundle",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/mhc.py",),
    ),
    FindingSpec(
        id="torch-build-mismatch",
        severity="fail",
        title="torch is not built for this machine's GPUs",
        summary="torch/version.py says a CUDA, ROCm, XPU or CPU-only build that does not match the GPUs found.",
        decide=_decide_torch_build_mismatch,
        fix="Install the torch build for this platform (ROCm: PyTorch's ROCm wheels or AMD's rocm/vllm image; "
        "CUDA: the CUDA build vLLM pins; Intel XPU: PyTorch's XPU wheels), then run mhcdoctor check again",
        refs=("https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",),
    ),
    FindingSpec(
        id="torch-sees-no-gpu",
        severity="fail",
        title="torch imports but sees no GPU",
        summary="The GPUs are found in sysfs, /proc or NVML, but torch.cuda.device_count() is 0 (full check).",
        decide=_decide_torch_sees_no_gpu,
        fix="mhcdoctor check -v  # gpu.torch's evidence; then: echo $CUDA_VISIBLE_DEVICES $HIP_VISIBLE_DEVICES; "
        "ls -l /dev/kfd /dev/nvidia*",
        refs=("https://docs.pytorch.org/docs/stable/notes/cuda.html",),
    ),
)


TORCH_FALLBACK: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="torch-fallback",
        severity="warn",
        title="The slow torch reference path is selected",
        summary="An op the model runs falls back to the torch reference (about 15x slower than tilelang).",
        decide=_decide_torch_fallback,
        fix=TORCH_FALLBACK_FIX,
        refs=(PR + "43679", PR + "43950"),
    ),
)


MULTI_GPU: tuple[FindingSpec, ...] = (
    FindingSpec(
        id="multi-gpu-mixed-arch",
        severity="warn",
        title="GPUs of different architectures on one host",
        summary="The host's GPUs are not all one architecture (e.g. gfx942 with gfx90a, or AMD with NVIDIA).",
        decide=_decide_mixed_arch,
        fix="Give vLLM GPUs of one arch only: HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES, or a container given "
        "only those devices (so amdsmi's first GPU is one of them too)",
        refs=("https://github.com/vllm-project/vllm/blob/main/vllm/platforms/rocm.py",),  # _get_gcn_arch: handles[0]
    ),
    FindingSpec(
        id="multi-gpu-driver-mismatch",
        severity="warn",
        title="GPUs of one vendor report different driver versions",
        summary="Two GPUs of the same vendor report different driver versions (a half-finished driver update).",
        decide=_decide_driver_mismatch,
        fix="Finish the driver update and reboot, so every GPU reports the same driver; then run mhcdoctor check again",
        refs=("https://github.com/wookayin/gpustat/issues/147",),  # NVML's LibRmVersionMismatch after an update
    ),
)
