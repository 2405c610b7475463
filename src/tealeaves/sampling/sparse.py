"""Gibbs draws that do not pay O(T) per site.

The site conditional of eq. (7), P(z_i = t | w, z_-i) ∝ phi[t, w_i] (n_t + alpha_t), splits as
    phi[t, w_i] alpha_t  +  phi[t, w_i] n_t.
The first part ("prior bucket") depends only on the position: its cumulative sums `cum[i, :]`
over topics (total `cum[i, T-1]`) are built once per document, and a draw from it is a binary
search. The second part ("count bucket") is non-zero only for the topics the state currently
uses, kept in a list. A draw computes the count bucket over that list, picks a bucket with the
right probability and then a topic inside it: an exact draw from eq. (7) at cost O(#used topics +
log T) instead of O(T). At T = 1000 a 200-token document uses a few dozen topics.

Chains are rows of 2-d arrays (`new_chains`): `Z` (uint32, R x N) assignments, `CNT` (uint32,
R x T) topic counts, `USED` (uint32, R x T) the topics with count > 0 in the first `NU[r]`
entries of row r, `POS` (uint32, R x T) each used topic's index in its row of `USED`. Unsigned
indices: numba adds no negative-index wraparound to their loads (measured 6% faster).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels import FM
from .rng import step


@njit(cache=True, fastmath=FM)
def prior_table(rows, alpha):
    """cum[i, t] = sum_{t' <= t} rows[i, t'] alpha_t' (the prior bucket of every position).
    Four rows at a time: a running sum waits for the previous addition, so four independent
    sums run about twice as fast (measured at T = 1000, N = 50); each row's sum is the same."""
    N, T = rows.shape
    cum = np.empty((N, T))
    n4 = N - N % 4
    for i in range(0, n4, 4):
        c0 = c1 = c2 = c3 = 0.0
        for t in range(T):
            a = alpha[t]
            c0 += rows[i, t] * a
            c1 += rows[i + 1, t] * a
            c2 += rows[i + 2, t] * a
            c3 += rows[i + 3, t] * a
            cum[i, t] = c0
            cum[i + 1, t] = c1
            cum[i + 2, t] = c2
            cum[i + 3, t] = c3
    for i in range(n4, N):
        c = 0.0
        for t in range(T):
            c += rows[i, t] * alpha[t]
            cum[i, t] = c
    return cum


@njit(cache=True, fastmath=FM)
def new_chains(R, T, N):
    """R empty states: (Z, CNT, USED, POS, NU, buf), one row per chain; NU = 0."""
    return (np.zeros((R, N), np.uint32), np.zeros((R, T), np.uint32), np.zeros((R, T), np.uint32),
            np.zeros((R, T), np.uint32), np.zeros(R, np.int64), np.empty(T))


