"""Bridge sampling over theta from one Gibbs chain (the `bridge` estimator's inner loop).

P(w) = int p(w | theta) Dir(theta; alpha) d theta. A collapsed Gibbs chain over z gives count
vectors n^(s); given z, theta | z, w ~ Dir(alpha + n(z)) exactly, so the posterior of theta is the
mixture E_z[Dir(alpha + n(z))]. The proposal q is that mixture over the chain's first `comps`
sweeps, widened by lambda = `temper` in (0, 1]: q(theta) = (1/K) sum_k Dir(theta; alpha + lambda n^(k))
(any lambda > 0 is a valid proposal: q's density is evaluated exactly); posterior draws come from the next
`post` sweeps (theta ~ Dir(alpha + n^(s)), one per sweep, independent of q's components), and
`draws` proposal draws from q. With l(theta) = log p(w | theta) Dir(theta; alpha) - log q(theta)
(Dir(theta; alpha) cancels: q's components are alpha + lambda counts), the optimal bridge of Meng &
Wong (1996, eq. 4.1) solves

    r = mean_q[ 1 / (s1 + s2 r e^{-l}) ] / mean_post[ 1 / (s1 e^{l} + s2 r) ],  s_i = n_i / (n1 + n2),

by its fixed-point iteration, in logs (bisection on the same equation where the iteration
oscillates: sides thousands of nats apart). Its relative mean squared error (Fruhwirth-Schnatter 2004, eq. 14)
is Var_q(f2) / (n2 E f2^2) + tau Var_post(f1) / (n1 E f1^2), f2 = p / (s1 p + s2 q) at the
proposal draws, f1 = q / (s1 p + s2 q) at the posterior draws, tau the integrated
autocorrelation time of f1 along the chain (Geyer's initial positive sequence).

Each document's unique words are scored once (log p(w | theta) = sum_v c_v log theta . phi_v):
a draw costs O(U T + T + K k) for U distinct words, K components of k used topics each.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import FM, logmeanexp
from .rng import step, uniform
from .sparse import new_chains, update


@njit(cache=True, fastmath=FM)
def unique_rows(rows, words):
    """The rows of the document's distinct words and their counts: (U x T rows, U counts)."""
    N, T = rows.shape
    order = np.argsort(words, kind="mergesort")
    U = 0
    for j in range(N):
        if j == 0 or words[order[j]] != words[order[j - 1]]:
            U += 1
    out = np.empty((U, T))
    cnt = np.zeros(U)
    u = -1
    for j in range(N):
        i = order[j]
        if j == 0 or words[i] != words[order[j - 1]]:
            u += 1
            for t in range(T):
                out[u, t] = rows[i, t]
        cnt[u] += 1.0
    return out, cnt


@njit(cache=True, fastmath=FM)
def _log_theta(alpha, tops, vals, lo, hi, shape, out, state):
    """out = log theta, theta ~ Dir(alpha + counts), the counts (tops[j], vals[j]) for lo <= j < hi:
    normalised log-Gamma variates (no underflow for tiny shapes), each by Marsaglia & Tsang (2000)
    with normals from the polar method, both of a pair used; a shape a < 1 as
    log G(a + 1) + log(U) / a. `shape` holds alpha on entry and on exit. The generator's state is
    held in locals (`rng.step`), as in `sparse.update`."""
    T = alpha.shape[0]
    for j in range(lo, hi):
        shape[tops[j]] += vals[j]
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    spare = 0.0
    have = False
    top = -np.inf
    for t in range(T):
        a = shape[t]
        boost = 0.0
        if a < 1.0:
            u, s0, s1, s2, s3 = step(s0, s1, s2, s3)
            boost = math.log(u) / a
            a += 1.0
        d = a - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            if have:
                x = spare
                have = False
            else:
                while True:
                    u, s0, s1, s2, s3 = step(s0, s1, s2, s3)
                    w, s0, s1, s2, s3 = step(s0, s1, s2, s3)
                    p = 2.0 * u - 1.0
                    q = 2.0 * w - 1.0
                    r2 = p * p + q * q
                    if 0.0 < r2 < 1.0:
                        break
                f = math.sqrt(-2.0 * math.log(r2) / r2)
                x = p * f
                spare = q * f
                have = True
            v = 1.0 + c * x
            if v <= 0.0:
                continue
            v = v * v * v
            u, s0, s1, s2, s3 = step(s0, s1, s2, s3)
            x2 = x * x
            if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
                break
        out[t] = math.log(d * v) + boost
        if out[t] > top:
            top = out[t]
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    s = 0.0
    for t in range(T):
        s += math.exp(out[t] - top)
    norm = top + math.log(s)
    for t in range(T):
        out[t] -= norm
    for j in range(lo, hi):
        shape[tops[j]] = alpha[tops[j]]


