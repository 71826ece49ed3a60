"""How a line reaches the reader in a paste (wrapped by a terminal, indented, quoted) and how compiles pair up; the
wording a support engineer reads (issue 31, items 4, 7 and 11)."""

from __future__ import annotations

import doctor
from logs import DATA, Server, log_json, read, tilelang, vllm


def _wrap(text: str, width: int) -> str:
    """What a terminal `width` columns wide shows, copied: every line cut into rows of `width` characters."""
    rows: list[str] = []
    for line in text.splitlines():
        rows += [line[i : i + width] for i in range(0, max(len(line), 1), width)]
    return "\n".join(rows) + "\n"


def test_lines_a_terminal_wrapped_are_read_as_the_lines_they_were(tmp_path):
    original = (DATA / "vllm-41834.log").read_text()
    _, plain = read(tmp_path, original)
    for width in (80, 120, 200):
        _, wrapped = read(tmp_path, _wrap(original, width))
        for key in ("count", "timed", "seconds"):
            assert wrapped["compiles"]["unknown"][key] == plain["compiles"]["unknown"][key], (width, key)
        # line numbers are the file's as given (its rows): the same kernel, three times, by the same worker
        repeat = wrapped["compiles"]["unknown"]["repeats"][0]
        assert repeat.startswith("Worker_TP1_EP1 pid=643 compiled mhc_pre_big_fuse_with_norm_tilelang 3 times")
        assert [p["name"] for p in wrapped["processes"]] == ["Worker_TP1_EP1 pid=643"], width
        assert wrapped["versions"]["tilelang"]["releases"] == ["0.1.9"], width


def test_a_wrapped_error_line_still_meets_its_signature(tmp_path):
    error = (
        "(Worker_TP2 pid=100746) ERROR 04-27 23:40:50 [multiproc_executor.py:962] RuntimeError: Assertion error "
        "(/workspace/.deps/deepgemm-src/csrc/apis/hyperconnection.hpp:56): Unsupported architecture"
    )
    code, doc = read(tmp_path, _wrap(error, 100))
    assert [(f["line"], f["finding"]) for f in doc["fatal"]] == [(1, "deepgemm-prenorm-broken")] and code == 3


def test_indented_and_quoted_lines_are_read(tmp_path):
    original = (DATA / "vllm-48809.log").read_text().splitlines()
    for lead in ("    ", "> ", "\t"):
        _, doc = read(tmp_path, "\n".join(lead + line for line in original) + "\n")
        assert [p["name"] for p in doc["processes"]] == [f"Worker_TP{i} pid={1098 + i}" for i in range(4)], lead
        assert doc["compiles"]["unknown"]["count"] == 4, lead


