"""One pass over a vLLM server log: every line that names mHC, its libraries, the server's phases or a failure is
classified; everything else is counted and skipped. What is kept is bounded (a few examples per kind, totals for
the rest), so a 10 GB log costs what a 10 MB one does, in memory.

A line is found by byte search for its keywords over a whole block (formats.KEYWORDS), then decoded, stripped of
ANSI codes, container and vLLM process prefixes, and matched against the format strings in formats.py.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime

from mhcdoctor.text import visible
from mhcdoctor.vllmlog import formats as F
from mhcdoctor.vllmlog import observed
from mhcdoctor.vllmlog.numbers import seconds
from mhcdoctor.vllmlog.signatures import FATAL_SIGNATURES

KEEP_CHARS = 400  # a kept line's text, cut at a word boundary (a token is never kept in part)
KEEP_PER_KIND = 3  # examples kept per (process, op, path); the rest are counted
MAX_PROCESSES = 256  # processes tracked by name; more are counted together
MAX_EVENTS = 400  # JIT compile events kept in full
MAX_KERNELS = 256  # kernels counted by name; more are counted in the totals only
MAX_OPEN = 512  # compiles begun and not yet completed, over all processes and kernels (the oldest is dropped)
VLLM_SAMPLE = 64 << 10  # bytes of each block searched for a line of vLLM's own format (read lines are checked too)
MAX_WRAP = 3  # lines a terminal's wrap may have split one log line into, after the first
MAX_FATAL = 20
CONTEXT_LINES = 12  # lines kept before a fatal line (its traceback)
TAIL_LINES = 30  # lines before a known error that may hold its frames, kept from the previous block
MATCH_BYTES = 16 << 10  # a line is matched on its first 16 KiB: every format string fits, and no regex sees more
NO_PROCESS = "(no process prefix)"
OTHER_PROCESSES = "(other processes)"


@dataclass
class Kept:
    """One line of the log kept as evidence: its number, the process that wrote it, its text (shown safe)."""

    line: int
    process: str
    text: str


@dataclass
class Evidence:
    line: int
    process: str
    path: str
    kind: str  # tilelang-compile, jit-during-inference, aiter-import, frame, ...
    ops: tuple[str, ...]  # the ops this line may speak for (one: certain; several: one of them)
    text: str


@dataclass
class Compile:
    line: int
    process: str
    library: str  # tilelang | aiter
    kernel: str
    phase: str  # startup | serving | unknown (no start-up line before it, no banner either)
    seconds: float | None = None


@dataclass
class Fatal:
    line: int
    process: str
    text: str
    finding: str | None
    context: list[Kept]
    op: str | None = None  # the mHC op on the failing stack, or the one the error names


@dataclass
class ProcessState:
    pid: int | None
    frames: deque[Kept] = field(default_factory=lambda: deque(maxlen=40))  # the current traceback's frames
    serving_from: int | None = None  # line of its "Kernel JIT monitor activated"
    op: Kept | None = None  # the mHC op the current traceback runs through (torch.ops.vllm.<op>, an op's frame)


@dataclass
class Found:
    """A value the log states once (a version, the model) with the line that states it."""

    value: str
    line: int


@dataclass
class Scan:
    """Everything one pass keeps; analyse.py turns it into the log/1 document."""

    vllm: Found | None = None
    vllm_others: list[Found] = field(default_factory=list)
    model: Found | None = None
    architecture: Found | None = None
    platform: Found | None = None
    tilelang_lines: dict[tuple[str, int], int] = field(default_factory=dict)  # (begins|completes, N) -> first line
    tilelang_unnumbered: int | None = None  # first line of the 0.1.6–0.1.8 format (no file:line)
    startup_complete: list[int] = field(default_factory=list)  # the first MAX_FATAL
    restarts: list[int] = field(default_factory=list)
    last_startup: int = 0  # line of the latest "Application startup complete." (0: none yet)
    last_restart: int = 0  # line of the latest banner after a start-up
    first_request: int | None = None
    requests: int = 0
    startup_line: Kept | None = None  # the first line vLLM writes only while it starts (formats.STARTUP_ONLY)
    vllm_format: int | None = None  # the first line in vLLM's own format (its process prefix or its header)
    unfinished: list[Kept] = field(default_factory=list)  # tracebacks through an mHC op whose error is not in the log
    warmup_start: Kept | None = None
    warmup_done: Found | None = None
    jit_warmup_done: Found | None = None
    monitor_on: list[Kept] = field(default_factory=list)
    during_inference: list[Kept] = field(default_factory=list)  # vLLM's own "JIT compilation during inference"
    during_inference_count: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    evidence_counts: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (process, "op,op", path)
    compiles: list[Compile] = field(default_factory=list)
    compile_totals: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (library, phase) -> [n, s]
    compile_kernels: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (kernel, phase) -> [n, s]
    compile_longest: dict[str, Compile] = field(default_factory=dict)
    deepgemm: list[Kept] = field(default_factory=list)
    aiter_wrong_arch: list[Kept] = field(default_factory=list)
    engine_death: list[Kept] = field(default_factory=list)
    fatal: list[Fatal] = field(default_factory=list)
    processes: dict[str, ProcessState] = field(default_factory=dict)
    pids: dict[int, str] = field(default_factory=dict)
    recognised: int = 0  # lines that matched a format string

    def phase(self, process: str) -> str:
        """serving: after "Application startup complete." (of this run) or the worker's JIT monitor line;
        startup: after a start-up line of this run (banner, architecture) and before those; else unknown."""
        if self.last_startup > self.last_restart:
            return "serving"
        state = self.processes.get(process)
        if state is not None and state.serving_from is not None:
            return "serving"
        if process == NO_PROCESS and self.monitor_on and self._all_workers_warm():
            return "serving"  # a bare line (0.31+) once every worker has said its warmup is over
        started = self.vllm is not None or self.architecture is not None or self.startup_line is not None
        return "startup" if started else "unknown"

    def _all_workers_warm(self) -> bool:
        workers = [s for name, s in self.processes.items() if name.startswith("Worker")]
        return bool(workers) and all(s.serving_from is not None for s in workers)


def keep(text: str, limit: int = KEEP_CHARS) -> str:
    """`text` shown safe (control characters as ?) and cut at a word boundary, so no secret is kept in part."""
    text = visible(text)
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " …[cut]"


def _unknown_into_startup(totals: dict[tuple[str, str], list[float]]) -> None:
    """Compiles counted before the log showed a phase (keyed by library or kernel, then phase) join start-up's."""
    for (name, phase), counted in list(totals.items()):
        if phase == "unknown":
            into = totals.setdefault((name, "startup"), [0, 0.0])
            into[0] += counted[0]
            into[1] += counted[1]
            del totals[(name, phase)]


