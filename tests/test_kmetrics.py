"""The classic K-selection metrics (`tealeaves.select.classic`) against their published
definitions, each computed here independently by a direct loop over the paper's formula, and
against the peer values tmtoolkit 0.12.0 computed (tests/fixtures/kmetrics_tmtoolkit.json, made by
scripts/make_kmetrics_fixture.py); log p(w | z) against tomotopy's own log-likelihood."""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal, getcontext
from pathlib import Path

import numpy as np
import pytest

from tealeaves.errors import MethodError
from tealeaves.select.classic import (
    arun_2010,
    cao_juan_2009,
    deveaud_2014,
    fold_in,
    griffiths_2004,
    log_p_w_given_z,
)

FIXTURE = Path(__file__).parent / "fixtures" / "kmetrics_tmtoolkit.json"


def _inputs(seed: int, K: int = 6, V: int = 40, D: int = 15):
    rng = np.random.default_rng(seed)
    return (rng.dirichlet(np.full(V, 0.2), size=K), rng.dirichlet(np.full(K, 0.5), size=D),
            rng.integers(3, 50, size=D).astype(float))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cao_juan_2009_is_the_mean_cosine_similarity_over_pairs(seed):
    phi, _, _ = _inputs(seed)
    sims = []
    for a, b in itertools.combinations(phi.tolist(), 2):
        dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
        sims.append(dot / math.sqrt(math.fsum(x * x for x in a) * math.fsum(y * y for y in b)))
    assert cao_juan_2009(phi) == pytest.approx(sum(sims) / len(sims), rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_deveaud_2014_is_the_paper_divergence_over_k_k_minus_1(seed):
    """Deveaud et al. 2014, eq. 2: sum over pairs of 1/2 KL(i||j) + 1/2 KL(j||i), over K (K - 1)."""
    phi, _, _ = _inputs(seed)
    K = len(phi)
    total = 0.0
    for i, j in itertools.combinations(range(K), 2):
        p, q = phi[i].tolist(), phi[j].tolist()
        total += 0.5 * math.fsum(x * math.log(x / y) for x, y in zip(p, q, strict=True))
        total += 0.5 * math.fsum(y * math.log(y / x) for x, y in zip(p, q, strict=True))
    assert deveaud_2014(phi) == pytest.approx(total / (K * (K - 1)), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_arun_2010_is_the_symmetric_kl_of_the_two_normalised_distributions(seed):
    """Singular values as square roots of the eigenvalues of phi phi^T (another routine than the
    SVD), L x M2 by a loop over documents; both normalised, cm2 sorted as the singular values."""
    phi, theta, lengths = _inputs(seed)
    K = len(phi)
    cm1 = sorted((math.sqrt(max(e, 0.0)) for e in np.linalg.eigvalsh(phi @ phi.T)), reverse=True)
    cm2 = [0.0] * K
    for d in range(len(theta)):
        for k in range(K):
            cm2[k] += lengths[d] * theta[d, k]
    cm2 = sorted(cm2, reverse=True)
    cm1 = [x / sum(cm1) for x in cm1]
    cm2 = [x / sum(cm2) for x in cm2]
    want = math.fsum(p * math.log(p / q) for p, q in zip(cm1, cm2, strict=True)) + math.fsum(
        q * math.log(q / p) for p, q in zip(cm1, cm2, strict=True))
    assert arun_2010(phi, theta, lengths) == pytest.approx(want, rel=1e-9)


def test_griffiths_2004_is_the_log_harmonic_mean_of_the_likelihoods():
    """Computed with 60-digit decimals: 1 / mean(1 / p_s), p_s = exp(ll_s), ll_s near -50,000."""
    lls = (-50_000.0 + np.random.default_rng(3).normal(0, 30, size=20)).tolist()
    getcontext().prec = 60
    inv_mean = sum((-Decimal(x)).exp() for x in lls) / len(lls)
    want = float(-inv_mean.ln())
    assert griffiths_2004(lls) == pytest.approx(want, abs=1e-9)
    assert griffiths_2004([-1e6]) == -1e6  # one sample: its own value, no overflow


def test_log_p_w_given_z_is_the_chain_rule_product():
    """p(w | z) = prod_i (n_{z_i w_i} + beta) / (n_{z_i} + V beta), counts over tokens before i."""
    rng = np.random.default_rng(5)
    K, V, beta = 3, 7, 0.05
    words, topics = rng.integers(0, V, size=60), rng.integers(0, K, size=60)
    nkw, nk, total = np.zeros((K, V)), np.zeros(K), 0.0
    for w, z in zip(words, topics, strict=True):
        total += math.log((nkw[z, w] + beta) / (nk[z] + V * beta))
        nkw[z, w] += 1
        nk[z] += 1
    assert log_p_w_given_z(words, topics, K, V, beta) == pytest.approx(total, rel=1e-12)


def test_log_p_w_given_z_agrees_with_tomotopy():
    """tomotopy's log-likelihood of its state is log p(z | alpha) + log p(w | z, eta): taking the
    first (computed here from its alpha) leaves ours (tomotopy sums in single precision)."""
    tp = pytest.importorskip("tomotopy")
    from scipy.special import gammaln

    from tealeaves import synthetic

    m = synthetic.random_model(4, 50, seed=1)
    c = synthetic.generate(m, 40, 30, seed=2)
    mdl = tp.LDAModel(k=4, alpha=0.1, eta=0.01, seed=3)
    for d in c:
        mdl.add_doc([c.vocab[i] for i in d])
    mdl.train(20, workers=1)
    words = np.concatenate([np.asarray(d.words) for d in mdl.docs])
    zs = np.concatenate([np.asarray(d.topics) for d in mdl.docs])
    alpha = np.asarray(mdl.alpha, dtype=float)
    log_pz = sum(gammaln(alpha.sum()) - gammaln(len(d.words) + alpha.sum())
                 + (gammaln(np.bincount(np.asarray(d.topics), minlength=4) + alpha) - gammaln(alpha)).sum()
                 for d in mdl.docs)
    ours = log_p_w_given_z(words, zs, 4, len(mdl.vocabs), 0.01)
    assert ours == pytest.approx(mdl.ll_per_word * len(words) - log_pz, rel=1e-4)


def test_fold_in_reaches_its_fixed_point_and_scores_by_the_plug_in():
    phi, _, _ = _inputs(4, K=3, V=12, D=5)
    alpha = np.array([0.2, 0.5, 0.3])
    rng = np.random.default_rng(9)
    docs = [rng.integers(0, 12, size=n) for n in (4, 9, 1, 15, 7)]
    rows = np.concatenate([np.full(len(d), i) for i, d in enumerate(docs)])
    cols = np.concatenate(docs)
    theta, loglik = fold_in(phi, alpha, rows, cols, np.ones(len(cols)), len(docs), iterations=500)
    for d, ws in enumerate(docs):
        resp = np.zeros(3)
        for w in ws:
            r = theta[d] * phi[:, w]
            resp += r / r.sum()
        assert np.allclose(theta[d], (resp + alpha) / (len(ws) + alpha.sum()), atol=1e-8)
        assert loglik[d] == pytest.approx(sum(math.log(theta[d] @ phi[:, w]) for w in ws), rel=1e-12)


@pytest.mark.parametrize("case", range(2))
def test_peer_values_from_tmtoolkit(case):
    """tmtoolkit 0.12.0 (Arun: L1-normalised, cm2 sorted, as ours; it has no Deveaud 2014)."""
    c = json.loads(FIXTURE.read_text())["cases"][case]
    phi, theta, lengths = np.array(c["phi"]), np.array(c["theta"]), np.array(c["lengths"])
    assert cao_juan_2009(phi) == pytest.approx(c["cao_juan_2009"], rel=1e-12)
    assert arun_2010(phi, theta, lengths) == pytest.approx(c["arun_2010"], rel=1e-10)
    assert griffiths_2004(c["logliks"]) == pytest.approx(c["griffiths_2004"], abs=1e-8)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: cao_juan_2009(np.ones((1, 5))), "at least 2 topics"),
    (lambda: deveaud_2014(np.ones((1, 5))), "at least 2 topics"),
    (lambda: deveaud_2014(np.array([[0.5, -0.5], [0.5, 0.5]])), "negative or non-finite"),
    (lambda: arun_2010(np.full((4, 3), 1 / 3), np.full((2, 4), 0.25), [3, 4]), "as many words as topics"),
    (lambda: arun_2010(np.full((2, 3), 1 / 3), np.full((2, 3), 0.25), [3, 4]), "documents x topics"),
    (lambda: griffiths_2004([]), "one or more finite"),
    (lambda: griffiths_2004([-1.0, float("nan")]), "one or more finite"),
])
def test_inputs_a_metric_cannot_take_are_one_line_errors(call, match):
    with pytest.raises(MethodError, match=match) as e:
        call()
    assert "\n" not in str(e.value)


def test_deveaud_2014_takes_zero_probabilities_as_ldatuning_does():
    """A zero probability is raised to the smallest positive double: finite, and large."""
    phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    v = deveaud_2014(phi)
    assert math.isfinite(v) and v > 100


def test_fold_in_in_blocks_equals_one_block_and_keeps_empty_documents_at_the_prior():
    phi, _, _ = _inputs(6, K=4, V=20, D=5)
    alpha = np.array([0.1, 0.2, 0.3, 0.4])
    rng = np.random.default_rng(1)
    docs = [rng.integers(0, 20, size=n) for n in (5, 0, 12, 3, 0, 8, 1)]
    rows = np.concatenate([np.full(len(d), i) for i, d in enumerate(docs)])
    cols = np.concatenate(docs)
    counts = np.ones(len(cols))
    whole = fold_in(phi, alpha, rows, cols, counts, len(docs))
    blocks = fold_in(phi, alpha, rows, cols, counts, len(docs), block=8)  # two entries a block
    assert np.allclose(whole[0], blocks[0], rtol=1e-12) and np.allclose(whole[1], blocks[1], rtol=1e-12)
    assert np.allclose(whole[0][[1, 4]], alpha / alpha.sum()) and (whole[1][[1, 4]] == 0).all()
