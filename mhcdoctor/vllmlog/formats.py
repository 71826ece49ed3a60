"""The lines vLLM, tilelang and aiter write about mHC, as data: each pattern cites the format string it follows.

Read from the released code (vLLM wheels 0.20.0–0.34.0, tilelang tags and wheels 0.1.6–0.1.15, ROCm/aiter tags
v0.1.11–v0.1.20). A pattern matches the message after the process prefix and ANSI codes are removed (scan.py).
"""

from __future__ import annotations

import re

from mhcdoctor.knowledge.bugs import BUGS
from mhcdoctor.vllmlog.numbers import NUMBER

# Byte strings that mark a line worth a closer look, with how many lines before and after it to look at too (a
# traceback's frames before its error line, the frames after "Traceback", the AITER_LOG_MORE header before its
# message). Found with bytes.find on whole blocks, so the lines of a 10 GB log that say nothing of mHC cost a few
# scans, not a regex each. Each is the part of its message that find skips over fastest (measured: 3–9 GB/s each
# here, where "PDL is not supported" or "EngineDeadError" ran at 0.5); every pattern below needs one of them, and an
# EngineDeadError is read inside the traceback that names it.
KEYWORDS: tuple[tuple[bytes, int, int], ...] = (
    (b"[TileLang:tilelang.jit.kernel:", 0, 0),
    (b"to compile kernel `", 0, 0),  # the same lines again: a terminal's wrap may cut one keyword, not both
    (b"TileLang JIT", 0, 0),
    (b"DeepSeek V4 mHC TileLang", 0, 0),
    (b"module_mhc]", 1, 0),
    (b"server version ", 0, 0),
    (b"  version ", 0, 1),  # vLLM's logo: the model is on the next line
    (b"V1 LLM engine", 0, 0),
    (b"Application startup complete", 0, 0),
    (b"Kernel JIT monitor activated", 0, 0),
    (b"JIT kernel warmup finished", 0, 0),
    (b"DeepGEMM kernels are disabled", 0, 0),
    (b"Traceback (most recent call last)", 0, 60),
    (b"tilelang is required for mhc", 30, 0),
    (b"No module named 'aiter", 30, 0),
    (b"cannot import name 'mhc", 30, 0),
    (b"EngineCore encountered a fatal error", 0, 0),
    (b"Engine core init", 0, 0),
    (b"WorkerProc ", 0, 0),
    (b"Worker failed with error", 30, 0),
    # An error is read wherever it is, not only near the keywords above: a frame (and its source line, which may
    # call torch.ops.vllm.<op>), and every line naming an error or exception, so a traceback longer than any window
    # keeps its last line and an excerpt that starts after its "Traceback" header still has its error read. Each
    # costs a find over every block (docs/log.md, Measured): a setup error these already find has no keyword of its
    # own ("Exception: WorkerProc initialization failed"); a known bug's line has its record's, below.
    (b'", line ', 0, 1),  # a frame, 'File "x", line N, in f' (the part find skips over fastest)
    (b"Error", 0, 0),
    (b"Exception", 0, 0),
    (b"EngineCore failed to start", 0, 0),
    (b"died unexpectedly", 0, 0),
    (b"Fatal Python error", 0, 0),
    (b"Process EngineCore", 0, 0),
    # each known bug's error line, with the 30 lines of traceback before it (knowledge/bugs.py)
    *((log.keyword.encode(), 30, 0) for bug in BUGS for log in bug.log),
)
# Lines vLLM writes only while it starts (STARTUP_ONLY below): looked for until the first is found; after it every
# compile is at start-up until "Application startup complete." (and a banner starts the next run).
STARTUP_KEYWORDS: tuple[bytes, ...] = (
    b"GPU KV cache size",
    b"Maximum concurrency for",
    b"Available KV cache memory",
    b"CUDA graph pool memory",
    b"Profiling CUDA graph memory",
    b"Graph capturing finished",
    b"Model loading took",
)
# Facts a log states once: looked for until found.
ONCE: tuple[bytes, ...] = (b"Resolved architecture: ", b"Automatically detected platform")
# An HTTP request line of uvicorn's access log (uvicorn/config.py LOGGING_CONFIG "access": `%(client_addr)s -
# "%(request_line)s" %(status_code)s`): counted per chunk, never looked at one by one.
# Only a POST is a request that runs the model: `GET /metrics` (Prometheus), `/health` and `/v1/models` are not.
REQUEST = b'"POST /'
# A line of vLLM's own format, looked for once per block until one is found: its process prefix or its header.
VLLM_LINE = re.compile(
    rb"(?m)^[^\n]{0,120}?(?:\((?:[A-Za-z][\w\-]{0,64} )?(?:rank=\d+ )?pid=" + NUMBER.encode() + rb"[,)]|"
    rb"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]\n]{1,200}:\d+\])"
)

