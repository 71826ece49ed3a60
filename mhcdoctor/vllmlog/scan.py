"""One pass over a vLLM server log: every line that names mHC, its libraries, the server's phases or a failure is
classified; everything else is counted and skipped. What is kept is bounded (a few examples per kind, totals for
the rest), so a 10 GB log costs what a 10 MB one does, in memory.

A line is found by byte search for its keywords over a whole block (formats.KEYWORDS), then decoded, stripped of
ANSI codes, container and vLLM process prefixes, and matched against the format strings in formats.py.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from mhcdoctor.text import visible
from mhcdoctor.vllmlog import formats as F
from mhcdoctor.vllmlog import observed
from mhcdoctor.vllmlog.signatures import FATAL_SIGNATURES

KEEP_CHARS = 400  # a kept line's text, cut at a word boundary (a token is never kept in part)
KEEP_PER_KIND = 3  # examples kept per (process, op, path); the rest are counted
MAX_PROCESSES = 256  # processes tracked by name; more are counted together
MAX_EVENTS = 400  # JIT compile events kept in full
MAX_KERNELS = 256  # kernels per process whose open compiles are tracked (for their time)
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


@dataclass
class ProcessState:
    pid: int | None
    frames: deque[Kept] = field(default_factory=lambda: deque(maxlen=40))  # the current traceback's frames
    serving_from: int | None = None  # line of its "Kernel JIT monitor activated"
    open_compiles: dict[str, deque[tuple[Compile, datetime | None]]] = field(default_factory=dict)


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
        return "startup" if self.vllm is not None or self.architecture is not None else "unknown"

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


class Scanner:
    def __init__(self) -> None:
        self.scan = Scan()
        self._lines_before = 0
        self._after = 0  # lines at the start of the next block still to look at (a traceback cut by the block's end)
        self._tail: list[tuple[int, bytes]] = []  # the last lines of the previous block not read
        self._once = F.ONCE
        self._log_more: tuple[int, int] | None = None  # (line, pid) of an AITER_LOG_MORE header

    def feed(self, block: bytes) -> None:
        """Classify the interesting lines of one block of whole lines, in order."""
        starts = set(_lines_from(block, 0, self._after))
        self._after, need_tail = 0, 0
        keywords = F.KEYWORDS + ((observed.KEYWORD, 0, 0),) + tuple((k, 0, 0) for k in self._once)
        for keyword, before, after in keywords:
            i = block.find(keyword)
            while i >= 0:
                start = block.rfind(b"\n", 0, i) + 1
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
        for number, raw in self._tail[len(self._tail) - need_tail :] if need_tail else ():
            self._line(raw, number)  # the previous block's last lines: a traceback's frames before its error
        number, at = self._lines_before, 0
        for start in sorted(starts):
            number += block.count(b"\n", at, start)
            at = start
            end = block.find(b"\n", start)
            self._line(block[start:end], number + 1)
        self._requests(block)
        self._lines_before += block.count(b"\n")
        self._tail = self._unread_tail(block, starts)
        found = (self.scan.architecture, self.scan.platform)
        self._once = tuple(k for k, seen in zip(F.ONCE, found, strict=True) if seen is None)

    def _unread_tail(self, block: bytes, read: set[int]) -> list[tuple[int, bytes]]:
        """The last TAIL_LINES lines of `block` not read yet, with their numbers (the block ends with a newline)."""
        starts = _lines_before(block, len(block), TAIL_LINES)[::-1]
        first = self._lines_before - len(starts) + 1
        return [
            (first + k, block[start : block.find(b"\n", start)])
            for k, start in enumerate(starts)
            if start not in read and len(block) - start <= 1 << 16
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
        text = F.ANSI.sub("", raw[:MATCH_BYTES].decode("utf-8", "replace")).rstrip("\r")
        for _ in range(2):
            m = F.CONTAINER_PREFIX.match(text)
            if m is None:
                break
            text = text[m.end() :]
        process, pid = NO_PROCESS, None
        m = F.PROCESS_PREFIX.match(text)
        if m is not None:
            pid = int(m.group("pid"))
            process = f"{m.group('name')} pid={pid}" if m.group("name") else f"pid={pid}"
            text = text[m.end() :]
        header = F.VLLM_HEADER.match(text)
        if header is not None:
            text = text[header.end() :]
        if m is None and self._log_more is not None and self._log_more[0] == number - 1:
            pid = self._log_more[1]
            process = self.scan.pids.get(pid, f"pid={pid}")
        process = self._process(process, pid)
        if self._classify(text, number, process):
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

    def _classify(self, text: str, number: int, process: str) -> bool:
        scan = self.scan
        stripped = text.strip()
        if observed.MARK in text and self._observed(text, number, process):
            return True
        if "TileLang" in text and self._tilelang(text, number, process):
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
            scan.processes[process].frames.clear()
            return True
        recognised = self._vllm(text, number, process)
        if self._fatal(text, stripped, number, process):
            return True
        frames = scan.processes[process].frames
        if not recognised and frames and stripped:
            frames.append(Kept(number, process, keep(stripped)))  # a traceback's source line, kept as its context
        return recognised

    def _tilelang(self, text: str, number: int, process: str) -> bool:
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
            opens = scan.processes[process].open_compiles
            if m.group("what") == "begins":
                event = self._compile(Compile(number, process, "tilelang", kernel, scan.phase(process)))
                if kernel in opens or len(opens) < MAX_KERNELS:  # bounded: a hostile log may name millions
                    opens.setdefault(kernel, deque(maxlen=64)).append((event, stamp))
                ops = F.TILELANG_KERNEL_OPS.get(kernel)
                if ops:
                    self._evidence(Evidence(number, process, "tilelang", "tilelang-compile", ops, keep(text)))
            elif opens.get(kernel):
                event, began = opens[kernel].popleft()
                if began is not None and stamp is not None:
                    self._compiled(event, (stamp - began).total_seconds())
            return True
        m = F.JIT_DURING_INFERENCE.search(text)
        if m is not None:
            scan.during_inference_count += 1
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
            scan.warmup_done = scan.warmup_done or Found(m.group("seconds"), number)
            return True
        return False

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
            scan.processes[process].open_compiles.setdefault("module_mhc", deque(maxlen=64)).append((event, None))
            return True
        m = F.AITER_FINISH.search(text)
        if m is not None:
            process = self._by_pid(m.group("pid"), process)
            opens = scan.processes[process].open_compiles.get("module_mhc")
            if opens:
                self._compiled(opens.popleft()[0], float(m.group("seconds")))
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
            self._evidence(Evidence(number, process, found[0], "frame", (found[1],), keep(stripped)))

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
            scan.jit_warmup_done = scan.jit_warmup_done or Found(m.group("seconds"), number)
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

    def _fatal(self, text: str, stripped: str, number: int, process: str) -> bool:
        scan = self.scan
        state = scan.processes[process]
        for signature in FATAL_SIGNATURES:
            if signature.matches(stripped, state.frames):
                if len(scan.fatal) < MAX_FATAL:
                    context = list(state.frames)[-CONTEXT_LINES:]
                    scan.fatal.append(Fatal(number, process, keep(stripped), signature.finding, context))
                state.frames.clear()
                return True
        if F.ENGINE_DEATH.search(text):
            if len(scan.engine_death) < KEEP_PER_KIND:
                scan.engine_death.append(Kept(number, process, keep(stripped)))
            return True
        m = F.EXCEPTION.match(stripped)
        if m is not None and state.frames and len(scan.fatal) < MAX_FATAL:
            # the last line of a traceback: an error no signature knows, kept with its frames
            context = list(state.frames)[-CONTEXT_LINES:]
            scan.fatal.append(Fatal(number, process, keep(stripped), None, context))
            state.frames.clear()
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

    def _compile(self, event: Compile) -> Compile:
        """Count a compile that began; the first MAX_EVENTS are kept in full."""
        scan = self.scan
        scan.compile_totals.setdefault((event.library, event.phase), [0, 0.0])[0] += 1
        key = (event.kernel, event.phase)
        if key in scan.compile_kernels or len(scan.compile_kernels) < MAX_KERNELS:
            scan.compile_kernels.setdefault(key, [0, 0.0])[0] += 1
        if len(scan.compiles) < MAX_EVENTS:
            scan.compiles.append(event)
        return event

    def _compiled(self, event: Compile, seconds: float) -> None:
        """A compile that finished, after `seconds`: its time counts in the totals."""
        scan = self.scan
        if event.seconds is not None:
            return
        event.seconds = max(0.0, seconds)
        scan.compile_totals[(event.library, event.phase)][1] += event.seconds
        if (event.kernel, event.phase) in scan.compile_kernels:
            scan.compile_kernels[(event.kernel, event.phase)][1] += event.seconds
        longest = scan.compile_longest.get(event.phase)
        if longest is None or (longest.seconds or 0.0) < event.seconds:
            scan.compile_longest[event.phase] = event


def _stamp(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
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
