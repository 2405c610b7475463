"""Numba kernels that anneal topic assignments from one LDA model to another (Foulds & Smyth
2014), with phi and alpha fixed within each model and z shared (same number of topics).

Two families of intermediate distributions f_tau, tau from 0 (model B) to 1 (model A), both with
the Dirichlet-multinomial term over z at their end points:
- geometric: f_tau(z) = P(w, z | A)^tau P(w, z | B)^(1 - tau); a site's conditional is
  [phiA_tw (n_t + alphaA_t)]^tau [phiB_tw (n_t + alphaB_t)]^(1 - tau);
- convex: f_tau(z) = P(w, z | phi_tau, alpha_tau) with phi_tau = tau phiA + (1 - tau) phiB and
  alpha_tau = tau alphaA + (1 - tau) alphaB, a genuine LDA posterior whose Gibbs step uses
  alpha_tau.
Mixtures go through `_mix`, exact at tau = 0 and 1 (see there). Both conditionals have the
form row[t] * h(t, n_t): the kernels keep a table h[t, k] for every count k, so one sweep
kernel serves both paths. Counts `cnt` are int64.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import FLUSH, FM, _draw, anneal_from_prior, burned_in, lgamma_rise, log_lik, sample_prior


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


@njit(cache=True, fastmath=FM)
def log_dm_counts(cnt, alpha, total):
    """log P(z | alpha) for integer topic counts (eq. 5 of Wallach et al.)."""
    A = 0.0
    s = 0.0
    for t in range(alpha.shape[0]):
        A += alpha[t]
        s += lgamma_rise(alpha[t], float(cnt[t]))
    return s - lgamma_rise(A, float(total))


@njit(inline="always", fastmath=FM)
def _mix(tau, a, b):
    """tau a + (1 - tau) b, exact at the end points. Under fastmath LLVM may refactor the sum
    into b + tau (a - b), which cancels to 0 when a << b and tau = 1; at tau < 1 that
    refactoring costs at most ulp(b) / ((1 - tau) b), below 1e-9 for any schedule here."""
    if tau == 1.0:
        return a
    if tau == 0.0:
        return b
    return tau * a + (1.0 - tau) * b


@njit(inline="always", fastmath=FM)
def _log_mix(la, lb, tau):
    """log(tau e^la + (1 - tau) e^lb) for log-probabilities that may be tiny or -inf."""
    x = math.log(tau) + la if tau > 0.0 else -np.inf
    y = math.log(1.0 - tau) + lb if tau < 1.0 else -np.inf
    m = max(x, y)
    if m == -np.inf:
        return -np.inf
    return m + math.log(math.exp(x - m) + math.exp(y - m))


@njit(cache=True, fastmath=FM)
def _log_convex_ratio(rowsA, logrowsA, rowsB, logrowsB, alphaA, alphaB, z, cnt, tau0, tau1):
    """log f_tau1(z) - log f_tau0(z) on the convex path (row scales cancel). Positions whose
    entries were flushed to 0 in `rows` are evaluated exactly from `logrows`."""
    N = z.shape[0]
    lp = 0.0
    for i in range(N):
        a = rowsA[i, z[i]]
        b = rowsB[i, z[i]]
        if a == 0.0 or b == 0.0:
            la = logrowsA[i, z[i]]
            lb = logrowsB[i, z[i]]
            lp += _log_mix(la, lb, tau1) - _log_mix(la, lb, tau0)
        else:
            lp += math.log(_mix(tau1, a, b) / _mix(tau0, a, b))
    T = alphaA.shape[0]
    a0 = np.empty(T)
    a1 = np.empty(T)
    for t in range(T):
        a0[t] = _mix(tau0, alphaA[t], alphaB[t])
        a1[t] = _mix(tau1, alphaA[t], alphaB[t])
    return lp + log_dm_counts(cnt, a1, N) - log_dm_counts(cnt, a0, N)


@njit(cache=True, fastmath=FM)
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
                    rows[i, t] = _mix(tau, rowsA[i, t], rowsB[i, t])
            for t in range(T):
                at = _mix(tau, alphaA[t], alphaB[t])
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


@njit(cache=True, fastmath=FM)
def _counts(na, alpha):
    cnt = np.empty(alpha.shape[0], np.int64)
    for t in range(alpha.shape[0]):
        cnt[t] = int(round(na[t] - alpha[t]))
    return cnt


@njit(cache=True, fastmath=FM)
def ratio_chains(rows_s, logrows_s, alpha_s, rows_d, logrows_d, alpha_d, start_taus, path_taus,
                 ais_start, burn_in, geometric, chains, state):
    """`chains` independent chains from model s (source) to model d (destination). Each starts
    with AIS from the prior to s (`ais_start`, weight kept) or `burn_in` Gibbs sweeps under s
    (weight 0), then anneals s -> d. Returns (chains, 2): start and path log weights."""
    N = rows_s.shape[0]
    out = np.empty((chains, 2))
    for m in range(chains):
        if ais_start:
            z = np.zeros(N, np.int64)
            na = alpha_s.copy()
            sample_prior(na, alpha_s, z, 0, N, state)
            out[m, 0] = anneal_from_prior(rows_s, logrows_s, alpha_s, start_taus, 0, z, na, state)
        else:
            z, na = burned_in(rows_s, alpha_s, N, burn_in, state)
            out[m, 0] = 0.0
        cnt = _counts(na, alpha_s)
        out[m, 1] = anneal_pair(rows_d, logrows_d, alpha_d, rows_s, logrows_s, alpha_s, path_taus,
                                geometric, z, cnt, state)
    return out


@njit(cache=True, fastmath=FM)
def curve_chains(rows, logrows, alphas, first_taus, path_taus, chains, state):
    """Iteration-AIS: `chains` chains through models 0..K-1 (prior -> 0 by AIS, then k-1 -> k
    on the convex path). Returns (chains, K) cumulative log weights (row scales excluded)."""
    K, N, T = rows.shape
    out = np.empty((chains, K))
    for m in range(chains):
        z = np.zeros(N, np.int64)
        na = alphas[0].copy()
        sample_prior(na, alphas[0], z, 0, N, state)
        lw = anneal_from_prior(rows[0], logrows[0], alphas[0], first_taus, 0, z, na, state)
        out[m, 0] = lw
        cnt = _counts(na, alphas[0])
        for k in range(1, K):
            lw += anneal_pair(rows[k], logrows[k], alphas[k], rows[k - 1], logrows[k - 1],
                              alphas[k - 1], path_taus, False, z, cnt, state)
            out[m, k] = lw
    return out
