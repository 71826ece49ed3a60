"""What every document shares: the ops, the paths, severities and verdicts with their order, and the exit statuses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Annotated, Literal, TypeAlias, TypeVar

# A JSON value as the documents carry it (explain's `facts` part is one, projected from the facts' dataclasses);
# read-only containers, so that a dict[str, bool] is one.
JsonValue: TypeAlias = str | int | float | bool | None | Sequence["JsonValue"] | Mapping[str, "JsonValue"]


@dataclass(frozen=True)
class Minimum:
    """The least value a number member may have (`Annotated[int, Minimum(1)]`): the schema's minimum (exclusive:
    its exclusiveMinimum). Type checkers see the plain number; mhcdoctor.docschema writes the bound."""

    value: int
    exclusive: bool = False


@dataclass(frozen=True)
class NullWhen:
    """A member that is null whenever the object's member `key` is `value` (`Annotated[str | None, NullWhen(...)]`):
    the schema's if/then on the object. Type checkers see the plain member."""

    key: str
    value: str


@dataclass(frozen=True)
class Pattern:
    """The regular expression a string member matches (`Annotated[str, Pattern(...)]`): the schema's pattern."""

    regex: str


# A finding's id, as the catalogue (rules.findings) names them: lower-case words joined by hyphens.
FindingId = Annotated[str, Pattern(r"^[a-z0-9]+(-[a-z0-9]+)*$")]
Count = Annotated[int, Minimum(0)]  # how many of something: 0 or more
Positive = Annotated[int, Minimum(1)]  # a size or a token count: 1 or more
NonNegative = Annotated[float, Minimum(0)]  # a duration, a time, a bandwidth

# The four mHC ops, in the order every view lists them (the one list: renderers, verify, bench and fleet use it).
# The machine's accelerator platform (the GPUs found; cpu: none), and a fix found in a package's code or not.
Platform = Literal["rocm", "cuda", "xpu", "cpu"]
FixState = Literal["present", "absent", "unknown"]
Op = Literal["mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"]
OPS: tuple[Op, ...] = ("mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head")
OP_SHORT: dict[str, str] = {"mhc_pre": "pre", "mhc_post": "post", "mhc_fused_post_pre": "fused", "hc_head": "head"}
# How the log views name the ops (log/1's text and Markdown).
OP_LABEL = {"mhc_pre": "mhc_pre", "mhc_post": "mhc_post", "mhc_fused_post_pre": "fused post+pre", "hc_head": "hc_head"}

# xpu: vllm-xpu-kernels' ops (torch.ops._xpu_C); cpu: the ops of vLLM's CPU build (torch.ops._C.*_fused_cpu).
PathName = Literal["aiter", "tilelang", "triton", "torch", "xpu", "cpu", "unavailable"]
Severity = Literal["info", "warn", "fail"]
Verdict = Literal["ok", "degraded", "fail"]

# Least to most severe: the one ranking of severities and the one of verdicts.
SEVERITIES: tuple[Severity, ...] = ("info", "warn", "fail")
VERDICTS: tuple[Verdict, ...] = ("ok", "degraded", "fail")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
VERDICT_RANK: dict[str, int] = {v: i for i, v in enumerate(VERDICTS)}


class ExitStatus(IntEnum):
    """Every exit status of every command, in one place (as httpie's ExitStatus)."""

    OK = 0
    DEGRADED = 1
    # a usage error, input that cannot be read, or output that cannot be written (a full disk, stdout closed): one line
    # on stderr
    BAD_INPUT = 2
    FAIL = 3
    INTERNAL_ERROR = 4  # a bug in mhcdoctor itself, kept apart from the verdicts and bad input
    # stopped by a signal: 128 + its number, as a shell reports it (mhcdoctor.cli._stop)
    HANGUP = 129  # SIGHUP: the terminal closed, the ssh session dropped
    ABORTED = 130  # Ctrl-C (SIGINT)
    TERMINATED = 143  # SIGTERM


VERDICT_EXIT: dict[str, ExitStatus] = {"ok": ExitStatus.OK, "degraded": ExitStatus.DEGRADED, "fail": ExitStatus.FAIL}


def worst_verdict(verdicts: Iterable[str]) -> Verdict:
    """The worst of `verdicts` ("ok" when there are none; a verdict not known ranks as "ok")."""
    return VERDICTS[max((VERDICT_RANK.get(v, 0) for v in verdicts), default=0)]


_Word = TypeVar("_Word", bound=str)


def one_of(value: str, allowed: tuple[_Word, ...]) -> _Word:
    """`value` as a member of a document's Literal (`one_of(s, VERDICTS)`); ValueError where it is none of them."""
    for word in allowed:
        if value == word:
            return word
    raise ValueError(f"{value!r} is not one of {', '.join(allowed)}")


def severity_rank(severity: str) -> int:
    """A severity's rank, least severe 0 (a severity not known ranks as info)."""
    return SEVERITY_RANK.get(severity, 0)


# Token counts from here on are prefill in practice (decode batches stay well below).
PREFILL_FROM = 512


def token_scope(tokens: int | None) -> str:
    """ "from 1024 tokens: prefill" (a call that large is a prompt being read); "" where any count shows it."""
    if tokens is None:
        return ""
    return f"from {tokens} tokens" + (": prefill" if tokens >= PREFILL_FROM else "")


# A finding's documentation ships with the package (`mhcdoctor help ID` prints it, rules.finding_docs renders it), so
# a pip-installed user reaches it offline; the project's planned public home (pyproject's [project.urls]) is not
# published yet, so no finding prints a link to it.
def finding_docs(finding_id: str) -> str:
    """The command that shows a finding's documentation."""
    return f"mhcdoctor help {finding_id}"
