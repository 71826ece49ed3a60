"""`mhcdoctor log` on the logs users posted in public vLLM, fork, recipes and SGLang threads (tests/log/data/SOURCES.md:
each one's source and the thread's conclusion). Each test asserts what a support engineer reads off the log by eye:
the paths, the versions, the compiles, and what killed the server.
"""

from __future__ import annotations

import doctor
from logs import DATA, log_json

from mhcdoctor.rules.findings import CATALOGUE


def _died(doc: dict) -> list[tuple[int, str]]:
    return [(k["line"], k["process"]) for k in doc["engine_death"]]


def _fatal(doc: dict) -> list[tuple[int, str | None, str | None]]:
    return [(f["line"], f["finding"], f["op"]) for f in doc["fatal"]]


# --- failed start-ups read as failures ------------------------------------------------------------------------------


def test_40778_the_api_server_gave_up_and_compose_said_exit_code_0():
    code, doc = log_json("vllm-40778-apiserver-exit0.log")
    assert _died(doc) == [(12, "APIServer pid=1")]  # "Engine core initialization failed. See root cause above."
    assert any(note.startswith("the engine died (line 12) and no known mHC failure") for note in doc["unknowns"])
    assert doc["source"]["vllm_line"] == 1  # docker compose's "vllm  | " before vLLM's own prefix
    assert code == 3


def test_40760_a_bare_exception_line_and_engine_core_failed_to_start():
    code, doc = log_json("vllm-40760-workerproc-init-failed.log")
    assert _died(doc) == [(8, "EngineCore_DP4 pid=2050"), (9, "EngineCore_DP1 pid=2047")]
    assert doc["engine_death"][0]["text"].startswith("Exception: WorkerProc initialization failed")
    assert code == 3


def test_40821_worker_proc_died_unexpectedly():
    code, doc = log_json("vllm-40821-worker-died.log")
    assert _died(doc) == [(1, "EngineCore pid=52442"), (2, "EngineCore pid=52442")]  # and "Process EngineCore:"
    assert "Worker proc VllmWorker-0 died unexpectedly" in doc["engine_death"][0]["text"]
    assert code == 3


def test_43477_lines_padded_by_a_terminal_and_a_stray_backtick_are_read():
    code, doc = log_json("vllm-43477-sm120-padded.log")
    assert _died(doc) == [(1, "Worker_TP0 pid=2352")]  # "`(Worker_TP0 pid=2352) ERROR ... WorkerProc hit ..."
    assert doc["engine_death"][0]["text"] == "WorkerProc hit an exception."  # the padding is not kept
    code_core, core = log_json("vllm-43477-sm120-enginecore.log")
    assert _died(core) == [(1, "EngineCore pid=2150")] and code == code_core == 3


def test_1cat_539_sm70_fork_the_engine_died_of_an_illegal_memory_access_not_of_mhc():
    code, doc = log_json("1cat-539-sm70-worker-died.log")
    assert _died(doc) == [(6, "EngineCore pid=684"), (9, "EngineCore pid=684")]
    assert doc["findings"] == [] and doc["fatal"] == []  # no mHC cause is guessed
    assert code == 3


def test_recipes_429_h20_worker_proc_hit_an_exception_at_start_up():
    code, doc = log_json("recipes-429-h20-workerproc.log")
    assert _died(doc) == [(4, "Worker_TP6_EP6 pid=800")]
    assert code == 3


def test_40778_dp_engine_cores_a_worker_failed_with_an_inductor_error():
    code, doc = log_json("vllm-40778-l20-engine-dp.log")
    assert _died(doc) == [(1, "EngineCore_DP1 pid=28757"), (4, "EngineCore_DP4 pid=28760")]
    assert "auto_functionalized was not removed" in doc["engine_death"][0]["text"]
    assert doc["findings"] == [] and code == 3


# --- DeepGEMM, tvm-ffi, and the failing op ---------------------------------------------------------------------------


def test_41027_an_excerpt_after_the_traceback_header_has_deepgemms_error_read():
    code, doc = log_json("vllm-41027-deepgemm-worker-tail.log")
    assert _fatal(doc) == [(2, "deepgemm-prenorm-broken", "mhc_pre")]
    spec = next(s for s in CATALOGUE if s.id == "deepgemm-prenorm-broken")
    assert doc["findings"][0]["fix"] == spec.fix and "the failing op: mhc_pre" in doc["findings"][0]["detail"]
    assert code == 3


