"""The check report: probe the machine once, decide for each model, and gather it all into one check/1 document.

`check`, `report` and the bundle all start from this document, so what a user sees on screen, what they paste and
what support replays are the same data.

The check/1 document is a TypedDict (documents.check.CheckDocument), not a dataclass: it is read back from users'
files (`explain --from`, `diff`, `merge`), redacted as JSON, and rendered in that form, so its typed form is its JSON.
`build_check` is the one place it is made. Its `facts` and `probes` parts are the facts' and probes' own
`to_dict()` output (FactsDocument, ProbeDocument); a document read back from a user's file is checked and
normalised to the same types by reportfile, so the views read them as typed.
"""

from __future__ import annotations

import getpass
import os
import platform
import socket
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from mhcdoctor import __version__
from mhcdoctor.clock import created_now
from mhcdoctor.documents.check import SCHEMA, CheckDocument, HostDocument
from mhcdoctor.documents.explain import FindingDocument
from mhcdoctor.documents.vocabulary import severity_rank, worst_verdict
from mhcdoctor.environment import relevant_env
from mhcdoctor.models import ModelConfig
from mhcdoctor.probes import facts_from_probes, run_all_probes
from mhcdoctor.probes.base import ProbeResult
from mhcdoctor.probes.context import ProbeContext
from mhcdoctor.rules import decide
from mhcdoctor.text import visible, visible_strings

if TYPE_CHECKING:
    from mhcdoctor.documents.verify import VerifyDocument


def build_check(
    ctx: ProbeContext,
    models: Iterable[ModelConfig],
    verify: bool = False,
    progress: Callable[[str], None] | None = None,
    on_probe: Callable[[ProbeResult], None] | None = None,
    verify_timeout: float | None = None,
) -> CheckDocument:
    """Probe this machine (as `ctx` says), decide for each model, and return the check/1 document.

    `on_probe` hears of each probe as it finishes (progress on a terminal). With `verify`, the kernels of every
    available path also run (mhcdoctor.verify) at the first model's size, and a path the rules select that computes
    wrong numbers makes the verdict fail; each path's child gets `verify_timeout` seconds (None: verify's own).
    """
    start = time.perf_counter()
    models = list(models)
    sizes = list(dict.fromkeys((m.hidden_size, m.hc_mult) for m in models))
    results = run_all_probes(ctx, sizes, on_done=on_probe)
    facts = facts_from_probes(results)
    decisions = [decide(facts, model) for model in models]
    model_docs = [decision.to_json_dict() for decision in decisions]
    verify_doc: VerifyDocument | None = None
    if verify and models:
        from mhcdoctor.verify import CHECK_CPU_HINT, DEFAULT_TIMEOUT, run_verify  # kernels: only when asked for

        selected: dict[str, str] = {op: entry["path"] for op, entry in model_docs[0]["ops"].items()}
        limit = DEFAULT_TIMEOUT if verify_timeout is None else verify_timeout
        verify_doc = run_verify(
            models[0], ctx=ctx, selected=selected, progress=progress, cpu_hint=CHECK_CPU_HINT, timeout=limit
        )
    findings = merge_findings(doc["findings"] for doc in model_docs)
    verdicts = [doc["verdict"] for doc in model_docs]
    if verify_doc is not None:
        verdicts.append(verify_doc.get("verdict", "ok"))
    return {
        "schema": SCHEMA,
        "mhcdoctor_version": __version__,
        "created": created_now(),
        "mode": "fast" if ctx.fast else "full",
        "seconds": round(time.perf_counter() - start, 3),
        "host": _host(ctx),
        "env": visible_strings(relevant_env(ctx.env)),
        "facts": facts.to_dict(),
        "probes": [r.to_dict() for r in results],
        "models": model_docs,
        "findings": findings,
        "verdict": worst_verdict(verdicts),
        "verify": verify_doc,
        # what vLLM detects here follows from the facts alone: any model's decision says it
        "vllm_platform": decisions[0].vllm.platform_document() if decisions else None,
    }


def merge_findings(per_model: Iterable[list[FindingDocument]]) -> list[FindingDocument]:
    """Findings of all models, once per id (the first wording kept), most severe first."""
    seen: dict[str, FindingDocument] = {}
    for findings in per_model:
        for finding in findings:
            seen.setdefault(finding["id"], finding)
    return sorted(seen.values(), key=lambda f: -severity_rank(f["severity"]))


def _os_name() -> str:
    """platform.platform()'s words (Linux-6.8.0-x86_64-with-glibc2.39) from the uname system call and the C library:
    platform.platform() runs `uname -p` from PATH with no time limit, and a hostile one hung the doctor."""
    system = os.uname()
    libc, version = platform.libc_ver()
    return "-".join([system.sysname, system.release, system.machine, *([f"with-{libc}{version}"] if libc else [])])


def _host(ctx: ProbeContext) -> HostDocument:
    """This machine, and the interpreter whose environment was probed (`--python`; else the doctor's own), each
    string made visible (read from the OS: a folder name that is not UTF-8 is a lone surrogate here)."""

    def safe(fn: Callable[[], object]) -> str:
        try:
            return visible(str(fn()))
        except Exception:  # getpass.getuser() raises when no user name can be found (containers)
            return "unknown"

    host: HostDocument = {
        "hostname": safe(socket.gethostname),
        "user": safe(getpass.getuser),
        "python": visible(ctx.python),
        "python_version": visible(ctx.python_version),
        "os": safe(_os_name),
        "cwd": safe(os.getcwd),
    }
    if ctx.python != sys.executable:
        host["doctor_python"] = visible(sys.executable)
    return host
