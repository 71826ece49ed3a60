"""Test logs written with the format strings of each release (the ones mhcdoctor/vllmlog/formats.py cites), not
made-up lines: what vLLM's logger, tilelang's and aiter's would print.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import doctor
import jsonschema

# The published schema of `mhcdoctor log --json`, which every test of its JSON holds it to.
SCHEMA = json.loads((Path(__file__).parents[2] / "mhcdoctor/schemas/log.schema.json").read_text())
# Log lines users posted in public issues (data/SOURCES.md says where each is from).
DATA = Path(__file__).parent / "data"
ESC = "\x1b"


def log_json(name: str) -> tuple[int, dict]:
    """`mhcdoctor log DATA/NAME --json`: its exit code and its document, held to the published schema."""
    done = doctor.run("log", str(DATA / name), "--json")
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)
    return done.returncode, document


def read(tmp_path: Path, text: str, *args: str) -> tuple[int, dict]:
    """`mhcdoctor log --json ARGS` on `text` written to a file: its exit code and its document (schema-checked); it
    must print nothing on stderr."""
    path = tmp_path / "vllm.log"
    path.write_bytes(text.encode())
    done = doctor.run("log", str(path), "--json", *args)
    assert done.stderr == "", done.stderr
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)  # every document the tests read fits the published schema
    return done.returncode, document


def vllm(process: str, pid: int, level: str, where: str, message: str, when: str = "07-06 16:03:24") -> str:
    """vLLM's logger.py _FORMAT: "(%(vllm_process_name)s pid=%(process)d) %(levelname)s %(asctime)s
    [%(fileinfo)s:%(lineno)d] %(message)s" (0.31+); 0.20–0.30 add the same "(name pid=N) " through _add_prefix."""
    return f"({process} pid={pid}) {level} {when} [{where}] {message}"


def vllm_multiline(process: str, pid: int, level: str, where: str, message: str) -> str:
    """logging_utils/formatter.py NewLineFormatter: every further line of a message repeats the header after \\r\\n."""
    first, *rest = message.split("\n")
    header = f"({process} pid={pid}) {level} 07-06 16:03:24 [{where}] "
    return header + first + "".join("\r\n" + header + line for line in rest)


# tilelang/jit/kernel.py: the `begins` line per release (`completes` 8 below); 0.1.6–0.1.8 log no file:line.
TILELANG_BEGINS = {
    "0.1.9": 133,
    "0.1.10": 129,
    "0.1.11": 130,
    "0.1.12": 129,
    "0.1.13": 131,
    "0.1.14": 137,
    "0.1.15": 137,
}


def tilelang(release: str, what: str, kernel: str, when: str = "2026-07-06 16:03:24") -> str:
    """tilelang/__init__.py's formatter "%(asctime)s  [TileLang:%(name)s:%(levelname)s] (%(filename)s:%(lineno)d):
    %(message)s" (0.1.9+; "...:%(levelname)s]: %(message)s" before) around kernel.py's two messages."""
    message = (
        f"TileLang begins to compile kernel `{kernel}` with `out_idx=None`"
        if what == "begins"
        else f"TileLang completes to compile kernel `{kernel}`"
    )
    if release in TILELANG_BEGINS:
        line = TILELANG_BEGINS[release] + (0 if what == "begins" else 8)
        return f"{when}  [TileLang:tilelang.jit.kernel:INFO] (kernel.py:{line}): {message}"
    return f"{when}  [TileLang:tilelang.jit.kernel:INFO]: {message}"


def aiter(message: str) -> str:
    """aiter/__init__.py's default formatter: "[%(name)s] %(message)s"."""
    return f"[aiter] {message}"


def aiter_log_more(pid: int, message: str, func: str = "get_module_custom_op") -> list[str]:
    """With AITER_LOG_MORE=1: "[%(name)s %(levelname)s] %(asctime)s.%(msecs)03d - %(processName)s:%(process)d -
    %(pathname)s:%(lineno)d - %(funcName)s\\n%(message)s"."""
    head = f"[aiter INFO] 2026-07-06 16:03:24.123 - MainProcess:{pid} - /opt/aiter/aiter/jit/core.py:667 - {func}"
    return [head, message]


def aiter_build(release: str, pid: int, seconds: float) -> list[str]:
    """aiter/jit/core.py build_module: start and (ANSI green) finish lines; v0.1.14+ prefix "[pid=N pname=X] "."""
    tag = f"[pid={pid} pname=MainProcess] " if release >= "0.1.14" else ""
    return [
        aiter(f"{tag}start build [module_mhc] under /opt/aiter/aiter/jit/build/module_mhc"),
        aiter(f"{tag}{ESC}[32mfinish build [module_mhc], cost {seconds:.1f}s {ESC}[0m"),
    ]


def aiter_import(path: str = "/opt/aiter/aiter/jit/module_mhc.so") -> str:
    return aiter(f"import [module_mhc] under {path}")


def traceback(frames: list[tuple[str, int, str]], error: str) -> list[str]:
    lines = ["Traceback (most recent call last):"]
    for file, number, func in frames:
        lines += [f'  File "{file}", line {number}, in {func}', "    call()"]
    return lines + [error]


@dataclass
class Server:
    """A vLLM server's log, written line by line as that release would: `worker()` wraps a third-party line the way
    0.20–0.30 prefix everything a worker writes; 0.31+ leave such lines bare."""

    version: str = "0.25.0"
    lines: list[str] = field(default_factory=list)

    @property
    def prefixes_everything(self) -> bool:
        return tuple(int(p) for p in self.version.split(".")[:2]) <= (0, 30)

    def api(self, level: str, where: str, message: str) -> Server:
        self.lines.append(vllm("APIServer", 100, level, where, message))
        return self

    def banner(self, model: str = "deepseek-ai/DeepSeek-V4-Flash") -> Server:
        # entrypoints/utils.py / serve/utils/api_utils.py / common/startup.py with VLLM_DISABLE_LOG_LOGO
        self.api("INFO", "api_utils.py:319", f"vLLM server version {self.version}, serving model {model}")
        return self.api("INFO", "model.py:619", "Resolved architecture: DeepseekV4ForCausalLM")

    def worker(self, rank: int, line: str) -> Server:
        pid = 1000 + rank
        self.lines.append(f"(Worker_TP{rank} pid={pid}) {line}" if self.prefixes_everything else line)
        return self

    def worker_log(self, rank: int, level: str, where: str, message: str) -> Server:
        self.lines.append(vllm(f"Worker_TP{rank}", 1000 + rank, level, where, message))
        return self

    def started(self) -> Server:
        # uvicorn/lifespan/on.py, through vLLM's prefix on the API server
        self.lines.append("(APIServer pid=100) INFO:     Application startup complete.")
        return self

    def request(self) -> Server:
        # uvicorn/config.py's access format: %(client_addr)s - "%(request_line)s" %(status_code)s
        self.lines.append('(APIServer pid=100) INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
        return self

    def text(self, newline: str = "\n") -> str:
        return newline.join(self.lines) + newline
