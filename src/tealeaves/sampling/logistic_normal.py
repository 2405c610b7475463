"""Annealed importance sampling over the logistic-normal prior, with elliptical slice sampling
(Murray, Adams & MacKay 2010) as the transition at each temperature.

eta = mean + factor @ x with x ~ N(0, I_r) (so cov = factor factor^T, singular allowed), theta =
softmax(eta). The chain lives in x; the likelihood of one document is
- `MIXTURE`: sum_u counts[u] log(theta . rows[u]), rows[u] = phi[:, w_u] (the document's distinct
  words), and
- `PRODUCT`: sum_u counts[u] theta . rows[u] - n_tokens log sum_v exp(theta . words[v]), rows[u] =
  B[:, w_u] and `words` = B^T (word-major, V x T): one normaliser per evaluation, O(T V), whatever
  the document's length.
Documents are given flat: the rows of document d are rows[offsets[d]:offsets[d + 1]]."""

from __future__ import annotations

import numpy as np
from numba import njit

from .rng import normal, uniform

MIXTURE = 0
PRODUCT = 1
_TWO_PI = 2.0 * np.pi
_COLLAPSED = 1e-12  # a slice bracket narrower than this (radians) keeps the current state


@njit(cache=True)
def log_likelihood(eta: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray, lo: int, hi: int,
                   n_tokens: float, words: np.ndarray, theta: np.ndarray) -> float:
    """log p(w | eta) of the document whose rows are rows[lo:hi]; `theta` is scratch."""
    T = eta.size
    top = eta.max()
    total = 0.0
    for k in range(T):
        theta[k] = np.exp(eta[k] - top)
        total += theta[k]
    for k in range(T):
        theta[k] /= total
    ll = 0.0
    for u in range(lo, hi):
        s = 0.0
        for k in range(T):
            s += theta[k] * rows[u, k]
        ll += counts[u] * (np.log(s) if decoder == MIXTURE else s)
    if decoder == PRODUCT and n_tokens > 0:
        scores = np.dot(words, theta)
        m = scores.max()
        z = 0.0
        for v in range(scores.size):
            z += np.exp(scores[v] - m)
        ll -= n_tokens * (m + np.log(z))
    return ll


@njit(cache=True)
def _to_eta(x: np.ndarray, mean: np.ndarray, factor: np.ndarray, eta: np.ndarray) -> None:
    for t in range(mean.size):
        s = mean[t]
        for i in range(x.size):
            s += factor[t, i] * x[i]
        eta[t] = s


@njit(cache=True)
def ess_step(x: np.ndarray, ll: float, tau: float, mean: np.ndarray, factor: np.ndarray, decoder: int,
             rows: np.ndarray, counts: np.ndarray, lo: int, hi: int, n_tokens: float, words: np.ndarray,
             state: np.ndarray, nu: np.ndarray, xp: np.ndarray, eta: np.ndarray, theta: np.ndarray) -> float:
    """One elliptical slice sampling update of x for the target N(x; 0, I) p(w | eta(x))^tau, in
    place; returns the new log-likelihood. (A bracket shrunk below `_COLLAPSED`, which floating
    point alone can cause, keeps the current state.)"""
    for i in range(x.size):
        nu[i] = normal(state)
    log_y = tau * ll + np.log(uniform(state))
    angle = _TWO_PI * uniform(state)
    lo_a = angle - _TWO_PI
    hi_a = angle
    while True:
        c = np.cos(angle)
        s = np.sin(angle)
        for i in range(x.size):
            xp[i] = x[i] * c + nu[i] * s
        _to_eta(xp, mean, factor, eta)
        new = log_likelihood(eta, decoder, rows, counts, lo, hi, n_tokens, words, theta)
        if tau * new > log_y:
            x[:] = xp
            return new
        if angle < 0.0:
            lo_a = angle
        else:
            hi_a = angle
        if hi_a - lo_a < _COLLAPSED:
            return ll
        angle = lo_a + (hi_a - lo_a) * uniform(state)


@njit(cache=True)
def ais(mean: np.ndarray, factor: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray,
        offsets: np.ndarray, n_tokens: np.ndarray, words: np.ndarray, taus: np.ndarray,
        states: np.ndarray) -> np.ndarray:
    """log AIS weights, runs x documents: x_0 ~ N(0, I); at s = 1..S the weight gains
    (tau_s - tau_{s-1}) log p(w | eta(x_{s-1})), then x_s is an ESS update at tau_s (none after
    the last). exp(weight) is unbiased for P(w). states: runs x documents x 4."""
    R = states.shape[0]
    D = offsets.size - 1
    T, r = factor.shape
    out = np.zeros((R, D))
    x = np.empty(r)
    nu = np.empty(r)
    xp = np.empty(r)
    eta = np.empty(T)
    theta = np.empty(T)
    S = taus.size - 1
    for d in range(D):
        lo = offsets[d]
        hi = offsets[d + 1]
        for run in range(R):
            state = states[run, d]
            for i in range(r):
                x[i] = normal(state)
            _to_eta(x, mean, factor, eta)
            ll = log_likelihood(eta, decoder, rows, counts, lo, hi, n_tokens[d], words, theta)
            logw = 0.0
            for s in range(1, S + 1):
                logw += (taus[s] - taus[s - 1]) * ll
                if s < S:
                    ll = ess_step(x, ll, taus[s], mean, factor, decoder, rows, counts, lo, hi, n_tokens[d],
                                  words, state, nu, xp, eta, theta)
            out[run, d] = logw
    return out


@njit(cache=True)
def ess_chain(mean: np.ndarray, factor: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray,
              n_tokens: float, words: np.ndarray, tau: float, iterations: int,
              state: np.ndarray) -> np.ndarray:
    """eta after each of `iterations` ESS updates at temperature tau (one document: all of `rows`),
    started from a prior draw: iterations x T."""
    T, r = factor.shape
    x = np.empty(r)
    nu = np.empty(r)
    xp = np.empty(r)
    eta = np.empty(T)
    theta = np.empty(T)
    out = np.empty((iterations, T))
    hi = rows.shape[0]
    for i in range(r):
        x[i] = normal(state)
    _to_eta(x, mean, factor, eta)
    ll = log_likelihood(eta, decoder, rows, counts, 0, hi, n_tokens, words, theta)
    for it in range(iterations):
        ll = ess_step(x, ll, tau, mean, factor, decoder, rows, counts, 0, hi, n_tokens, words, state, nu,
                      xp, eta, theta)
        _to_eta(x, mean, factor, eta)
        out[it] = eta
    return out
