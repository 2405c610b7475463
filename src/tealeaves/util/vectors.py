"""Scale-safe norms: every vector tealeaves normalises goes through here. A finite vector's
Euclidean norm is computed after dividing by its largest absolute component, so neither its
square overflows (|v| > ~1e154 would give inf and a zero "unit" vector) nor underflows
(|v| < ~1e-154 would give 0 and a valid vector taken for none)."""

from __future__ import annotations

import numpy as np


def norms(x: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """The Euclidean norms of `x` along `axis`, without overflow or underflow of the squares
    (finite values; a norm itself beyond the largest float is inf)."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.max(np.abs(x), axis=axis, keepdims=True) if x.size else np.zeros(x.shape[:-1] + (1,))
    safe = np.where(scale > 0, scale, 1.0)
    with np.errstate(over="ignore"):
        out = safe * np.sqrt(np.sum((x / safe) ** 2, axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row of `x` divided by its norm (scale-safe); NaN rows where a row is all zeros."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.max(np.abs(x), axis=1, keepdims=True) if x.shape[1] else np.zeros((len(x), 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = x / np.where(scale > 0, scale, np.nan)
        return scaled / np.sqrt(np.sum(scaled**2, axis=1, keepdims=True))


def unit(v: np.ndarray) -> np.ndarray | None:
    """`v` divided by its norm (scale-safe), or None when it is all zeros."""
    row = unit_rows(np.asarray(v, dtype=np.float64)[None, :])[0]
    return None if np.isnan(row).any() else row


def scaled_rows(x: np.ndarray) -> np.ndarray:
    """`x` divided by its largest absolute value: the same directions (and cosines, and directions
    of sums and means) with values in [-1, 1], so sums of rows cannot overflow."""
    x = np.asarray(x, dtype=np.float64)
    top = float(np.max(np.abs(x))) if x.size else 0.0
    return x / top if top > 0 else x.copy()
