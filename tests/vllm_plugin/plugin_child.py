"""Run by test_plugin_modes.py in a child whose `vllm` is the stand-in package the test writes (vLLM's module
names and the calls the hooks target, no vLLM): the plugin's hooks end to end, without a vLLM install.

argv[1]: what to do after register(): `plain` (import the modules, call the ops, build CustomOps), `early` (the
same, with the kernels imported before register()), `compile` (the same op under torch.compile), `fake-refusal`
(check --fast replaced by a refusal, to see strict stop the build).
Prints one JSON document as its last stdout line.
"""

from __future__ import annotations

import json
import logging
import sys
from types import SimpleNamespace

logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
if sys.argv[1] == "early":  # vLLM imported its mHC kernels before it loaded the plugins
    import vllm.model_executor.kernels.mhc  # noqa: F401
before_modules = set(sys.modules)
before_path = list(sys.meta_path)

import mhcdoctor.vllm_plugin  # noqa: E402

mhcdoctor.vllm_plugin.register()
mhcdoctor.vllm_plugin.register()  # vLLM may load plugins twice in a process
report: dict[str, object] = {
    "new_modules": sorted(set(sys.modules) - before_modules),
    "meta_path_changed": sys.meta_path != before_path,
}
what = sys.argv[1]
if what != "register-only":
    import torch
    import vllm.config
    import vllm.model_executor.kernels.mhc  # the package imports its tilelang module
    import vllm.model_executor.layers.mhc  # noqa: F401  (no CustomOps here: one warning)
    from vllm.model_executor.custom_op import CustomOp
    from vllm.model_executor.kernels.mhc.tilelang import compute_num_split, mhc_post_tilelang, mhc_pre_tilelang
    from vllm.utils.torch_utils import REGISTERED

    residual = torch.zeros(20, 4, 8)
    if what == "compile":
        compiled = torch.compile(lambda x, r: mhc_post_tilelang(x, r) * 2, backend="eager", fullgraph=True)
        report["compiled"] = compiled(torch.ones(20, 8), residual).sum().item()
    else:
        for _ in range(3):
            REGISTERED["mhc_pre_tilelang"](residual, True)  # torch.ops.vllm.mhc_pre_tilelang, eager
        mhc_pre_tilelang(residual[:1], False)  # by name, as the NVIDIA model imports it; no DeepGEMM
        report["post"] = mhc_post_tilelang(torch.ones(20, 8), residual).sum().item()
        report["helper_wrapped"] = hasattr(compute_num_split, "__wrapped__")
        if what == "fake-refusal":
            from mhcdoctor.vllm_plugin import startup

            startup.verdict = lambda hidden, hc: (f"line {hidden} {hc}", "mhcdoctor refuses: a wrong-results finding")
        vllm.config.CURRENT = SimpleNamespace(
            model_config=SimpleNamespace(hf_config=SimpleNamespace(hidden_size=7168, hc_mult=4))
        )
        try:
            for _ in range(3):
                CustomOp()
            report["refused"] = None
        except RuntimeError as error:
            report["refused"] = f"{type(error).__name__}: {error}"
        report["init_restored"] = CustomOp.__init__ is CustomOp.original_init
    from mhcdoctor.vllm_plugin import hooks

    recorder = hooks.RECORDER
    report["records"] = [r.line() for r in recorder.records] if recorder else []
    report["startup"] = recorder.startup if recorder else None
print(json.dumps(report))