# --- prefixes, outermost first --------------------------------------------------------------------------------
# `docker compose logs`: "service  | " (vLLM #41834's excerpt); `kubectl logs --prefix`: "[pod/name/container] ";
# `docker logs -t`: an RFC 3339 timestamp.
CONTAINER_PREFIX = re.compile(
    r"^(?:[A-Za-z0-9][\w.\-]*\s+\|\s?|\[pod/[^\]\s]+\]\s|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?\s)"
)
# vLLM's process prefix: 0.20–0.30 wrap every line a worker writes (utils/system_utils.py `_add_prefix`:
# f"({worker_name} pid={pid}) ", cyan on a terminal), so tilelang's and aiter's lines carry it too; from 0.31 only
# vLLM's own records do (logger.py _FORMAT "(%(vllm_process_name)s pid=%(process)d) "). Older vLLM wrote
# "(VllmWorker rank=0 pid=N)"; Ray prefixes its workers' lines "(RayWorkerWrapper pid=N, ip=A)" or "(pid=N, ip=A)".
# What a paste adds before a line: indentation, a Markdown quote, a stray backtick (vLLM #43477's paste).
LEAD = re.compile(r"^[\s>`]+")
# A Windows line end shown as text by the editor it was pasted from (vLLM #40778: "...in run^M").
CARET_M = re.compile(r"(?:\^M)+$")
# Ray's log deduplication (ray/_private/ray_logging/__init__.py LogDeduplicator): "<line> [repeated 7x across
# cluster]": the same line was written 7 more times, by other workers (vLLM #40899's excerpt).
RAY_REPEATED = re.compile(r"\s?\[repeated (?P<n>" + NUMBER + r")x across cluster\]")
# A line a terminal wrapped continues on the next: one that starts with none of what a line of a log starts with.
LINE_START = re.compile(
    r"^(?:\s|[\[(<{`>|/]|\d|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\b|Traceback|During handling|The above|"
    r"terminate called|what\(\)|Fatal Python|Current thread|[A-Za-z_][\w.]{0,80}:(?:\s|$)|"
    r"[A-Za-z0-9][\w.\-]*\s+\|)"
)
PROCESS_PREFIX = re.compile(
    r"^\((?:(?P<name>[A-Za-z][\w\-]*(?: [A-Za-z]\w*)?) )?(?:rank=\d+ )?pid=(?P<pid>"
    + NUMBER
    + r")(?:, ip=[^)\s]{1,64})?\)\s?"
)
# vLLM's own header (logger.py _FORMAT, datefmt "%m-%d %H:%M:%S"):
# "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] ";
# logging_utils/formatter.py NewLineFormatter repeats it, after "\r\n", on every line of a multi-line message
# (a traceback logged with logger.exception).
VLLM_HEADER = re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*:\d+\] ?")
# ECMA-48 CSI and OSC sequences (aiter colours `finish build` and `failed jit build`; vLLM colours its prefix).
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

