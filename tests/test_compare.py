"""Ratio-AIS and Iteration-AIS (Foulds & Smyth 2014) against exact answers and against
separate held-out estimates."""

import numpy as np
import pytest
from conftest import random_tiny

import tealeaves as tl

PATHS = ("convex", "geometric")


def _pair(seed):
    """A tiny model, a perturbed model with a very different alpha, and one document."""
    A, docs = random_tiny(seed, T_range=(3, 3), N_range=(8, 12))
    rng = np.random.default_rng(seed)
    B = tl.synthetic.perturb_phi(A, 0.5, seed=rng).with_params(alpha=rng.gamma(1.0, 1.0, 3) + 0.05)
    assert np.abs(A.alpha - B.alpha).max() > 0.3
    return A, B, docs[0]


def _exact(model, doc):
    return tl.heldout(model, [doc], method="exact").total


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("seed", range(4))
def test_chained_weights_are_unbiased(seed, path):
    """prior -> B -> A is one valid AIS chain, so E[w_start w_path] = P(w | A) for any number
    of temperatures (and prior -> A -> B gives P(w | B)). A Gibbs step that used alpha_B
    instead of alpha_tau on the convex path, or a weight taken before the sweep, breaks this."""
    A, B, w = _pair(seed)
    M = 4000
    res = tl.compare(A, B, [w], path=path, temperatures=20, start_temperatures=50, chains=M,
                     seed=seed, align_topics=False, bootstrap=0)
    for est, exact in ((res.forward, _exact(A, w)), (res.reverse, _exact(B, w))):
        q = np.exp(est.start_log_weight[:, 0] + est.path_log_weight[:, 0] + est.log_scale[0] - exact)
        assert abs(q.mean() - 1) <= 4 * q.std(ddof=1) / np.sqrt(M), (est.direction, q.mean())


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("seed", (0, 5))
def test_forward_and_reverse_bracket_the_exact_ratio_and_converge(seed, path):
    """Over 300 independent replicates of one document: the forward estimate of the log ratio
    is low and the reverse high on average, and both close in on the exact value."""
    A, B, w = _pair(seed)
    exact = _exact(A, w) - _exact(B, w)
    reps = 300
    means = []
    for S in (2, 10, 100):
        res = tl.compare(A, B, [w] * reps, path=path, temperatures=S, start_temperatures=500,
                         chains=1, seed=S, align_topics=False, bootstrap=0)
        f = res.forward.doc_log_ratio - exact
        r = res.reverse.doc_log_ratio - exact
        se_f, se_r = f.std(ddof=1) / np.sqrt(reps), r.std(ddof=1) / np.sqrt(reps)
        assert f.mean() <= 4 * se_f and r.mean() >= -4 * se_r, (S, f.mean(), r.mean())
        means.append((f.mean(), r.mean(), se_f, se_r))
    (f0, r0, _, _), (f2, r2, sf, sr) = means[0], means[-1]
    assert abs(f2) < abs(f0) and abs(r2) < abs(r0)
    assert abs(f2) <= 4 * sf + 0.005 and abs(r2) <= 4 * sr + 0.005


@pytest.fixture(scope="module")
def longer():
    A = tl.synthetic.random_model(8, 200, beta=0.05, alpha_sum=2.0, seed=11)
    B = tl.synthetic.perturb_phi(A, 0.3, seed=12).with_params(alpha=np.linspace(0.1, 0.5, 8))
    docs = tl.synthetic.generate(A, 10, 80, seed=13)
    return A, B, docs


def test_ratio_ais_agrees_with_difference_of_long_left_to_right_runs(longer):
    A, B, docs = longer
    ratio = tl.compare(A, B, docs, path="convex", temperatures=1000, chains=4, seed=1, bootstrap=2000)
    diff = tl.compare(A, B, docs, method="difference", estimator="left-to-right", particles=200,
                      chains=3, seed=2, bootstrap=2000)
    combined = np.hypot(ratio.sd_chains, diff.sd_chains)
    assert abs(ratio.total - diff.total) <= 4 * combined, (ratio.total, diff.total, combined)
    assert ratio.gap >= -4 * ratio.sd_chains  # reverse above forward, up to noise


def test_difference_is_the_difference_of_heldout_runs(longer):
    A, B, docs = longer
    diff = tl.compare(A, B, docs, method="difference", estimator="chib", chain_length=50, chains=2,
                      seed=3)
    a = tl.heldout(A, docs, method="chib", chain_length=50, runs=2, seed=3)
    b = tl.heldout(B, docs, method="chib", chain_length=50, runs=2, seed=3 + 1_000_003)
    np.testing.assert_allclose(diff.doc_log_ratio, a.doc_log_prob - b.doc_log_prob)