@njit(cache=True, fastmath=FM)
def _log_lik(urows, ucount, lth, theta):
    """sum_v c_v log sum_t rows[v, t] theta_t (log p(w | theta) less the row scales)."""
    U, T = urows.shape
    for t in range(T):
        theta[t] = math.exp(lth[t])
    s = 0.0
    for v in range(U):
        x = 0.0
        for t in range(T):
            x += urows[v, t] * theta[t]
        s += ucount[v] * math.log(x)
    return s


@njit(cache=True, fastmath=FM)
def _log_q(lth, tops, vals, off, K, cst, tmp):
    """log q(theta) - log Dir(theta; alpha) = log mean_k exp(sum_{t used} n_t^(k) log theta_t - cst_k),
    cst_k = log B(alpha + n^(k)) - log B(alpha). Terms more than 40 nats below the largest (each
    below 4e-18 of it) are left out of the sum: no change in double precision beyond rounding,
    and most of the exponentials on long documents."""
    top = -np.inf
    for k in range(K):
        x = -cst[k]
        for j in range(off[k], off[k + 1]):
            x += vals[j] * lth[tops[j]]
        tmp[k] = x
        if x > top:
            top = x
    s = 0.0
    floor = top - 40.0
    for k in range(K):
        if tmp[k] > floor:
            s += math.exp(tmp[k] - top)
    return top + math.log(s / K)


