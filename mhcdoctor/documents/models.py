"""A model config as `models --json` lists it and bench/1 carries it."""

from __future__ import annotations

from typing import TypedDict

from mhcdoctor.documents.vocabulary import Positive

SCHEMA = "mhcdoctor.models/1"

# The built-in models, as `--model` takes them and `models --json` lists them (mhcdoctor.models holds their configs).
BUILTIN_NAMES: tuple[str, ...] = ("deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v4.1-flash")


class ModelConfigDocument(TypedDict):
    """`ModelConfig.to_dict()`: `models --json`'s entries and bench/1's `model`."""

    name: str | None
    hidden_size: Positive
    hc_mult: Positive
    hc_sinkhorn_iters: int
    hc_eps: float
    rms_norm_eps: float
    num_layers: Positive | None
    note: str | None


class ModelsDocument(TypedDict):
    """`models --json`: the built-in model configs."""

    schema: str
    default: str  # the model check and explain use without --model
    models: list[ModelConfigDocument]
