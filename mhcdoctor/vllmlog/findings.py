"""The findings a log can prove: their severity here (a known bug's from its record, knowledge/bugs.py `log_severity`),
and their title, fix and references taken from the findings catalogue (rules/findings/) by id, so a finding reads
the same from `check`, `explain` and `log`.

`mhc-jit-while-serving` is the log's own: only a log shows kernels compiled after start-up. The severity is the
log's: a failure the log shows happened is fail, whatever the catalogue predicts for a machine that merely could
hit it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mhcdoctor.knowledge.bugs import BUGS
from mhcdoctor.rules.findings import CATALOGUE

VLLM = "https://github.com/vllm-project/vllm/"


# Findings the catalogue holds: only their severity in a log is given here; a known bug's is its record's.
SEVERITY: dict[str, str] = {
    "tilelang-missing": "fail",
    "aiter-no-mhc": "fail",
    "aiter-impostor": "fail",
    "aiter-no-compiler": "fail",  # the log shows the build failing
    **{bug.id: bug.log_severity for bug in BUGS if bug.log_severity is not None},
}


@dataclass(frozen=True)
class LogFinding:
    """A finding only a log can show, with its own text."""

    id: str
    severity: str
    title: str
    fix: str
    refs: tuple[str, ...]


_OWN: tuple[LogFinding, ...] = (
    LogFinding(
        "mhc-jit-while-serving",
        "warn",
        "mHC kernels were compiled while the server was serving",
        "Keep tilelang's kernel cache across restarts (TILELANG_CACHE_DIR, default ~/.tilelang/cache, on a "
        "persistent volume) so each shape compiles once; before opening the server to traffic, send one request per "
        "prompt-length range your users send; vLLM 0.26+ names each such compile in a 'JIT compilation during "
        "inference' warning",
        (VLLM + "issues/48809", VLLM + "pull/47807", VLLM + "issues/51790"),
    ),
)
OWN = {finding.id: finding for finding in _OWN}


@dataclass(frozen=True)
class Text:
    severity: str
    title: str
    fix: str
    refs: list[str]


def text_of(finding_id: str) -> Text:
    """A finding's title, fix and references: the catalogue's where it has the id, else the log's own."""
    for spec in CATALOGUE:
        if spec.id == finding_id:
            severity = SEVERITY.get(finding_id) or OWN[finding_id].severity
            return Text(severity, spec.title, spec.fix, list(spec.refs))
    own = OWN[finding_id]
    return Text(own.severity, own.title, own.fix, list(own.refs))