def test_40778_the_engine_core_relays_deepgemms_unsupported_architecture():
    code, doc = log_json("vllm-40778-deepgemm-enginecore.log")
    assert _fatal(doc) == [(14, "deepgemm-prenorm-broken", "mhc_pre")]
    assert doc["fatal"][0]["process"] == "EngineCore pid=208" and len(doc["fatal"][0]["context"]) == 12
    assert code == 3


def test_40778_frames_through_torch_ops_vllm_mhc_pre_name_the_op_without_a_path():
    for name, line in (("vllm-40778-mhc-pre-frames.log", 9), ("vllm-40778-l20-inductor-caret-m.log", 8)):
        code, doc = log_json(name)
        assert _fatal(doc) == [(line, None, "mhc_pre")], name  # the error line itself is not in the excerpt
        assert "the traceback ends here" in doc["fatal"][0]["text"] and "^M" not in doc["fatal"][0]["text"]
        assert all(op["path"] == "unknown" for op in doc["ops"].values())  # torch.ops.vllm.mhc_pre names no path
        assert any("a traceback through mhc_pre whose error line is not in the log" in n for n in doc["unknowns"])
        assert code == 1


def test_45169_rocm_tvm_ffi_abort_is_the_tilelang_tvm_ffi_pair():
    code, doc = log_json("vllm-45169-rocm-tvm-ffi.log")
    assert [f["id"] for f in doc["findings"]] == ["tilelang-tvm-ffi-mismatch"]
    assert (9, "tilelang-tvm-ffi-mismatch", None) in _fatal(doc)
    assert "apache-tvm-ffi" in doc["findings"][0]["fix"]
    assert code == 3


def test_sglang_34858_is_no_vllm_log_but_its_abort_is_read():
    code, doc = log_json("sglang-34858-gb200-tvm-ffi.log")
    assert [f["id"] for f in doc["findings"]] == ["tilelang-tvm-ffi-mismatch"]
    assert doc["findings"][0]["lines"] == [1, 2]
    assert _died(doc) == [(3, "(no process prefix)")]  # Fatal Python error: Aborted
    assert doc["source"]["vllm_line"] is None
    assert any("no line of this input is in vLLM's own format" in note for note in doc["unknowns"])
    assert code == 3


# --- compiles, paths, Ray ---------------------------------------------------------------------------------------------


def test_40899_ray_nested_prefix_credits_the_worker_and_repeated_7x_is_eight_compiles():
    code, doc = log_json("vllm-40899-ray-cluster.log")
    assert [p["name"] for p in doc["processes"]] == ["RayWorkerWrapper pid=2450"]
    assert doc["ops"]["mhc_post"]["path"] == "tilelang" and doc["ops"]["mhc_post"]["certain"]
    startup = doc["compiles"]["startup"]  # "GPU KV cache size" (line 3) comes only while vLLM starts
    assert (startup["count"], startup["timed"], startup["seconds"]) == (8, 1, 3.0)
    assert doc["compiles"]["unknown"]["count"] == 0 and doc["phases"]["startup_line"]["line"] == 3
    assert doc["versions"]["tilelang"]["releases"] == ["0.1.9"]
    assert [f["id"] for f in doc["findings"]] == ["tilelang-cache-cold"] and code == 0


def test_50576_a_completes_line_whose_begins_was_cut_proves_the_path_and_counts():
    code, doc = log_json("vllm-50576-a100-tp2.log")
    pre, head = doc["ops"]["mhc_pre"], doc["ops"]["hc_head"]
    assert (pre["path"], pre["certain"], pre["lines"]) == ("tilelang", True, [1])  # the broadcast kernel's completes
    assert (head["path"], head["certain"], head["lines"]) == ("tilelang", True, [6])
    assert doc["ops"]["mhc_post"]["lines"] == [2]
    unknown = doc["compiles"]["unknown"]  # no start-up line: when, the log cannot tell
    assert (unknown["count"], unknown["timed"], unknown["seconds"]) == (4, 3, 15.0)
    assert doc["versions"]["tilelang"]["releases"] == ["0.1.10", "0.1.12"]
    assert code == 0


