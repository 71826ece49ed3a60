"""The fleet/1 document (`fleet --json`, `merge --json`): many nodes' check/1 reports summarised."""

from __future__ import annotations

from typing import Literal, TypedDict

from mhcdoctor.documents.vocabulary import Count, Positive, Severity, Verdict

SCHEMA = "mhcdoctor.fleet/1"


# A node's status: `checked` has a report; every other status means no report, and the node counts as fail.
# Where the reports came from: `fleet` gathered them over Ray, `merge` read them from files.
FleetSource = Literal["ray", "merge"]
NodeStatus = Literal["checked", "timeout", "lost", "not-installed", "error", "unreadable"]


class _VerifyRunBase(TypedDict):
    gpu: str | None  # the GPU ids Ray gave the task, comma-separated
    verdict: Verdict
    status: Literal["checked", "lost", "timeout", "error"]
    error: str | None


class VerifyRun(_VerifyRunBase, total=False):
    """fleet --verify: one GPU's verify on a node."""

    not_pass: list[str]  # when it ran: "path op" of each row that did not pass


class NodeRow(TypedDict):
    name: str
    status: NodeStatus
    verdict: Verdict
    error: str | None
    seconds: float | None
    source: str | None
    host: str | None
    findings: list[str]  # the ids of its findings
    verify: list[VerifyRun]


class Majority(TypedDict):
    value: str
    count: Positive


class OddGroup(TypedDict):
    value: str
    count: Positive
    nodes: list[str]


class Difference(TypedDict):
    """A fact that differs between nodes: what most nodes have, and each other group with its nodes."""

    key: str
    label: str
    majority: Majority
    odd: list[OddGroup]


class SharedFact(TypedDict):
    key: str
    label: str
    value: str


class _FleetFindingBase(TypedDict):
    id: str
    severity: Severity
    title: str
    fix: str
    nodes: list[str]


class FleetFinding(_FleetFindingBase, total=False):
    count: Positive  # len(nodes); always there once `summarize` returns


class FleetCounts(TypedDict):
    nodes: Count
    checked: Count
    ok: Count
    degraded: Count
    fail: Count
    unchecked: Count


class FleetDocument(TypedDict):
    """The fleet/1 document (`fleet --json`, `merge --json`)."""

    schema: str
    mhcdoctor_version: str
    created: str
    source: FleetSource
    verdict: Verdict
    counts: FleetCounts
    nodes: list[NodeRow]
    differences: list[Difference]
    shared: list[SharedFact]
    findings: list[FleetFinding]