@njit(cache=True, fastmath=FM)
def _log1pexp(x):
    """log(1 + e^x) without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0.0 else math.log1p(math.exp(x))


@njit(cache=True, fastmath=FM)
def _log_f(ls, r, s1, s2, sign, out):
    """out = log f at each l in ls: f = 1 / (s1 + s2 e^{r - l}) (sign = 1, the proposal's side) or
    1 / (s1 e^{l - r} + s2) (sign = -1, the posterior's side), in logs: no overflow or underflow
    however far the two sides are apart."""
    for i in range(ls.shape[0]):
        if sign > 0:
            out[i] = -(math.log(s1) + _log1pexp(math.log(s2 / s1) + r - ls[i]))
        else:
            out[i] = -(math.log(s2) + _log1pexp(math.log(s1 / s2) + ls[i] - r))
    return out


@njit(cache=True, fastmath=FM)
def _step(l1, l2, r, s1, s2, f1, f2):
    """h(r) = log mean f2 - log mean f1: the fixed-point iteration's step, r -> r + h(r); h falls
    strictly as r grows and is 0 at the optimal bridge estimate."""
    return logmeanexp(_log_f(l2, r, s1, s2, 1, f2)) - logmeanexp(_log_f(l1, r, s1, s2, -1, f1))


@njit(cache=True, fastmath=FM)
def solve(l1, l2):
    """The optimal bridge estimate log r from l at the posterior draws (l1) and at the proposal
    draws (l2): Meng & Wong's fixed-point iteration from the importance-sampling estimate, each mean
    taken in logs (the two sides may be thousands of nats apart). Where the sides barely overlap
    the iteration r -> r + h(r) oscillates (r -> c - r); then the root of h, which falls strictly,
    is found by bisection."""
    n1, n2 = l1.shape[0], l2.shape[0]
    s1 = n1 / (n1 + n2)
    s2 = n2 / (n1 + n2)
    f2 = np.empty(n2)
    f1 = np.empty(n1)
    r = logmeanexp(l2)
    for _ in range(100):
        h = _step(l1, l2, r, s1, s2, f1, f2)
        if abs(h) < 1e-12 * max(1.0, abs(r)):
            return r + h
        r += h
    lo, hi = r, r
    width = 1.0
    while _step(l1, l2, lo, s1, s2, f1, f2) < 0.0:
        lo -= width
        width *= 2.0
    width = 1.0
    while _step(l1, l2, hi, s1, s2, f1, f2) > 0.0:
        hi += width
        width *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _step(l1, l2, mid, s1, s2, f1, f2) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


@njit(cache=True, fastmath=FM)
def _autocorrelation_time(x):
    """Integrated autocorrelation time of the series x: 1 + 2 sum of autocorrelations, summed in
    consecutive pairs while the pair sums stay positive (Geyer 1992's initial positive sequence)."""
    n = x.shape[0]
    m = 0.0
    for v in x:
        m += v
    m /= n
    c0 = 0.0
    for v in x:
        c0 += (v - m) ** 2
    c0 /= n
    if c0 <= 0.0:
        return 1.0
    tau = -1.0
    k = 0
    while k + 1 < n:
        pair = 0.0
        for lag in (k, k + 1):
            c = 0.0
            for i in range(n - lag):
                c += (x[i] - m) * (x[i + lag] - m)
            pair += c / n / c0
        if pair <= 0.0:
            break
        tau += 2.0 * pair
        k += 2
    return max(tau, 1.0)


@njit(cache=True, fastmath=FM)
def _relative_variance(logf):
    """Var(f) / (E f)^2 of the values e^{logf}: scale-free, so taken after dividing by the largest."""
    top = -np.inf
    for v in logf:
        top = max(top, v)
    f = np.exp(logf - top)
    m = f.mean()
    return ((f - m) ** 2).mean() / (m * m), f


@njit(cache=True, fastmath=FM)
def relative_error(l1, l2, r):
    """Fruhwirth-Schnatter's relative mean squared error of the bridge estimate r (module doc)."""
    n1, n2 = l1.shape[0], l2.shape[0]
    s1 = n1 / (n1 + n2)
    s2 = n2 / (n1 + n2)
    v2, _ = _relative_variance(_log_f(l2, r, s1, s2, 1, np.empty(n2)))
    v1, f1 = _relative_variance(_log_f(l1, r, s1, s2, -1, np.empty(n1)))
    return v2 / n2 + _autocorrelation_time(f1) * v1 / n1


@njit(cache=True, fastmath=FM)
def chain_counts(rows, cum, burn_in, sweeps, state):
    """One collapsed Gibbs chain from the sequential initialisation: after `burn_in` sweeps, the
    topic counts of each of the next `sweeps` sweeps, sparse: sweep s holds (tops[j], vals[j]) for
    off[s] <= j < off[s + 1]."""
    N, T = rows.shape
    Z, CNT, USED, POS, NU, buf = new_chains(1, T, N)
    scratch = np.zeros(N)
    update(rows, cum, Z, CNT, USED, POS, NU, 0, N, False, 0, scratch, buf, state)
    for _ in range(burn_in):
        update(rows, cum, Z, CNT, USED, POS, NU, 0, N, False, N, scratch, buf, state)
    tops = np.empty(sweeps * min(N, T), np.int64)
    vals = np.empty(sweeps * min(N, T))
    off = np.zeros(sweeps + 1, np.int64)
    for s in range(sweeps):
        update(rows, cum, Z, CNT, USED, POS, NU, 0, N, False, N, scratch, buf, state)
        o = off[s]
        for j in range(NU[0]):
            t = USED[0, j]
            tops[o + j] = t
            vals[o + j] = CNT[0, t]
        off[s + 1] = o + NU[0]
    return tops, vals, off


@njit(cache=True, fastmath=FM)
def gibbs_bridge(rows, cum, alpha, words, burn_in, comps, post, draws, state, temper=1.0):
    """One run: (log P(w) less the row scales, its relative mean squared error). The chain starts
    from the sequential initialisation, runs `burn_in` sweeps, then `comps` sweeps whose counts,
    times `temper` (lambda), are q's components Dir(alpha + lambda n^(k)), and `post` sweeps each
    giving one posterior draw; `draws` proposal draws. Any lambda > 0 gives a valid proposal (its
    density is evaluated exactly); lambda < 1 widens each component."""
    N, T = rows.shape
    A = 0.0
    for t in range(T):
        A += alpha[t]
    urows, ucount = unique_rows(rows, words)
    tops, vals, off = chain_counts(rows, cum, burn_in, comps + post, state)
    qvals = vals.copy()
    for j in range(off[comps]):
        qvals[j] = temper * vals[j]
    lgA = math.lgamma(A + temper * N) - math.lgamma(A)
    cst = np.empty(comps)
    for k in range(comps):
        x = 0.0
        for j in range(off[k], off[k + 1]):
            a = alpha[tops[j]]
            x += math.lgamma(a + qvals[j]) - math.lgamma(a)
        cst[k] = x - lgA
    shape = alpha.copy()
    lth = np.empty(T)
    theta = np.empty(T)
    tmp = np.empty(comps)
    l1 = np.empty(post)
    for j in range(post):
        s = comps + j
        _log_theta(alpha, tops, vals, off[s], off[s + 1], shape, lth, state)
        l1[j] = _log_lik(urows, ucount, lth, theta) - _log_q(lth, tops, qvals, off, comps, cst, tmp)
    l2 = np.empty(draws)
    for m in range(draws):
        k = min(int(uniform(state) * comps), comps - 1)
        _log_theta(alpha, tops, qvals, off[k], off[k + 1], shape, lth, state)
        l2[m] = _log_lik(urows, ucount, lth, theta) - _log_q(lth, tops, qvals, off, comps, cst, tmp)
    r = solve(l1, l2)
    return r, relative_error(l1, l2, r)


__all__ = ["chain_counts", "gibbs_bridge", "solve", "relative_error", "unique_rows"]