def _snapshots(seed):
    """Three 'training snapshots' of a tiny model with different alphas."""
    final, docs = random_tiny(seed, T_range=(3, 3), N_range=(8, 12))
    rng = np.random.default_rng(seed)
    models = [tl.synthetic.perturb_phi(final, lam, seed=7).with_params(alpha=rng.gamma(1.0, 1.0, 3) + 0.1)
              for lam in (0.6, 0.3)] + [final]
    return models, docs[0]


@pytest.mark.parametrize("seed", range(3))
def test_iteration_ais_is_unbiased_for_every_snapshot(seed):
    models, w = _snapshots(seed)
    M = 4000
    res = tl.training_curve(models, [w], temperatures=20, first_temperatures=50, chains=M, seed=seed,
                            bootstrap=0)
    for k, m in enumerate(models):
        q = np.exp(res.cumulative_log_weight[:, k, 0] - _exact(m, w))
        assert abs(q.mean() - 1) <= 4 * q.std(ddof=1) / np.sqrt(M), (k, q.mean())


def test_iteration_ais_matches_separate_estimates(longer):
    A, _, docs = longer
    models = [tl.synthetic.perturb_phi(A, lam, seed=5) for lam in (0.5, 0.2, 0.0)]
    curve = tl.training_curve(models, docs, temperatures=500, first_temperatures=3000, chains=4,
                              seed=4, bootstrap=2000)
    for k, m in enumerate(models):
        sep = tl.heldout(m, docs, method="chib", chain_length=1000, runs=3, seed=k, bootstrap=2000)
        assert abs(curve.totals[k] - sep.total) <= 4 * np.hypot(curve.sd[k], sep.sd) + 0.05, k


def test_same_numbers_for_any_number_of_workers(longer):
    A, B, docs = longer
    kw = dict(temperatures=30, start_temperatures=30, chains=2, seed=9, bootstrap=0)
    one = tl.compare(A, B, docs, workers=1, **kw)
    two = tl.compare(A, B, docs, workers=2, **kw)
    np.testing.assert_array_equal(one.forward.path_log_weight, two.forward.path_log_weight)
    np.testing.assert_array_equal(one.reverse.start_log_weight, two.reverse.start_log_weight)
    c1 = tl.training_curve([B, A], docs, temperatures=20, first_temperatures=20, chains=2, seed=3,
                           workers=1, bootstrap=0)
    c2 = tl.training_curve([B, A], docs, temperatures=20, first_temperatures=20, chains=2, seed=3,
                           workers=2, bootstrap=0)
    np.testing.assert_array_equal(c1.cumulative_log_weight, c2.cumulative_log_weight)


def test_alignment_by_words_and_topics_changes_nothing(longer):
    A, B, docs = longer
    rng = np.random.default_rng(0)
    wperm = rng.permutation(A.num_words)
    tperm = rng.permutation(A.num_topics)
    shuffled = tl.TopicModel(B.phi[tperm][:, wperm], B.alpha[tperm],
                             vocab=[B.vocab[i] for i in wperm], name="shuffled")
    kw = dict(temperatures=20, start_temperatures=20, chains=1, seed=2, bootstrap=0)
    a = tl.compare(A, B, docs, **kw)
    b = tl.compare(A, shuffled, docs, **kw)
    np.testing.assert_allclose(a.doc_log_ratio, b.doc_log_ratio, rtol=1e-12)


def test_models_that_cannot_be_aligned(longer):
    A, B, docs = longer
    other = tl.TopicModel(B.phi, B.alpha, vocab=[f"x{i}" for i in range(B.num_words)], name="other")
    with pytest.raises(tl.InvalidModelError, match=r"do not share a vocabulary: 200 words only in the first"):
        tl.compare(A, other, docs)
    small = tl.synthetic.random_model(4, 200, seed=1)
    with pytest.raises(tl.InvalidModelError, match="needs the same number of topics.*method='difference'"):
        tl.compare(A, small, docs)
    res = tl.compare(A, small, docs, method="difference", particles=2, chains=1)
    assert res.doc_log_ratio.shape == (len(docs),)
    with pytest.raises(tl.MethodError, match="path must be one of convex, geometric"):
        tl.compare(A, B, docs, path="straight")
    with pytest.raises(tl.MethodError, match="chains must be an integer >= 1"):
        tl.compare(A, B, docs, chains=0)


def test_result_reports_winner_interval_and_document_counts(longer):
    A, B, docs = longer
    res = tl.compare(A, B, docs, temperatures=200, chains=2, seed=0)
    d = res.to_dict()
    assert res.perplexity_ratio == pytest.approx(np.exp(-res.total / res.tokens))
    assert d["verdict"].startswith("A (") and res.total > 0  # A generated the documents
    lo, hi = d["per_token_interval"]
    assert lo < res.per_token < hi
    assert sum(d["documents_favouring"].values()) == len(docs)
    assert d["forward"]["total"] <= d["reverse"]["total"] + 4 * res.sd_chains
