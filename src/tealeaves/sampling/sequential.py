"""Left-to-right estimators of log P(w_start.. | w_<start) = sum_{n >= start} log P(w_n | w_<n),
over sparse Gibbs draws (`sparse`). Each returns the sum of log factor estimates less the row
scales. `rows` and `cum` are a document's rows and prior table, `A` = sum of alpha.

- `smc`: a particle filter that is unbiased for P(w) at any number of particles R (the standard
  fully adapted construction; Buntine 2009 for topic models). At position n every particle's
  predictive p_n^(r) = sum_t phi[t, w_n] (n_t^(r) + alpha_t) / (n + A) is computed from its z_<n;
  the factor estimate is their mean (particles carry equal weights after resampling); particles
  are resampled ∝ p_n^(r) (systematic resampling: each has expected offspring R p / sum p); each
  draws z_n from its conditional; then Gibbs updates of earlier positions rejuvenate it: a pass
  over all of them (`smc-full`, R N(N-1)/2 site updates per document), or, past the first K
  positions, K per position in a cyclic scan (R N K at most). Any move that leaves
  P(z_<=n | w_<=n) invariant keeps E[prod_n factor_n] = P(w) exactly.
- `algorithm3`: Wallach et al. (2009), algorithm 3: particles re-sample z_<n by a Gibbs pass
  before each position but are never reweighted, so the estimate does not converge to P(w).
- `extend_only`: particles only extend, z_n ~ P(z_n | w_n, z_<n), never reweighted (the default
  of a widely used Java implementation); unbiased only with one particle.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import FM
from .rng import uniform
from .sparse import copy_chain, count_mass, new_chains, update


@njit(cache=True, fastmath=FM)
def smc(rows, cum, A, particles, start, state, rejuvenate, multinomial=False, ess=1.0):
    """The particle filter: (log estimate, V) with V the Lee-Whiteley estimate of the relative
    variance Var(P-hat) / P^2 (NaN when start > 0 or `ess` < 1). After extending, every particle is
    rejuvenated by Gibbs updates of z_<=n: a pass over all of z_<n while n <= K = `rejuvenate`
    (always if K < 0: R N(N-1)/2 site updates per document); beyond, the next K positions of a
    cyclic scan over 0..n, which resumes where the previous position's left off (at most R N K site
    updates per document). Resampling is systematic, or multinomial with `multinomial` (the case in
    which V is proven unbiased); at every position if `ess` >= 1, else only when the effective
    sample size (sum W)^2 / sum W^2 of the weights W falls below `ess` R: in between, particles
    carry weights W_r (the product of their predictives since the last resampling) and the factor
    estimate is sum_r W_r p_n^(r) / sum_r W_r (adaptive resampling, still exactly unbiased for
    P(w): Whiteley, Lee & Heine 2016; Del Moral, Doucet & Jasra 2012 for the scheme; the Gibbs
    moves leave each particle's target invariant)."""
    N, T = rows.shape
    R = particles
    Z, CNT, USED, POS, NU, buf = new_chains(R, T, N)
    S = np.empty(R)
    W = np.ones(R)  # carried weights, mean 1 (all 1 right after resampling)
    G = np.empty(R)
    kids = np.zeros(R, np.int64)
    eve = np.arange(R)  # each particle's ancestor among the R independent draws of z_0
    unused = np.zeros(N)
    out = 0.0
    c = 0  # the cyclic scan's next position
    for n in range(N):
        total = 0.0
        for r in range(R):  # W_r p_n^(r), each p_n^(r) <= 1 (rows scaled to a maximum of 1)
            S[r] = count_mass(rows, cum, CNT, USED, NU, r, n) / (n + A)
            G[r] = W[r] * S[r]
            total += G[r]
        if n >= start:
            out += math.log(total / R)
        if n == N - 1:
            break
        if ess >= 1.0 or _ess_below(G, total, ess * R):
            if multinomial:
                _multinomial(G, total, kids, state)
            else:
                _systematic(G, total, kids, state)
            _replace_dead(kids, Z, CNT, USED, POS, NU, n, eve)
            W[:] = 1.0
        else:  # carry the weights, rescaled to mean 1
            for r in range(R):
                W[r] = G[r] * R / total
        if n == 0:  # z_<0 is empty, every particle the same: the genealogy starts with z_0
            eve[:] = np.arange(R)
        # every particle: extend by z_n, then rejuvenate
        update(rows, cum, Z, CNT, USED, POS, NU, n, n + 1, False, n, unused, buf, state)
        if rejuvenate < 0 or n <= rejuvenate:  # a Gibbs pass over z_<n
            update(rows, cum, Z, CNT, USED, POS, NU, 0, n, False, N, unused, buf, state)
        else:  # positions c, c+1, ... (mod n+1): K in all
            left = rejuvenate
            while left > 0:
                if c > n:
                    c = 0
                hi = min(c + left, n + 1)
                update(rows, cum, Z, CNT, USED, POS, NU, c, hi, False, N, unused, buf, state)
                left -= hi - c
                c = hi
    v = lee_whiteley(S, eve, N - 1) if start == 0 and ess >= 1.0 else np.nan
    return out, v


@njit(inline="always")
def _ess_below(G, total, least):
    """Whether the effective sample size total^2 / sum G^2 of the weights G is below `least`."""
    sq = 0.0
    for r in range(G.shape[0]):
        sq += G[r] * G[r]
    return total * total < least * sq


@njit(cache=True)
def lee_whiteley(S, eve, generations):
    """Lee & Whiteley (2018, Biometrika 105(3); their V_n^N(phi) with phi = G_n): the relative
    variance of the particle estimate of the normalising constant, from one run,

        V = 1 - (R / (R - 1))^(n+1) sum_{i, j: E_i != E_j} G_i G_j / (sum_i G_i)^2,

    where G_i = S[i] are the last position's weights, E_i the particles' Eve indices (which of
    the first generation's R independent draws each descends from; carried through resampling,
    not changed by the Gibbs moves) and n + 1 = `generations` (positions with weights after the
    first draw). Z-hat^2 V is unbiased for Var(Z-hat) with multinomial resampling at every step
    (their main result), so V is the relative variance up to the factor Z-hat^2 / Z^2. The pair sum
    is (sum G)^2 - sum_e (sum_{E_i = e} G_i)^2, O(R)."""
    R = S.shape[0]
    if generations <= 0:
        return 0.0
    per_eve = np.zeros(R)
    total = 0.0
    for i in range(R):
        per_eve[eve[i]] += S[i]
        total += S[i]
    same = 0.0
    for e in range(R):
        same += (per_eve[e] / total) ** 2
    if R == 1:  # one lineage: V is undefined; all pairs share the Eve
        return np.nan
    return 1.0 - math.exp(generations * math.log(R / (R - 1.0))) * (1.0 - same)


@njit(inline="always")
def _multinomial(S, total, kids, state):
    """Offspring counts of multinomial resampling: R independent draws from S / total (sorted
    uniforms located in the running sums of S)."""
    R = S.shape[0]
    u = np.empty(R)
    for k in range(R):
        u[k] = uniform(state) * total
    u.sort()
    k = 0
    c = 0.0
    for r in range(R):
        c += S[r]
        m = 0
        while k < R and u[k] < c:
            k += 1
            m += 1
        kids[r] = m
    if k < R:  # rounding: the remaining points go to the last particle with mass
        r = R - 1
        while S[r] == 0.0:
            r -= 1
        kids[r] += R - k


@njit(inline="always")
def _systematic(S, total, kids, state):
    """Offspring counts of systematic resampling: particle r gets the number of the points
    (U + k) total / R, k = 0..R-1, U ~ uniform(0, 1), in its interval of the running sums of S
    (expected offspring R S_r / total, which keeps the estimator unbiased)."""
    R = S.shape[0]
    step = total / R
    U = uniform(state)
    k = 0
    c = 0.0
    for r in range(R):
        c += S[r]
        m = 0
        while k < R and (U + k) * step < c:
            k += 1
            m += 1
        kids[r] = m
    if k < R:  # rounding put the last point at the very end: the last particle with mass
        r = R - 1
        while S[r] == 0.0:
            r -= 1
        kids[r] += R - k


@njit(inline="always")
def _replace_dead(kids, Z, CNT, USED, POS, NU, n, eve):
    """Particles with k >= 1 offspring keep their slot and fill k - 1 slots of particles with
    none (copies of z_<n, the counts, the used list and the Eve index)."""
    R = kids.shape[0]
    dead = 0
    for a in range(R):
        for _ in range(kids[a] - 1):
            while kids[dead] != 0:
                dead += 1
            kids[dead] = 1  # filled: never chosen again
            copy_chain(Z, CNT, USED, POS, NU, a, dead, n)
            eve[dead] = eve[a]


@njit(cache=True, fastmath=FM)
def algorithm3(rows, cum, A, particles, start, state):
    N, T = rows.shape
    mass = np.zeros(N)
    norm = np.zeros(N)
    for _ in range(particles):
        Z, CNT, USED, POS, NU, buf = new_chains(1, T, N)
        for n in range(N):  # a Gibbs pass over z_<n, then z_n: one forward pass 0..n
            update(rows, cum, Z, CNT, USED, POS, NU, 0, n + 1, False, n, norm, buf, state)
            mass[n] += norm[n] / (n + A)
            norm[n] = 0.0
    return _log_factors(mass, particles, start)


@njit(cache=True, fastmath=FM)
def extend_only(rows, cum, A, particles, start, state):
    """One particle at a time (the same draws as all at once), so that each one's normalisers are
    divided by n + A before they are summed (`_log_factors`)."""
    N, T = rows.shape
    Z, CNT, USED, POS, NU, buf = new_chains(1, T, N)
    mass = np.zeros(N)
    norm = np.zeros(N)
    for _ in range(particles):
        for j in range(NU[0]):  # empty the chain
            CNT[0, USED[0, j]] = 0
        NU[0] = 0
        update(rows, cum, Z, CNT, USED, POS, NU, 0, N, False, 0, norm, buf, state)
        for n in range(N):
            mass[n] += norm[n] / (n + A)
            norm[n] = 0.0
    return _log_factors(mass, particles, start)


@njit(inline="always")
def _log_factors(mass, particles, start):
    """sum_{n >= start} log of the mean predictive, mass[n] / R, where mass[n] sums the particles'
    predictives sum_t rows[n, t] (n_t + alpha_t) / (n + A), each at most 1: each is divided by
    n + A before the sum, which R (n + A) would overflow when sum alpha is near the largest float
    (red team 6, F14: NaN at alpha = [1e308, 1e-300])."""
    out = 0.0
    for n in range(start, mass.shape[0]):
        out += math.log(mass[n] / particles)
    return out


__all__ = ["smc", "lee_whiteley", "algorithm3", "extend_only"]