# --- vLLM ------------------------------------------------------------------------------------------------------
# entrypoints/api_server.py: "vLLM API server version %s"; entrypoints/utils.py (0.20–0.22),
# entrypoints/serve/utils/api_utils.py (0.23–0.30), entrypoints/common/startup.py (0.31+): "vLLM server version %s,
# serving model %s", or its logo with "  version %s" and "  model   %s" on two lines.
VLLM_VERSION = re.compile(r"vLLM (?:API )?server version (?P<version>\S+?)(?:,|$| )")
LOGO_VERSION = re.compile(r"█\s+version\s+(?P<version>\d\S*)")
LOGO_MODEL = re.compile(r"█\s+model\s+(?P<model>\S+)")
SERVING_MODEL = re.compile(r"serving model (?P<model>\S+)")
# v1/engine/core.py (0.20–0.34): "Initializing a V1 LLM engine (v%s) with config: %s"
ENGINE_VERSION = re.compile(r"Initializing a V1 LLM engine \(v(?P<version>[^)\s]+)\)")
# config/model.py (0.20–0.34): "Resolved architecture: %s"
ARCHITECTURE = re.compile(r"Resolved architecture: (?P<arch>\w+)")
# platforms/__init__.py: "Automatically detected platform %s." — logger.debug in every DeepSeek-V4 release
# (vLLM #26740 moved it from INFO), so a default log never has it.
PLATFORM = re.compile(r"Automatically detected platform (?P<platform>\w+)\.")
# uvicorn/lifespan/on.py: "Application startup complete." (vLLM's API server is uvicorn).
STARTUP_COMPLETE = re.compile(r"Application startup complete\.")
# model_executor/warmup/deepseek_v4_mhc_warmup.py (0.24–0.29): both say "TileLang" whichever path the op took.
MHC_WARMUP_START = re.compile(r"Warming up DeepSeek V4 mHC TileLang kernels for token sizes: (?P<sizes>.*)")
MHC_WARMUP_DONE = re.compile(r"DeepSeek V4 mHC TileLang warmup finished in (?P<seconds>[\d.]+) seconds")
# model_executor/warmup/kernel_warmup.py (0.30+): the JIT warmup that replaced it.
JIT_WARMUP_DONE = re.compile(r"JIT kernel warmup finished in (?P<seconds>[\d.]+)s")
# utils/jit_monitor.py (0.26+): after warmup, "Kernel JIT monitor activated; ..." per worker, then
# "%s %s during inference: %s%s. This causes a latency spike; ..." (warning_once: once per kernel and shape).
JIT_MONITOR_ON = re.compile(r"Kernel JIT monitor activated")
JIT_DURING_INFERENCE = re.compile(r"\b(?P<backend>\w{1,32}) JIT compilation during inference: (?P<kernel>\w+)")
# utils/deep_gemm.py (0.34): "DeepGEMM kernels are disabled: ..." (no nvcc, or nvcc older than 12.9).
DEEPGEMM_DISABLED = re.compile(r"DeepGEMM kernels are disabled: (?P<why>.*)")
# v1/engine/core.py "EngineCore encountered a fatal error."; v1/engine/utils.py "Engine core initialization failed.
# See root cause above. Failed core proc(s): ..."; v1/executor/multiproc_executor.py "Worker failed with error
# '%s'", "WorkerProc failed to start.", "WorkerProc hit an exception."; v1/engine/exceptions.py EngineDeadError.
# v1/engine/core.py "EngineCore failed to start."; v1/executor/multiproc_executor.py "Worker proc %s died
# unexpectedly, shutting down executor." and the Exception "WorkerProc initialization failed due to an exception in
# a background process." (0.20–0.34, read in the 0.25.0 wheel); a C++ abort ("terminate called after throwing",
# libstdc++) and CPython's "Fatal Python error: Aborted" end the process that writes them, and so does the exception
# before CPython's multiprocessing/process.py _bootstrap writes "Process EngineCore:" and its traceback.
ENGINE_DEATH = re.compile(
    r"EngineCore encountered a fatal error|Engine core initialization failed|WorkerProc failed|"
    r"WorkerProc hit an exception|EngineDeadError|Worker failed with error|EngineCore failed to start|"
    r"Worker proc \S{1,64} died unexpectedly|WorkerProc initialization failed|terminate called after throwing|"
    r"Fatal Python error: |^Process EngineCore[\w-]{0,32}:\s*$"
)
# Lines vLLM writes only while it starts (0.20–0.34, read in the 0.25.0 wheel): v1/core/kv_cache_utils.py "GPU KV
# cache size: %s tokens", "Maximum concurrency for %s tokens per request"; v1/worker/gpu_worker.py "Available KV
# cache memory: %s GiB", "CUDA graph pool memory: ..."; v1/worker/gpu_model_runner.py "Profiling CUDA graph
# memory: %s", "Graph capturing finished in %.0f secs", "Model loading took %s GiB memory". A compile before one of
# them (and after no "Application startup complete.") came at start-up.
STARTUP_ONLY = re.compile(
    r"GPU KV cache size: |Maximum concurrency for \S+ tokens per request|Available KV cache memory: |"
    r"CUDA graph pool memory: |Profiling CUDA graph memory: |Graph capturing finished in |Model loading took "
)

# --- Python tracebacks ------------------------------------------------------------------------------------------
TRACEBACK = re.compile(r"^Traceback \(most recent call last\):")
FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<func>[\w<>.]+)')
# The last line of a traceback, or an error a process printed alone ("Exception: WorkerProc initialization failed").
EXCEPTION = re.compile(r"^(?P<type>(?:[A-Za-z_][\w.:]*)?(?:Error|Exception|Exit|Interrupt))(?::\s?(?P<text>.*))?$")