def test_50576_a_cuda_graph_line_after_the_compiles_puts_them_at_start_up():
    code, doc = log_json("vllm-50576-a100-tp1.log")
    startup = doc["compiles"]["startup"]
    assert (startup["count"], startup["timed"], startup["seconds"]) == (3, 3, 13.0)
    assert startup["longest"]["kernel"] == "mhc_pre_big_fuse_with_norm_tilelang"
    assert doc["ops"]["mhc_fused_post_pre"]["certain"] and doc["ops"]["mhc_fused_post_pre"]["lines"] == [1]
    assert code == 0


def test_sm89_fork_a_completes_never_closes_another_workers_begins():
    code, doc = log_json("sm89fork-95-l20-interleaved.log")
    unknown = doc["compiles"]["unknown"]
    assert (unknown["count"], unknown["timed"]) == (7, 0)  # six begins open, TP6's begins not in the excerpt
    assert len(doc["processes"]) == 7 and doc["versions"]["tilelang"]["releases"] == ["0.1.10", "0.1.12"]
    assert code == 0


def test_41834_the_engine_died_while_serving_after_two_compiles_of_one_kernel():
    code, doc = log_json("vllm-41834-sm120-workerproc.log")
    assert _died(doc) == [(5, "Worker_TP0_EP0 pid=642")]
    unknown = doc["compiles"]["unknown"]
    assert (unknown["count"], unknown["timed"], unknown["seconds"]) == (2, 2, 17.0)
    assert unknown["repeats"] == [
        "Worker_TP0_EP0 pid=642 compiled mhc_pre_big_fuse_with_norm_tilelang 2 times (lines 1, 3)"
    ]
    assert code == 3


def test_51454_a_bare_logo_banner_names_vllm_and_the_model():
    code, doc = log_json("vllm-51454-b200-banner.log")
    assert doc["versions"]["vllm"]["value"] == "0.25.0" and doc["versions"]["vllm"]["line"] == 2
    assert "DeepSeek-V4-Flash-0731" in doc["versions"]["model"]["value"]
    assert doc["source"]["vllm_line"] == 1 and code == 0


def test_text_view_names_the_failing_op_and_the_death():
    text = doctor.run("log", str(DATA / "vllm-41027-deepgemm-worker-tail.log")).stdout
    assert "→ deepgemm-prenorm-broken (failing op: mhc_pre)" in text
    text = doctor.run("log", str(DATA / "vllm-40821-worker-died.log")).stdout
    assert "Worker proc VllmWorker-0 died unexpectedly" in text and "verdict: fail" in text


def test_markdown_names_what_killed_the_server_outside_the_folded_proof():
    markdown = doctor.run("log", str(DATA / "vllm-40760-workerproc-init-failed.log"), "--markdown").stdout
    errors = markdown.split("**Errors**", 1)[1].split("<details>", 1)[0]
    assert "- line 9, EngineCore\\_DP1 pid=2047: `EngineCore failed to start.`" in errors
    markdown = doctor.run("log", str(DATA / "vllm-41027-deepgemm-worker-tail.log"), "--markdown").stdout
    assert "→ deepgemm-prenorm-broken (failing op: mhc_pre)" in markdown.split("<details>", 1)[0]


def test_strix_halo_80_rocm_the_engine_core_died_of_nccl():
    code, doc = log_json("strix-halo-80-rocm-nccl.log")
    assert [(f["line"], f["finding"]) for f in doc["fatal"]] == [(1, None)]  # NCCL's error: no mHC finding
    assert "NCCL error: unhandled system error" in doc["fatal"][0]["text"]
    assert _died(doc) == [(2, "EngineCore pid=6685")]  # CPython's "Process EngineCore:": that process is gone
    assert code == 3


def test_40778_h100_a_workers_cuda_error_then_the_engine_core_failed_to_start():
    code, doc = log_json("vllm-40778-h100-invalid-argument.log")
    assert [(f["line"], f["process"], f["finding"]) for f in doc["fatal"]] == [(1, "Worker_DP2_EP2 pid=3809", None)]
    assert doc["fatal"][0]["text"] == "torch.AcceleratorError: CUDA error: invalid argument"
    assert _died(doc) == [(8, "EngineCore_DP2 pid=595")]
    assert code == 3
