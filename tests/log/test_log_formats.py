"""Logs written with each release's format strings (tests/log/logs.py) read as that release meant them."""

from __future__ import annotations

import pytest
from logs import (
    ESC,
    TILELANG_BEGINS,
    Server,
    aiter,
    aiter_build,
    aiter_import,
    aiter_log_more,
    read,
    tilelang,
    traceback,
    vllm,
    vllm_multiline,
)


@pytest.mark.parametrize("release", sorted(TILELANG_BEGINS))
def test_tilelang_release_is_named_by_its_kernel_py_line_numbers(tmp_path, release):
    text = "\n".join(tilelang(release, what, "mhc_post_tilelang") for what in ("begins", "completes")) + "\n"
    _, doc = read(tmp_path, text)
    shared = {"0.1.10": ["0.1.10", "0.1.12"], "0.1.12": ["0.1.10", "0.1.12"]}
    shared |= {"0.1.14": ["0.1.14", "0.1.15"], "0.1.15": ["0.1.14", "0.1.15"]}
    assert doc["versions"]["tilelang"]["releases"] == shared.get(release, [release])
    assert doc["ops"]["mhc_post"] == {
        "path": "tilelang",
        "certain": True,
        "paths": ["tilelang"],
        "lines": [1],
        "text": "tilelang: line 1",
    }


def test_tilelang_before_0_1_9_has_no_line_number_and_is_said_so(tmp_path):
    _, doc = read(tmp_path, tilelang("0.1.8", "begins", "mhc_fused_tilelang") + "\n")
    assert doc["versions"]["tilelang"]["releases"] == ["<=0.1.8"]
    assert doc["ops"]["mhc_fused_post_pre"]["certain"] is True


def test_vllm_0_25_start_up_then_a_compile_while_serving(tmp_path):
    """0.20–0.30 prefix every line a worker writes, so tilelang's lines name their worker; the compile after
    'Application startup complete.' is counted as serving, with its time."""
    server = Server("0.25.0").banner()
    server.worker_log(
        0,
        "INFO",
        "deepseek_v4_mhc_warmup.py:215",
        "Warming up DeepSeek V4 mHC TileLang kernels for token sizes: [1, 2, 4]",
    )
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:00:00"))
    server.worker(0, tilelang("0.1.9", "completes", "mhc_post_tilelang", "2026-07-06 16:00:05"))
    server.worker_log(
        0, "INFO", "deepseek_v4_mhc_warmup.py:224", "DeepSeek V4 mHC TileLang warmup finished in 5.10 seconds."
    )
    server.started().request()
    server.worker(1, tilelang("0.1.9", "begins", "mhc_pre_big_fuse_with_norm_tilelang", "2026-07-06 16:10:00"))
    server.worker(1, tilelang("0.1.9", "completes", "mhc_pre_big_fuse_with_norm_tilelang", "2026-07-06 16:10:12"))
    code, doc = read(tmp_path, server.text())
    assert doc["versions"]["vllm"] == {"value": "0.25.0", "line": 1, "note": "vLLM's start-up banner"}
    assert doc["versions"]["model"]["value"] == "deepseek-ai/DeepSeek-V4-Flash"
    assert doc["versions"]["architecture"]["value"] == "DeepseekV4ForCausalLM"
    assert doc["phases"]["startup_complete"] == [7] and doc["phases"]["first_request"] == 8
    assert doc["phases"]["mhc_warmup_seconds"]["value"] == "5.10"
    assert (doc["compiles"]["startup"]["count"], doc["compiles"]["startup"]["seconds"]) == (1, 5.0)
    serving = doc["compiles"]["serving"]
    assert (serving["count"], serving["seconds"], serving["longest"]["process"]) == (1, 12.0, "Worker_TP1 pid=1001")
    assert [f["id"] for f in doc["findings"]] == ["mhc-jit-while-serving", "tilelang-cache-cold"]
    assert "took 12 s" in doc["findings"][0]["detail"]
    assert [p["name"] for p in doc["processes"]] == ["Worker_TP0 pid=1000", "Worker_TP1 pid=1001"]
    assert not any("Warming up DeepSeek V4 mHC" in note for note in doc["unknowns"])
    assert code == 1  # degraded: a warning, as check's exit codes say


def test_a_log_of_another_model_says_it_has_no_mhc(tmp_path):
    server = Server("0.25.0")
    server.api("INFO", "model.py:619", "Resolved architecture: Qwen2ForCausalLM")
    _, doc = read(tmp_path, server.text())
    assert "line 1: vLLM serves Qwen2ForCausalLM, not DeepSeek-V4" in doc["unknowns"][0]


def test_a_0_25_start_up_without_the_mhc_warmup_line_is_said(tmp_path):
    server = Server("0.25.0").banner().started().request()
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang"))
    _, doc = read(tmp_path, server.text())
    assert any("the warmup did not run" in note and "#51790" in note for note in doc["unknowns"])


