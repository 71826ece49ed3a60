"""The log/1 document (`mhcdoctor log --json`): what a vLLM log shows about mHC, with the line numbers that prove it.

Published as mhcdoctor/schemas/log.schema.json; the text and Markdown views render this document, so what a user
reads, what a script parses and what is pasted into an issue are the same data, redacted the same way.
"""

from __future__ import annotations

from typing import TypedDict

LOG_SCHEMA = "mhcdoctor.log/1"


class SourceDocument(TypedDict):
    name: str
    gzip: bool
    bytes: int  # after decompression
    lines: int
    long_lines: int  # longer than stream.MAX_LINE: read as their head
    ended_early: str | None  # why reading stopped before the end (a gzip stream cut short)
    recognised: int  # lines that matched a known format string
    vllm_line: int | None  # the first line in vLLM's own format (its process prefix or its header), if any


class FoundDocument(TypedDict):
    value: str | None
    line: int | None
    note: str  # where it came from, or why the log cannot tell


class TilelangDocument(TypedDict):
    releases: list[str]  # the tilelang releases whose kernel.py logs at the line numbers seen
    line: int | None
    note: str


class VersionsDocument(TypedDict):
    vllm: FoundDocument
    vllm_others: list[FoundDocument]  # other versions in the same log (the server was started again)
    tilelang: TilelangDocument
    model: FoundDocument
    architecture: FoundDocument
    platform: FoundDocument


class PhasesDocument(TypedDict):
    startup_complete: list[int]  # line of each "Application startup complete."
    restarts: list[int]  # a version banner after start-up: the server started again
    first_request: int | None
    requests: int
    mhc_warmup: FoundDocument  # "Warming up DeepSeek V4 mHC TileLang kernels ..." (0.24–0.29)
    mhc_warmup_seconds: FoundDocument
    jit_warmup_seconds: FoundDocument  # "JIT kernel warmup finished in ..." (0.30+)
    jit_monitor: list[int]  # "Kernel JIT monitor activated" per worker (0.26+): warmup over
    startup_line: FoundDocument  # the first line vLLM writes only while starting (KV-cache size, CUDA-graph memory)


class LineDocument(TypedDict):
    line: int
    process: str
    text: str


class EvidenceDocument(TypedDict):
    line: int
    process: str
    path: str
    kind: str
    ops: list[str]  # one op: this line proves that op's path; several: one of them (a shared kernel or module)
    text: str


class OpEvidenceDocument(TypedDict):
    path: str  # aiter | tilelang | triton | torch | mixed | unknown
    certain: bool  # a line names this op alone (not only a kernel or module it shares with other ops)
    paths: list[str]
    lines: list[int]
    text: str


class ProcessDocument(TypedDict):
    name: str
    ops: dict[str, OpEvidenceDocument]


class CompileDocument(TypedDict):
    line: int
    process: str
    library: str
    kernel: str
    seconds: float | None


class KernelTotalDocument(TypedDict):
    kernel: str
    count: int
    seconds: float


class PhaseCompilesDocument(TypedDict):
    count: int
    seconds: float  # summed over processes (they compile in parallel: see longest for the spike one request sees)
    timed: int  # how many had both a start and an end line
    longest: CompileDocument | None
    kernels: list[KernelTotalDocument]
    events: list[CompileDocument]  # the first ones, in order
    repeats: list[str]  # a kernel one process compiled more than once (each time for other compile-time arguments)


class CompilesDocument(TypedDict):
    startup: PhaseCompilesDocument
    serving: PhaseCompilesDocument
    unknown: PhaseCompilesDocument  # before any start-up line: the log cannot tell when


class FatalDocument(TypedDict):
    line: int
    process: str
    text: str
    finding: str | None
    context: list[LineDocument]  # the traceback frames the same process printed before it
    op: str | None  # the mHC op on the failing stack (torch.ops.vllm.<op>, an op's frame) or that the error names


class LogFindingDocument(TypedDict):
    id: str
    severity: str
    title: str
    detail: str
    fix: str
    refs: list[str]
    lines: list[int]


class PredictedOpDocument(TypedDict):
    op: str
    predicted: str
    seen: str  # the path the log shows, or unknown
    agrees: bool | None  # None: the log cannot tell
    lines: list[int]
    text: str


class PredictionDocument(TypedDict):
    report: str
    model: str
    ops: list[PredictedOpDocument]
    notes: list[str]  # the report's versions against the log's


class LogDocument(TypedDict):
    schema: str
    source: SourceDocument
    versions: VersionsDocument
    phases: PhasesDocument
    ops: dict[str, OpEvidenceDocument]  # all processes together
    processes: list[ProcessDocument]
    evidence: list[EvidenceDocument]
    compiles: CompilesDocument
    deepgemm: list[LineDocument]
    fatal: list[FatalDocument]
    engine_death: list[LineDocument]
    findings: list[LogFindingDocument]
    unknowns: list[str]  # what the log cannot tell, said plainly
    prediction: list[PredictionDocument]
    verdict: str
