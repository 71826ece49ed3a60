"""Options shared by several commands, defined once so every command spells and documents them alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from mhcdoctor.decision import VERDICT_EXIT
from mhcdoctor.models import BUILTIN_MODELS, ModelConfig, resolve

F = Callable[..., Any]


def model_options(fn: F) -> F:
    fn = click.option("--hc-mult", type=int, default=None, help="Residual streams (default 4).")(fn)
    fn = click.option("--hidden", type=int, default=None, help="Hidden size; overrides the config's.")(fn)
    fn = click.option(
        "--config",
        "config_path",
        type=str,
        default=None,
        help="A Hugging Face config.json, or a folder holding one.",
    )(fn)
    fn = click.option("--model", type=str, default=None, help=f"A built-in config: {', '.join(BUILTIN_MODELS)}.")(fn)
    return fn


def model_from_options(
    model: str | None, config_path: str | None, hidden: int | None, hc_mult: int | None
) -> ModelConfig:
    return resolve(model=model, config=config_path, hidden=hidden, hc_mult=hc_mult)


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout, nothing else.")(fn)


def timeout_option(fn: F) -> F:
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=20.0,
        show_default=True,
        help="Seconds allowed for each child process (imports, GPU initialisation, kernels).",
    )(fn)


def python_option(fn: F) -> F:
    return click.option(
        "--python",
        "python",
        type=str,
        default=None,
        metavar="PATH",
        help="Probe the environment of this Python interpreter (where vLLM runs) instead of mhcdoctor's own.",
    )(fn)


def fail_on_option(fn: F) -> F:
    return click.option(
        "--fail-on",
        type=click.Choice(["never", "degraded", "fail"]),
        default=None,
        help="Exit non-zero only at this verdict or worse (for CI gates). Default: 0 ok, 1 degraded, 3 fail; bad "
        "input exits 2 whatever this says.",
    )(fn)


def kernel_option(fn: F) -> F:
    return click.option(
        "--kernel",
        "kernels",
        multiple=True,
        metavar="OP=MODULE:FUNC",
        help="Your own implementation of an op (repeatable), with the reference's signature: runs as the path `user`.",
    )(fn)


def kernels_from_options(specs: tuple[str, ...]) -> dict[str, str] | None:
    """--kernel values → {op: "module:func"}; a malformed or repeated one is bad input."""
    from mhcdoctor.errors import InputError
    from mhcdoctor.kernels.user_path import parse_spec

    kernels: dict[str, str] = {}
    for spec in specs:
        try:
            op, target = parse_spec(spec)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if op in kernels:
            raise InputError(f"--kernel gives {op} twice ({kernels[op]} and {target})")
        kernels[op] = target
    return kernels or None


def exit_code(verdict: str, fail_on: str | None) -> int:
    """The exit code for a verdict (0 ok, 1 degraded, 3 fail), narrowed by --fail-on."""
    code = VERDICT_EXIT[verdict]
    if fail_on == "never":
        return 0
    if fail_on == "fail" and verdict == "degraded":
        return 0
    return code
