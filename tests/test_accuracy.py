"""Numbers you can trust by default (issue 12): the default call on real State of the Union
paragraphs against references computed here (exact on paragraphs cut to 7 tokens; AIS with
200,000 temperatures on whole paragraphs), accuracy on request (`target_sd`), the built-in
cross-check (`check`) telling a biased estimator from an unbiased one, and Ratio-AIS's
per-document intervals covering the exact log ratio at its defaults."""

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets


@pytest.fixture(scope="module")
def sotu():
    model = datasets.sotu_model("sotu-20-asym")
    held = datasets.sotu().heldout
    pick = np.random.default_rng(11).choice(len(held), 24, replace=False)
    cut = tl.Corpus.from_word_ids([held[i][:7] for i in pick], vocab=model.vocab)
    exact = tl.heldout(model, cut, method="exact").doc_log_prob
    return model, held, cut, exact


def test_default_call_on_short_real_paragraphs(sotu):
    """docs/default_accuracy.md: the default is about 0.002 nats per token low on real text
    (Jensen's gap of an unbiased estimator); no paragraph off by more than about a nat."""
    model, _, cut, exact = sotu
    errors = np.array([tl.heldout(model, cut, seed=s).doc_log_prob - exact for s in range(6)])
    per_token = errors.sum(axis=1) / cut.num_tokens
    se = per_token.std(ddof=1) / np.sqrt(per_token.size)
    assert -0.005 - 4 * se <= per_token.mean() <= 4 * se, (per_token, se)
    assert np.abs(errors).max() < 1.0


def test_default_call_on_whole_real_paragraphs_against_long_ais(sotu):
    """Slow-ish: four whole paragraphs (28 to 88 tokens) against AIS with 200,000
    temperatures (2 runs), the reference of docs/default_accuracy.md."""
    model, held, _, _ = sotu
    docs = held.subset([i for i in range(len(held)) if 28 <= held.lengths[i] <= 88][:4])
    ref = tl.heldout(model, docs, method="ais", temperatures=200_000, runs=2, seed=1)
    res = tl.heldout(model, docs, runs=4, seed=2)
    err = res.run_log_prob - ref.doc_log_prob  # (runs, docs)
    per_token = err.sum(axis=1) / docs.num_tokens
    se = np.sqrt((res.doc_sd**2).sum() / res.runs) / docs.num_tokens
    assert -0.005 - 4 * se <= per_token.mean() <= 4 * se, (per_token, se)
    assert np.abs(err).max() < 1.5


def test_target_sd_reaches_its_target_and_reports_budgets(sotu):
    model, _, cut, exact = sotu
    res = tl.heldout(model, cut, particles=5, target_sd=0.01, seed=3)
    a = res.adaptive
    assert a["budget_parameter"] == "particles" and len(a["budgets"]) == len(cut)
    assert a["not_converged"] == 0 and min(a["budgets"]) >= 10  # at least one doubling
    assert res.runs >= 4
    # the runs that decided met the target (the result's runs are new ones: heldout.adaptive)
    assert np.all(np.array(a["decided_sd"]) / cut.lengths <= 0.01)
    assert max(a["budgets"]) > min(a["budgets"])  # documents get the budget they need
    assert abs(res.total - exact.sum()) < 4 * np.sqrt((res.doc_sd**2).sum() / res.runs) + 0.05
    with pytest.raises(tl.MethodError, match="does not apply to harmonic-mean"):
        tl.heldout(model, cut, method="harmonic-mean", target_sd=0.01)
    with pytest.raises(tl.MethodError, match="target_sd must be a positive number"):
        tl.heldout(model, cut, target_sd=-1)


def test_check_flags_algorithm3_and_not_an_unbiased_estimate(sotu):
    """Algorithm 3's errors on real paragraphs go either way (so its mean bias can be near 0)
    but are far larger than its run-to-run noise: the check's excess-error test must flag it at
    2,000 particles, against exact values, and must not flag the unbiased SMC there."""
    model, _, cut, _ = sotu
    bad = tl.heldout(model, cut, variant="algorithm-3", particles=2000, check=len(cut), seed=4)
    assert bad.check["reference"]["exact"] == len(cut)
    assert bad.check["flagged"] and "excess error" in bad.check["flags"], bad.check
    assert bad.check["excess_error"] > 3 * bad.check["excess_limit"]
    good = tl.heldout(model, cut, particles=2000, check=len(cut), seed=4)
    assert not good.check["flagged"], good.check
    assert good.to_dict()["check"]["flagged"] is False


def test_check_bias_test_flags_a_shifted_estimate(sotu):
    """A run-to-run-noisy estimate that is consistently low (simple importance sampling from the
    prior with few samples, whose log is far below the truth) fails the bias test."""
    model, _, cut, _ = sotu
    res = tl.heldout(model, cut, method="is-prior-theta", samples=3, check=len(cut), seed=5)
    assert "bias" in res.check["flags"] and res.check["ci95"][1] < 0, res.check


def test_ratio_ais_document_intervals_cover_the_exact_log_ratio(sotu):
    """docs/compare_coverage.md: at the defaults each document's interval covered the exact log
    ratio on 100% of 200 short paragraphs; here 10 cases of 5 must give at least 45 of 50."""
    model, held, _, _ = sotu
    other = datasets.sotu_model("sotu-20-sym")
    rng = np.random.default_rng(5)
    covered = 0
    for case in range(10):
        pick = rng.choice(len(held), 5, replace=False)
        docs = tl.Corpus.from_word_ids([held[i][:7] for i in pick], vocab=model.vocab)
        truth = (tl.heldout(model, docs, method="exact").doc_log_prob
                 - tl.heldout(other, docs, method="exact").doc_log_prob)
        lo, hi = tl.compare(model, other, docs, seed=case).document_intervals()
        covered += int(((lo <= truth) & (truth <= hi)).sum())
    assert covered >= 45, covered