class Scanner:
    def __init__(self) -> None:
        self.scan = Scan()
        self._lines_before = 0
        self._after = 0  # lines at the start of the next block still to look at (a traceback cut by the block's end)
        self._tail: list[tuple[int, bytes]] = []  # the last lines of the previous block not read
        self._once = F.ONCE
        self._log_more: tuple[int, int] | None = None  # (line, pid) of an AITER_LOG_MORE header
        # compiles begun and not completed, by (process, kernel): a "completes" line closes the newest "begins" of
        # its kernel in its process, never another's; one whose "completes" never came is replaced or dropped
        self._open: OrderedDict[tuple[str, str], tuple[Compile, datetime | None]] = OrderedDict()

    @property
    def open_compiles(self) -> int:
        """Compiles begun and not yet completed that are tracked (at most MAX_OPEN, whatever the log holds)."""
        return len(self._open)

    def feed(self, block: bytes) -> None:
        """Classify the interesting lines of one block of whole lines, in order."""
        starts = set(_lines_from(block, 0, self._after))
        self._after, need_tail = 0, 0
        once = self._once + (F.STARTUP_KEYWORDS if self.scan.startup_line is None else ())
        keywords = F.KEYWORDS + ((observed.KEYWORD, 0, 0),) + tuple((k, 0, 0) for k in once)
        for keyword, before, after in keywords:
            i = block.find(keyword)
            while i >= 0:
                start = _wrap_head(block, block.rfind(b"\n", 0, i) + 1)
                starts.add(start)
                if before:
                    preceding = _lines_before(block, start, before)
                    starts.update(preceding)
                    need_tail = max(need_tail, before - len(preceding))
                end = block.find(b"\n", i)
                if after:
                    following = _lines_from(block, end + 1, after)
                    starts.update(following)
                    self._after = max(self._after, after - len(following))
                i = block.find(keyword, end + 1)
        if self.scan.vllm_format is None:  # each block's head until vLLM's own format is seen (40 MB/s: not all of it)
            m = F.VLLM_LINE.search(block, 0, VLLM_SAMPLE)
            if m is not None:
                self.scan.vllm_format = self._lines_before + block.count(b"\n", 0, m.start()) + 1
        for number, raw in self._tail[len(self._tail) - need_tail :] if need_tail else ():
            self._line(raw, number)  # the previous block's last lines: a traceback's frames before its error
        number, at, joined_to = self._lines_before, 0, -1
        for start in sorted(starts):
            number += block.count(b"\n", at, start)
            at = start
            if start <= joined_to:
                continue  # the rest of a line a terminal wrapped, read with its head
            end = block.find(b"\n", start)
            raw, joined_to = _unwrap(block, start, end)
            self._line(raw, number + 1)
        self._requests(block)
        self._lines_before += block.count(b"\n")
        self._tail = self._unread_tail(block, starts)
        found = (self.scan.architecture, self.scan.platform)
        self._once = tuple(k for k, seen in zip(F.ONCE, found, strict=True) if seen is None)

    def finish(self) -> Scan:
        """The scan, once the log has ended: a traceback through an mHC op whose error line never came is said."""
        scan = self.scan
        for name, state in scan.processes.items():
            if state.op is None or not state.frames or len(scan.unfinished) >= KEEP_PER_KIND:
                continue
            scan.unfinished.append(state.op)
            if len(scan.fatal) < MAX_FATAL:  # an error the log shows began, and no finding explains
                last = state.frames[-1]
                text = f"{last.text} [the traceback ends here: its error line is not in the log]"
                scan.fatal.append(
                    Fatal(last.line, name, text, None, list(state.frames)[-CONTEXT_LINES:-1], state.op.text)
                )
        return scan

    def _unread_tail(self, block: bytes, read: set[int]) -> list[tuple[int, bytes]]:
        """The last TAIL_LINES lines of `block` after the last line read, with their numbers (the block ends with a
        newline): read later, in order, where the next block's first lines need what came before them."""
        starts = _lines_before(block, len(block), TAIL_LINES)[::-1]
        first = self._lines_before - len(starts) + 1
        last_read = max(read, default=-1)
        return [
            (first + k, block[start : block.find(b"\n", start)])
            for k, start in enumerate(starts)
            if start > last_read and len(block) - start <= 1 << 16
        ]

    def _requests(self, block: bytes) -> None:
        n = block.count(F.REQUEST)
        if not n:
            return
        self.scan.requests += n
        if self.scan.first_request is None and self.scan.last_startup:
            first = self.scan.last_startup - self._lines_before
            begin = 0
            if first > 0:  # the start-up line is in this block: the first request after it
                begin = _nth_newline(block, first)
            i = block.find(F.REQUEST, begin)
            if i >= 0:
                self.scan.first_request = self._lines_before + block.count(b"\n", 0, i) + 1

    # --- one line -----------------------------------------------------------------------------------------
    def _line(self, raw: bytes, number: int) -> None:
        text = raw[:MATCH_BYTES].decode("utf-8", "replace")
        if "\x1b" in text:  # each substitution only where its text can be: most lines have none of them
            text = F.ANSI.sub("", text)
        text = text.rstrip("\r")
        if text.endswith("^M"):
            text = F.CARET_M.sub("", text)
        if text[:1] in _LEAD_CHARS:
            lead = F.LEAD.match(text)
            if lead is not None and F.FRAME.match(text) is None:
                text = text[lead.end() :]  # indented or quoted; a frame keeps its indent (FRAME allows it)
        for _ in range(2):
            m = F.CONTAINER_PREFIX.match(text)
            if m is None:
                break
            text = text[m.end() :]
        process, pid, vllm = NO_PROCESS, None, False
        for _ in range(3):  # Ray nests them, "(EngineCore pid=1) (RayWorkerWrapper pid=2) ": the last is the writer
            m = F.PROCESS_PREFIX.match(text)
            if m is None:
                break
            pid, vllm = int(m.group("pid")), True
            process = f"{m.group('name')} pid={pid}" if m.group("name") else f"pid={pid}"
            text = text[m.end() :]
        header = F.VLLM_HEADER.match(text)
        if header is not None:
            text, vllm = text[header.end() :], True
        if vllm and self.scan.vllm_format is None:
            self.scan.vllm_format = number
        repeat = 0
        ray = F.RAY_REPEATED.search(text) if "[repeated " in text else None
        if ray is not None:
            repeat = int(ray.group("n"))
            text = text[: ray.start()] + text[ray.end() :]
        if pid is None and self._log_more is not None and self._log_more[0] == number - 1:
            pid = self._log_more[1]
            process = self.scan.pids.get(pid, f"pid={pid}")
        process = self._process(process, pid)
        if self._classify(text, number, process, repeat):
            self.scan.recognised += 1

    def _process(self, name: str, pid: int | None) -> str:
        scan = self.scan
        if name not in scan.processes:
            if len(scan.processes) >= MAX_PROCESSES:
                name = OTHER_PROCESSES
                scan.processes.setdefault(name, ProcessState(None))
                return name
            scan.processes[name] = ProcessState(pid)
            if pid is not None and name != NO_PROCESS:
                scan.pids.setdefault(pid, name)
        return name

    def _classify(self, text: str, number: int, process: str, repeat: int = 0) -> bool:
        scan = self.scan
        stripped = text.strip()
        if observed.MARK in text and self._observed(text, number, process):
            return True
        if "TileLang" in text and self._tilelang(text, number, process, repeat):
            return True
        if "module_mhc" in text and self._aiter(text, number, process):
            return True
        m = F.AITER_LOG_MORE.match(stripped)
        if m is not None:
            self._log_more = (number, int(m.group("pid")))
            return True
        m = F.FRAME.match(text)
        if m is not None:
            self._frame(m, stripped, number, process)
            return True
        if F.TRACEBACK.match(stripped):
            state = scan.processes[process]
            state.frames.clear()
            state.op = None
            return True
        recognised = self._vllm(text, number, process)
        if self._fatal(text, stripped, number, process):
            return True
        state = scan.processes[process]
        if not recognised and stripped and "torch.ops.vllm." in stripped:
            self._torch_op(stripped, number, process)
            state.frames.append(Kept(number, process, keep(stripped)))
            return True
        if not recognised and state.frames and stripped:
            state.frames.append(Kept(number, process, keep(stripped)))  # a traceback's source line, kept as context
        return recognised

    def _tilelang(self, text: str, number: int, process: str, repeat: int) -> bool:
        scan = self.scan
        m = F.TILELANG_COMPILE.search(text)
        if m is not None:
            lineno = m.group("lineno")
            if lineno is None:
                scan.tilelang_unnumbered = scan.tilelang_unnumbered or number
            elif len(scan.tilelang_lines) < 16 or (m.group("what"), int(lineno)) in scan.tilelang_lines:
                scan.tilelang_lines.setdefault((m.group("what"), int(lineno)), number)
            kernel = m.group("kernel")
            stamp = _stamp(m.group("ts"))
            ops = F.TILELANG_KERNEL_OPS.get(kernel)
            if m.group("what") == "begins":
                # Ray's "[repeated 7x across cluster]": seven more workers began it too
                event = self._compile(Compile(number, process, "tilelang", kernel, scan.phase(process)), 1 + repeat)
                self._begin(process, kernel, event, stamp)
                if ops:
                    self._evidence(Evidence(number, process, "tilelang", "tilelang-compile", ops, keep(text)))
                return True
            opened = self._open.pop((process, kernel), None)
            if opened is not None:
                event, began = opened
                if began is not None and stamp is not None:
                    self._compiled(event, (stamp - began).total_seconds())
            else:
                # its "begins" is not in the log (an excerpt, a cut): the compile happened, and proves the path
                self._compile(Compile(number, process, "tilelang", kernel, scan.phase(process)), 1 + repeat)
                if ops:
                    self._evidence(Evidence(number, process, "tilelang", "tilelang-compile", ops, keep(text)))
            return True
        m = F.JIT_DURING_INFERENCE.search(text)
        if m is not None:
            scan.during_inference_count += 1 + repeat
            if len(scan.during_inference) < KEEP_PER_KIND:
                scan.during_inference.append(Kept(number, process, keep(text)))
            kernel = m.group("kernel")
            ops = F.TILELANG_KERNEL_OPS.get(kernel)
            if ops and m.group("backend") == "TileLang":
                self._evidence(Evidence(number, process, "tilelang", "jit-during-inference", ops, keep(text)))
            return True
        m = F.MHC_WARMUP_START.search(text)
        if m is not None:
            scan.warmup_start = scan.warmup_start or Kept(number, process, keep(m.group("sizes"), 200))
            return True
        m = F.MHC_WARMUP_DONE.search(text)
        if m is not None:
            if scan.warmup_done is None and seconds(m.group("seconds")) is not None:  # `1.2.3` is no duration
                scan.warmup_done = Found(m.group("seconds"), number)
            return True
        return False

    def _begin(self, process: str, kernel: str, event: Compile, stamp: datetime | None) -> None:
        """A compile began: an earlier "begins" of the same kernel in the same process that never completed stays
        untimed; at most MAX_OPEN are open at once, whatever the log names."""
        key = (process, kernel)
        self._open.pop(key, None)
        self._open[key] = (event, stamp)
        if len(self._open) > MAX_OPEN:
            self._open.popitem(last=False)

    def _observed(self, text: str, number: int, process: str) -> bool:
        """A record of mhcdoctor's vLLM plugin: the path an op ran, seen from inside the engine."""
        record = observed.parse(text)
        if record is None:
            return False
        self._evidence(Evidence(number, process, record.path, "observed", (record.op,), keep(record.describe())))
        return True

    def _aiter(self, text: str, number: int, process: str) -> bool:
        scan = self.scan
        m = F.AITER_IMPORT.search(text)
        if m is not None:
            self._evidence(Evidence(number, process, "aiter", "aiter-import", F.AITER_MODULE_OPS, keep(text)))
            return True
        m = F.AITER_START.search(text)
        if m is not None:
            process = self._by_pid(m.group("pid"), process)
            event = self._compile(Compile(number, process, "aiter", "module_mhc", scan.phase(process)))
            self._begin(process, "module_mhc", event, None)
            return True
        m = F.AITER_FINISH.search(text)
        if m is not None:
            process = self._by_pid(m.group("pid"), process)
            opened = self._open.pop((process, "module_mhc"), None)
            if opened is not None:
                cost = seconds(m.group("seconds"))
                if cost is not None:  # None: `1.2.3`, 400 nines: not a duration; the build ended, its time unknown
                    self._compiled(opened[0], cost)
            return True
        if F.AITER_FAILED.search(text):
            # aiter's build failed: an error of its own, aiter-no-compiler where it says hipcc is missing
            finding = "aiter-no-compiler" if "hipcc" in text else None
            if len(scan.fatal) < MAX_FATAL:
                scan.fatal.append(Fatal(number, process, keep(text), finding, []))
            return True
        if F.AITER_WRONG_ARCH.search(text):
            if len(scan.aiter_wrong_arch) < KEEP_PER_KIND:
                scan.aiter_wrong_arch.append(Kept(number, process, keep(text)))
            return True
        return False

    def _by_pid(self, pid: str | None, process: str) -> str:
        """aiter's build lines name their pid: the process that wrote them, where no prefix said so."""
        if pid is None or process != NO_PROCESS:
            return process
        name = self.scan.pids.get(int(pid), f"pid={pid}")
        return self._process(name, int(pid))

    def _frame(self, m: re.Match[str], stripped: str, number: int, process: str) -> None:
        state = self.scan.processes[process]
        state.frames.append(Kept(number, process, keep(stripped)))
        func, file = m.group("func"), m.group("file").replace("\\", "/")
        found = F.FRAME_OPS.get(func)
        if found is None and file.endswith(F.AITER_OPS_FILE) and func in F.AITER_FRAME_OPS:
            found = ("aiter", F.AITER_FRAME_OPS[func])
        if found is not None:
            state.op = Kept(number, process, found[1])
            self._evidence(Evidence(number, process, found[0], "frame", (found[1],), keep(stripped)))

    def _torch_op(self, stripped: str, number: int, process: str) -> None:
        """A traceback's source line calling torch.ops.vllm.<op>: the op that failed, and its path where the op's
        name says it (mhc_pre_aiter) — it was running when the error came, so it took that path."""
        m = F.TORCH_OP.search(stripped)
        known = F.TORCH_OPS.get(m.group("name")) if m is not None else None
        if known is None:
            return
        path, op = known
        self.scan.processes[process].op = Kept(number, process, op)
        if path is not None:
            self._evidence(Evidence(number, process, path, "op-call", (op,), keep(stripped)))

    def _vllm(self, text: str, number: int, process: str) -> bool:
        scan = self.scan
        found = False
        for pattern in (F.VLLM_VERSION, F.LOGO_VERSION, F.ENGINE_VERSION):
            m = pattern.search(text)
            if m is not None:
                self._version(m.group("version"), number)
                found = True
                break
        for pattern in (F.SERVING_MODEL, F.LOGO_MODEL):
            m = pattern.search(text)
            if m is not None:
                scan.model = scan.model or Found(keep(m.group("model"), 200), number)
                found = True
        if found:
            return True
        if F.STARTUP_COMPLETE.search(text):
            scan.last_startup = number
            if len(scan.startup_complete) < MAX_FATAL:
                scan.startup_complete.append(number)
            return True
        m = F.ARCHITECTURE.search(text)
        if m is not None:
            scan.architecture = scan.architecture or Found(m.group("arch"), number)
            return True
        m = F.PLATFORM.search(text)
        if m is not None:
            scan.platform = scan.platform or Found(m.group("platform"), number)
            return True
        if F.JIT_MONITOR_ON.search(text):
            state = scan.processes[process]
            state.serving_from = state.serving_from or number
            if len(scan.monitor_on) < MAX_PROCESSES:
                scan.monitor_on.append(Kept(number, process, ""))
            return True
        m = F.JIT_WARMUP_DONE.search(text)
        if m is not None:
            if scan.jit_warmup_done is None and seconds(m.group("seconds")) is not None:  # `1.2.3` is no duration
                scan.jit_warmup_done = Found(m.group("seconds"), number)
            return True
        m = F.STARTUP_ONLY.search(text)
        if m is not None:
            self._startup_only(Kept(number, process, keep(text.strip(), 200)))
            return True
        m = F.DEEPGEMM_DISABLED.search(text)
        if m is not None:
            if len(scan.deepgemm) < KEEP_PER_KIND:
                scan.deepgemm.append(Kept(number, process, keep(m.group(0))))
            return True
        return False

    def _version(self, version: str, number: int) -> None:
        scan = self.scan
        found = Found(keep(version, 64), number)
        if scan.vllm is None:
            scan.vllm = found
        elif scan.last_startup > scan.last_restart:
            # a new banner after start-up: the server was started again in this log
            scan.last_restart = number
            if len(scan.restarts) < MAX_FATAL:
                scan.restarts.append(number)
            if found.value != scan.vllm.value and len(scan.vllm_others) < KEEP_PER_KIND:
                scan.vllm_others.append(found)
        elif found.value != scan.vllm.value and all(o.value != found.value for o in scan.vllm_others):
            if len(scan.vllm_others) < KEEP_PER_KIND:
                scan.vllm_others.append(found)

    def _startup_only(self, line: Kept) -> None:
        """A line vLLM writes only while starting: the compiles before it in this run (not yet serving) came at
        start-up, though no banner said a start-up was under way."""
        scan = self.scan
        if scan.startup_line is None:
            scan.startup_line = line
        if scan.last_startup > scan.last_restart:
            return  # serving already: a start-up line now belongs to no run this log shows starting
        _unknown_into_startup(scan.compile_totals)
        _unknown_into_startup(scan.compile_kernels)
        for event in scan.compiles:
            if event.phase == "unknown":
                event.phase = "startup"
        for event, _ in self._open.values():
            if event.phase == "unknown":
                event.phase = "startup"
        longest = scan.compile_longest.pop("unknown", None)
        if longest is not None:
            other = scan.compile_longest.get("startup")
            if other is None or (other.seconds or 0.0) < (longest.seconds or 0.0):
                scan.compile_longest["startup"] = longest

    def _fatal(self, text: str, stripped: str, number: int, process: str) -> bool:
        scan = self.scan
        state = scan.processes[process]
        op = state.op.text if state.op is not None else None
        for signature in FATAL_SIGNATURES:
            if signature.matches(stripped, state.frames):
                if len(scan.fatal) < MAX_FATAL:
                    context = list(state.frames)[-CONTEXT_LINES:]
                    failing = op or signature.op
                    scan.fatal.append(Fatal(number, process, keep(stripped), signature.finding, context, failing))
                state.frames.clear()
                state.op = None
                return True
        if F.ENGINE_DEATH.search(text):
            if len(scan.engine_death) < KEEP_PER_KIND:
                scan.engine_death.append(Kept(number, process, keep(stripped)))
            if F.EXCEPTION.match(stripped):  # "Exception: WorkerProc initialization failed ...": its traceback ends
                state.frames.clear()
                state.op = None
            return True
        m = F.EXCEPTION.match(stripped)
        if m is not None:
            # the last line of a traceback, or an error printed alone: an error no signature knows, with its frames
            if len(scan.fatal) < MAX_FATAL:
                context = list(state.frames)[-CONTEXT_LINES:]
                scan.fatal.append(Fatal(number, process, keep(stripped), None, context, op))
            state.frames.clear()
            state.op = None
            return True
        return False

    # --- bookkeeping ----------------------------------------------------------------------------------------
    def _evidence(self, item: Evidence) -> None:
        scan = self.scan
        key = (item.process, ",".join(item.ops), item.path)
        count = scan.evidence_counts.get(key, 0)
        scan.evidence_counts[key] = count + 1
        if count < KEEP_PER_KIND:
            scan.evidence.append(item)

    def _compile(self, event: Compile, count: int = 1) -> Compile:
        """Count a compile (`count`: as many processes as Ray says wrote the line); the first MAX_EVENTS are kept."""
        scan = self.scan
        scan.compile_totals.setdefault((event.library, event.phase), [0, 0.0])[0] += count
        key = (event.kernel, event.phase)
        if key in scan.compile_kernels or len(scan.compile_kernels) < MAX_KERNELS:
            scan.compile_kernels.setdefault(key, [0, 0.0])[0] += count
        if len(scan.compiles) < MAX_EVENTS:
            scan.compiles.append(event)
        return event

    def _compiled(self, event: Compile, seconds: float) -> None:
        """A compile that finished, after `seconds`: its time counts in the totals."""
        scan = self.scan
        if event.seconds is not None:
            return
        event.seconds = max(0.0, seconds)
        scan.compile_totals.setdefault((event.library, event.phase), [0, 0.0])[1] += event.seconds
        if (event.kernel, event.phase) in scan.compile_kernels:
            scan.compile_kernels[(event.kernel, event.phase)][1] += event.seconds
        longest = scan.compile_longest.get(event.phase)
        if longest is None or (longest.seconds or 0.0) < event.seconds:
            scan.compile_longest[event.phase] = event


