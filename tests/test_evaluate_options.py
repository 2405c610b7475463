"""`EvaluateOptions`: the settings of `tl.evaluate` in one object, checked once; keyword arguments are
shorthand for its fields (and estimator parameters), giving the same numbers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import EvaluateOptions
from tealeaves.errors import MethodError


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(30)]
    models = [tl.TopicModel(rng.dirichlet(np.full(30, 0.2), size=4), np.full(4, 0.5), vocab=vocab, name=n)
              for n in ("a", "b")]
    docs = [list(rng.choice(vocab, size=12)) for _ in range(8)]
    return models, docs


def test_keywords_and_options_give_the_same_numbers(pair):
    models, docs = pair
    by_keywords = tl.evaluate(models, heldout=docs, runs=3, particles=7, seed=4, coherence=())
    options = EvaluateOptions(runs=3, heldout_params={"particles": 7}, seed=4, coherence=())
    by_options = tl.evaluate(models, heldout=docs, options=options)
    for a, b in zip(by_keywords.rows, by_options.rows, strict=True):
        assert a["per_token"] == b["per_token"] and a["per_token_sd"] == b["per_token_sd"]
    assert by_options.params["runs"] == 3 and by_options.params["heldout_params"]["particles"] == 7
    # a keyword overrides the options object's field; the object itself is unchanged
    other = tl.evaluate(models, heldout=docs, options=options, seed=5)
    assert other.params["seed"] == 5 and options.seed == 4
    assert other.rows[0]["per_token"] != by_options.rows[0]["per_token"]


def test_shorthand_sorts_fields_from_estimator_parameters():
    o = EvaluateOptions.of(EvaluateOptions(heldout_params={"particles": 5}), runs=4, order="given")
    assert o.runs == 4 and dict(o.heldout_params) == {"particles": 5, "order": "given"}
    assert EvaluateOptions.of(coherence="npmi").coherence == ("npmi",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.runs = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        o.heldout_params["particles"] = 9  # type: ignore[index]


@pytest.mark.parametrize(("settings", "message"), [
    ({"runs": 0}, "runs must be an integer >= 1"),
    ({"runs": True}, "runs must be an integer"),
    ({"topn": 0}, "topn must be an integer >= 1"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"workers": 1.5}, "workers must be an integer"),
    ({"compare_models": "best"}, "compare_models must be one of"),
    ({"coherence": ("npmi", "cosine")}, "unknown coherence measure 'cosine'"),
    ({"absent": "drop"}, "absent must be one of"),
    ({"diagnostics": "yes"}, "diagnostics must be True or False"),
    ({"max_hours": 0}, "max_hours must be"),
    ({"heldout_params": [("particles", 5)]}, "heldout_params must be a mapping"),
])
def test_bad_settings_are_one_line_errors_before_any_work(pair, settings, message):
    models, docs = pair
    with pytest.raises(MethodError, match=message) as info:
        EvaluateOptions(**settings)
    assert "\n" not in str(info.value)
    with pytest.raises(MethodError, match=message):
        tl.evaluate(models, heldout=docs, **settings)


def test_options_must_be_an_options_object(pair):
    models, docs = pair
    with pytest.raises(MethodError, match="options must be an EvaluateOptions, got dict"):
        tl.evaluate(models, heldout=docs, options={"runs": 2})
