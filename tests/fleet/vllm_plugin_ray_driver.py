"""Run by test_vllm_plugin_ray.py with a real vLLM on its path: a Ray actor's environment built as vLLM builds it
(vllm/ray/ray_env.py get_env_vars_to_copy; vllm/v1/engine/utils.py puts it in the actor's runtime_env), on a node
of the loopback cluster; there the plugin registers as vLLM would call it. Prints one JSON document.

argv: ADDRESS NODE_ID
"""

from __future__ import annotations

import json
import os
import sys

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from vllm.ray.ray_env import get_env_vars_to_copy

names = get_env_vars_to_copy(destination="the mhcdoctor test's actor")
env_vars = {name: os.environ[name] for name in names if name in os.environ}


@ray.remote(num_cpus=0)
class Worker:
    def register(self) -> dict:
        import mhcdoctor.vllm_plugin

        mhcdoctor.vllm_plugin.register()
        hooks = sys.modules.get("mhcdoctor.vllm_plugin.hooks")
        recorder = getattr(hooks, "RECORDER", None)
        return {
            "MHCDOCTOR_VLLM": os.environ.get("MHCDOCTOR_VLLM"),
            "MHCDOCTOR_VLLM_DIR": os.environ.get("MHCDOCTOR_VLLM_DIR"),
            "mode": recorder.mode if recorder is not None else None,
            "pid": os.getpid(),
        }


ray.init(address=sys.argv[1], log_to_driver=False)
try:
    worker = Worker.options(  # type: ignore[attr-defined]
        runtime_env={"env_vars": env_vars},
        scheduling_strategy=NodeAffinitySchedulingStrategy(sys.argv[2], soft=False),
    ).remote()
    seen = ray.get(worker.register.remote(), timeout=120)
    ray.kill(worker)
finally:
    ray.shutdown()
print(
    json.dumps(
        {"copied": sorted(n for n in env_vars if n.startswith("MHCDOCTOR_")), "worker": seen, "driver": os.getpid()}
    )
)
