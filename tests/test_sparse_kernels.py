"""The sparse Gibbs draws (`sampling.sparse`) against direct computation: every draw of a site
follows eq. (7) exactly, whichever bucket it comes from (topics with zero probability for the
word, tiny alpha, many topics); an added position's normaliser; T(z* <- z) of eq. (24); and
sweeps leave the posterior invariant. Then every estimator that runs on these draws."""

import itertools

import numpy as np
import pytest
from scipy.special import gammaln

from tealeaves.sampling import chains, new_state, prepare_doc, sparse


def _doc(seed=0, T=3, V=6, words=(0, 3, 3, 5), zeros=0.0, reorder=False):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.ones(V), size=T)
    if zeros:  # some topics give some words probability exactly 0
        phi[rng.random((T, V)) < zeros] = 0.0
        phi[:, 0] += 1e-3
        phi /= phi.sum(axis=1, keepdims=True)
    alpha = rng.gamma(0.5, 1.0, size=T) + 1e-3
    w = np.array(words)
    return phi, alpha, w, prepare_doc(np.ascontiguousarray(phi.T), alpha, w, reorder=reorder)


def _binomial_ok(counts, probs):
    n = counts.sum()
    se = np.sqrt(n * probs * (1 - probs))
    return np.all(np.abs(counts - n * probs) <= 4.5 * se + 1)


def _chain(doc, z):
    T, N = doc.num_topics, doc.length
    Z, CNT, USED, POS, NU, buf = sparse.new_chains(1, T, N)
    sparse.set_assignments(Z, CNT, USED, POS, NU, 0, np.asarray(z, np.uint32))
    return Z, CNT, USED, POS, NU, buf


@pytest.mark.parametrize("T,V,N,zeros,seed", [(3, 6, 4, 0.0, 0), (40, 30, 12, 0.5, 1), (300, 50, 8, 0.7, 2)])
def test_each_draw_follows_eq7(T, V, N, zeros, seed):
    rng = np.random.default_rng(seed)
    words = rng.integers(0, V, N)
    phi, alpha, w, doc = _doc(seed, T, V, words, zeros, reorder=bool(seed % 2))
    z = rng.integers(0, T, N)
    state = new_state(np.random.SeedSequence(seed))
    i = N // 2
    counts = np.zeros(T)
    chain = _chain(doc, z)
    scratch = np.zeros(N)
    for _ in range(30000):
        sparse.set_assignments(*chain[:5], 0, z.astype(np.uint32))
        sparse.update(doc.rows, doc.cum, *chain[:5], i, i + 1, False, N, scratch, chain[5], state)
        counts[chain[0][0, i]] += 1
    others = np.bincount(np.delete(z, i), minlength=T)
    p = doc.rows[i] * (others + doc.alpha)  # in the document's topic order
    assert np.all(counts[p == 0] == 0)
    assert _binomial_ok(counts, p / p.sum())


def test_added_position_draws_and_normaliser():
    phi, alpha, w, doc = _doc(3, T=5, V=8, words=(1, 2, 2, 7, 0), zeros=0.3)
    z = np.array([4, 0, 0, 2, 0])
    N = 5
    state = new_state(np.random.SeedSequence(3))
    counts = np.zeros(5)
    chain = _chain(doc, z[:3])  # positions 0..2 in the counts; 3 and 4 not yet
    for _ in range(20000):
        sparse.set_assignments(*chain[:5], 0, z[:3].astype(np.uint32))
        mass = np.zeros(N)
        sparse.update(doc.rows, doc.cum, *chain[:5], 3, 4, False, 3, mass, chain[5], state)
        counts[chain[0][0, 3]] += 1
    q = doc.rows[3] * (np.bincount(z[:3], minlength=5) + doc.alpha)
    assert mass[3] == pytest.approx(q.sum(), rel=1e-12)
    assert _binomial_ok(counts, q / q.sum())


