"""Correlations, row by row over many resamples at once: Pearson's r, Spearman's rho (Pearson's r
of the average ranks, ties sharing their mean rank) and Kendall's tau-b,

    tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2)),   n0 = n(n-1)/2,

C and D the concordant and discordant pairs, n1 and n2 the pairs tied in x and in y (Kendall
1945; scipy's `kendalltau` default). A row with no spread in x or y has no correlation: NaN.
"""

from __future__ import annotations

import numpy as np
from numba import njit

STATISTICS = ("spearman", "pearson", "kendall")


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row pair (arrays (..., n)); NaN where a row has no spread."""
    flat = (np.ptp(x, axis=-1) == 0) | (np.ptp(y, axis=-1) == 0)
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x * y).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (y * y).sum(axis=-1))
    return np.where(flat, np.nan, np.clip(r, -1.0, 1.0))


def ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis (ties share their mean rank)."""
    from scipy.stats import rankdata

    return rankdata(a, axis=-1)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return pearson_rows(ranks(x), ranks(y))


@njit(cache=True)
def _tied_pairs(v: np.ndarray) -> float:
    """Pairs of equal values in sorted `v`."""
    total = 0.0
    run = 1
    for i in range(1, v.size):
        if v[i] == v[i - 1]:
            run += 1
        else:
            total += run * (run - 1) / 2.0
            run = 1
    return total + run * (run - 1) / 2.0


@njit(cache=True)
def _kendall_one(x: np.ndarray, y: np.ndarray, buf: np.ndarray) -> float:
    """tau-b in O(n log n) (Knight 1966): sort by (x, y), count the pairs tied in x and in both,
    then the swaps a merge sort of y makes (the discordant pairs) and the pairs tied in y."""
    n = x.size
    order = np.argsort(y, kind="mergesort")
    order = order[np.argsort(x[order], kind="mergesort")]
    xs = x[order]
    ys = y[order].copy()
    n1 = _tied_pairs(xs)
    n3 = 0.0
    run = 1
    for i in range(1, n):
        if xs[i] == xs[i - 1] and ys[i] == ys[i - 1]:
            run += 1
        else:
            n3 += run * (run - 1) / 2.0
            run = 1
    n3 += run * (run - 1) / 2.0
    swaps = 0.0
    width = 1
    src = ys
    dst = buf[:n]
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if src[j] < src[i]:
                    dst[k] = src[j]
                    swaps += mid - i
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    n2 = _tied_pairs(src)
    n0 = n * (n - 1) / 2.0
    den = (n0 - n1) * (n0 - n2)
    if den <= 0.0:
        return np.nan
    return (n0 - n1 - n2 + n3 - 2.0 * swaps) / np.sqrt(den)


@njit(cache=True)
def _kendall_pairs(x: np.ndarray, y: np.ndarray) -> float:
    """tau-b by visiting every pair: faster than the sort below for short rows."""
    n = x.size
    s = 0.0
    tx = 0.0
    ty = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[i] - x[j]
            dy = y[i] - y[j]
            if dx == 0.0:
                tx += 1.0
            if dy == 0.0:
                ty += 1.0
            if dx != 0.0 and dy != 0.0:
                s += 1.0 if (dx > 0.0) == (dy > 0.0) else -1.0
    n0 = n * (n - 1) / 2.0
    den = (n0 - tx) * (n0 - ty)
    return s / np.sqrt(den) if den > 0.0 else np.nan


SORT_FROM = 200  # pairs below this length are visited one by one (measured: faster up to ~200)


@njit(cache=True)
def _kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    rows, n = x.shape
    out = np.empty(rows)
    buf = np.empty(n)
    for r in range(rows):
        out[r] = _kendall_one(x[r], y[r], buf) if n >= SORT_FROM else _kendall_pairs(x[r], y[r])
    return out


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair (arrays (rows, n) or (n,)); NaN where a row has no spread."""
    x2 = np.ascontiguousarray(np.atleast_2d(x), dtype=np.float64)
    y2 = np.ascontiguousarray(np.atleast_2d(y), dtype=np.float64)
    out = _kendall_rows(x2, y2)
    return out if np.ndim(x) > 1 else out.reshape(np.shape(x)[:-1])


def correlation_rows(statistic: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`statistic` ("spearman", "pearson", "kendall") of each row pair."""
    if statistic == "pearson":
        return pearson_rows(x, y)
    if statistic == "spearman":
        return spearman_rows(x, y)
    if statistic == "kendall":
        if np.ndim(x) > 2:
            shape = np.shape(x)
            flat = kendall_rows(np.reshape(x, (-1, shape[-1])), np.reshape(y, (-1, shape[-1])))
            return flat.reshape(shape[:-1])
        return kendall_rows(x, y)
    raise ValueError(statistic)


def correlation(statistic: str, x: np.ndarray, y: np.ndarray) -> float:
    """One correlation of two vectors (NaN when either has no spread)."""
    x2, y2 = np.asarray(x, dtype=float)[None], np.asarray(y, dtype=float)[None]
    return float(correlation_rows(statistic, x2, y2)[0])


MIN_PAIRS = 3  # a correlation over fewer pairs is not reported


def correlation_omit(statistic: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`correlation_rows` leaving out, row by row, the positions where x or y is NaN (a topic
    whose score is undefined in that resample); NaN for a row with fewer than MIN_PAIRS pairs."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    y = np.atleast_2d(np.asarray(y, dtype=float))
    holes = np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1)
    out = np.full(x.shape[0], np.nan)
    whole = np.flatnonzero(~holes)
    if whole.size and x.shape[1] >= MIN_PAIRS:
        out[whole] = correlation_rows(statistic, x[whole], y[whole])
    for r in np.flatnonzero(holes):
        ok = ~(np.isnan(x[r]) | np.isnan(y[r]))
        if ok.sum() >= MIN_PAIRS:
            out[r] = correlation_rows(statistic, x[r, ok][None], y[r, ok][None])[0]
    return out


def to_pearson(statistic: str, value: np.ndarray | float) -> np.ndarray:
    """The Pearson correlation a rank correlation corresponds to under bivariate normality:
    r = 2 sin(pi rho_s / 6) (Spearman), r = sin(pi tau / 2) (Kendall; Greiner's relation)."""
    v = np.asarray(value, dtype=float)
    if statistic == "spearman":
        return 2 * np.sin(np.pi * v / 6)
    if statistic == "kendall":
        return np.sin(np.pi * v / 2)
    return v


def from_pearson(statistic: str, r: np.ndarray | float) -> np.ndarray:
    """The inverse of `to_pearson`."""
    r = np.clip(np.asarray(r, dtype=float), -1, 1)
    if statistic == "spearman":
        return 6 / np.pi * np.arcsin(r / 2)
    if statistic == "kendall":
        return 2 / np.pi * np.arcsin(r)
    return r


def spearman_brown(r: np.ndarray | float, factor: float = 2.0) -> np.ndarray:
    """The reliability of a mean over `factor` times as many raters: k r / (1 + (k - 1) r)
    (Spearman 1910, Brown 1910); for a split half (factor 2), 2 r / (1 + r)."""
    r = np.asarray(r, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return factor * r / (1 + (factor - 1) * r)
