"""Do vLLM's own tilelang mHC kernels lower (tilelang's passes and CUDA codegen for sm_90, no nvcc, no GPU) under the
installed tilelang and apache-tvm-ffi? CPU only. vLLM's kernel files come from a wheel (tests/bench/vllm_fixture.py's
folder first on PYTHONPATH); its wrappers are called as the DeepSeek-V4 model calls them (mhcdoctor's vllm:tilelang
path, DeepGEMM off) on CPU tensors, and every tilelang JIT call they make is lowered instead of compiled and run: the
kernel each op needs at 8, 200 and 1024 tokens. Nothing is computed: what is checked is that each kernel builds.

Usage: VLLM_USE_DEEP_GEMM=0 PYTHONPATH=FIXTURE:TILELANG_SITE:. python bench/vllm_lower.py [--hidden H] [--tokens 8,200]
(0.20-0.21's mhc_pre has no GEMM but DeepGEMM's: put a stub deep_gemm with a no-op tf32_hc_prenorm_gemm on PYTHONPATH
and leave VLLM_USE_DEEP_GEMM unset, so their tilelang kernels are reached.)
Prints one line per kernel lowered (or failed); exit 1 when one failed.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version
from typing import Any

from tilelang_lower import sm90_target  # bench/ is the script's folder, so first on its path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=7168)
    parser.add_argument("--tokens", default="8,200,1024")
    a = parser.parse_args()
    import torch

    torch.version.cuda = torch.version.cuda or "13.0"  # the fixture's platform stand-in then says CUDA (sm_90)
    import tilelang
    import tilelang.jit  # noqa: F401  (the module, in sys.modules)
    import vllm
    import vllm.platforms as platforms
    from tilelang import tvm

    platforms.current_platform.get_device_capability = lambda device_id=0: platforms.DeviceCapability(9, 0)
    target = sm90_target(tvm)
    lowered: dict[str, str] = {}

    def lower_instead(self: Any, *args: Any, **kwargs: Any) -> None:
        name = getattr(self.func, "__name__", str(self.func))
        key = f"{name}{tuple(v for v in args if not isinstance(v, torch.Tensor))}{sorted(kwargs.items())}"
        if key in lowered:
            return None
        try:
            tir = self.get_tir(*args, **kwargs)
            # the pass configs JITKernel lowers under (tilelang/jit/kernel.py): the function's, then the decorator's
            attrs = tir.attrs
            configs = dict(attrs["tilelang_pass_configs"]) if attrs and "tilelang_pass_configs" in attrs else {}
            configs.update(getattr(self, "pass_configs", None) or {})
            try:
                from tilelang.transform.pass_config import normalize_pass_configs

                configs = normalize_pass_configs(configs)
            except ImportError:  # tilelang 0.1.9 takes them as they are
                pass
            with tvm.transform.PassContext(opt_level=3, config=configs), target:
                tilelang.lower(tir, target=target)
            lowered[key] = "lowered"
        except Exception as exc:  # the failure is the finding: say it and go on
            lowered[key] = f"{type(exc).__name__}: {str(exc)[:240]}"
        print(f"{key}: {lowered[key]}", flush=True)
        return None

    sys.modules["tilelang.jit"].JITImpl.__call__ = lower_instead  # tilelang.jit the name is the decorator
    # torch.compile / cuda-only calls in the wrappers: the device properties compute_num_split asks for
    torch.cuda.get_device_properties = lambda *_: type("P", (), {"multi_processor_count": 132})()
    from mhcdoctor.kernels import vllm_path
    from mhcdoctor.verify.cases import Params, make_inputs, scalar_args

    print("vLLM", vllm.__version__, "tilelang", version("tilelang"), "apache-tvm-ffi", version("apache-tvm-ffi"))
    impl = vllm_path.load("vllm:tilelang", "cpu", lambda text: None)
    p = Params(a.hidden, 4, 1e-6, 1e-6, 1e-6, 2.0, 20)
    calls = impl.as_model_calls or impl.ops
    for tokens in (int(t) for t in a.tokens.split(",")):
        for op, fn in calls.items():
            inputs, scalars = make_inputs(op, tokens, p, 0, "cpu"), scalar_args(op, p)
            norm = {"norm_weight": torch.ones(a.hidden, dtype=torch.bfloat16), "norm_eps": 1e-6}
            kwargs = norm if op in impl.norm_ops else {}
            try:
                fn(*inputs.values(), *scalars.values(), **kwargs)
            except Exception as exc:  # after a lowered kernel the wrapper may read outputs nothing computed
                why = f"{type(exc).__name__}: {exc}"
                print(f"{op} at {tokens} tokens: the wrapper stopped after its kernels: {why}"[:300])
    failed = [k for k, v in lowered.items() if v != "lowered"]
    print(f"{len(lowered) - len(failed)} kernels lowered, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
