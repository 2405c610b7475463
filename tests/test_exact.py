"""The exact oracle (dynamic programming over topic-count vectors) against brute-force
enumeration and closed forms."""

import math

import numpy as np
import pytest
from conftest import brute_log_prob, random_tiny

import tealeaves as tl


@pytest.mark.parametrize("seed", range(24))
def test_exact_matches_enumeration(seed):
    model, docs = random_tiny(seed, T_range=(1, 4), N_range=(0, 7))
    got = tl.heldout(model, docs, method="exact").doc_log_prob[0]
    want = brute_log_prob(model.phi, model.alpha, docs[0])
    assert got == pytest.approx(want, abs=1e-9, rel=1e-11)


def test_single_token_closed_form():
    rng = np.random.default_rng(3)
    phi = rng.dirichlet(np.ones(30), size=6)
    alpha = rng.gamma(2.0, 0.3, size=6)
    model = tl.TopicModel(phi, alpha)
    docs = [[w] for w in range(30)]
    got = tl.heldout(model, docs, method="exact").doc_log_prob
    want = np.log((alpha / alpha.sum()) @ phi)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_one_topic_is_a_product():
    phi = np.random.default_rng(0).dirichlet(np.ones(8), size=1)
    model = tl.TopicModel(phi, [0.7])
    doc = [1, 5, 5, 2, 7, 0]
    got = tl.heldout(model, [doc], method="exact").total
    assert got == pytest.approx(np.log(phi[0, doc]).sum(), rel=1e-12)


def test_longer_documents_with_tiny_probabilities():
    """Rows rescaled per position keep the DP finite where a naive product would underflow;
    checked against enumeration on a doc whose words have probabilities near 1e-200."""
    rng = np.random.default_rng(5)
    phi = rng.dirichlet(np.ones(6), size=3)
    phi[:, 0] = 1e-200 * np.array([1.0, 3.0, 0.5])
    phi /= phi.sum(axis=1, keepdims=True)
    model = tl.TopicModel(phi, [0.3, 1.2, 0.5])
    doc = [0, 0, 1, 0, 2, 0, 3]
    got = tl.heldout(model, [doc], method="exact").total
    assert math.isfinite(got)
    assert got == pytest.approx(brute_log_prob(phi, model.alpha, doc), rel=1e-11)


def test_zero_probabilities_in_phi():
    phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.2, 0.8]])
    model = tl.TopicModel(phi, [0.4, 0.9])
    doc = [0, 1, 2, 1]
    got = tl.heldout(model, [doc], method="exact").total
    assert got == pytest.approx(brute_log_prob(phi, model.alpha, doc), rel=1e-12)


def test_refuses_past_size_limit():
    model = tl.synthetic.random_model(20, 50, seed=0)
    docs = tl.synthetic.generate(model, 2, [3, 200], seed=1)
    with pytest.raises(tl.TooLargeError, match=r"document 1: N=200 tokens and T=20 topics"):
        tl.heldout(model, docs, method="exact")
