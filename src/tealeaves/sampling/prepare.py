"""Per-document arrays for the kernels.

For a document w_1..w_N the kernels read `rows[n, t] = phi[t, w_n] / max_t' phi[t', w_n]`:
every row's largest entry is 1, so products never underflow and a conditional such as eq. (7)
is unchanged (a row's scale cancels). Entries below 1e-300 of their row's maximum are set to 0,
which changes no sum in double precision but keeps denormal numbers (100x slower) out of the
hot loops; `logrows` keeps the unflushed logarithms for tempered (powered) rows. The dropped
scales come back through `scales[n] = log max_t phi[t, w_n]`.

Topics are relabelled per document (`order`): the dense kernels scan topics in order of their
expected mass in this document, so a sampled topic is found after a few steps. Relabelling
topics together with alpha leaves every probability unchanged. The sparse left-to-right kernels
scan no topics and skip it (`reorder=False`: `order` is the identity; `MethodSpec.relabel`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numba import njit

FLUSH = 1e-300


@dataclass(frozen=True)
class PreparedDoc:
    rows: np.ndarray  # (N, T) float64, max 1 per row, tiny entries flushed to 0
    alpha: np.ndarray  # (T,) alpha in the relabelled topic order
    scales: np.ndarray  # (N,) log max_t phi[t, w_n]
    order: np.ndarray  # (T,) original topic id of each relabelled topic
    phi_wt: np.ndarray | None = field(default=None, repr=False)  # (V, T) phi transposed, and
    words: np.ndarray | None = field(default=None, repr=False)  # the words: for logrows

    @property
    def log_scale(self) -> float:
        return float(self.scales.sum())

    @cached_property
    def logrows(self) -> np.ndarray:
        """(N, T) log of the unflushed rows (-inf for zeros); computed on first use (N T
        logarithms: most of the preparation cost, and left-to-right never needs them)."""
        with np.errstate(divide="ignore"):
            raw = self.phi_wt[self.words][:, self.order]
            return np.ascontiguousarray(np.log(raw) - self.scales[:, None])

    @cached_property
    def cum(self) -> np.ndarray:
        """(N, T) running sums of rows[n, t] alpha_t: the prior bucket of the sparse draws."""
        from .sparse import prior_table

        return prior_table(self.rows, self.alpha)

    @property
    def length(self) -> int:
        return int(self.rows.shape[0])

    @property
    def num_topics(self) -> int:
        return int(self.rows.shape[1])


def prepare_doc(phi_wt: np.ndarray, alpha: np.ndarray, words: np.ndarray,
                reorder: bool = True) -> PreparedDoc:
    """Arrays for one document; `phi_wt` is phi transposed (V x T, C order)."""
    T = alpha.shape[0]
    if words.size == 0:
        return PreparedDoc(np.zeros((0, T)), alpha.copy(), np.zeros(0), np.arange(T), phi_wt, words)
    rows, alpha_o, scales, order = _prepare(phi_wt, np.ascontiguousarray(alpha, np.float64),
                                            np.ascontiguousarray(words, np.int64), reorder)
    return PreparedDoc(rows, alpha_o, scales, order, phi_wt, words)


@njit(cache=True)
def _inverse(m):
    """1 / m, or 0 when it overflows (m subnormal, below 1 / DBL_MAX ~ 5.6e-309: red team 7 found
    phi = 1e-320 turning every row into inf): the caller then divides by m instead."""
    inv = 1.0 / m
    return inv if inv < np.inf else 0.0


@njit(cache=True)
def _prepare(phi_wt, alpha, words, reorder):
    """rows, alpha and the log scales in the document's topic order, and that order: one pass to
    scale each row and add its share of each topic's expected mass (rows[n, t] alpha_t
    normalised over t, summed over n), a stable sort by decreasing mass, one pass to write the
    relabelled, flushed rows (in numpy this step was about a fifth of a left-to-right call on
    50-token documents at T = 1000)."""
    N = words.shape[0]
    T = alpha.shape[0]
    scale = np.empty(N)
    mass = np.zeros(T)
    q = np.empty(T)
    for n in range(N):
        src = phi_wt[words[n]]
        m = src[0]
        for t in range(1, T):
            m = max(m, src[t])
        scale[n] = m
        if reorder:
            inv = _inverse(m)
            s = 0.0
            for t in range(T):
                x = src[t] * inv if inv > 0.0 else src[t] / m
                q[t] = (x if x >= FLUSH else 0.0) * alpha[t]
                s += q[t]
            inv = 1.0 / s
            for t in range(T):
                mass[t] += q[t] * inv
    order = np.argsort(-mass, kind="mergesort") if reorder else np.arange(T)
    rows = np.empty((N, T))
    for n in range(N):
        src = phi_wt[words[n]]
        inv = _inverse(scale[n])
        for j in range(T):
            x = src[order[j]] * inv if inv > 0.0 else src[order[j]] / scale[n]
            rows[n, j] = x if x >= FLUSH else 0.0
    return rows, alpha[order], np.log(scale), order


@dataclass(frozen=True)
class PreparedModels:
    """One document under K models that share topic labels z (same T): `rows[k]` and
    `logrows[k]` as in `PreparedDoc`, but every model's rows are divided by one common scale
    per position, `scales[n] = log max_k max_t phi_k[t, w_n]`, so log-probabilities of
    different models can be compared and combined. Entries below 1e-300 of their own model's
    row maximum are flushed to 0 in `rows` (not in `logrows`)."""

    rows: np.ndarray  # (K, N, T)
    logrows: np.ndarray  # (K, N, T)
    alphas: np.ndarray  # (K, T) in the relabelled topic order
    scales: np.ndarray  # (N,)
    order: np.ndarray  # (T,)

    @property
    def length(self) -> int:
        return int(self.rows.shape[1])

    @property
    def log_scale(self) -> float:
        return float(self.scales.sum())

    def single(self, k: int) -> PreparedDoc:
        """Model k alone, with the common scales."""
        doc = PreparedDoc(self.rows[k], self.alphas[k], self.scales, self.order)
        doc.__dict__["logrows"] = self.logrows[k]  # already computed: fill the cache
        return doc


def prepare_models(phi_wts: list[np.ndarray], alphas: list[np.ndarray], words: np.ndarray) -> PreparedModels:
    """Arrays for one document under several models with the same number of topics."""
    raw = np.stack([p[words] for p in phi_wts])  # (K, N, T)
    K, N, T = raw.shape
    alpha = np.stack(alphas).astype(np.float64)
    if N == 0:
        empty = np.zeros((K, 0, T))
        return PreparedModels(empty, empty.copy(), alpha, np.zeros(0), np.arange(T))
    own_max = raw.max(axis=2, keepdims=True)  # (K, N, 1)
    scale = own_max.max(axis=0)[:, 0]  # (N,)
    with np.errstate(divide="ignore"):
        logrows = np.log(raw) - np.log(scale)[None, :, None]
    rows = raw / scale[None, :, None]
    rows[raw < FLUSH * own_max] = 0.0
    q = (rows * alpha[:, None, :]).sum(axis=0)
    mass = (q / q.sum(axis=1, keepdims=True)).sum(axis=0)
    order = np.argsort(-mass, kind="stable")
    return PreparedModels(np.ascontiguousarray(rows[:, :, order]),
                          np.ascontiguousarray(logrows[:, :, order]),
                          np.ascontiguousarray(alpha[:, order]), np.log(scale), order)