def _stamp(text: str | None) -> datetime | None:
    """tilelang's "%Y-%m-%d %H:%M:%S" (its regex has checked the digits), without strptime's cost per line."""
    if text is None:
        return None
    try:
        return datetime(
            int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]), int(text[17:19])
        )
    except ValueError:
        return None


def _lines_before(block: bytes, start: int, n: int) -> list[int]:
    """The starts of up to `n` lines before the line at `start`."""
    found: list[int] = []
    while start > 0 and len(found) < n:
        start = block.rfind(b"\n", 0, start - 1) + 1
        found.append(start)
    return found


def _lines_from(block: bytes, start: int, n: int) -> list[int]:
    """The starts of up to `n` lines from `start` on (fewer at the block's end)."""
    found: list[int] = []
    while start < len(block) and len(found) < n:
        found.append(start)
        start = block.find(b"\n", start) + 1
        if start == 0:
            break
    return found


def _nth_newline(block: bytes, n: int) -> int:
    """The offset just after the n-th newline of `block` (n >= 1)."""
    at = -1
    for _ in range(n):
        at = block.find(b"\n", at + 1)
        if at < 0:
            return len(block)
    return at + 1


_LEAD_CHARS = frozenset(" \t>`")  # formats.LEAD's first characters
# A row that starts with one of these bytes starts a line of its own (formats.LINE_START): checked without decoding.
_OWN_LINE = frozenset(b"([<{`>|/ \t\r0123456789")