def test_a_missing_completes_line_makes_no_phantom_compile(tmp_path):
    """A begins whose completes never came stays untimed; the next completes closes the newest begins of its own
    kernel in its own process (oldest-first pairing made an 85 s compile of two 5 s ones)."""
    server = Server("0.25.0").banner()
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:00:00"))
    server.worker(0, tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:01:20"))
    server.worker(1, tilelang("0.1.9", "completes", "mhc_post_tilelang", "2026-07-06 16:01:23"))  # another worker
    server.worker(0, tilelang("0.1.9", "completes", "mhc_post_tilelang", "2026-07-06 16:01:25"))
    _, doc = read(tmp_path, server.text())
    startup = doc["compiles"]["startup"]
    assert [(e["line"], e["process"], e["seconds"]) for e in startup["events"]] == [
        (3, "Worker_TP0 pid=1000", None),
        (4, "Worker_TP0 pid=1000", 5.0),
        (5, "Worker_TP1 pid=1001", None),  # its begins is not in the log: counted, untimed
    ]
    assert (startup["count"], startup["timed"], startup["longest"]["seconds"]) == (3, 1, 5.0)


def test_requests_are_posts_and_metrics_scrapes_are_not_the_first_request(tmp_path):
    server = Server("0.25.0").banner().started()
    server.lines.append('(APIServer pid=100) INFO:     10.0.0.9:40000 - "GET /metrics HTTP/1.1" 200 OK')
    server.lines.append('(APIServer pid=100) INFO:     10.0.0.9:40001 - "GET /health HTTP/1.1" 200 OK')
    server.request()
    _, doc = read(tmp_path, server.text())
    assert (doc["phases"]["first_request"], doc["phases"]["requests"]) == (6, 1)


def test_only_vllms_jit_monitor_saw_the_compiles_while_serving(tmp_path):
    server = Server("0.26.0").banner().started()
    for kernel in ("mhc_post_tilelang", "mhc_pre_big_fuse_with_norm_tilelang"):
        server.worker_log(
            0,
            "WARNING",
            "jit_monitor.py:88",
            f"TileLang JIT compilation during inference: {kernel}. This causes a latency spike; ...",
        )
    _, doc = read(tmp_path, server.text())
    detail = doc["findings"][0]["detail"]
    assert detail.startswith("no tilelang compile line after start-up, but vLLM's JIT monitor reported 2 compile(s)")
    assert "0 kernel compile(s)" not in detail


def test_markdown_keeps_nesting_and_the_proof_in_the_logs_order(tmp_path):
    server = Server("0.25.0").banner()
    lines = [
        tilelang("0.1.9", "begins", "mhc_post_tilelang", "2026-07-06 16:00:00"),
        vllm("Worker_TP0", 1000, "ERROR", "multiproc_executor.py:962", "Traceback (most recent call last):"),
        vllm(
            "Worker_TP0",
            1000,
            "ERROR",
            "multiproc_executor.py:962",
            '  File "/opt/vllm/model_executor/kernels/mhc/torch.py", line 50, in mhc_pre_torch',
        ),
        vllm("Worker_TP0", 1000, "ERROR", "multiproc_executor.py:962", "torch.OutOfMemoryError: CUDA out of memory"),
        tilelang("0.1.9", "begins", "hc_head_fuse_tilelang", "2026-07-06 16:00:09"),
    ]
    for line in lines:
        server.worker(0, line)
    path = tmp_path / "vllm.log"
    path.write_text(server.text())
    markdown = doctor.run("log", str(path), "--markdown").stdout
    assert "\n  - hc\\_head\\_fuse\\_tilelang ×1, mhc\\_post\\_tilelang ×1\n" in markdown  # a sub-item, not flat
    proof = markdown.split("<details>", 1)[1]
    numbers = [int(row.split()[0]) for row in proof.splitlines() if row.strip()[:1].isdigit()]
    assert numbers == [3, 5, 6, 7]  # evidence and the error's frames, in the log's order


def test_pdl_finding_says_when_the_log_does_not_show_rocm():
    _, doc = log_json("vllm-42876.log")
    assert "the log itself does not say the GPU is AMD's" in doc["findings"][0]["detail"]


def test_a_line_that_starts_its_own_is_never_joined_as_a_wrap(tmp_path):
    """A warning's path, a Ray prefix or an unprefixed C++ message after a long line: lines of their own."""
    lines = [
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {}",
        "/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There appear "
        "to be 8",
        "terminate called without an active exception",
    ]
    code, doc = read(tmp_path, "\n".join(lines) + "\n")
    assert [(k["line"], k["text"][-30:]) for k in doc["engine_death"]] == [
        (1, "root cause above. Failed core proc(s): {}"[-30:])
    ]
    assert code == 3


def test_a_traceback_longer_than_any_window_keeps_its_last_line(tmp_path):
    """150 frames (300 lines) after the header: the error line is read, with the frames just before it."""
    server = Server("0.25.0").banner()
    where = "multiproc_executor.py:962"
    server.worker_log(0, "ERROR", where, "Traceback (most recent call last):")
    for n in range(150):
        server.worker_log(0, "ERROR", where, f'  File "/opt/vllm/layer{n}.py", line {n + 1}, in forward')
        server.worker_log(0, "ERROR", where, "    return self.inner(x)")
    server.worker_log(0, "ERROR", where, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    server.api("ERROR", "core.py:1110", "EngineCore failed to start.")
    code, doc = read(tmp_path, server.text())
    assert [(f["line"], f["text"][:23]) for f in doc["fatal"]] == [(304, "torch.OutOfMemoryError:")]
    assert doc["fatal"][0]["context"][-1]["text"] == "return self.inner(x)"
    assert [k["line"] for k in doc["engine_death"]] == [305] and code == 3


def test_a_forks_triton_stand_in_for_deepgemms_gemm_is_not_blamed_on_deepgemm(tmp_path):
    """vLLM #41834's SM12x fork replaces DeepGEMM's tf32_hc_prenorm_gemm by a Triton kernel (its frames below, as
    posted); an error under it is that kernel's, not deepgemm-prenorm-broken. The error line and vLLM's frame are
    made up here."""
    where = "(Worker_DP1_EP1 pid=1589) ERROR 06-01 19:11:47 [multiproc_executor.py:966] "
    site = "/opt/venv/lib/python3.12/site-packages/vllm/models/deepseek_v4/nvidia/ops/"
    frames = [
        f'  File "{site}sm12x_deep_gemm_fallbacks.py", line 591, in _tf32_hc_prenorm_gemm_sm12x',
        "    tf32_hc_prenorm_gemm_triton(x, fn, out, sqrsum, num_split)",
        f'  File "{site}sm12x_mqa.py", line 706, in tf32_hc_prenorm_gemm_triton',
        "    _tf32_hc_prenorm_gemm_kernel[grid](",
    ]
    lines = [where + line for line in frames] + [where + "RuntimeError: Triton Error [CUDA]: invalid argument"]
    code, doc = read(tmp_path, "\n".join(lines) + "\n")
    assert [(f["line"], f["finding"]) for f in doc["fatal"]] == [(5, None)] and code == 1
    # the same error under vLLM's own DeepGEMM call is the finding
    vllm_frames = [where + '  File "/opt/vllm/utils/deep_gemm.py", line 412, in tf32_hc_prenorm_gemm', lines[-1]]
    code, doc = read(tmp_path, "\n".join(vllm_frames) + "\n")
    assert [(f["line"], f["finding"]) for f in doc["fatal"]] == [(2, "deepgemm-prenorm-broken")] and code == 3