@njit(cache=True, fastmath=FM)
def update(rows, cum, Z, CNT, USED, POS, NU, lo, hi, reverse, fresh_from, mass, buf, state):
    """For every chain r (row r of Z, CNT, USED, POS; NU[r] = its number of used topics), Gibbs
    updates of positions lo..hi-1 in order (hi-1..lo if `reverse`), each an exact draw from
    eq. (7) given every position in the counts. Positions i >= fresh_from are not yet in the
    counts: each is drawn given the counts at its turn and added, and mass[i] += the draw's
    normaliser sum_t rows[i, t] (n_t + alpha_t) (for a forward pass, the left-to-right
    predictive P(w_i | z_<i) times i + sum alpha).

    The one place the sparse site update is written, for all chains at once: numba does not
    inline a helper without reference-counting its array arguments at every site (measured 3.5x
    to 7x slower). The generator's state is held in locals for the call (`rng.step`): through the
    array every draw loaded and stored it, 1-3% slower; same draws."""
    T = rows.shape[1]
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    for r in range(Z.shape[0]):
        z = Z[r]
        cnt = CNT[r]
        used = USED[r]
        pos = POS[r]
        nused = NU[r]
        for nth in range(hi - lo):
            i = hi - 1 - nth if reverse else lo + nth
            fresh = i >= fresh_from
            if not fresh:  # take z_i out of the counts
                t = z[i]
                cnt[t] -= 1
                if cnt[t] == 0:
                    nused -= 1
                    last = used[nused]
                    used[pos[t]] = last
                    pos[last] = pos[t]
            r_ = 0.0  # the count bucket: its terms in buf, their sum
            for j in range(nused):
                t = used[j]
                x = rows[i, t] * cnt[t]
                buf[j] = x
                r_ += x
            prior = cum[i, T - 1]
            if fresh:
                mass[i] += r_ + prior
            u, s0, s1, s2, s3 = step(s0, s1, s2, s3)
            u *= r_ + prior
            if u < r_:
                j = 0
                c = buf[0]
                while c <= u and j < nused - 1:
                    j += 1
                    c += buf[j]
                while buf[j] == 0.0:  # a zero term (rounding at the end): step back to one with mass
                    j -= 1
                k = used[j]
            else:
                u -= r_
                if u >= prior:  # rounding: the last topic with prior mass
                    k = T - 1
                    while k > 0 and cum[i, k] == cum[i, k - 1]:
                        k -= 1
                else:  # binary search: the first k with cum[i, k] > u (positive mass)
                    k = 0
                    hi_ = T - 1
                    while k < hi_:
                        mid = (k + hi_) >> 1
                        if cum[i, mid] > u:
                            hi_ = mid
                        else:
                            k = mid + 1
                k = np.uint32(k)
            z[i] = k
            if cnt[k] == 0:
                pos[k] = nused
                used[nused] = k
                nused += 1
            cnt[k] += 1
        NU[r] = nused
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


@njit(cache=True, fastmath=FM)
def copy_chain(Z, CNT, USED, POS, NU, a, d, n):
    """Chain d becomes a copy of chain a (positions 0..n-1 of z, the counts, the used list), at
    cost O(n + used topics) rather than O(T)."""
    for j in range(NU[d]):
        CNT[d, USED[d, j]] = 0
    for j in range(NU[a]):
        t = USED[a, j]
        USED[d, j] = t
        POS[d, t] = j
        CNT[d, t] = CNT[a, t]
    NU[d] = NU[a]
    for j in range(n):
        Z[d, j] = Z[a, j]


@njit(cache=True, fastmath=FM)
def set_assignments(Z, CNT, USED, POS, NU, r, z):
    """Chain r takes the assignments z (all N positions) and their counts."""
    for j in range(NU[r]):
        CNT[r, USED[r, j]] = 0
    nused = 0
    for i in range(z.shape[0]):
        k = z[i]
        Z[r, i] = k
        if CNT[r, k] == 0:
            POS[r, k] = nused
            USED[r, nused] = k
            nused += 1
        CNT[r, k] += 1
    NU[r] = nused


@njit(cache=True, fastmath=FM)
def log_forced(rows, cum, alpha, Z, CNT, USED, POS, NU, r, target):
    """log T(target <- z) for a forward Gibbs sweep of chain r (eq. 24): at each position the
    probability of moving to target_i given target_<i and z_>i; leaves chain r at target."""
    T = rows.shape[1]
    z = Z[r]
    cnt = CNT[r]
    used = USED[r]
    pos = POS[r]
    nused = NU[r]
    lp = 0.0
    for i in range(z.shape[0]):
        t = z[i]
        cnt[t] -= 1
        if cnt[t] == 0:
            nused -= 1
            last = used[nused]
            used[pos[t]] = last
            pos[last] = pos[t]
        s = cum[i, T - 1]
        for j in range(nused):
            s += rows[i, used[j]] * cnt[used[j]]
        k = target[i]
        lp += math.log(rows[i, k] * (cnt[k] + alpha[k]) / s)
        z[i] = k
        if cnt[k] == 0:
            pos[k] = nused
            used[nused] = k
            nused += 1
        cnt[k] += 1
    NU[r] = nused
    return lp


@njit(cache=True, fastmath=FM)
def count_mass(rows, cum, CNT, USED, NU, r, i):
    """sum_t rows[i, t] (n_t + alpha_t) for chain r: the normaliser of eq. (7) at a position
    not in its counts."""
    s = cum[i, cum.shape[1] - 1]
    for j in range(NU[r]):
        t = USED[r, j]
        s += rows[i, t] * CNT[r, t]
    return s
