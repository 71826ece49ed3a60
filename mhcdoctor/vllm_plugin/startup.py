"""The start-up line, and strict's refusal, in each process that builds a DeepSeek-V4 model.

The first CustomOp built under a vLLM config whose model has `hc_mult` is where this process builds the model
(vLLM builds every layer's CustomOps inside `set_current_vllm_config`: model_loader/utils.py initialize_model,
0.20–0.34). There the plugin runs this machine's `check --fast` for that model's hidden size and hc_mult, logs one
line beside vLLM's own, and, under MHCDOCTOR_VLLM=strict, refuses to go on where a finding of wrong results holds
for a release the rules know. Then CustomOp's own __init__ is put back: the hook costs nothing afterwards.
"""

from __future__ import annotations

import functools
import logging
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from mhcdoctor.documents.vocabulary import OPS
from mhcdoctor.knowledge.bugs import BUGS

if TYPE_CHECKING:
    from mhcdoctor.documents.explain import DecisionDocument


class Recorder(Protocol):
    """What startup needs of hooks.Recorder (typed here: hooks imports this module)."""

    mode: str
    startup: str | None
    vllm: str | None

    def warn_once(self, key: str, text: str) -> None: ...

    def write(self) -> None: ...


# The findings whose failure is wrong numbers, not a crash or a refusal vLLM makes itself: every known-bug record of
# that effect (knowledge/bugs.py). strict refuses only for these, and only as fail (a warn never refuses).
WRONG_RESULTS = frozenset(bug.id for bug in BUGS if bug.effect == "wrong results")
UNKNOWN_RELEASE = "vllm-newer-than-rules"


class StrictRefusal(RuntimeError):
    """MHCDOCTOR_VLLM=strict and a known wrong-results combination: vLLM must not start."""


def hook_custom_op(module: ModuleType, recorder: Recorder | None) -> int:
    cls = getattr(module, "CustomOp", None)
    original = cls.__dict__.get("__init__") if isinstance(cls, type) else None
    if cls is None or original is None or recorder is None:
        return 0

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        try:
            done = startup(recorder)
        except StrictRefusal:
            cls.__init__ = original
            raise
        if done:
            cls.__init__ = original

    cls.__init__ = __init__
    return 1


def _model_sizes() -> tuple[int, int] | None | bool:
    """(hidden_size, hc_mult) of the model being built; None: no config yet; False: not an mHC model."""
    vllm_config = sys.modules.get("vllm.config")
    if vllm_config is None:
        return None
    getter = getattr(vllm_config, "get_current_vllm_config_or_none", None)
    try:
        config = getter() if getter is not None else vllm_config.get_current_vllm_config()
    except AssertionError:  # 0.34: no config set here
        return None
    model = getattr(config, "model_config", None)
    hf = getattr(model, "hf_config", None)
    if hf is None:
        return None
    text = hf.get_text_config() if callable(getattr(hf, "get_text_config", None)) else hf
    hidden, hc = getattr(text, "hidden_size", None), getattr(text, "hc_mult", None)
    if not isinstance(hidden, int) or not isinstance(hc, int) or hidden <= 0 or hc <= 0:
        return False
    return hidden, hc


def startup(recorder: Recorder) -> bool:
    """Log the start-up line once the model's config is known; True once there is nothing more to do."""
    try:
        sizes = _model_sizes()
    except Exception as error:
        recorder.warn_once("config", f"cannot read the model's config: {type(error).__name__}: {error}")
        return True
    if sizes is None:
        return False
    if sizes is False or isinstance(sizes, bool):
        return True
    hidden, hc = sizes
    try:
        line, refusal = verdict(hidden, hc)
    except Exception as error:  # check --fast failing must not stop vLLM
        recorder.warn_once("check", f"check --fast failed: {type(error).__name__}: {error}")
        return True
    recorder.startup = line
    recorder.vllm = _vllm_version()
    logging.getLogger("vllm.mhcdoctor").info("%s", line)
    recorder.write()
    if refusal is not None and recorder.mode == "strict":
        raise StrictRefusal(refusal)
    return True


def _vllm_version() -> str | None:
    version = getattr(sys.modules.get("vllm"), "__version__", None)
    return str(version) if version is not None else None


def verdict(hidden: int, hc: int) -> tuple[str, str | None]:
    """The start-up line (this machine's check --fast for the model) and strict's refusal, if one applies."""
    from mhcdoctor.checkreport import build_check
    from mhcdoctor.models import ModelConfig
    from mhcdoctor.probes.target import probe_context

    doc = build_check(probe_context(fast=True), [ModelConfig(name=None, hidden_size=hidden, hc_mult=hc)])
    model = doc["models"][0]
    return line(model, hidden, hc), refusal(model)


def line(model: DecisionDocument, hidden: int, hc: int) -> str:
    paths = " ".join(f"{op}={model['ops'][op]['path']}" for op in OPS if op in model["ops"])
    bugs = [f"{f['id']} ({f['severity']})" for f in model["findings"] if f["severity"] in ("warn", "fail")]
    return (
        f"mhcdoctor check --fast for this model (hidden {hidden}, hc_mult {hc}; rules {model['rules']}): "
        f"{model['verdict']}; {paths}; known bugs: {', '.join(bugs) or 'none'}; "
        f"more: mhcdoctor check --hidden {hidden} --hc-mult {hc}"
    )


def refusal(model: DecisionDocument) -> str | None:
    """strict's one-line error, where a wrong-results finding fails for a release the rules know."""
    ids = {f["id"] for f in model["findings"]}
    if UNKNOWN_RELEASE in ids or model["rules_note"] is not None or model["rules"].startswith("vllm-before"):
        return None
    for finding in model["findings"]:
        if finding["id"] in WRONG_RESULTS and finding["severity"] == "fail":
            return (
                f"mhcdoctor (MHCDOCTOR_VLLM=strict) refuses to start: {finding['id']}: {finding['title']}. "
                f"Fix: {finding['fix']} (MHCDOCTOR_VLLM=observe starts anyway; `mhcdoctor explain` says why)"
            )
    return None