# --- tilelang ---------------------------------------------------------------------------------------------------
# tilelang/__init__.py from 0.1.9: "%(asctime)s  [TileLang:%(name)s:%(levelname)s] (%(filename)s:%(lineno)d):
# %(message)s" (datefmt "%Y-%m-%d %H:%M:%S"); 0.1.6–0.1.8 have no "(file:line)". tilelang/jit/kernel.py:
# "TileLang begins to compile kernel `{func_name}` with `{out_idx=}`" and "TileLang completes to compile kernel
# `{func_name}`"; nothing is logged for a kernel loaded from the disk cache.
TILELANG_COMPILE = re.compile(
    r"(?:(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s+)?\[TileLang:tilelang\.jit\.kernel:INFO\]"
    r"(?: \(kernel\.py:(?P<lineno>"
    + NUMBER
    + r")\))?: TileLang (?P<what>begins|completes) to compile kernel `(?P<kernel>\w+)`"
)
# The `begins` line's number in tilelang/jit/kernel.py per release (`completes` is 8 lines below in each): read
# from the tags v0.1.9–v0.1.13 of tile-ai/tilelang and the PyPI wheels 0.1.14 and 0.1.15.
TILELANG_BEGINS_LINE: dict[int, tuple[str, ...]] = {
    133: ("0.1.9",),
    129: ("0.1.10", "0.1.12"),
    130: ("0.1.11",),
    131: ("0.1.13",),
    137: ("0.1.14", "0.1.15"),
}
TILELANG_COMPLETES_OFFSET = 8
# vLLM's tilelang kernels (the @tilelang.jit function names, which tilelang logs as the kernel name), and the mHC
# ops each serves: layers/mhc.py (0.20–0.21), _tilelang_ops.py (0.22), kernels/mhc/tilelang_kernels.py (0.23+).
# mhc_pre's kernels also run inside the fused post+pre op (kernels/mhc/tilelang.py mhc_fused_post_pre_*).
PRE_AND_FUSED = ("mhc_pre", "mhc_fused_post_pre")
TILELANG_KERNEL_OPS: dict[str, tuple[str, ...]] = {
    "mhc_pre_big_fuse_tilelang": PRE_AND_FUSED,
    "mhc_pre_big_fuse_with_norm_tilelang": PRE_AND_FUSED,
    "mhc_pre_big_fuse_broadcast_with_norm_tilelang": ("mhc_pre",),  # 0.26+: the first layer's broadcast pre
    "hc_prenorm_gemm_tilelang": PRE_AND_FUSED,  # the prenorm GEMM where DeepGEMM is not used
    "hc_prenorm_gemm_block_m_tilelang": PRE_AND_FUSED,
    "mhc_fused_tilelang": ("mhc_fused_post_pre",),
    "mhc_post_tilelang": ("mhc_post",),
    "hc_head_fuse_tilelang": ("hc_head",),
}

# --- aiter ------------------------------------------------------------------------------------------------------
# aiter/__init__.py: "[%(name)s] %(message)s", or with AITER_LOG_MORE=1 "[%(name)s %(levelname)s]
# %(asctime)s.%(msecs)03d - %(processName)s:%(process)d - %(pathname)s:%(lineno)d - %(funcName)s\n%(message)s"
# (the message on the next line).
AITER_LOG_MORE = re.compile(
    r"^\[aiter (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} - "
    r"\S+:(?P<pid>" + NUMBER + r") - \S+:\d+ - \w+$"
)
# aiter/jit/core.py (v0.1.11–v0.1.20): get_module_custom_op "import [{md_name}] under {path}" (once per process, at
# the first call of an op of the module); build_module "start build [{md_name}] under {op_dir}" and "finish build
# [{md_name}], cost {s:.1f}s" (from v0.1.14 prefixed "[pid={pid} pname={name}] "), "failed jit build [{md_name}]",
# RuntimeError "[aiter] build [{md_name}] under {dir} failed !!!!!!"; v0.1.17+ _needs_arch_rebuild "[{md_name}]
# prebuilt .so targets {archs} but not the running arch {arch}; rebuilding for {arch}".
AITER_MODULE_OPS = ("mhc_pre", "mhc_post", "mhc_fused_post_pre")  # the ops module_mhc holds
AITER_IMPORT = re.compile(r"import \[module_mhc\] under (?P<path>\S+)")
AITER_START = re.compile(r"(?:\[pid=(?P<pid>" + NUMBER + r") pname=[^\]]{0,200}\] )?start build \[module_mhc\]")
AITER_FINISH = re.compile(
    r"(?:\[pid=(?P<pid>" + NUMBER + r") pname=[^\]]{0,200}\] )?finish build \[module_mhc\], cost (?P<seconds>[\d.]+)s"
)
AITER_FAILED = re.compile(r"failed jit build \[module_mhc\]|build \[module_mhc\] under \S+ failed")
AITER_WRONG_ARCH = re.compile(
    r"\[module_mhc\] prebuilt \.so targets (?P<built>\[[^\]]*\]) but not the running arch (?P<arch>\w+)"
)

