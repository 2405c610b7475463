"""Numba kernels that anneal topic assignments from one LDA model to another (Foulds & Smyth
2014), with phi and alpha fixed within each model and z shared (same number of topics).

Two families of intermediate distributions f_tau, tau from 0 (model B) to 1 (model A), both with
the Dirichlet-multinomial term over z at their end points:
- geometric: f_tau(z) = P(w, z | A)^tau P(w, z | B)^(1 - tau); a site's conditional is
  [phiA_tw (n_t + alphaA_t)]^tau [phiB_tw (n_t + alphaB_t)]^(1 - tau);
- convex: f_tau(z) = P(w, z | phi_tau, alpha_tau) with phi_tau = tau phiA + (1 - tau) phiB and
  alpha_tau = tau alphaA + (1 - tau) alphaB, a genuine LDA posterior whose Gibbs step uses
  alpha_tau.
Mixtures are computed as tau x + (1 - tau) y, never y + tau (x - y), which cancels to 0 or
below when x is tiny and tau = 1. Both conditionals have the form row[t] * h(t, n_t): the
kernels keep a table h[t, k] for every count k, so one sweep kernel serves both paths.
Counts `cnt` are int64.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import FLUSH, FM, _draw, log_lik


@njit(cache=True, fastmath=FM)
def sweep_table(rows, cnt, hv, h, z, state):
    """One forward Gibbs sweep of the conditional row[i, t] h[t, n_t^-i]; hv[t] = h[t, cnt[t]]."""
    for i in range(z.shape[0]):
        t = z[i]
        cnt[t] -= 1
        hv[t] = h[t, cnt[t]]
        k, _ = _draw(rows[i], hv, state)
        z[i] = k
        cnt[k] += 1
        hv[k] = h[k, cnt[k]]


@njit(cache=True)
def log_dm_counts(cnt, alpha, total):
    """log P(z | alpha) for integer topic counts (eq. 5 of Wallach et al.)."""
    A = 0.0
    s = 0.0
    for t in range(alpha.shape[0]):
        A += alpha[t]
        if cnt[t] > 0:
            s += math.lgamma(cnt[t] + alpha[t]) - math.lgamma(alpha[t])
    return s + math.lgamma(A) - math.lgamma(total + A)


@njit(inline="always")
def _log_mix(la, lb, tau):
    """log(tau e^la + (1 - tau) e^lb) for log-probabilities that may be tiny or -inf."""
    x = math.log(tau) + la if tau > 0.0 else -np.inf
    y = math.log(1.0 - tau) + lb if tau < 1.0 else -np.inf
    m = max(x, y)
    if m == -np.inf:
        return -np.inf
    return m + math.log(math.exp(x - m) + math.exp(y - m))


@njit(cache=True)
def _log_convex_ratio(rowsA, logrowsA, rowsB, logrowsB, alphaA, alphaB, z, cnt, tau0, tau1):
    """log f_tau1(z) - log f_tau0(z) on the convex path (row scales cancel). Positions whose
    entries were flushed to 0 in `rows` are evaluated exactly from `logrows`."""
    N = z.shape[0]
    lp = 0.0
    acc = 1.0
    for i in range(N):
        a = rowsA[i, z[i]]
        b = rowsB[i, z[i]]
        if a == 0.0 or b == 0.0:
            la = logrowsA[i, z[i]]
            lb = logrowsB[i, z[i]]
            lp += _log_mix(la, lb, tau1) - _log_mix(la, lb, tau0)
            continue
        acc *= (tau1 * a + (1.0 - tau1) * b) / (tau0 * a + (1.0 - tau0) * b)
        if acc < 1e-200 or acc > 1e200:
            lp += math.log(acc)
            acc = 1.0
    lp += math.log(acc)
    T = alphaA.shape[0]
    a0 = np.empty(T)
    a1 = np.empty(T)
    for t in range(T):
        a0[t] = tau0 * alphaA[t] + (1.0 - tau0) * alphaB[t]
        a1[t] = tau1 * alphaA[t] + (1.0 - tau1) * alphaB[t]
    return lp + log_dm_counts(cnt, a1, N) - log_dm_counts(cnt, a0, N)


@njit(cache=True)
def log_joint_difference(logrowsA, logrowsB, alphaA, alphaB, z, cnt):
    """log P(w, z | A) - log P(w, z | B) (common row scales cancel)."""
    N = z.shape[0]
    return (log_lik(logrowsA, z, 0, N) - log_lik(logrowsB, z, 0, N)
            + log_dm_counts(cnt, alphaA, N) - log_dm_counts(cnt, alphaB, N))


@njit(cache=True, fastmath=FM)
def anneal_pair(rowsA, logrowsA, alphaA, rowsB, logrowsB, alphaB, taus, geometric, z, cnt, state):
    """Anneal from B (tau_0 = 0) to A (tau_S = 1) starting from (z, cnt), a state meant to be
    distributed as f_0 = P(z | w, B). For s = 0..S-1: one sweep under f_{tau_s}, then the weight
    gains log f_{tau_{s+1}}(z) - log f_{tau_s}(z) at that state. Returns the log weight; (z, cnt)
    end at the final state.

    Geometric rows exp(tau logA + (1 - tau) logB) and their count table are recomputed exactly
    whenever the step dtau changes and multiplied by a fixed factor in between."""
    N, T = rowsA.shape
    S = taus.shape[0] - 1
    rows = np.empty((N, T))
    h = np.empty((T, N + 1))
    hv = np.empty(T)
    frow = np.empty((N, T))
    fh = np.empty((T, N + 1))
    logw = 0.0
    cur = -1.0
    for s in range(S):
        tau = taus[s]
        if geometric:
            delta = taus[s] - taus[s - 1] if s > 0 else 0.0
            if s == 0 or abs(delta - cur) > 1e-9 * delta:
                cur = delta
                for i in range(N):
                    for t in range(T):
                        la = logrowsA[i, t]
                        lb = logrowsB[i, t]
                        if s == 0:
                            rows[i, t] = rowsB[i, t]
                        elif la == -np.inf or lb == -np.inf:
                            rows[i, t] = 0.0
                        else:
                            v = math.exp(tau * la + (1.0 - tau) * lb)
                            rows[i, t] = v if v >= FLUSH else 0.0
                        if la == -np.inf or lb == -np.inf:
                            frow[i, t] = 0.0
                        else:
                            frow[i, t] = math.exp(delta * (la - lb))
                for t in range(T):
                    for k in range(N + 1):
                        ga = math.log(k + alphaA[t])
                        gb = math.log(k + alphaB[t])
                        h[t, k] = math.exp(tau * ga + (1.0 - tau) * gb)
                        fh[t, k] = math.exp(delta * (ga - gb))
            else:
                for i in range(N):
                    for t in range(T):
                        v = rows[i, t] * frow[i, t]
                        rows[i, t] = v if v >= FLUSH else 0.0
                for t in range(T):
                    for k in range(N + 1):
                        h[t, k] *= fh[t, k]
        else:
            for i in range(N):
                for t in range(T):
                    rows[i, t] = tau * rowsA[i, t] + (1.0 - tau) * rowsB[i, t]
            for t in range(T):
                at = tau * alphaA[t] + (1.0 - tau) * alphaB[t]
                for k in range(N + 1):
                    h[t, k] = k + at
        for t in range(T):
            hv[t] = h[t, cnt[t]]
        sweep_table(rows, cnt, hv, h, z, state)
        if geometric:
            logw += (taus[s + 1] - tau) * log_joint_difference(logrowsA, logrowsB, alphaA, alphaB, z, cnt)
        else:
            logw += _log_convex_ratio(rowsA, logrowsA, rowsB, logrowsB, alphaA, alphaB, z, cnt, tau,
                                      taus[s + 1])
    return logw
