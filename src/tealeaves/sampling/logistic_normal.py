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
def log_target(z: np.ndarray, center: np.ndarray, factor: np.ndarray, shift: np.ndarray, scale: np.ndarray,
               decoder: int, rows: np.ndarray, counts: np.ndarray, lo: int, hi: int, n_tokens: float,
               words: np.ndarray, eta: np.ndarray, theta: np.ndarray) -> float:
    """log g(z), the factor the chain tempers: eta = center + factor @ z. From the prior (`scale`
    0 x 0): g = p(w | eta). From a Gaussian start q = N(shift, scale scale^T) over the prior's x
    (x = shift + scale @ z, center = mean + L shift, factor = L scale): g = N(x; 0, I) p(w | eta) /
    q(x), whose terms in z are p(w | eta) exp(|z|^2 / 2 - |x|^2 / 2) (log |det scale| is added
    once, by the caller)."""
    _to_eta(z, center, factor, eta)
    ll = log_likelihood(eta, decoder, rows, counts, lo, hi, n_tokens, words, theta)
    r = scale.shape[0]
    if r:
        quad = 0.0
        for i in range(r):
            s = shift[i]
            for j in range(r):
                s += scale[i, j] * z[j]
            quad += z[i] * z[i] - s * s
        ll += 0.5 * quad
    return ll


@njit(cache=True)
def ess_step(x: np.ndarray, ll: float, tau: float, center: np.ndarray, factor: np.ndarray, shift: np.ndarray,
             scale: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray, lo: int, hi: int,
             n_tokens: float, words: np.ndarray, state: np.ndarray, nu: np.ndarray, xp: np.ndarray,
             eta: np.ndarray, theta: np.ndarray) -> float:
    """One elliptical slice sampling update of x for the target N(x; 0, I) g(x)^tau (`log_target`), in
    place; returns the new log g. (A bracket shrunk below `_COLLAPSED`, which floating point alone
    can cause, keeps the current state.)"""
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
        new = log_target(xp, center, factor, shift, scale, decoder, rows, counts, lo, hi, n_tokens, words,
                         eta, theta)
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
def _ais_run(center: np.ndarray, factor: np.ndarray, shift: np.ndarray, scale: np.ndarray, decoder: int,
             rows: np.ndarray, counts: np.ndarray, lo: int, hi: int, n_tokens: float, words: np.ndarray,
             taus: np.ndarray, state: np.ndarray, x: np.ndarray, nu: np.ndarray, xp: np.ndarray,
             eta: np.ndarray, theta: np.ndarray) -> float:
    """One AIS run through N(x; 0, I) g(x)^tau (`log_target`): x_0 ~ N(0, I); at s = 1..S the weight
    gains (tau_s - tau_{s-1}) log g(x_{s-1}), then x_s is an ESS update at tau_s (none after the
    last). Returns the log weight (without log |det scale|)."""
    for i in range(x.size):
        x[i] = normal(state)
    ll = log_target(x, center, factor, shift, scale, decoder, rows, counts, lo, hi, n_tokens, words, eta,
                    theta)
    logw = 0.0
    S = taus.size - 1
    for s in range(1, S + 1):
        logw += (taus[s] - taus[s - 1]) * ll
        if s < S:
            ll = ess_step(x, ll, taus[s], center, factor, shift, scale, decoder, rows, counts, lo, hi,
                          n_tokens, words, state, nu, xp, eta, theta)
    return logw


@njit(cache=True)
def ais(mean: np.ndarray, factor: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray,
        offsets: np.ndarray, n_tokens: np.ndarray, words: np.ndarray, taus: np.ndarray,
        states: np.ndarray) -> np.ndarray:
    """log AIS weights from the prior, runs x documents (`_ais_run` with g = p(w | eta)); exp(weight)
    is unbiased for P(w). states: runs x documents x 4."""
    R = states.shape[0]
    D = offsets.size - 1
    T, r = factor.shape
    out = np.zeros((R, D))
    x = np.empty(r)
    nu = np.empty(r)
    xp = np.empty(r)
    eta = np.empty(T)
    theta = np.empty(T)
    none = np.zeros(0)
    prior = np.zeros((0, 0))
    for d in range(D):
        for run in range(R):
            out[run, d] = _ais_run(mean, factor, none, prior, decoder, rows, counts, offsets[d],
                                   offsets[d + 1], n_tokens[d], words, taus, states[run, d], x, nu, xp, eta,
                                   theta)
    return out


