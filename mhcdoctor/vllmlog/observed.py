"""The records of mhcdoctor's vLLM plugin (mhcdoctor/vllm_plugin/): one format, written by the plugin inside vLLM and
read back by `mhcdoctor log` as evidence of kind `observed`.

A record says that one mHC op ran one implementation in one process, for calls in one token bucket, eagerly or
while a CUDA graph was being captured (the path that graph replays). It is a line through vLLM's logger:

    mhcdoctor-observed op=mhc_pre path=tilelang tokens=17-64 kernel=mhc_pre_tilelang prenorm=deepgemm graph=capture

and, with MHCDOCTOR_VLLM_DIR, a member of the process's JSON file (`observed_document`). Only the standard library
and the documents' vocabulary here: the plugin imports this module inside every vLLM process. The JSON file's schema
is published as mhcdoctor/schemas/observed.schema.json (python -m mhcdoctor.docschema).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypedDict, cast

from mhcdoctor.documents.vocabulary import Count, Op, PathName

MARK = "mhcdoctor-observed"
KEYWORD = MARK.encode()  # what the log scanner searches a block for
SCHEMA = "mhcdoctor.observed/1"
# Token buckets: 16 is where aiter's sqrsum race starts (known.py), 1024 where vLLM 0.22–0.26 switch the prenorm
# GEMM to block-M; the rest are powers of four, so decode, small and large prefill fall apart.
BUCKET_EDGES = (1, 8, 16, 64, 256, 1024, 4096, 16384)
PRENORM = ("deepgemm", "tilelang")
_VALUE = r"[A-Za-z0-9_.+-]{1,64}"
_RECORD = re.compile(
    rf"{MARK} op=(?P<op>mhc_pre|mhc_post|mhc_fused_post_pre|hc_head) "
    rf"path=(?P<path>aiter|tilelang|triton|torch|xpu|cpu) tokens=(?P<tokens>\d{{1,6}}(?:-\d{{1,6}}|\+)?) "
    rf"kernel=(?P<kernel>{_VALUE})(?: prenorm=(?P<prenorm>deepgemm|tilelang))? graph=(?P<graph>eager|capture)"
)


@dataclass(frozen=True)
class Record:
    op: str  # mhc_pre | mhc_post | mhc_fused_post_pre | hc_head
    path: str  # aiter | tilelang | triton | torch | xpu | cpu
    tokens: str  # the bucket (bucket())
    kernel: str  # the function that ran (vLLM's name: mhc_pre_tilelang, MHCPreOp.forward_native, ...)
    prenorm: str | None  # on CUDA's tilelang pre ops: whose prenorm GEMM ran (deepgemm | tilelang)
    graph: str  # eager | capture (seen while a CUDA graph was captured: the path its replays run)

    def line(self) -> str:
        prenorm = f" prenorm={self.prenorm}" if self.prenorm else ""
        return (
            f"{MARK} op={self.op} path={self.path} tokens={self.tokens} kernel={self.kernel}{prenorm} "
            f"graph={self.graph}"
        )

    def describe(self) -> str:
        """How `mhcdoctor log` says it: what ran, for which calls."""
        prenorm = f", prenorm GEMM {self.prenorm}" if self.prenorm else ""
        graph = ", seen while capturing a CUDA graph" if self.graph == "capture" else ""
        return f"observed {self.path} ({self.kernel}{prenorm}) for {self.tokens} token(s){graph}"


class RecordDocument(TypedDict):
    """One record: an op ran one implementation, for calls of one token bucket, eager or while a graph was captured."""

    op: Op
    path: PathName  # never unavailable: a record is of something that ran
    tokens: str  # the bucket: 1, 2-8, 9-16, 17-64, 65-256, 257-1024, 1025-4096, 4097-16384, 16385+
    kernel: str  # the function vLLM ran (mhc_pre_tilelang, MHCPreOp.forward_native, ...)
    prenorm: Literal["deepgemm", "tilelang"] | None  # whose prenorm GEMM a tilelang pre op ran; None: not such an op
    graph: Literal["eager", "capture"]  # capture: the path that CUDA graph's replays run


class ObservedDocument(TypedDict):
    """The JSON file one process writes into MHCDOCTOR_VLLM_DIR (replaced whole, atomically, as records arrive)."""

    schema: str
    pid: int
    rank: str | None  # vLLM's worker rank where the process has one (RANK or LOCAL_RANK)
    vllm: str | None  # vllm.__version__ once the start-up line ran
    startup: str | None  # the start-up line this process logged
    records: list[RecordDocument]
    dropped: Count  # records past the bound, not kept


def bucket(tokens: int) -> str:
    """The bucket a call of `tokens` tokens falls in: 1, 2-8, 9-16, 17-64, ..., 16385+."""
    low = 1
    for edge in BUCKET_EDGES:
        if tokens <= edge:
            return str(edge) if low == edge else f"{low}-{edge}"
        low = edge + 1
    return f"{low}+"


def parse(text: str) -> Record | None:
    """The record a log line (prefixes and all) holds, or None."""
    m = _RECORD.search(text)
    if m is None:
        return None
    return Record(
        op=m.group("op"),
        path=m.group("path"),
        tokens=m.group("tokens"),
        kernel=m.group("kernel"),
        prenorm=m.group("prenorm"),
        graph=m.group("graph"),
    )


def record_document(record: Record) -> RecordDocument:
    return cast(RecordDocument, dict(vars(record)))  # parse() admits only the Literal values


def observed_document(
    pid: int, rank: str | None, vllm: str | None, startup: str | None, records: list[Record], dropped: int
) -> ObservedDocument:
    return ObservedDocument(
        schema=SCHEMA,
        pid=pid,
        rank=rank,
        vllm=vllm,
        startup=startup,
        records=[record_document(r) for r in records],
        dropped=dropped,
    )
