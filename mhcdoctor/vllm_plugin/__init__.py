"""mhcdoctor's vLLM plugin: the entry point `mhcdoctor` in the group `vllm.general_plugins` (pyproject.toml).

vLLM calls `register()` in each of its processes (API server, engine core, every worker) before the model is
built (vllm/plugins/__init__.py: load_general_plugins, 0.20–0.34). Off unless MHCDOCTOR_VLLM is `observe` or
`strict`: then it costs this module's import and one environment lookup, and patches nothing. docs/vllm-plugin.md
says what it records, what it costs and what it cannot see.
"""

from __future__ import annotations

import os

MODE_ENV = "MHCDOCTOR_VLLM"  # not a VLLM_ name: vLLM warns about VLLM_* variables it does not know
DIR_ENV = "MHCDOCTOR_VLLM_DIR"
MODES = ("off", "observe", "strict")
_warned = False  # a value it does not know: said once per process


def register() -> None:
    """vLLM's plugin hook. Never raises: vLLM does not catch what a plugin's register() raises."""
    global _warned
    mode = os.environ.get(MODE_ENV, "").strip().lower()
    if mode in ("", "off", "0"):
        return
    if mode not in MODES:
        if not _warned:
            _warned = True
            import logging

            logging.getLogger("vllm.mhcdoctor").warning(
                "mhcdoctor: %s=%r is not one of %s; the plugin stays off", MODE_ENV, mode[:40], "|".join(MODES)
            )
        return
    try:
        from mhcdoctor.vllm_plugin.hooks import install

        install(mode)
    except Exception as error:  # the plugin must never stop vLLM
        import logging

        logging.getLogger("vllm.mhcdoctor").warning(
            "mhcdoctor plugin not installed: %s: %s", type(error).__name__, error
        )
