"""`mhcdoctor explain`: the full decision trace for one model config, on this machine or a what-if of it.

Probing is fast by default (package metadata, files, sysfs: no import, no GPU initialisation), which is all the
rules need but one thing: where the release's has_tilelang() is a trial import (0.23–0.27), a tilelang installed
here is imported in a child process, as vLLM would, so a broken one counts as absent. `--deep` probes as a full
check does (tilelang, aiter, torch imports; GPU initialisation; vLLM's self-check). The rule set is picked once
(rules.pick_rules), which says whether the import is needed (rules.tilelang_trial_import) before deciding, so the
rules run once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from mhcdoctor.commands.options import (
    NAMED,
    exit_code,
    fail_on_option,
    json_option,
    model_from_options,
    model_options,
    python_option,
    refuse_together,
    timeout_option,
)
from mhcdoctor.facts import Facts
from mhcdoctor.probes import PROBES, facts_from_probes, run_all_probes, run_probes
from mhcdoctor.probes.target import probe_context
from mhcdoctor.render.decision_text import render_decision
from mhcdoctor.render.json_view import render_json
from mhcdoctor.render.term import Style
from mhcdoctor.reportfile import read_saved_report
from mhcdoctor.rules import decide, pick_rules, tilelang_trial_import
from mhcdoctor.whatif import FIX_IDS, WhatIf, build_facts, report_facts


def _import_tilelang_here(facts: Facts, timeout: float, python: str | None) -> None:
    """Run the tilelang import probe (a child process) and take its verdict into the facts."""
    result = PROBES["tilelang.import"](probe_context(fast=False, timeout=timeout, python=python))
    imported = facts_from_probes([result])
    facts.tilelang.imports, facts.tilelang.import_error = imported.tilelang.imports, imported.tilelang.import_error
    facts.sources.update({k: v for k, v in imported.sources.items() if k.startswith("tilelang.")})


def probe_facts(deep: bool, timeout: float, python: str | None, sizes: list[tuple[int, int]]) -> Callable[[], Facts]:
    """This machine's facts, probed only when called (not at all when every fact comes from a report); --deep as a
    full check probes, vLLM's self-check included (its `import vllm` alone missed a vLLM whose platforms fail)."""
    if deep:
        return lambda: facts_from_probes(
            run_all_probes(probe_context(fast=False, timeout=timeout, python=python), sizes)
        )
    return lambda: facts_from_probes(run_probes(probe_context(fast=True, timeout=timeout, python=python)))


EXAMPLES = """\b
Examples:
  mhcdoctor explain --hidden 7168                       this machine, a 7168-wide model
  mhcdoctor explain --model deepseek-v4-flash --json    one explain/1 JSON document
  mhcdoctor explain --from report.json --aiter 0.1.16   a user's check --json, with aiter upgraded
  mhcdoctor explain --platform rocm --arch gfx942 --aiter 0.1.13 --vllm 0.25.0
\b
Rules per vLLM release: docs/rules.md; findings and their fixes: docs/findings.md."""


@click.command("explain", epilog=EXAMPLES)
@model_options
@click.option(
    "--platform",
    default=None,
    metavar="rocm|cuda|xpu|cpu",
    help="What if the machine were this (xpu: Intel GPUs; cpu: no GPU, which vLLM serves only as its CPU build, "
    "e.g. --vllm 0.34.0+cpu).",
)
@click.option(
    "--arch", default=None, metavar="ARCH", help="What if the GPU arch were this (gfx942, gfx950, sm_90, ...)."
)
@click.option(
    "--aiter", default=None, metavar="VERSION|none", help="What if AMD's aiter at this version were installed."
)
@click.option(
    "--aiter-fix",
    default=None,
    metavar="STATE|ID=STATE,...",
    help="What if aiter had (present) or lacked (absent) a fix: STATE alone is the sqrsum race fix; ID is one of "
    f"{', '.join(FIX_IDS)}.",
)
@click.option("--tilelang", default=None, metavar="VERSION|none", help="What if this tilelang were installed.")
@click.option(
    "--vllm",
    default=None,
    metavar="VERSION|none",
    help="Apply the rules of this vLLM release; a local label names its build, as vLLM reads it (0.34.0+cpu).",
)
@click.option("--rocm", default=None, metavar="VERSION", help="What if the ROCm version were this.")
@click.option(
    "--deepgemm",
    default=None,
    metavar="VERSION|none",
    help="What if this standalone deep_gemm were installed (it shadows vLLM's vendored copy); none: no DeepGEMM.",
)
@click.option(
    "--from",
    "from_paths",
    multiple=True,
    type=NAMED,
    metavar="REPORT",
    help="Take the facts from a saved report: check --json or report --json, a report --bundle, or a saved "
    "report's Markdown.",
)
@click.option(
    "--deep", is_flag=True, help="Probe as a full check does: imports and vLLM's self-check, in child processes."
)
@python_option
@json_option
@timeout_option
@fail_on_option
def command(
    model: str | None,
    config_path: str | None,
    hidden: int | None,
    hc_mult: int | None,
    platform: str | None,
    arch: str | None,
    aiter: str | None,
    aiter_fix: str | None,
    tilelang: str | None,
    vllm: str | None,
    rocm: str | None,
    deepgemm: str | None,
    from_paths: tuple[str, ...],
    deep: bool,
    python: str | None,
    as_json: bool,
    timeout: float,
    fail_on: str | None,
) -> int:
    """Which path vLLM takes for each mHC op, every gate on the way, and what will go wrong."""
    if len(from_paths) > 1:
        raise click.UsageError(f"--from takes one report, not {len(from_paths)} (mhcdoctor diff compares two)")
    from_path = from_paths[0] if from_paths else None
    report = "--from takes every fact from the report"
    refuse_together({"--from": from_path, "--deep": deep}, f"{report}, and --deep probes this machine")
    refuse_together({"--from": from_path, "--python": python}, f"{report}, and --python names an environment to probe")
    config = model_from_options(model, config_path, hidden, hc_mult)
    whatif = WhatIf(platform, arch, aiter, aiter_fix, tilelang, vllm, rocm, deepgemm)
    probe = probe_facts(deep, timeout, python, [(config.hidden_size, config.hc_mult)])
    if from_path is not None:
        saved = read_saved_report(from_path, uses=frozenset({"facts"}))  # explain decides on the facts alone
        facts = build_facts(whatif, lambda: report_facts(saved.facts, from_path))
    else:
        facts = build_facts(whatif, probe)
    rules = pick_rules(facts)  # importing tilelang below changes no fact the pick reads
    # 0.23–0.27 import tilelang to test for it; only this machine's tilelang can be imported to see.
    if whatif.probes_here("tilelang", from_path is not None) and tilelang_trial_import(facts, rules):
        _import_tilelang_here(facts, timeout, python)
    decision = decide(facts, config, rules=rules)
    doc = decision.to_explain_document()
    if as_json:
        if decision.rules_note:  # the text view shows it in its header; scripts reading JSON see it on stderr
            click.echo(f"mhcdoctor: warning: {decision.rules_note}", err=True)
        click.echo(render_json(doc))
    else:
        click.echo(render_decision(doc, Style.for_stream(sys.stdout)), nl=False)
    return exit_code(decision.verdict, fail_on)
