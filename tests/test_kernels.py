"""The dense Gibbs kernels (tempered sweeps of AIS) against direct computation: the site
conditional (eq. 7), its tempered form (eq. 16) and invariance of the posterior under a sweep.
The sparse kernels are checked in test_sparse_kernels.py; the per-document preparation here."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from tealeaves.sampling import kernels, new_state, prepare_doc


def _doc(seed=0, T=3, V=6, words=(0, 3, 3, 5)):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.ones(V), size=T)
    alpha = rng.gamma(1.0, 1.0, size=T) + 0.1
    w = np.array(words)
    return phi, alpha, w, prepare_doc(np.ascontiguousarray(phi.T), alpha, w, reorder=False)


def _binomial_ok(counts, probs):
    n = counts.sum()
    se = np.sqrt(n * probs * (1 - probs))
    return np.all(np.abs(counts - n * probs) <= 4.5 * se + 1)


def test_site_update_samples_eq7_and_eq16():
    phi, alpha, w, doc = _doc()
    z = np.array([0, 2, 1, 0])
    state = new_state(np.random.SeedSequence(0))
    for tau in (1.0, 0.3):
        rows = doc.rows ** tau
        counts = np.zeros(3)
        for _ in range(20000):
            zz = z.copy()
            na = alpha + np.bincount(zz, minlength=3)
            kernels.sweep(rows, na, alpha, zz, 1, 2, False, state)  # position 1 only
            counts[zz[1]] += 1
        others = np.bincount(np.delete(z, 1), minlength=3)
        p = phi[:, w[1]] ** tau * (others + alpha)
        assert _binomial_ok(counts, p / p.sum())


def test_sweeps_leave_the_posterior_invariant():
    phi, alpha, w, doc = _doc(words=(0, 3, 5))
    T, N = 3, 3
    states = list(itertools.product(range(T), repeat=N))
    post = []
    for z in states:
        z = np.array(z)
        c = np.bincount(z, minlength=T)
        post.append(np.log(phi[z, w]).sum() + (gammaln(c + alpha) - gammaln(alpha)).sum())
    post = np.exp(np.array(post) - max(post))
    post /= post.sum()
    state = new_state(np.random.SeedSequence(1))
    z = np.zeros(N, np.int64)
    na = alpha + np.bincount(z, minlength=T)
    counts = np.zeros(len(states))
    index = {s: i for i, s in enumerate(states)}
    for it in range(40000):
        kernels.sweep(doc.rows, na, alpha, z, 0, N, bool(it % 2), state)
        counts[index[tuple(z)]] += 1
    # correlated draws: allow for an effective sample size of a quarter of the draws
    n = counts.sum()
    se = np.sqrt(4 * n * post * (1 - post))
    assert np.all(np.abs(counts - n * post) <= 4.5 * se + 1)


def test_dirichlet_multinomial_term():
    alpha = np.array([0.2, 1.5, 0.7])
    counts = np.array([3.0, 0.0, 2.0])
    got = kernels.log_dm(counts, alpha, 5)
    want = gammaln(alpha.sum()) - gammaln(5 + alpha.sum()) + (gammaln(counts + alpha) - gammaln(alpha)).sum()
    assert np.isclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("x", [0.01, 1.0, 99.9, 100.0, 1e3, 1e8, 1e12, 1e16])
@pytest.mark.parametrize("n", [0, 1, 3, 300, 100_000])
def test_lgamma_rise_is_precise_at_any_x(x, n):
    """log Gamma(x + n) - log Gamma(x) against sum_{i<n} log(x + i), each term to an ulp (the
    plain float difference of log Gamma values is off by 7e-3 nats at x = 1e12)."""
    from numba import njit

    rise = njit(lambda a, k: kernels.lgamma_rise(a, k))
    want = math.fsum(math.log(x + i) for i in range(n))
    assert rise(x, float(n)) == pytest.approx(want, rel=1e-13, abs=1e-13)


def test_uniforms_are_in_the_open_interval_and_uniform():
    from numba import njit

    from tealeaves.sampling.rng import uniform

    @njit
    def draw(state, n):
        out = np.empty(n)
        for i in range(n):
            out[i] = uniform(state)
        return out

    u = draw(new_state(np.random.SeedSequence(5)), 200000)
    assert u.min() > 0 and u.max() < 1
    hist = np.bincount((u * 10).astype(int), minlength=10)
    assert _binomial_ok(hist, np.full(10, 0.1))


def test_topic_relabelling_and_row_scaling_change_nothing():
    rng = np.random.default_rng(2)
    phi = rng.dirichlet(np.full(20, 0.05), size=4)
    alpha = np.array([0.1, 2.0, 0.5, 0.05])
    w = rng.integers(0, 20, size=9)
    a = prepare_doc(np.ascontiguousarray(phi.T), alpha, w, reorder=True)
    b = prepare_doc(np.ascontiguousarray(phi.T), alpha, w, reorder=False)
    la = kernels.exact_log_prob(a.rows, a.alpha) + a.log_scale
    lb = kernels.exact_log_prob(b.rows, b.alpha) + b.log_scale
    assert np.isclose(la, lb, rtol=1e-12)
    assert not np.array_equal(a.order, np.arange(4))


@pytest.mark.parametrize("T,V,N", [(4, 20, 9), (60, 300, 40), (500, 2000, 30)])
def test_prepared_rows_follow_their_definition(T, V, N):
    """The fused preparation against the definitions in sampling/prepare.py, computed directly:
    rows = phi[t, w_n] / max_t phi[t, w_n] (below 1e-300 flushed), topics in order of decreasing
    expected mass sum_n rows[n, t] alpha_t / sum_t' rows[n, t'] alpha_t', logrows unflushed."""
    rng = np.random.default_rng(T)
    phi = rng.dirichlet(np.full(V, 0.01), size=T)
    phi[1:, :5] = np.maximum(phi[1:, :5], 1e-3)
    phi /= phi.sum(axis=1, keepdims=True)
    phi[0, :5] = 1e-305  # flushed (below 1e-300 of the row maximum); words 0-4 are in the document
    alpha = rng.gamma(0.5, size=T)
    w = np.concatenate([np.arange(5), rng.integers(0, V, size=N - 5)])
    doc = prepare_doc(np.ascontiguousarray(phi.T), alpha, w)
    raw = phi[:, w].T
    scaled = raw / raw.max(axis=1, keepdims=True)
    flushed = np.where(scaled < 1e-300, 0.0, scaled)
    assert np.any((flushed == 0) & (raw > 0))  # the case exercises flushing
    q = flushed * alpha
    mass = (q / q.sum(axis=1, keepdims=True)).sum(axis=0)
    assert np.all(np.diff(mass[doc.order]) <= 1e-12)  # decreasing expected mass
    assert sorted(doc.order) == list(range(T))
    np.testing.assert_allclose(doc.rows, flushed[:, doc.order], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(doc.alpha, alpha[doc.order])
    np.testing.assert_allclose(doc.scales, np.log(raw.max(axis=1)), rtol=1e-15)
    with np.errstate(divide="ignore"):
        expected_log = np.log(raw[:, doc.order]) - doc.scales[:, None]
    np.testing.assert_allclose(doc.logrows, expected_log, rtol=1e-12, atol=1e-12)
