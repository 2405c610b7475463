"""Inner loops of the estimators that run one Gibbs chain on a document, over sparse draws
(`sparse`): Chib-style, harmonic mean, estimated theta (completion) and the posterior mean of
theta (intrusion). Results exclude the row scales, as in `kernels`. `cum` is the document's
prior table (`PreparedDoc.cum`)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import FM, climb, log_dm, log_lik, logmeanexp
from .rng import uniform
from .sparse import copy_chain, count_mass, log_forced, new_chains, set_assignments, update


@njit(cache=True, fastmath=FM)
def burned_in(rows, cum, n_pos, sweeps, chains, state):
    """`chains` states for positions 0..n_pos-1 of an N-position document: sequential
    initialisation z_i ~ P(z_i | w_i, z_<i), then `sweeps` Gibbs sweeps; positions >= n_pos are
    left out of the counts. Returns (Z, CNT, USED, POS, NU, buf)."""
    N, T = rows.shape
    Z, CNT, USED, POS, NU, buf = new_chains(chains, T, N)
    scratch = np.zeros(N)
    update(rows, cum, Z, CNT, USED, POS, NU, 0, n_pos, False, 0, scratch, buf, state)
    for _ in range(sweeps):
        update(rows, cum, Z, CNT, USED, POS, NU, 0, n_pos, False, N, scratch, buf, state)
    return Z, CNT, USED, POS, NU, buf


@njit(cache=True, fastmath=FM)
def chib(rows, logrows, cum, alpha, chain_length, init_sweeps, max_climb, state):
    """Algorithm 2 with the Murray & Salakhutdinov (2009) proposal: returns
    log P(w, z*) - log (1/S) sum_s T(z* <- z^(s)) (row scales excluded), eq. (23).

    z*: sequential initialisation, `init_sweeps` Gibbs sweeps, then iterated conditional modes
    until no change. The chain: s uniform in 1..S, z^(s) ~ T~(. <- z*), forward sweeps for
    s' > s from z^(s), reverse sweeps for s' < s, also from z^(s). Chain 0 runs forward, chain 1
    backward, chain 2 is the scratch copy each T(z* <- .) is computed on."""
    N, T = rows.shape
    Z, CNT, USED, POS, NU, buf = burned_in(rows, cum, N, init_sweeps, 3, state)
    na = alpha.copy()
    for t in range(T):
        na[t] += CNT[0, t]
    z = Z[0].copy()
    climb(rows, na, alpha, z, max_climb)
    zstar = z.copy()
    set_assignments(Z, CNT, USED, POS, NU, 0, zstar)
    counts = np.zeros(T)
    for i in range(N):
        counts[zstar[i]] += 1.0
    log_joint = log_lik(logrows, zstar, 0, N) + log_dm(counts, alpha, N)
    S = chain_length
    logT = np.empty(S)
    s = min(int(uniform(state) * S), S - 1)
    scratch = np.zeros(N)
    fwd = (Z[0:1], CNT[0:1], USED[0:1], POS[0:1], NU[0:1])
    bwd = (Z[1:2], CNT[1:2], USED[1:2], POS[1:2], NU[1:2])
    update(rows, cum, *fwd, 0, N, True, N, scratch, buf, state)  # z^(s) ~ T~(. <- z*)
    copy_chain(Z, CNT, USED, POS, NU, 0, 1, N)
    copy_chain(Z, CNT, USED, POS, NU, 0, 2, N)
    logT[s] = log_forced(rows, cum, alpha, Z, CNT, USED, POS, NU, 2, zstar)
    for j in range(s + 1, S):
        update(rows, cum, *fwd, 0, N, False, N, scratch, buf, state)
        copy_chain(Z, CNT, USED, POS, NU, 0, 2, N)
        logT[j] = log_forced(rows, cum, alpha, Z, CNT, USED, POS, NU, 2, zstar)
    for j in range(s - 1, -1, -1):
        update(rows, cum, *bwd, 0, N, True, N, scratch, buf, state)
        copy_chain(Z, CNT, USED, POS, NU, 1, 2, N)
        logT[j] = log_forced(rows, cum, alpha, Z, CNT, USED, POS, NU, 2, zstar)
    return log_joint - logmeanexp(logT)


@njit(cache=True, fastmath=FM)
def harmonic_mean_samples(rows, logrows, cum, burn_in, samples, state):
    """log P(w | z^(s)) (row scales excluded) for `samples` Gibbs sweeps after `burn_in`."""
    N = rows.shape[0]
    Z, CNT, USED, POS, NU, buf = burned_in(rows, cum, N, burn_in, 1, state)
    scratch = np.zeros(N)
    out = np.empty(samples)
    for s in range(samples):
        update(rows, cum, Z, CNT, USED, POS, NU, 0, N, False, N, scratch, buf, state)
        out[s] = log_lik(logrows, Z[0], 0, N)
    return out


@njit(cache=True, fastmath=FM)
def estimated_theta(rows, cum, alpha, n_obs, burn_in, samples, state):
    """Eq. (27): for each Gibbs sample z1 of w1 (positions < n_obs), theta_t =
    (N_t + alpha_t) / (n_obs + sum alpha) and log prod_{i >= n_obs} sum_t phi[t, w_i] theta_t
    (row scales excluded)."""
    N = rows.shape[0]
    A = 0.0
    for t in range(alpha.shape[0]):
        A += alpha[t]
    Z, CNT, USED, POS, NU, buf = burned_in(rows, cum, n_obs, burn_in, 1, state)
    scratch = np.zeros(N)
    out = np.empty(samples)
    for s in range(samples):
        update(rows, cum, Z, CNT, USED, POS, NU, 0, n_obs, False, N, scratch, buf, state)
        lp = 0.0
        for i in range(n_obs, N):
            lp += math.log(count_mass(rows, cum, CNT, USED, NU, 0, i) / (n_obs + A))
        out[s] = lp
    return out


@njit(cache=True, fastmath=FM)
def posterior_theta(rows, cum, alpha, burn_in, samples, state):
    """Posterior mean of theta given w and the model: the average over Gibbs samples z^(s)
    (after `burn_in` sweeps) of E[theta | z^(s)] = (N_t + alpha_t) / (N + sum alpha)."""
    N, T = rows.shape
    A = 0.0
    for t in range(T):
        A += alpha[t]
    Z, CNT, USED, POS, NU, buf = burned_in(rows, cum, N, burn_in, 1, state)
    scratch = np.zeros(N)
    total = np.zeros(T)
    for _ in range(samples):
        update(rows, cum, Z, CNT, USED, POS, NU, 0, N, False, N, scratch, buf, state)
        for j in range(NU[0]):
            t = USED[0, j]
            total[t] += CNT[0, t]
    out = np.empty(T)
    for t in range(T):
        out[t] = (total[t] / samples + alpha[t]) / (N + A)
    return out
