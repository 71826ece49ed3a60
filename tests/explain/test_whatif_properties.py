"""Any combination of what-if options gives a decision that matches the schema, or one clean usage error."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mhcdoctor.cli import main
from mhcdoctor.errors import InputError
from mhcdoctor.facts import Facts
from mhcdoctor.models import ModelConfig, ModelError, resolve
from mhcdoctor.rules import decide
from mhcdoctor.whatif import WhatIf, build_facts

VALIDATOR = jsonschema.Draft202012Validator(
    json.loads(resources.files("mhcdoctor").joinpath("schemas/explain.schema.json").read_text())
)

versions = st.sampled_from(["0.1.13", "0.1.14rc1.dev3", "0.1.15.post1", "0.1.16", "0.13.20191203", "none", "x.y"])
vllm = st.sampled_from(["0.19.1", "0.20.0", "0.21.0", "0.22.1", "0.24.0", "0.25.1", "0.27.0", "0.29.0", "0.33.0"])
whatifs = st.builds(
    WhatIf,
    platform=st.none() | st.sampled_from(["rocm", "cuda", "cpu", "tpu"]),
    arch=st.none() | st.sampled_from(["gfx942", "gfx950", "gfx90a", "gfx1250", "gfx1100", "sm_90", "sm_80", "zz"]),
    aiter=st.none() | versions,
    aiter_fix=st.none() | st.sampled_from(["present", "absent", "unknown", "yes"]),
    tilelang=st.none() | versions,
    vllm=st.none() | vllm | st.just("none") | st.just("0.40.0") | st.just("latest"),
    rocm=st.none() | st.sampled_from(["7.2.3", "6.4.1", "seven"]),
)


@pytest.mark.slow
@given(whatif=whatifs, hidden=st.integers(1, 20000), hc_mult=st.integers(1, 8))
@settings(max_examples=300, deadline=None)
def test_what_ifs_give_a_valid_decision_or_an_input_error(whatif, hidden, hc_mult):
    try:
        facts = build_facts(whatif, base=Facts)
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    document = decide(facts, ModelConfig(None, hidden, hc_mult)).to_explain_document()
    VALIDATOR.validate(document)
    assert set(document["ops"]) == {"mhc_pre", "mhc_post", "mhc_fused_post_pre", "hc_head"}


@given(hidden=st.integers(-5, 5) | st.none(), hc_mult=st.integers(-3, 3) | st.none())
def test_model_sizes_are_positive_or_a_model_error(hidden, hc_mult):
    try:
        config = resolve(hidden=hidden, hc_mult=hc_mult)
    except ModelError as exc:
        assert "positive" in str(exc)
        return
    assert config.hidden_size > 0 and config.hc_mult > 0


options = st.lists(
    st.sampled_from(
        [
            ["--platform", "rocm"],
            ["--platform", "cuda"],
            ["--platform", "qpu"],
            ["--arch", "gfx942"],
            ["--arch", "sm_90"],
            ["--arch", "86"],
            ["--aiter", "0.1.13"],
            ["--aiter", "none"],
            ["--aiter", "?"],
            ["--aiter-fix", "absent"],
            ["--tilelang", "none"],
            ["--vllm", "0.25.0"],
            ["--vllm", "0.1.0"],
            ["--vllm", "dev"],
            ["--rocm", "7.2.3"],
            ["--hidden", "0"],
            ["--hidden", "5120"],
            ["--hc-mult", "8"],
            ["--model", "deepseek-v4-flash"],
            ["--json"],
        ]
    ),
    max_size=6,
)


@pytest.mark.slow
@given(chosen=options)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_command_line_never_shows_a_traceback(chosen, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MHCDOCTOR_SYSROOT", str(tmp_path))  # an empty machine: quick fast probes
    argv = ["explain", *[part for option in chosen for part in option]]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_info.value.code in (0, 1, 2, 3), err
    assert "Traceback" not in out + err
    if exit_info.value.code == 2:
        assert err.strip().splitlines()[-1].startswith("mhcdoctor: error: ")
    elif "--json" in argv:
        VALIDATOR.validate(json.loads(out))
