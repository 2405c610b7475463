"""Document completion log P(w2 | w1) against the exact log P(w) - log P(w1)."""

import numpy as np
import pytest
from conftest import brute_log_prob, random_tiny

import tealeaves as tl


@pytest.mark.parametrize("seed", range(8))
def test_exact_completion_matches_enumeration(seed):
    model, docs = random_tiny(50 + seed, T_range=(2, 3), N_range=(2, 7))
    w = docs[0]
    n1 = w.size // 2
    want = brute_log_prob(model.phi, model.alpha, w) - brute_log_prob(model.phi, model.alpha, w[:n1])
    got = tl.completion(model, docs, method="exact", observed=0.5).total
    assert got == pytest.approx(want, abs=1e-9)


@pytest.fixture(scope="module")
def case():
    model = tl.synthetic.random_model(3, 40, beta=0.1, alpha_sum=1.5, alpha_shape="dirichlet", seed=17)
    docs = tl.synthetic.generate(model, 6, 24, seed=18)
    exact = tl.completion(model, docs, method="exact", observed=0.5).doc_log_prob
    return model, docs, exact


@pytest.mark.parametrize("method,params,runs", [
    ("left-to-right", {"particles": 1000}, 1),
    ("ais", {"temperatures": 5000, "burn_in": 50}, 4),
])
def test_completion_estimates_agree_with_exact(case, method, params, runs):
    model, docs, exact = case
    res = tl.completion(model, docs, method=method, observed=0.5, runs=runs, seed=5, **params)
    assert res.tokens == sum(d.size - d.size // 2 for d in docs)
    err = np.abs(res.doc_log_prob - exact)
    assert err.mean() < 0.1, err


def test_estimated_theta_is_exact_for_one_held_out_token():
    """With one held-out token, P(w_N | w_<N) = sum_t phi[t, w_N] E[(N_t + alpha_t) / (N1 + alpha)],
    exactly the average that the estimated-theta method forms; it must converge there."""
    model = tl.synthetic.random_model(3, 30, beta=0.2, alpha_sum=1.0, alpha_shape="dirichlet", seed=3)
    docs = tl.synthetic.generate(model, 5, 10, seed=4)
    exact = tl.completion(model, docs, method="exact", observed=0.9).doc_log_prob
    res = tl.completion(model, docs, method="estimated-theta", observed=0.9, runs=6, seed=1,
                        burn_in=20, samples=4000)
    assert res.tokens == 5
    se = res.run_log_prob.std(axis=0, ddof=1) / np.sqrt(res.runs)
    assert np.all(np.abs(res.run_log_prob.mean(axis=0) - exact) < 4 * se + 1e-3)


def test_estimated_theta_without_observed_part_uses_prior_mean():
    model = tl.synthetic.random_model(4, 30, seed=5)
    docs = tl.synthetic.generate(model, 3, 6, seed=6)
    res = tl.completion(model, docs, method="estimated-theta", observed=0.0, samples=3, burn_in=0)
    theta = model.alpha / model.alpha.sum()
    want = [np.log(theta @ model.phi[:, d]).sum() for d in docs]
    np.testing.assert_allclose(res.doc_log_prob, want, rtol=1e-12)


def test_random_split_scores_the_right_number_of_tokens_and_is_reproducible(case):
    model, docs, _ = case
    a = tl.completion(model, docs, method="exact", observed=0.25, split="random", seed=9)
    b = tl.completion(model, docs, method="exact", observed=0.25, split="random", seed=9)
    c = tl.completion(model, docs, method="exact", observed=0.25, split="first", seed=9)
    assert a.tokens == c.tokens == sum(d.size - d.size // 4 for d in docs)
    np.testing.assert_array_equal(a.doc_log_prob, b.doc_log_prob)
    assert not np.allclose(a.doc_log_prob, c.doc_log_prob)
