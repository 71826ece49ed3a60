"""The recorder alone (no hooks installed in this process): graph state, the bound, the JSON file."""

from __future__ import annotations

import json
import logging

import pytest
import torch

from mhcdoctor.vllm_plugin import hooks


class _Cuda:
    """torch.cuda as the recorder asks it: started, and capturing or not."""

    def __init__(self, capturing: bool) -> None:
        self._initialized = True
        self.capturing = capturing

    def is_initialized(self) -> bool:
        return True

    def is_current_stream_capturing(self) -> bool:
        return self.capturing


def test_a_call_seen_while_a_graph_is_captured_says_so_and_an_eager_one_of_the_same_size_is_another_record():
    recorder = hooks.Recorder("observe", None)
    recorder.cuda = _Cuda(capturing=True)
    residual = torch.zeros(8, 4, 16)
    recorder.seen_call("mhc_pre", "tilelang", "mhc_pre_tilelang", (residual,), "tilelang")
    recorder.seen_call("mhc_pre", "tilelang", "mhc_pre_tilelang", (residual,), "tilelang")
    recorder.cuda.capturing = False
    recorder.seen_call("mhc_pre", "tilelang", "mhc_pre_tilelang", (residual,), "tilelang")
    assert [r.line() for r in recorder.records] == [
        "mhcdoctor-observed op=mhc_pre path=tilelang tokens=2-8 kernel=mhc_pre_tilelang prenorm=tilelang graph=capture",
        "mhcdoctor-observed op=mhc_pre path=tilelang tokens=2-8 kernel=mhc_pre_tilelang prenorm=tilelang graph=eager",
    ]


def test_records_are_bounded_and_the_file_counts_what_was_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "MAX_RECORDS", 3)
    recorder = hooks.Recorder("observe", str(tmp_path / "seen"))
    for kernel in range(5):
        recorder.seen_call("mhc_post", "torch", f"k{kernel}", (torch.zeros(2, 16),), None)
    (written,) = (tmp_path / "seen").iterdir()
    document = json.loads(written.read_text())
    assert len(document["records"]) == 3 and document["dropped"] == 2 == recorder.dropped
    assert not list((tmp_path / "seen").glob("*.tmp"))


def test_a_folder_it_cannot_write_is_said_once_and_recording_goes_on(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    recorder = hooks.Recorder("observe", str(blocker / "below"))  # a folder under a file: never writable
    with caplog.at_level(logging.INFO, logger="vllm.mhcdoctor"):
        for tokens in (1, 100, 5000):
            recorder.seen_call(
                "hc_head", "tilelang", "hc_head_fused_kernel_tilelang", (torch.zeros(tokens, 4, 8),), None
            )
    assert [r.tokens for r in recorder.records] == ["1", "65-256", "4097-16384"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("mhcdoctor: cannot write ")


@pytest.mark.parametrize(("shape", "tokens"), [((7, 4, 16), 7), ((2, 3, 4, 16), 6), ((9, 16), 9), ((5,), 5)])
def test_tokens_come_from_the_first_tensors_shape(shape, tokens):
    assert hooks._tokens((1e-6, torch.zeros(*shape))) == tokens


def test_a_cuda_that_never_started_is_not_asked_about_capture():
    assert hooks.Recorder("observe", None).capturing() is False  # this CPU torch: CUDA never starts

    class Unstarted(_Cuda):
        def is_current_stream_capturing(self) -> bool:
            raise AssertionError("asked a CUDA that has not started")

    recorder = hooks.Recorder("observe", None)
    recorder.cuda = Unstarted(capturing=True)
    recorder.cuda._initialized = False
    assert recorder.capturing() is False
