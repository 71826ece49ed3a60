"""Options shared by several commands, defined once so every command spells and documents them alike."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from mhcdoctor.documents.vocabulary import VERDICT_EXIT, ExitStatus
from mhcdoctor.models import BUILTIN_MODELS, ModelConfig, resolve

F = Callable[..., Any]


class WholeNumber(click.types.IntParamType):
    """A whole number written in ASCII digits, at most `most`: int() would take full-width digits (`７１６８`) and any
    length, and a 30-digit size reached the rules as a model."""

    name = "integer"

    def __init__(self, most: int) -> None:
        self.most = most

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if not (text.isascii() and text.isdigit()):
            self.fail(f"takes a whole number in the digits 0-9, not {value!r}", param, ctx)
        if len(text) > len(str(self.most)) or int(text) > self.most:
            self.fail(f"takes a whole number up to {self.most}, not {text}", param, ctx)
        return int(text)


class Named(click.ParamType[str]):
    """A name the user gives (a file, a model, an interpreter): an empty one, as `--bundle "$OUT"` with OUT unset
    writes, is bad input, not the default model, no bundle or the working folder."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text.strip():
            self.fail(f"is empty ({text!r}); give a name", param, ctx)
        return text


NAMED = Named()


def model_options(fn: F) -> F:
    # hc_mult up to 2^16: verify's memory check, not this bound, refuses --hc-mult 1000 with the bytes it needs
    fn = click.option("--hc-mult", type=WholeNumber(1 << 16), default=None, help="Residual streams (default 4).")(fn)
    fn = click.option("--hidden", type=WholeNumber(1 << 20), default=None, help="Hidden size; overrides the config's.")(
        fn
    )
    fn = click.option(
        "--config",
        "config_path",
        type=NAMED,
        default=None,
        help="A Hugging Face config.json, or a folder holding one.",
    )(fn)
    fn = click.option("--model", type=NAMED, default=None, help=f"A built-in config: {', '.join(BUILTIN_MODELS)}.")(fn)
    return fn


def model_from_options(
    model: str | None, config_path: str | None, hidden: int | None, hc_mult: int | None
) -> ModelConfig:
    return resolve(model=model, config=config_path, hidden=hidden, hc_mult=hc_mult)


def model_args(model: str | None, config_path: str | None, hidden: int | None, hc_mult: int | None) -> list[str]:
    """The model options given, as command-line arguments again (for a command run elsewhere, e.g. on a node)."""
    args: list[str] = []
    for flag, value in (("--model", model), ("--config", config_path), ("--hidden", hidden), ("--hc-mult", hc_mult)):
        if value is not None:
            args += [flag, str(value)]
    return args


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout, nothing else.")(fn)


class FiniteSeconds(click.FloatRange):
    """Seconds, at least `min`: `nan` passes every comparison (so FloatRange takes it, and it never times out) and
    `inf` is no limit; both are bad input."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


def timeout_option_with(default: float, help: str, minimum: float = 0.1) -> Callable[[F], F]:
    """--timeout in seconds, with this command's default, meaning and least value."""
    return click.option("--timeout", type=FiniteSeconds(min=minimum), default=default, show_default=True, help=help)


timeout_option = timeout_option_with(
    20.0,
    "Seconds allowed for each child process (imports, GPU initialisation; with --verify, each path's kernels, "
    "else verify's own 300 s).",
)


def given_timeout(timeout: float) -> float | None:
    """--timeout when the command line gave it, else None: the default (20 s for an import) is no bound for a path's
    kernels and their JIT compiles, which keep verify's own."""
    source = click.get_current_context().get_parameter_source("timeout")
    return timeout if source is click.core.ParameterSource.COMMANDLINE else None


def path_timeout_option(default: float) -> Callable[[F], F]:
    """--timeout for commands that run each path in a child process of its own (verify, bench)."""
    return timeout_option_with(default, "Seconds allowed for each path's child process (JIT compiles included).")


def tokens_option(defaults: str) -> Callable[[F], F]:
    return click.option("--tokens", default=None, help=f"Comma-separated token counts (default {defaults}).")


def tokens_from_option(value: str | None) -> list[int] | None:
    """--tokens "1,7,80" → [1, 7, 80]; None when not given; anything but positive integers is bad input."""
    from mhcdoctor.errors import InputError

    if value is None:
        return None
    try:
        counts = [int(part) for part in value.split(",")]  # an empty part (1,,7) is a typo, not nothing
    except ValueError:
        raise InputError(f"--tokens takes comma-separated positive integers, not {value!r}") from None
    if not counts or any(c < 1 for c in counts):
        raise InputError(f"--tokens takes comma-separated positive integers, not {value!r}")
    return counts


def paths_option(help: str) -> Callable[[F], F]:
    """--path, repeatable: the paths to run (default: every path that is installed)."""
    from mhcdoctor.kernels import REGISTRY

    return click.option("--path", "paths", multiple=True, type=click.Choice(REGISTRY.names()), help=help)


def device_option(help: str) -> Callable[[F], F]:
    """--device, as mhcdoctor.verify.resolve_devices reads it (auto, N, cuda:N, all, cpu)."""
    return click.option("--device", default="auto", show_default=True, help=help)


def python_option(fn: F) -> F:
    return click.option(
        "--python",
        "python",
        type=NAMED,
        default=None,
        metavar="PATH",
        help="Probe the environment of this Python interpreter (where vLLM runs) instead of mhcdoctor's own.",
    )(fn)


def force_option(fn: F) -> F:
    return click.option(
        "--force", is_flag=True, help="Replace the --bundle file if it exists (only ever a regular file)."
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


def refuse_together(given: dict[str, object], why: str = "") -> None:
    """Bad input when more than one of these options (flag -> value) is given: no option silently wins."""
    named = [flag for flag, value in given.items() if value not in (None, False, ())]
    if len(named) > 1:
        raise click.UsageError(f"{' and '.join(named)} cannot be given together" + (f": {why}" if why else ""))


def exit_code(verdict: str, fail_on: str | None) -> ExitStatus:
    """The exit status for a verdict (0 ok, 1 degraded, 3 fail), narrowed by --fail-on."""
    if fail_on == "never" or (fail_on == "fail" and verdict == "degraded"):
        return ExitStatus.OK
    return VERDICT_EXIT[verdict]
