"""DeepSeek-V4 model configs: the built-ins, and reading a Hugging Face config.json.

Built-in numbers: DeepSeek-V4-Pro and -Flash from their config.json files (hidden_size, hc_mult,
hc_sinkhorn_iters, hc_eps, rms_norm_eps); V4.1-Flash's hidden size 5120 is from vLLM PR #56503 and less certain.
vLLM passes rms_eps = rms_norm_eps, hc_pre_eps = hc_sinkhorn_eps = hc_eps, hc_post_mult_value = 2.0 and
sinkhorn_repeat = hc_sinkhorn_iters (vLLM model_executor/models/deepseek_v4.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mhcdoctor.documents.dataclass_json import as_document
from mhcdoctor.documents.models import BUILTIN_NAMES, ModelConfigDocument
from mhcdoctor.errors import InputError
from mhcdoctor.text import cut, visible
from mhcdoctor.userfiles import parse_json, read_user_text


class ModelError(InputError):
    """Bad model input: unknown name, unreadable or malformed config, a non-positive size."""


@dataclass(frozen=True)
class ModelConfig:
    name: str | None
    hidden_size: int
    hc_mult: int = 4
    hc_sinkhorn_iters: int = 20
    hc_eps: float = 1e-6
    rms_norm_eps: float = 1e-6
    num_layers: int | None = None
    note: str | None = None  # e.g. why a built-in is less certain

    def to_dict(self) -> ModelConfigDocument:
        return as_document(self, ModelConfigDocument)


_PRO, _FLASH, _V41_FLASH = BUILTIN_NAMES
BUILTIN_MODELS: dict[str, ModelConfig] = {
    _PRO: ModelConfig(_PRO, 7168, num_layers=61),
    _FLASH: ModelConfig(_FLASH, 4096, num_layers=43),
    _V41_FLASH: ModelConfig(
        _V41_FLASH,
        5120,
        note="hidden size 5120 from vLLM PR #56503; less certain than the V4 configs",
    ),
}

DEFAULT_MODEL = _PRO


def builtin(name: str) -> ModelConfig:
    key = name.strip().lower()
    if key not in BUILTIN_MODELS:
        known = ", ".join(BUILTIN_MODELS)
        raise ModelError(f"unknown model {name!r}; built-in models: {known}")
    return BUILTIN_MODELS[key]


# The Sinkhorn repeats a config may ask for: DeepSeek-V4 uses 20, and every repeat is a pass over each token's
# hc_mult x hc_mult matrix in verify's kernels and oracle, so a config's 10**9 would run until verify's timeout.
SINKHORN_ITERS_MAX = 10_000

# Keys only a model with manifold-constrained hyper-connections has (DeepSeek-V4's config.json has all three).
MHC_KEYS = frozenset({"hc_mult", "hc_sinkhorn_iters", "hc_eps"})


def load_config(path: str | Path) -> ModelConfig:
    """A Hugging Face config.json (or a folder holding one) → ModelConfig. One-line ModelError on any problem."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    text = read_user_text(p, "config", ModelError)
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise ModelError(f"config {p} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ModelError(f"config {p} must hold a JSON object")
    if "hidden_size" not in data and isinstance(data.get("text_config"), dict):
        data = {**data["text_config"], **{k: v for k, v in data.items() if k.startswith("_")}}  # nested LM config
    if "hidden_size" not in data:
        raise ModelError(f"config {p} has no hidden_size")
    hidden = _positive_int(data["hidden_size"], "hidden_size", p)
    model_type = data.get("model_type")
    if not MHC_KEYS & data.keys() and not (isinstance(model_type, str) and "deepseek_v4" in model_type.lower()):
        kind = f"a {model_type} model" if isinstance(model_type, str) and model_type else "a model"
        raise ModelError(f"config {p} describes {kind} without mHC (no {', '.join(sorted(MHC_KEYS))})")
    name = data.get("_name_or_path") or model_type
    shown = cut(visible(name, one_line=True), 200) if isinstance(name, str) and name else None  # the config's words
    fields: dict[str, Any] = {"name": shown, "hidden_size": hidden}
    for key in ("hc_mult", "hc_sinkhorn_iters"):
        if key in data:
            fields[key] = _positive_int(data[key], key, p)
    if fields.get("hc_sinkhorn_iters", 0) > SINKHORN_ITERS_MAX:
        raise ModelError(
            f"hc_sinkhorn_iters in {p} is {fields['hc_sinkhorn_iters']}; mhcdoctor runs at most {SINKHORN_ITERS_MAX} "
            "Sinkhorn repeats (DeepSeek-V4 uses 20)"
        )
    for key in ("hc_eps", "rms_norm_eps"):
        if key in data:
            fields[key] = _positive_float(data[key], key, p)
    if "num_hidden_layers" in data:
        fields["num_layers"] = _positive_int(data["num_hidden_layers"], "num_hidden_layers", p)
    return ModelConfig(**fields)


def resolve(
    model: str | None = None, config: str | None = None, hidden: int | None = None, hc_mult: int | None = None
) -> ModelConfig:
    """The model config the options describe: a built-in or a config file, then --hidden / --hc-mult on top."""
    if model and config:
        raise ModelError("give --model or --config, not both")
    if config:
        cfg = load_config(config)
    elif model:
        cfg = builtin(model)
    elif hidden is not None:  # `--hidden 7168` alone is DeepSeek-V4-Pro's shape: named so when all else agrees
        cfg = ModelConfig(None, hidden, hc_mult=4 if hc_mult is None else hc_mult)
        same = [b for b in BUILTIN_MODELS.values() if replace(b, name=None, num_layers=None, note=None) == cfg]
        cfg = same[0] if same else cfg
    else:
        cfg = builtin(DEFAULT_MODEL)
    if hidden is not None:  # every view shows the hidden size next to the name, so the name stays as given
        cfg = replace(cfg, hidden_size=_positive_int(hidden, "--hidden", None))
    if hc_mult is not None:
        cfg = replace(cfg, hc_mult=_positive_int(hc_mult, "--hc-mult", None))
    return cfg


def _positive_int(value: Any, key: str, where: Path | None) -> int:
    origin = f" in {where}" if where else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelError(f"{key}{origin} must be a positive integer, not {value!r}")
    if value <= 0:
        raise ModelError(f"{key}{origin} must be a positive integer, not {value}")
    return value


def _positive_float(value: Any, key: str, where: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ModelError(f"{key} in {where} must be a positive number, not {value!r}")
    return float(value)