def test_vllm_0_31_leaves_tilelang_lines_bare_and_the_jit_monitor_marks_serving(tmp_path):
    """0.31+ prefix only vLLM's own records; 0.26+ say when warmup is over (jit_monitor) and name a compile
    during inference."""
    server = Server("0.34.0").banner()
    server.worker_log(
        0,
        "INFO",
        "jit_monitor.py:88",
        "Kernel JIT monitor activated; monitored JIT compilations during inference will use mode=warn.",
    )
    server.worker(0, tilelang("0.1.12", "begins", "mhc_post_tilelang"))
    server.worker_log(
        0, "WARNING", "jit_monitor.py:133",
        "TileLang JIT compilation during inference: mhc_post_tilelang. This causes a latency spike; consider "
        "extending warmup to cover this shape/config.",
    )  # fmt: skip
    _, doc = read(tmp_path, server.text())
    assert doc["versions"]["tilelang"]["releases"] == ["0.1.10", "0.1.12"]
    kinds = {(e["process"], e["kind"]) for e in doc["evidence"]}
    assert kinds == {("(no process prefix)", "tilelang-compile"), ("Worker_TP0 pid=1000", "jit-during-inference")}
    assert doc["compiles"]["serving"]["count"] == 1  # after the monitor line, though no start-up line yet
    assert any("vLLM 0.31+ prefixes only its own log records" in note for note in doc["unknowns"])
    assert doc["findings"][0]["id"] == "mhc-jit-while-serving"
    assert (
        "vLLM's JIT monitor reported 1 compile(s) during inference, the first at line 5" in doc["findings"][0]["detail"]
    )


@pytest.mark.parametrize("release", ["0.1.13", "0.1.14", "0.1.20"])
def test_aiter_module_import_and_coloured_build_lines(tmp_path, release):
    server = Server("0.25.0").banner()
    for line in aiter_build(release, 1000, 95.3):
        server.worker(0, line)
    server.worker(0, aiter_import())
    _, doc = read(tmp_path, server.text())
    assert doc["compiles"]["startup"]["events"][0]["seconds"] == 95.3
    assert doc["compiles"]["startup"]["events"][0]["process"] == "Worker_TP0 pid=1000"
    pre = doc["ops"]["mhc_pre"]
    assert (pre["path"], pre["certain"]) == ("aiter", False)  # module_mhc holds pre, post and fused
    assert doc["ops"]["hc_head"]["path"] == "unknown"


def test_aiter_log_more_two_line_format_names_the_process_by_pid(tmp_path):
    server = Server("0.34.0").banner()
    server.worker_log(3, "INFO", "kernel_warmup.py:305", "JIT kernel warmup finished in 2.50s.")
    server.lines += aiter_log_more(1003, "import [module_mhc] under /opt/aiter/aiter/jit/module_mhc.so")
    _, doc = read(tmp_path, server.text())
    assert [(e["process"], e["kind"]) for e in doc["evidence"]] == [("Worker_TP3 pid=1003", "aiter-import")]


def test_aiter_wrong_arch_rebuild_is_a_finding(tmp_path):
    line = aiter("[module_mhc] prebuilt .so targets ['gfx950'] but not the running arch gfx942; rebuilding for gfx942")
    code, doc = read(tmp_path, Server("0.29.0").banner().worker(0, line).text())
    assert [f["id"] for f in doc["findings"]] == ["aiter-jit-stale"]
    assert code == 1


def test_a_failed_aiter_build_is_an_error_and_names_a_missing_hipcc(tmp_path):
    failed = aiter(f"{ESC}[31mfailed jit build [module_mhc]{ESC}[0m↓↓↓↓↓↓↓↓↓↓")
    no_hipcc = aiter(f"{ESC}[31mfailed jit build [module_mhc]{ESC}[0m: /bin/sh: 1: hipcc: not found")
    code, doc = read(tmp_path, Server("0.25.0").banner().worker(0, failed).worker(1, no_hipcc).text())
    assert [(f["line"], f["finding"]) for f in doc["fatal"]] == [(3, None), (4, "aiter-no-compiler")]
    assert [f["id"] for f in doc["findings"]] == ["aiter-no-compiler"]
    assert code == 3


def _fatal(tmp_path, frames, error):
    server = Server("0.25.0").banner()
    message = "WorkerProc hit an exception.\n" + "\n".join(traceback(frames, error))
    server.lines.append(vllm_multiline("Worker_TP0", 1000, "ERROR", "multiproc_executor.py:962", message))
    return read(tmp_path, server.text())


MHC = "/usr/lib/python3/site-packages/vllm/model_executor/kernels/mhc"