def test_forced_sweep_probability():
    phi, alpha, w, doc = _doc()
    z = np.array([1, 0, 2, 2])
    target = np.array([0, 0, 1, 2], np.uint32)
    chain = _chain(doc, z)
    got = sparse.log_forced(doc.rows, doc.cum, doc.alpha, *chain[:5], 0, target)
    want = 0.0
    cur = z.copy()
    for i in range(4):
        others = np.bincount(np.delete(cur, i), minlength=3)
        p = phi[:, w[i]] * (others + alpha)
        want += np.log(p[target[i]] / p.sum())
        cur[i] = target[i]
    assert np.isclose(got, want, rtol=1e-12)
    assert list(chain[0][0]) == list(target)
    assert list(chain[1][0]) == list(np.bincount(target, minlength=3))


def test_copy_and_set_keep_counts_and_used_lists_consistent():
    phi, alpha, w, doc = _doc(5, T=30, V=10, words=tuple(range(10)))
    rng = np.random.default_rng(5)
    Z, CNT, USED, POS, NU, buf = sparse.new_chains(3, 30, 10)
    for r in range(3):
        sparse.set_assignments(Z, CNT, USED, POS, NU, r, rng.integers(0, 30, 10).astype(np.uint32))
    sparse.copy_chain(Z, CNT, USED, POS, NU, 0, 2, 10)
    state = new_state(np.random.SeedSequence(5))
    sparse.update(doc.rows, doc.cum, Z, CNT, USED, POS, NU, 0, 10, False, 10, np.zeros(10), buf, state)
    for r in range(3):
        assert np.array_equal(CNT[r], np.bincount(Z[r], minlength=30))
        used = USED[r, : NU[r]]
        assert set(used) == set(np.flatnonzero(CNT[r])) and np.all(POS[r, used] == np.arange(NU[r]))


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
    chain = _chain(doc, np.zeros(N, int))
    counts = np.zeros(len(states))
    index = {s: i for i, s in enumerate(states)}
    scratch = np.zeros(N)
    for it in range(40000):
        sparse.update(doc.rows, doc.cum, *chain[:5], 0, N, bool(it % 2), N, scratch, chain[5], state)
        counts[index[tuple(int(v) for v in chain[0][0])]] += 1
    n = counts.sum()  # correlated draws: allow for an effective sample size of a quarter
    se = np.sqrt(4 * n * post * (1 - post))
    assert np.all(np.abs(counts - n * post) <= 4.5 * se + 1)


def test_posterior_theta_matches_enumeration():
    """E[theta | w] = sum_z P(z | w) (n_z + alpha) / (N + A), by enumeration."""
    phi, alpha, w, doc = _doc(7, T=3, V=6, words=(0, 3, 3, 5, 1))
    T, N = 3, 5
    post, means = [], []
    for z in itertools.product(range(T), repeat=N):
        z = np.array(z)
        c = np.bincount(z, minlength=T)
        post.append(np.log(phi[z, w]).sum() + (gammaln(c + alpha) - gammaln(alpha)).sum())
        means.append((c + alpha) / (N + alpha.sum()))
    post = np.exp(np.array(post) - max(post))
    want = (post[:, None] * np.array(means)).sum(0) / post.sum()
    runs = [chains.posterior_theta(doc.rows, doc.cum, doc.alpha, 20, 2000,
                                   new_state(np.random.SeedSequence(s))) for s in range(8)]
    got = np.mean(runs, axis=0)
    se = np.std(runs, axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(got - want) <= 4 * se + 1e-3)


@pytest.mark.parametrize("N", [1, 3, 4, 7, 9])
def test_prior_table_is_the_running_sum_of_every_row(N):
    """Rows are summed four at a time plus a remainder: every row, in either part, must hold
    its own running sum of rows[i, t] alpha_t."""
    rng = np.random.default_rng(N)
    rows = rng.random((N, 37)) * (rng.random((N, 37)) < 0.7)
    alpha = rng.gamma(0.3, 1.0, 37)
    np.testing.assert_allclose(sparse.prior_table(rows, alpha), np.cumsum(rows * alpha, axis=1),
                               rtol=1e-13, atol=0)