@njit(cache=True)
def ais_from(mean: np.ndarray, factor: np.ndarray, shift: np.ndarray, scale: np.ndarray, log_det: float,
             decoder: int, rows: np.ndarray, counts: np.ndarray, lo: int, hi: int, n_tokens: float,
             words: np.ndarray, taus: np.ndarray, states: np.ndarray) -> np.ndarray:
    """log AIS weights of one document (rows[lo:hi]), one per row of `states`, annealing from the
    Gaussian q = N(shift, scale scale^T) over the prior's x (eta = mean + factor x; `scale` r x r,
    log_det = log |det scale|) to the posterior: the path q(x)^(1 - tau) (N(x; 0, I) p(w | eta))^tau, by
    ESS with q as its Gaussian. exp(weight) is unbiased for P(w) for any such q."""
    T, r = factor.shape
    center = mean + factor @ shift
    composite = np.ascontiguousarray(factor @ scale)
    x = np.empty(r)
    nu = np.empty(r)
    xp = np.empty(r)
    eta = np.empty(T)
    theta = np.empty(T)
    out = np.empty(states.shape[0])
    for run in range(states.shape[0]):
        out[run] = log_det + _ais_run(center, composite, shift, scale, decoder, rows, counts, lo, hi,
                                      n_tokens, words, taus, states[run], x, nu, xp, eta, theta)
    return out


