"""Dense numba kernels over one document's `PreparedDoc` arrays: the tempered sweeps of AIS
(whose powered rows change with every temperature, so the sparse split of `sparse` does not
pay), importance sampling, iterated conditional modes and the exact dynamic programme. Chains at
the untempered posterior run on `sparse` draws (`chains`, `sequential`).

State of a document: topic assignments `z` (int64, length N) and `na[t] = n_t + alpha_t`
(float64, length T), where n_t counts the positions assigned to topic t, updated by +1/-1.
These updates cannot drift: while na < 2, x - 1 is exact (Sterbenz), so after one round trip
alpha_t sits on the grid of 2^-52 and stays there; above 2 every value stays on the grid of
its binade, so the error is bounded by ulp(N + alpha), never a random walk, and na >= 0.
Positions `lo <= i < hi` are the ones a kernel touches, so document completion can treat
the observed part w1 and the held-out part w2 differently.

The Gibbs site update is eq. (7) of Wallach et al. (2009):
    P(z_i = t | w, z_-i) ∝ phi[t, w_i] (n_t^-i + alpha_t);
the tempered update of eq. (16) is the same with phi[t, w_i]^tau, so every kernel takes
"rows" that are either the document's rows or their powers. `log_dm` is eq. (5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .rng import uniform

# Every kernel uses the same flags: numba compiles a callee with its first caller's flags and
# reuses that code, so mixed flags would make results depend on the order of first calls.
# No nnan/ninf: -inf is a legal log value here.
FM = {"reassoc", "contract", "nsz", "arcp"}
FLUSH = 1e-300


@njit(inline="always", fastmath=FM)
def _draw(row, na, state):
    """Sample t ∝ row[t] na[t]; return (t, normaliser)."""
    T = row.shape[0]
    s = 0.0
    for t in range(T):
        s += row[t] * na[t]
    u = uniform(state) * s
    k = 0
    u -= row[0] * na[0]
    while u > 0.0 and k < T - 1:
        k += 1
        u -= row[k] * na[k]
    if u > 0.0:  # rounding left u past the last topic: take the last one with mass
        while k > 0 and row[k] * na[k] == 0.0:
            k -= 1
    return k, s


@njit(cache=True, fastmath=FM)
def sweep(rows, na, alpha, z, lo, hi, reverse, state):
    """One Gibbs sweep over positions lo..hi-1 (forward), or hi-1..lo (`reverse`: the
    reverse operator T~ of the Chib-style estimator)."""
    for j in range(hi - lo):
        i = hi - 1 - j if reverse else lo + j
        # written out, not a helper: measured 1.5x faster in numba 0.68
        na[z[i]] -= 1.0
        k, _ = _draw(rows[i], na, state)
        z[i] = k
        na[k] += 1.0


@njit(cache=True, fastmath=FM)
def init_sequential(rows, na, alpha, z, lo, hi, state):
    """Add positions lo..hi-1 one at a time, z_i ~ P(z_i | w_i, z_<i) (no resampling)."""
    for i in range(lo, hi):
        k, _ = _draw(rows[i], na, state)
        z[i] = k
        na[k] += 1.0


@njit(cache=True, fastmath=FM)
def burned_in(rows, alpha, n_pos, sweeps, state):
    """A state for positions 0..n_pos-1 of an N-position document: sequential initialisation
    (`init_sequential`) then `sweeps` Gibbs sweeps; positions >= n_pos are left unassigned."""
    na = alpha.copy()
    z = np.zeros(rows.shape[0], np.int64)
    init_sequential(rows, na, alpha, z, 0, n_pos, state)
    for _ in range(sweeps):
        sweep(rows, na, alpha, z, 0, n_pos, False, state)
    return z, na


@njit(cache=True, fastmath=FM)
def sample_prior(na, alpha, z, lo, hi, state):
    """Draw z_lo..z_hi-1 from the Dirichlet-multinomial prior given the counts already in
    `na` (a Polya urn: z_i ∝ n_t + alpha_t), adding them."""
    T = alpha.shape[0]
    for i in range(lo, hi):
        s = 0.0
        for t in range(T):
            s += na[t]
        u = uniform(state) * s
        k = 0
        u -= na[0]
        while u > 0.0 and k < T - 1:
            k += 1
            u -= na[k]
        z[i] = k
        na[k] += 1.0


@njit(cache=True, fastmath=FM)
def log_lik(logrows, z, lo, hi):
    """sum_{lo <= i < hi} log rows[i, z_i]  (log P(w | z, Phi) less the row scales)."""
    s = 0.0
    for i in range(lo, hi):
        s += logrows[i, z[i]]
    return s


@njit(inline="always", fastmath=FM)
def lgamma_rise(x, n):
    """log Gamma(x + n) - log Gamma(x) for x > 0, n >= 0, to ~1e-13 nats at any x. The plain
    difference loses eps |log Gamma(x)| ~ 2e-16 x log x (7e-3 nats at x = 1e12); above x = 100
    it is taken from Stirling's series, whose large terms cancel analytically:
    (x - 1/2) log1p(n / x) + n log(x + n) - n + c(x + n) - c(x), c(y) = 1/(12y) - 1/(360y^3)
    + 1/(1260y^5) (truncation below 1e-17 there)."""
    if n == 0.0:
        return 0.0
    if x < 100.0:
        return math.lgamma(x + n) - math.lgamma(x)
    y = x + n
    cx = (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / (1260.0 * x * x)) / (x * x)) / x
    cy = (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / (1260.0 * y * y)) / (y * y)) / y
    return (x - 0.5) * math.log1p(n / x) + n * (math.log(y) - 1.0) + (cy - cx)


@njit(cache=True, fastmath=FM)
def log_dm(counts, alpha, total):
    """log P(z | alpha m) for a sequence of `total` positions with topic `counts` (eq. 5). Takes
    the counts, not na = counts + alpha: above alpha_t = 2^53, na + 1 rounds back to na."""
    A = 0.0
    s = 0.0
    for t in range(alpha.shape[0]):
        A += alpha[t]
        s += lgamma_rise(alpha[t], float(counts[t]))
    return s - lgamma_rise(A, float(total))


@njit(cache=True, fastmath=FM)
def climb(rows, na, alpha, z, max_passes):
    """Iterated conditional modes: set each z_i to the mode of eq. (7) in turn, repeating
    passes until a whole pass changes nothing. Returns the number of passes."""
    T = rows.shape[1]
    for p in range(max_passes):
        changed = False
        for i in range(z.shape[0]):
            na[z[i]] -= 1.0
            best = 0
            bv = -1.0
            for t in range(T):
                v = rows[i, t] * na[t]
                if v > bv:
                    bv = v
                    best = t
            if best != z[i]:
                changed = True
            z[i] = best
            na[best] += 1.0
        if not changed:
            return p + 1
    return max_passes


@njit(cache=True, fastmath=FM)
def logmeanexp(x):
    """log of the mean of exp(x), without overflow."""
    m = -np.inf
    for v in x:
        if v > m:
            m = v
    if m == -np.inf:
        return -np.inf
    s = 0.0
    for v in x:
        s += math.exp(v - m)
    return m + math.log(s / x.shape[0])


# ---------------------------------------------------------------- estimators' inner loops


@njit(cache=True, fastmath=FM)
def ais(rows, logrows, alpha, taus, n_obs, burn_in, state):
    """Algorithm 1 (and algorithm 4 when n_obs > 0): log of the AIS weight
    prod_s P(w2 | z^(s))^(tau_s - tau_{s-1}) (row scales excluded), where w2 = positions
    >= n_obs. z^(1) comes from P_0: for n_obs = 0 the prior; otherwise burn_in Gibbs sweeps
    on w1 and then the prior predictive for w2 given z1."""
    N = rows.shape[0]
    z, na = burned_in(rows, alpha, n_obs, burn_in if n_obs > 0 else 0, state)
    sample_prior(na, alpha, z, n_obs, N, state)
    return anneal_from_prior(rows, logrows, alpha, taus, n_obs, z, na, state)


@njit(cache=True, fastmath=FM)
def anneal_from_prior(rows, logrows, alpha, taus, n_obs, z, na, state):
    """The annealing loop of algorithm 1 from a state (z, na) drawn from P_0: z^(s) ~ T_{s-1},
    a sweep of the tempered conditional (16) applied to positions >= n_obs (earlier positions
    keep power 1); returns the log weight and leaves (z, na) at the final state.

    Powered rows are updated by multiplying with exp(dtau * logrows), recomputed only when
    the step dtau changes, so a schedule with few distinct steps costs few exponentials."""
    N, T = rows.shape
    powered = np.ones((N, T))
    powered[:n_obs] = rows[:n_obs]
    factor = np.empty((N, T))
    cur = -1.0
    S = taus.shape[0] - 1
    logw = (taus[1] - taus[0]) * log_lik(logrows, z, n_obs, N)
    for s in range(2, S + 1):
        delta = taus[s - 1] - taus[s - 2]
        if abs(delta - cur) > 1e-9 * delta:
            cur = delta
            for i in range(n_obs, N):
                for t in range(T):
                    factor[i, t] = math.exp(delta * logrows[i, t])
        for i in range(n_obs, N):
            for t in range(T):
                v = powered[i, t] * factor[i, t]
                powered[i, t] = v if v >= FLUSH else 0.0
        sweep(powered, na, alpha, z, 0, N, False, state)
        logw += (taus[s] - taus[s - 1]) * log_lik(logrows, z, n_obs, N)
    return logw


@njit(cache=True, fastmath=FM)
def independent_is(logrows, alpha, Q, samples, state):
    """Importance sampling with a proposal independent across tokens, z_i ~ Q[i]:
    log weights log P(w, z) - log Q(z) (row scales excluded)."""
    N, T = Q.shape
    cum = np.empty((N, T))
    logq = np.empty((N, T))
    for i in range(N):
        c = 0.0
        for t in range(T):
            c += Q[i, t]
            cum[i, t] = c
            logq[i, t] = math.log(Q[i, t]) if Q[i, t] > 0.0 else -np.inf
    cnt = np.empty(T)
    out = np.empty(samples)
    for s in range(samples):
        cnt[:] = 0.0
        lw = 0.0
        for i in range(N):
            u = uniform(state) * cum[i, T - 1]
            k = 0
            while cum[i, k] < u and k < T - 1:
                k += 1
            while k > 0 and Q[i, k] == 0.0:
                k -= 1
            lw += logrows[i, k] - logq[i, k]
            cnt[k] += 1.0
        out[s] = lw + log_dm(cnt, alpha, N)
    return out


@njit(cache=True, fastmath=FM)
def iterated_pseudo_counts(rows, alpha, iterations):
    """Eq. (11): Q^(0)(z_i) ∝ alpha_t phi[t, w_i]; then I updates
    Q^(s)(z_i = t) ∝ (alpha_t + sum_{j != i} Q^(s-1)(z_j = t)) phi[t, w_i]."""
    N, T = rows.shape
    Q = np.empty((N, T))
    for i in range(N):
        c = 0.0
        for t in range(T):
            Q[i, t] = alpha[t] * rows[i, t]
            c += Q[i, t]
        for t in range(T):
            Q[i, t] /= c
    tot = np.empty(T)
    for _ in range(iterations):
        tot[:] = 0.0
        for i in range(N):
            for t in range(T):
                tot[t] += Q[i, t]
        newQ = np.empty((N, T))
        for i in range(N):
            c = 0.0
            for t in range(T):
                newQ[i, t] = (alpha[t] + tot[t] - Q[i, t]) * rows[i, t]
                c += newQ[i, t]
            for t in range(T):
                newQ[i, t] /= c
        Q = newQ
    return Q


@njit(cache=True, fastmath=FM)
def _binomials(nmax, kmax):
    C = np.zeros((nmax + 1, kmax + 1), np.int64)
    for a in range(nmax + 1):
        C[a, 0] = 1
        for b in range(1, min(a, kmax) + 1):
            C[a, b] = C[a - 1, b - 1] + (C[a - 1, b] if b <= a - 1 else 0)
    return C


@njit(inline="always", fastmath=FM)
def _rank(c, C):
    """Rank of a weak composition c (T parts) among those with the same sum, by the
    combinatorial number system over its bar positions b_k = c_0 + ... + c_k + k."""
    b = -1
    r = 0
    for k in range(c.shape[0] - 1):
        b += c[k] + 1
        if b >= k + 1:
            r += C[b, k + 1]
    return r


@njit(inline="always", fastmath=FM)
def _next_composition(c):
    """Advance c to the next weak composition with the same sum; False after the last."""
    T = c.shape[0]
    for k in range(T - 2, -1, -1):
        if c[k] > 0:
            c[k] -= 1
            rest = 1
            for j in range(k + 1, T):
                rest += c[j]
                c[j] = 0
            c[k + 1] = rest
            return True
    return False


@njit(cache=True, fastmath=FM)
def exact_log_prob(rows, alpha):
    """log P(w | Phi, alpha m) less the row scales, by dynamic programming over topic-count
    vectors: f_i(c) = sum over z_1..z_i with counts c of prod_j phi[z_j, w_j], built one
    position at a time, then P(w) = sum_c f_N(c) P(z with counts c | alpha m) (eq. 5).
    Cost: `heldout.exact.work`; the caller checks the size first."""
    N, T = rows.shape
    if N == 0:
        return 0.0
    C = _binomials(N + T, T)
    f = np.ones(1)
    log_scale = 0.0
    c = np.zeros(T, np.int64)
    for i in range(N):
        g = np.zeros(C[i + 1 + T - 1, T - 1])
        c[:] = 0
        c[0] = i
        more = True
        while more:
            v = f[_rank(c, C)]
            if v > 0.0:
                for t in range(T):
                    if rows[i, t] > 0.0:
                        c[t] += 1
                        g[_rank(c, C)] += v * rows[i, t]
                        c[t] -= 1
            more = _next_composition(c)
        m = g.max()
        g /= m
        log_scale += math.log(m)
        f = g
    base = -lgamma_rise(alpha.sum(), float(N))
    c[:] = 0
    c[0] = N
    terms = np.empty(f.shape[0])
    j = 0
    more = True
    while more:
        v = f[_rank(c, C)]
        lv = -np.inf
        if v > 0.0:
            lv = math.log(v)
            for t in range(T):
                lv += lgamma_rise(alpha[t], float(c[t]))
        terms[j] = lv
        j += 1
        more = _next_composition(c)
    return log_scale + base + math.log(terms.shape[0]) + logmeanexp(terms)
