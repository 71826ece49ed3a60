"""Which build of vLLM a version names (CUDA, ROCm, CPU, XPU): knowledge that probes, what-if and rules all read.

vLLM's setup.py appends the target to the version of every build but PyPI's CUDA one: `+cpu`, `+xpu`,
`+rocm<ver>`, `+cu<ver>`; vLLM itself asks its version for "cpu" to pick its CPU platform
(vllm/platforms/__init__.py, cpu_platform_plugin).
"""

from __future__ import annotations

_LABELS = (("cpu", "cpu"), ("xpu", "xpu"), ("rocm", "rocm"), ("cu", "cuda"))


def build_from_version(version: str | None) -> tuple[str | None, str | None]:
    """The build a version's local label names (`0.34.0+cpu` → cpu), with the evidence; (None, None) without one."""
    if not version or "+" not in version:
        return None, None
    label = version.split("+", 1)[1].lower()
    for prefix, build in _LABELS:
        if label.startswith(prefix):
            return build, f"version {version}: local label +{label}"
    return None, None
