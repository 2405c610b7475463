"""Red team 6 (z): the findings left open by the previous session (F2, F13, F14, F15, F17, F18). Each
test failed before its fix; expected values come from formulas or the exact estimator, not from
the code under test."""

from __future__ import annotations

import numpy as np
import pytest
from clirun import run_cli

import tealeaves as tl


def _model(alpha) -> tl.TopicModel:
    return tl.TopicModel(np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]]), alpha, vocab=["a", "b", "c"])


DOCS = [[0, 1, 2, 0], [2, 2, 1], [1, 0]]


# -- F14: an alpha_t near the largest float ----------------------------------------------------------

@pytest.mark.parametrize("variant", ["smc", "algorithm-3", "extend-only"])
def test_alpha_near_float_max_is_finite_and_right(variant):
    """alpha = [1e308, 1e-300]: theta is topic 0 with probability 1 - 1e-608, so log P(w) =
    sum_i log phi[0, w_i] (a formula). Before: NaN with exit 0 (R (n + A) overflowed)."""
    model = _model([1e308, 1e-300])
    docs = tl.Corpus.from_word_ids(DOCS, vocab=model.vocab)
    want = np.array([np.log(model.phi[0, d]).sum() for d in DOCS])
    res = tl.heldout(model, docs, method="left-to-right", variant=variant, particles=8, seed=1)
    assert np.allclose(res.doc_log_prob, want, rtol=0, atol=1e-9), res.doc_log_prob
    comp = tl.completion(model, docs, method="left-to-right", variant=variant, particles=8, seed=1)
    assert np.isfinite(comp.doc_log_prob).all(), comp.doc_log_prob


# -- F13: a --max-hours refusal names the stage that costs ---------------------------------------

def test_max_hours_refusal_names_the_cross_checks_share():
    model = _model([0.5, 1.5])
    docs = tl.Corpus.from_word_ids(DOCS * 20, vocab=model.vocab)
    with pytest.raises(tl.TealeavesError) as e:
        tl.heldout(model, docs, check=3, check_temperatures=10**9, max_hours=0.01)
    msg = str(e.value)
    assert "cross-check's reference (AIS, 2 runs of 1,000,000,000 temperatures" in msg, msg
    assert "(100%)" in msg and "left-to-right" in msg, msg


def test_max_hours_refusal_in_the_cli(model_path, tmp_path):
    docs = tmp_path / "d.txt"
    docs.write_text("a b c a\nb b c\n" * 20)
    code, _, err = run_cli(["heldout", model_path, str(docs), "--check", "2", "--check-temperatures",
                            "1000000000", "--max-hours", "0.01"])
    assert code == 2 and "the cross-check's reference" in err, err


# -- F15: completion with nothing observed is an estimate of P(w) -----------------------------------

def test_completion_observing_nothing_is_labelled_as_heldout():
    model = _model([0.5, 1.5])
    docs = tl.Corpus.from_word_ids(DOCS, vocab=model.vocab)
    comp = tl.completion(model, docs, observed=0.0, runs=3, seed=4)
    held = tl.heldout(model, docs, runs=3, seed=4)
    assert np.allclose(comp.doc_log_prob, held.doc_log_prob)
    assert comp.unbiased and held.unbiased
    assert comp.note.startswith("unbiased for P(w)"), comp.note
    assert not tl.completion(model, docs, observed=0.5, runs=3, seed=4).unbiased


# -- F18: a bool or text where a number (or a flag) is expected --------------------------------------

