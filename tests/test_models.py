"""Model configs: the built-ins, Hugging Face config.json files, and the overrides users pass."""

import json
from pathlib import Path

import pytest

from mhcdoctor.models import BUILTIN_MODELS, ModelError, load_config, resolve

PUBLISHED = json.loads((Path(__file__).parent / "data" / "published_model_configs.json").read_text())


@pytest.mark.parametrize("name", ["deepseek-v4-pro", "deepseek-v4-flash"])
def test_builtin_config_matches_the_fields_of_its_published_config_json(name, tmp_path):
    """tests/data/published_model_configs.json: the published values, each with the URL it was read from."""
    published = PUBLISHED[name]
    assert published["published"].startswith("https://huggingface.co/deepseek-ai/") and published["read_from"]
    (tmp_path / "config.json").write_text(json.dumps(published["fields"]))
    from_published = load_config(tmp_path)
    built_in = BUILTIN_MODELS[name]
    fields = ("hidden_size", "num_layers", "hc_mult", "hc_sinkhorn_iters", "hc_eps", "rms_norm_eps")
    assert [getattr(built_in, f) for f in fields] == [getattr(from_published, f) for f in fields]


def test_v41_flash_has_no_published_config_here_and_its_note_says_so():
    assert "less certain" in (BUILTIN_MODELS["deepseek-v4.1-flash"].note or "")
    assert "deepseek-v4.1-flash" not in PUBLISHED


def test_model_names_are_case_insensitive():
    assert resolve(model="DeepSeek-V4-Flash").hidden_size == 4096


def test_unknown_model_names_the_built_ins():
    with pytest.raises(ModelError, match="unknown model 'deepseek-v5'.*deepseek-v4-pro"):
        resolve(model="deepseek-v5")


def test_config_json_file_or_folder(tmp_path):
    cfg = {
        "hidden_size": 4096,
        "hc_mult": 4,
        "hc_sinkhorn_iters": 20,
        "hc_eps": 1e-6,
        "rms_norm_eps": 1e-6,
        "num_hidden_layers": 43,
        "model_type": "deepseek_v4",
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    from_folder = load_config(tmp_path)
    from_file = load_config(tmp_path / "config.json")
    assert from_folder == from_file
    assert (from_file.hidden_size, from_file.num_layers, from_file.name) == (4096, 43, "deepseek_v4")


def test_hidden_and_hc_mult_override_the_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 4096, "hc_sinkhorn_iters": 10}))
    cfg = resolve(config=str(tmp_path), hidden=7168, hc_mult=2)
    assert (cfg.hidden_size, cfg.hc_mult, cfg.hc_sinkhorn_iters) == (7168, 2, 10)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"hc_mult": 4}', "has no hidden_size"),
        ('{"hidden_size": 0}', "hidden_size .* must be a positive integer"),
        ('{"hidden_size": "7168"}', "hidden_size .* must be a positive integer"),
        ('{"hidden_size": 7168, "hc_eps": -1}', "hc_eps .* must be a positive number"),
        ('{"hidden_size": 7168, "hc_mult": true}', "hc_mult .* must be a positive integer"),
        ('{"model_type": "llama", "hidden_size": 4096}', "describes a llama model without mHC"),
        ('{"hidden_size": 4096, "hc_sinkhorn_iters": 1000000000}', "hc_sinkhorn_iters .* is 1000000000; .* at most"),
    ],
)
def test_malformed_configs_are_one_clear_line(tmp_path, content, message):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ModelError, match=message) as info:
        load_config(path)
    assert "\n" not in str(info.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(ModelError, match="config not found"):
        load_config(tmp_path / "nope.json")


def test_hidden_must_be_positive():
    with pytest.raises(ModelError, match="--hidden must be a positive integer, not 0"):
        resolve(hidden=0)


def test_model_and_config_together_is_an_error(tmp_path):
    with pytest.raises(ModelError, match="not both"):
        resolve(model="deepseek-v4-pro", config=str(tmp_path))


def test_a_config_that_never_ends_or_nests_too_deep_is_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelError, match="nested too deeply"):
        load_config(deep)
    with pytest.raises(ModelError, match="larger than"):
        load_config("/dev/zero")


def test_a_config_that_nests_the_language_model_under_text_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"hidden_size": 4096, "hc_mult": 4}}))
    assert load_config(tmp_path).hidden_size == 4096