# --- traceback frames that name the path an op took ------------------------------------------------------------
# vLLM's per-path op functions (kernels/mhc/{aiter,torch,triton,tilelang}.py, 0.23–0.34) and aiter's own
# (aiter/ops/mhc.py: mhc_pre, mhc_post, mhc_fused_post_pre).
FRAME_OPS: dict[str, tuple[str, str]] = {
    "mhc_pre_aiter": ("aiter", "mhc_pre"),
    "mhc_pre_delayed_aiter": ("aiter", "mhc_pre"),
    "mhc_post_aiter": ("aiter", "mhc_post"),
    "mhc_fused_post_pre_aiter": ("aiter", "mhc_fused_post_pre"),
    "mhc_fused_post_pre_delayed_rms_norm_aiter": ("aiter", "mhc_fused_post_pre"),
    "mhc_pre_torch": ("torch", "mhc_pre"),
    "mhc_pre_delayed_torch": ("torch", "mhc_pre"),
    "mhc_post_torch": ("torch", "mhc_post"),
    "_hc_head_triton": ("triton", "hc_head"),
    "hc_head_reduce_triton_kernel": ("triton", "hc_head"),
    "mhc_pre_delayed_tilelang": ("tilelang", "mhc_pre"),
    "mhc_fused_post_pre_delayed_tilelang": ("tilelang", "mhc_fused_post_pre"),
    # kernels/mhc/tilelang.py's entry points (0.24–0.34; the broadcast pre from 0.26, _impl and the reuse form 0.34)
    "mhc_pre_tilelang": ("tilelang", "mhc_pre"),
    "mhc_pre_broadcast_tilelang": ("tilelang", "mhc_pre"),
    "mhc_post_tilelang": ("tilelang", "mhc_post"),
    "mhc_fused_post_pre_tilelang": ("tilelang", "mhc_fused_post_pre"),
    "_mhc_fused_post_pre_tilelang_impl": ("tilelang", "mhc_fused_post_pre"),
    "mhc_fused_post_pre_tilelang_reuse_residual": ("tilelang", "mhc_fused_post_pre"),
    "hc_head_fused_kernel_tilelang": ("tilelang", "hc_head"),
}
AITER_OPS_FILE = "aiter/ops/mhc.py"
AITER_FRAME_OPS = {"mhc_pre": "mhc_pre", "mhc_post": "mhc_post", "mhc_fused_post_pre": "mhc_fused_post_pre"}

# vLLM's custom ops (direct_register_custom_op op_name in layers/mhc.py 0.20–0.21 and kernels/mhc/*.py 0.22–0.34),
# called as torch.ops.vllm.<name> from a traceback's source line: the op, and the path where the name says it.
TORCH_OP = re.compile(r"torch\.ops\.vllm\.(?P<name>\w{1,64})")
TORCH_OPS: dict[str, tuple[str | None, str]] = {
    "mhc_pre": (None, "mhc_pre"),  # 0.20–0.21: one op, the path chosen inside it
    "mhc_post": (None, "mhc_post"),
    "mhc_pre_aiter": ("aiter", "mhc_pre"),
    "mhc_pre_delayed_aiter": ("aiter", "mhc_pre"),
    "mhc_post_aiter": ("aiter", "mhc_post"),
    "mhc_fused_post_pre_aiter": ("aiter", "mhc_fused_post_pre"),
    "mhc_fused_post_pre_delayed_rms_norm_aiter": ("aiter", "mhc_fused_post_pre"),
    "mhc_pre_tilelang": ("tilelang", "mhc_pre"),
    "mhc_pre_delayed_tilelang": ("tilelang", "mhc_pre"),
    "mhc_post_tilelang": ("tilelang", "mhc_post"),
    "mhc_fused_post_pre_tilelang": ("tilelang", "mhc_fused_post_pre"),
    "mhc_fused_post_pre_delayed_tilelang": ("tilelang", "mhc_fused_post_pre"),
    "hc_head_fused_kernel_tilelang": ("tilelang", "hc_head"),
    "hc_head_triton": ("triton", "hc_head"),
}