@njit(cache=True)
def derivatives(eta: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray, lo: int, hi: int,
                n_tokens: float, words: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> float:
    """log p(w | eta) of rows[lo:hi], its gradient (`grad`, T) and Hessian (`hess`, T x T) in eta.
    Through theta = softmax(eta): with a = d log p / d theta and H_theta its Hessian,
        grad = J a, J = diag(theta) - theta theta^T,
        hess = J H_theta J + diag(theta (a - abar)) - theta_i theta_j (a_i + a_j - 2 abar), abar = a . theta.
    Mixture: a = sum_u c_u rows[u] / s_u, H_theta = -sum_u c_u rows[u] rows[u]^T / s_u^2 (s_u =
    theta . rows[u]); product of experts: a = sum_u c_u rows[u] - N B p, H_theta = -N (B diag(p) B^T
    - (B p)(B p)^T), p = softmax(theta B) over the vocabulary."""
    T = eta.size
    theta = np.empty(T)
    top = eta.max()
    total = 0.0
    for k in range(T):
        theta[k] = np.exp(eta[k] - top)
        total += theta[k]
    theta /= total
    a = np.zeros(T)
    hess[:, :] = 0.0
    ll = 0.0
    for u in range(lo, hi):
        s = 0.0
        for k in range(T):
            s += theta[k] * rows[u, k]
        c = counts[u]
        if decoder == MIXTURE:
            ll += c * np.log(s)
            for k in range(T):
                a[k] += c * rows[u, k] / s
                f = c * rows[u, k] / (s * s)
                for j in range(T):
                    hess[k, j] -= f * rows[u, j]
        else:
            ll += c * s
            for k in range(T):
                a[k] += c * rows[u, k]
    if decoder == PRODUCT and n_tokens > 0:
        scores = np.dot(words, theta)
        m = scores.max()
        p = np.exp(scores - m)
        z = p.sum()
        p /= z
        ll -= n_tokens * (m + np.log(z))
        bp = np.dot(words.T, p)
        weighted = words.T * p
        hess += -n_tokens * (np.dot(weighted, words) - np.outer(bp, bp))
        a -= n_tokens * bp
    abar = np.dot(a, theta)
    for k in range(T):
        grad[k] = theta[k] * (a[k] - abar)
    v = np.dot(theta, hess)  # theta^T H_theta; H_theta is symmetric
    for i in range(T):  # M = J H_theta
        for j in range(T):
            hess[i, j] = theta[i] * (hess[i, j] - v[j])
    w = np.dot(hess, theta)
    for i in range(T):  # M J, plus the second-derivative term of softmax
        for j in range(T):
            hess[i, j] = theta[j] * (hess[i, j] - w[i]) - theta[i] * theta[j] * (a[i] + a[j] - 2.0 * abar)
        hess[i, i] += theta[i] * (a[i] - abar)
    return ll


@njit(cache=True)
def _log_posterior(x: np.ndarray, mean: np.ndarray, factor: np.ndarray, decoder: int, rows: np.ndarray,
                   counts: np.ndarray, lo: int, hi: int, n_tokens: float, words: np.ndarray,
                   eta: np.ndarray, theta: np.ndarray) -> float:
    _to_eta(x, mean, factor, eta)
    return log_likelihood(eta, decoder, rows, counts, lo, hi, n_tokens, words, theta) - 0.5 * np.dot(x, x)


@njit(cache=True)
def cholesky(a: np.ndarray, out: np.ndarray) -> bool:
    """out = the lower-triangular L with L L^T = a (symmetric), or False when a is not positive
    definite (a pivot <= 0)."""
    n = a.shape[0]
    out[:, :] = 0.0
    for j in range(n):
        s = a[j, j]
        for k in range(j):
            s -= out[j, k] * out[j, k]
        if not s > 0.0:
            return False
        out[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = a[i, j]
            for k in range(j):
                t -= out[i, k] * out[j, k]
            out[i, j] = t / out[j, j]
    return True


@njit(cache=True)
def cholesky_solve(K: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with K K^T x = b (K lower triangular)."""
    n = b.size
    y = np.empty(n)
    for i in range(n):
        t = b[i]
        for k in range(i):
            t -= K[i, k] * y[k]
        y[i] = t / K[i, i]
    for i in range(n - 1, -1, -1):
        t = y[i]
        for k in range(i + 1, n):
            t -= K[k, i] * y[k]
        y[i] = t / K[i, i]
    return y


@njit(cache=True)
def laplace(mean: np.ndarray, factor: np.ndarray, decoder: int, rows: np.ndarray, counts: np.ndarray, lo: int,
            hi: int, n_tokens: float, words: np.ndarray, start: np.ndarray, iterations: int,
            tolerance: float):
    """The posterior mode of x (eta = mean + factor x, x ~ N(0, I)) for the document rows[lo:hi], by
    Newton's method from `start` (damped: Levenberg-Marquardt when -H is not positive definite,
    step halving until h(x) = log p(w | eta) - |x|^2 / 2 rises), stopped when the largest gradient
    entry is below `tolerance`. Returns (mode, K, iterations used, converged): K lower triangular with
    K K^T = -H(mode) (+ damping, when -H is not positive definite there)."""
    T, r = factor.shape
    x = start.copy()
    eta = np.empty(T)
    theta = np.empty(T)
    g_eta = np.empty(T)
    h_eta = np.empty((T, T))
    eye = np.eye(r)
    h = _log_posterior(x, mean, factor, decoder, rows, counts, lo, hi, n_tokens, words, eta, theta)
    damping = 0.0
    K = np.zeros((r, r))
    neg = eye.copy()
    converged = False
    it = 0
    while it < iterations:
        _to_eta(x, mean, factor, eta)
        derivatives(eta, decoder, rows, counts, lo, hi, n_tokens, words, g_eta, h_eta)
        g = np.dot(factor.T, g_eta) - x
        neg = eye - np.dot(factor.T, np.dot(h_eta, factor))  # -H in x
        neg = 0.5 * (neg + neg.T)
        if np.abs(g).max() < tolerance:
            converged = True
            break
        it += 1
        moved = False
        while not moved:
            if not cholesky(neg + damping * eye, K):
                damping = max(2.0 * damping, 1e-6)
                continue
            step = cholesky_solve(K, g)
            t = 1.0
            while t > 1e-10:
                xn = x + t * step
                hn = _log_posterior(xn, mean, factor, decoder, rows, counts, lo, hi, n_tokens, words, eta,
                                    theta)
                if hn >= h:
                    x, h, moved = xn, hn, True
                    break
                t *= 0.5
            if not moved:
                if damping > 1e12:
                    return x, K, it, False
                damping = max(10.0 * damping, 1e-6)
        damping = 0.1 * damping if damping > 1e-6 else 0.0
    if not converged:  # -H at the last point
        _to_eta(x, mean, factor, eta)
        derivatives(eta, decoder, rows, counts, lo, hi, n_tokens, words, g_eta, h_eta)
        neg = eye - np.dot(factor.T, np.dot(h_eta, factor))
        neg = 0.5 * (neg + neg.T)
    if not cholesky(neg, K):
        cholesky(neg + max(damping, 1e-6) * eye, K)
    return x, K, it, converged


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
    none = np.zeros(0)
    prior = np.zeros((0, 0))
    for i in range(r):
        x[i] = normal(state)
    ll = log_target(x, mean, factor, none, prior, decoder, rows, counts, 0, hi, n_tokens, words, eta, theta)
    for it in range(iterations):
        ll = ess_step(x, ll, tau, mean, factor, none, prior, decoder, rows, counts, 0, hi, n_tokens, words,
                      state, nu, xp, eta, theta)
        _to_eta(x, mean, factor, eta)
        out[it] = eta
    return out