@pytest.mark.parametrize(
    ("frames", "error", "finding"),
    [
        (
            [(f"{MHC}/tilelang.py", 20, "mhc_pre_delayed_tilelang")],
            "ImportError: tilelang is required for mhc but is not installed. Install it with `pip install tilelang`.",
            "tilelang-missing",
        ),
        (
            [("/usr/lib/python3/site-packages/tilelang/__init__.py", 3, "<module>")],
            "RuntimeError: TypeAttr `__ffi_repr__` is already registered",
            "tilelang-tvm-ffi-mismatch",
        ),
        (
            [(f"{MHC}/aiter.py", 30, "mhc_pre_aiter")],
            "ModuleNotFoundError: No module named 'aiter.ops.mhc'",
            "aiter-no-mhc",
        ),
        (
            [(f"{MHC}/aiter.py", 30, "mhc_pre_aiter")],
            "ModuleNotFoundError: No module named 'aiter.ops'",
            "aiter-impostor",
        ),
        (
            [("/usr/lib/python3/site-packages/vllm/utils/deep_gemm.py", 400, "tf32_hc_prenorm_gemm")],
            "RuntimeError: CUDA error: an illegal instruction was encountered",
            "deepgemm-prenorm-broken",
        ),
    ],
)
def test_known_fatal_texts_in_a_workers_traceback_map_to_their_finding(tmp_path, frames, error, finding):
    code, doc = _fatal(tmp_path, frames, error)
    assert [f["id"] for f in doc["findings"]] == [finding]
    fatal = doc["fatal"][0]
    assert (fatal["process"], fatal["finding"]) == ("Worker_TP0 pid=1000", finding)
    assert [k["text"] for k in fatal["context"][-2:]] == [
        f'File "{frames[0][0]}", line {frames[0][1]}, in {frames[0][2]}',
        "call()",
    ]
    assert code == 3


def test_a_frame_of_vllms_torch_op_proves_the_torch_path(tmp_path):
    code, doc = _fatal(
        tmp_path, [(f"{MHC}/torch.py", 50, "mhc_pre_torch")], "torch.OutOfMemoryError: CUDA out of memory"
    )
    assert (doc["ops"]["mhc_pre"]["path"], doc["ops"]["mhc_pre"]["certain"]) == ("torch", True)
    assert doc["fatal"][0]["finding"] is None  # no known mHC cause: said so, not guessed
    assert doc["engine_death"][0]["text"] == "WorkerProc hit an exception."  # the worker died of it
    assert code == 3


def test_a_frame_of_034s_fused_reuse_form_proves_the_fused_op_on_tilelang(tmp_path):
    frames = [
        (f"{MHC}/tilelang.py", 1040, "mhc_fused_post_pre_tilelang_reuse_residual"),
        (f"{MHC}/tilelang.py", 900, "_mhc_fused_post_pre_tilelang_impl"),
    ]
    code, doc = _fatal(tmp_path, frames, "torch.OutOfMemoryError: CUDA out of memory")
    fused = doc["ops"]["mhc_fused_post_pre"]
    assert (fused["path"], fused["certain"]) == ("tilelang", True)
    assert doc["ops"]["mhc_pre"]["path"] == "unknown"  # the fused op ran: no word on the separate pre
    assert code == 3


def test_engine_death_fails(tmp_path):
    server = Server("0.25.0").banner()
    server.lines.append(vllm("EngineCore_DP0", 200, "ERROR", "core.py:1233", "EngineCore encountered a fatal error."))
    code, doc = read(tmp_path, server.text())
    assert doc["engine_death"][0]["line"] == 3
    assert code == 3


def test_colour_crlf_and_interleaved_processes(tmp_path):
    """vLLM's cyan prefix, Windows line ends, two workers' lines interleaved: each compile pairs with its own end."""
    lines = [
        f"{ESC}[36m(Worker_TP0 pid=1000){ESC}[0m "
        + tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:00:00"),
        f"{ESC}[36m(Worker_TP1 pid=1001){ESC}[0m "
        + tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:00:01"),
        f"{ESC}[36m(Worker_TP1 pid=1001){ESC}[0m "
        + tilelang("0.1.9", "completes", "mhc_post_tilelang", "2026-07-06 16:00:04"),
        f"{ESC}[36m(Worker_TP0 pid=1000){ESC}[0m "
        + tilelang("0.1.9", "completes", "mhc_post_tilelang", "2026-07-06 16:00:09"),
    ]
    _, doc = read(tmp_path, "\r\n".join(lines) + "\r\n")
    events = {e["process"]: e["seconds"] for e in doc["compiles"]["unknown"]["events"]}
    assert events == {"Worker_TP0 pid=1000": 9.0, "Worker_TP1 pid=1001": 3.0}
    assert all(ESC not in e["text"] and "\r" not in e["text"] for e in doc["evidence"])