@pytest.mark.parametrize("fn, kwargs, message", [
    ("heldout", {"particles": True}, "parameter particles must be an integer"),
    ("heldout", {"particles": "5"}, "parameter particles must be an integer"),
    ("heldout", {"ess": False}, "parameter ess must be a finite number"),
    ("heldout", {"method": "chib", "chain_length": True}, "parameter chain_length must be an integer"),
    ("heldout", {"method": "ais", "temperatures": "100"}, "parameter temperatures must be an integer"),
    ("heldout", {"seed": True}, "seed must be an integer >= 0"),
    ("heldout", {"progress": "yes"}, "progress must be true or false or None"),
    ("completion", {"particles": True}, "parameter particles must be an integer"),
    ("compare", {"align_topics": "no"}, "align_topics must be true or false"),
    ("compare", {"method": "difference", "particles": True}, "parameter particles must be an integer"),
    ("compare", {"progress": 1}, "progress must be true or false or None"),
    ("training_curve", {"align_topics": "no"}, "align_topics must be true or false"),
])
def test_bool_or_text_for_a_number_or_flag_is_refused(fn, kwargs, message):
    model = _model([0.5, 1.5])
    docs = tl.Corpus.from_word_ids(DOCS, vocab=model.vocab)
    with pytest.raises(tl.TealeavesError, match=message):
        if fn == "compare":
            tl.compare(model, model, docs, **kwargs)
        elif fn == "training_curve":
            tl.training_curve([model, model], docs, **kwargs)
        else:
            getattr(tl, fn)(model, docs, **kwargs)


# -- F17: the compare API checks its options as the CLI does -----------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"method": "difference", "path": "geometric"}, "path applies only to method ratio-ais"),
    ({"method": "difference", "burn_in": 7}, "burn_in applies only to method ratio-ais"),
    ({"method": "difference", "align_topics": False}, "align_topics applies only to method ratio-ais"),
    ({"method": "difference", "temperatures": 50}, "temperatures applies only to method ratio-ais"),
    ({"method": "ratio-ais", "estimator": "exact"}, "estimator applies only to method difference"),
])
def test_compare_api_refuses_options_of_the_other_method(kwargs, message):
    model = _model([0.5, 1.5])
    docs = tl.Corpus.from_word_ids(DOCS, vocab=model.vocab)
    with pytest.raises(tl.MethodError, match=message):
        tl.compare(model, model, docs, **kwargs)


def test_compare_difference_gives_ais_its_temperatures():
    """temperatures and schedule are parameters of the ais estimator: passed to it, as the CLI does."""
    a, b = _model([0.5, 1.5]), _model([1.0, 1.0])
    docs = tl.Corpus.from_word_ids(DOCS, vocab=a.vocab)
    res = tl.compare(a, b, docs, method="difference", estimator="ais", temperatures=30, schedule="linear",
                     chains=2, bootstrap=0)
    assert res.params["temperatures"] == 30 and res.params["schedule"] == "linear"
    want = tl.heldout(a, docs, method="ais", temperatures=30, schedule="linear", runs=2, seed=0)
    assert np.array_equal(res.run_log_prob_a, want.run_log_prob)


# -- F2: Chib-style at small alpha -------------------------------------------------------------------

def test_chib_warns_below_the_alpha_where_its_mean_was_measured():
    """At mean alpha_t 1e-6 every run of chib returns P(w, z*) (the chain never leaves z*'s mode;
    docs/chib_small_alpha.md): low, with no spread to show it. The result carries the warning."""
    low = _model([1e-6, 2e-6])
    docs = tl.Corpus.from_word_ids(DOCS, vocab=low.vocab)
    res = tl.heldout(low, docs, method="chib", chain_length=20, runs=2, seed=0)
    assert res.caution is not None and "chib_small_alpha" in res.caution
    assert "warning:" in res.note
    ok = tl.heldout(_model([0.5, 1.5]), docs, method="chib", chain_length=20, runs=2, seed=0)
    assert ok.caution is None and "warning" not in ok.note
    assert tl.heldout(low, docs, method="left-to-right").caution is None


def test_chib_warning_in_the_cli(tmp_path):
    path = tmp_path / "m.npz"
    low = _model([1e-6, 2e-6])
    np.savez(path, phi=low.phi, alpha=low.alpha, vocab=np.array(low.vocab))
    docs = tmp_path / "d.txt"
    docs.write_text("a b c a\nb b c\n")
    code, out, err = run_cli(["heldout", str(path), str(docs), "--method", "chib", "--chain-length", "20"])
    assert code == 0, err
    assert "warning: at this model's mean alpha_t" in out + err
