"""The paper's negative findings, reproduced on synthetic data against the exact value:
the harmonic mean overestimates, importance sampling from the prior over theta
underestimates on long documents."""

import numpy as np

import tealeaves as tl


def _errors(model, docs, method, **params):
    """Mean over documents of (mean over runs of the log estimate - exact), and its SE."""
    exact = tl.heldout(model, docs, method="exact").doc_log_prob
    res = tl.heldout(model, docs, method=method, seed=11, **params)
    err = (res.run_log_prob - exact).mean(axis=0)
    return err.mean(), err.std(ddof=1) / np.sqrt(err.size)


def test_harmonic_mean_overestimates():
    model = tl.synthetic.random_model(4, 200, beta=0.05, alpha_sum=2.0, seed=21)
    docs = tl.synthetic.generate(model, 12, 50, seed=22)
    mean, se = _errors(model, docs, "harmonic-mean", burn_in=200, samples=2000)
    assert mean - 4 * se > 0, (mean, se)


def test_prior_theta_underestimates_long_documents():
    model = tl.synthetic.random_model(3, 500, beta=0.02, alpha_sum=1.0, seed=41)
    docs = tl.synthetic.generate(model, 30, 200, seed=42)
    mean, se = _errors(model, docs, "is-prior-theta", samples=100, runs=8)
    assert mean + 4 * se < 0, (mean, se)