def _wrap_head(block: bytes, start: int) -> int:
    """The start of the line a terminal wrapped into the row at `start` (itself where it is no continuation)."""
    for _ in range(MAX_WRAP):
        if start == 0 or block[start] in _OWN_LINE:
            break
        head = F.ANSI.sub("", block[start : start + 200].split(b"\n", 1)[0].decode("utf-8", "replace"))
        if not head or F.LINE_START.match(head):
            break
        previous = block.rfind(b"\n", 0, start - 1) + 1
        if start - 1 - previous < 60 or b"[aiter " in block[previous : min(previous + 200, start)]:
            break
        start = previous
    return start


def _unwrap(block: bytes, start: int, end: int) -> tuple[bytes, int]:
    """The line at `start` with up to MAX_WRAP lines a terminal wrapped it into (each starts with nothing a log line
    starts with), and the offset of the last line joined (`start` when none was)."""
    line, last = block[start:end], start
    if end - start < 60 or b"[aiter " in line[:200]:  # AITER_LOG_MORE puts its message on the next line, bare
        return line, last  # (and a terminal narrower than 60 columns wraps nothing a log writes)
    for _ in range(MAX_WRAP):
        following = block.find(b"\n", end + 1)
        if following < 0 or following == end + 1 or following - end > MATCH_BYTES or block[end + 1] in _OWN_LINE:
            break
        head = F.ANSI.sub("", block[end + 1 : min(following, end + 200)].decode("utf-8", "replace"))
        if F.LINE_START.match(head):
            break
        line, last, end = line.rstrip(b"\r") + block[end + 1 : following], end + 1, following
    return line, last
