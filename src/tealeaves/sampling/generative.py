"""LDA's own Markov chain over theta, for CSL (Bengio, Yao & Cho 2014): numba kernels.

One step from theta, carrying the topic assignments it generates:
  1. z_n ~ theta and w_n ~ phi_{z_n}, n = 1..L: an exact draw of (z, w) | theta;
  2. `sweeps` collapsed Gibbs sweeps over z | w (theta integrated out), started at the generated z;
  3. theta ~ Dir(alpha + n(z)), n(z) the topic counts of z.
Step 1 draws (z, w) exactly from P(z, w | theta); step 2 leaves P(z | w) invariant; step 3 draws
theta exactly from P(theta | z, w). Each is a valid kernel on the joint P(theta, z, w), so the
chain's stationary distribution of theta is exactly the prior Dir(alpha), for any L and any
number of sweeps (which change only how fast it mixes). Restarting z from scratch each step and
sweeping a few times, as an earlier version did, is not such a kernel: its theta settled near, not
at, the prior."""

from __future__ import annotations

import numpy as np
from numba import njit

from .rng import dirichlet, uniform


@njit(cache=True)
def _draw(state: np.ndarray, weights: np.ndarray, n: int) -> int:
    """An index in 0..n-1 with probability proportional to weights[:n] (non-negative)."""
    total = 0.0
    for k in range(n):
        total += weights[k]
    u = uniform(state) * total
    for k in range(n - 1):
        u -= weights[k]
        if u < 0.0:
            return k
    return n - 1


@njit(cache=True)
def _word(state: np.ndarray, cum_row: np.ndarray) -> int:
    """A word from a topic's normalised cumulative row, by binary search."""
    u = uniform(state)
    lo, hi = 0, cum_row.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum_row[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _sweeps(state, phi_wt, alpha, words, z, counts, sweeps, weights) -> None:
    """Collapsed Gibbs sweeps over z | words: p(z_n = t) ∝ (n_t^{-n} + alpha_t) phi[t, w_n]."""
    T = alpha.size
    for _ in range(sweeps):
        for n in range(words.size):
            counts[z[n]] -= 1
            row = phi_wt[words[n]]
            for t in range(T):
                weights[t] = (counts[t] + alpha[t]) * row[t]
            z[n] = _draw(state, weights, T)
            counts[z[n]] += 1


@njit(cache=True)
def lda_chain(phi_cum, phi_wt, alpha, theta, length, sweeps, burn_in, thin, state, out) -> None:
    """Run every chain (rows of `theta`, updated in place) and fill `out` (samples x T) with their
    states, step-major (all chains' states of one step, then the next), recording a step's
    states before its transition when step >= burn_in and (step - burn_in) % thin == 0."""
    chains, T = theta.shape
    words = np.empty(length, np.int64)
    z = np.empty(length, np.int64)
    counts = np.zeros(T, np.int64)
    weights = np.empty(T)
    conc = np.empty(T)
    filled = 0
    step = 0
    while filled < out.shape[0]:
        if step >= burn_in and (step - burn_in) % thin == 0:
            for c in range(chains):
                if filled < out.shape[0]:
                    out[filled] = theta[c]
                    filled += 1
        for c in range(chains):
            counts[:] = 0
            for n in range(length):
                z[n] = _draw(state, theta[c], T)
                words[n] = _word(state, phi_cum[z[n]])
                counts[z[n]] += 1
            _sweeps(state, phi_wt, alpha, words, z, counts, sweeps, weights)
            for t in range(T):
                conc[t] = alpha[t] + counts[t]
            dirichlet(state, conc, theta[c])
        step += 1


@njit(cache=True)
def theta_given_words(phi_wt, alpha, words, sweeps, state, out) -> None:
    """theta ~ Dir(alpha + n(z)) after `sweeps` collapsed Gibbs sweeps over z | words, z started
    at independent draws p(z_n = t) ∝ alpha_t phi[t, w_n] (the start of biased CSL's chains)."""
    T = alpha.size
    z = np.empty(words.size, np.int64)
    counts = np.zeros(T, np.int64)
    weights = np.empty(T)
    for n in range(words.size):
        row = phi_wt[words[n]]
        for t in range(T):
            weights[t] = alpha[t] * row[t]
        z[n] = _draw(state, weights, T)
        counts[z[n]] += 1
    _sweeps(state, phi_wt, alpha, words, z, counts, sweeps, weights)
    conc = np.empty(T)
    for t in range(T):
        conc[t] = alpha[t] + counts[t]
    dirichlet(state, conc, out)
