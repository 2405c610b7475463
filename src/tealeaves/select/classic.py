"""The classic metrics for choosing the number of topics, as published (the conventions of R's
ldatuning, the reference implementation, and of tmtoolkit are named where they differ):

- `arun_2010` (Arun et al. 2010; lower is better): the symmetric Kullback-Leibler divergence
  KL(cm1 || cm2) + KL(cm2 || cm1) between cm1, the singular values of the topic-word matrix, and
  cm2, the document-topic proportions weighted by document length (L x M2), both normalised to
  sum to 1 (as tmtoolkit >= 0.11; ldatuning leaves the singular values as they are and divides
  cm2 by the longest document's length), cm2 sorted in decreasing order as the singular values are.
- `cao_juan_2009` (Cao Juan et al. 2009; lower is better): the mean cosine similarity over all
  pairs of topics.
- `deveaud_2014` (Deveaud et al. 2014; higher is better): the divergence the paper calls
  Jensen-Shannon, D(i, j) = 1/2 KL(phi_i || phi_j) + 1/2 KL(phi_j || phi_i), summed over the pairs
  of topics and divided by K (K - 1), as the paper and ldatuning (zero probabilities raised to the
  smallest positive double, as ldatuning does).
- `griffiths_2004` (Griffiths and Steyvers 2004; higher is better): the harmonic mean of
  p(w | z) over Gibbs samples taken after burn-in, as a logarithm (`log_p_w_given_z` gives one
  sample's value from its token assignments).

`fold_in` estimates the document-topic proportions Arun's metric needs from any model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import MethodError
from ..util import vectors as vmath
from ..util.numbers import finite_float

CLASSIC = {  # key -> (name in the table, higher is better)
    "arun_2010": ("Arun 2010", False),
    "cao_juan_2009": ("Cao Juan 2009", False),
    "deveaud_2014": ("Deveaud 2014", True),
    "griffiths_2004": ("Griffiths 2004", True),
}


def _phi(phi: np.ndarray, least_topics: int = 2) -> np.ndarray:
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[0] < least_topics or phi.shape[1] < 1:
        raise MethodError(f"need a topics x words matrix with at least {least_topics} topics, "
                          f"got shape {phi.shape}")
    if not np.isfinite(phi).all() or (phi < 0).any():
        raise MethodError("the topic-word matrix holds a negative or non-finite value")
    mass = phi.sum(axis=1, keepdims=True)
    if not (mass > 0).all():
        empty = int(np.flatnonzero(mass[:, 0] <= 0)[0])
        raise MethodError(f"topic {empty} of the topic-word matrix has no mass (a row of zeros)")
    return phi / mass


def arun_2010(phi: np.ndarray, theta: np.ndarray, lengths: Sequence[float]) -> float:
    """Symmetric KL between the normalised singular values of `phi` (K x V) and the normalised,
    length-weighted topic proportions `lengths @ theta` (theta: D x K). At least 2 topics: at K = 1
    both vectors are [1], so it is 0 for any model."""
    phi = _phi(phi)
    theta, lengths = np.asarray(theta, dtype=np.float64), np.asarray(lengths, dtype=np.float64)
    if theta.ndim != 2 or theta.shape != (lengths.size, phi.shape[0]):
        raise MethodError(f"theta must be documents x topics ({lengths.size} x {phi.shape[0]}), "
                          f"got shape {theta.shape}")
    if phi.shape[1] < phi.shape[0]:
        raise MethodError(f"Arun 2010 needs at least as many words as topics, got {phi.shape[1]} < "
                          f"{phi.shape[0]}")
    finite = np.isfinite(theta).all() and np.isfinite(lengths).all()
    if not finite or (theta < 0).any() or (lengths < 0).any():
        raise MethodError("Arun 2010 needs non-negative, finite proportions (theta) and document lengths")
    if not lengths @ theta.sum(axis=1) > 0:
        raise MethodError("Arun 2010 needs at least one document with tokens and topic mass")
    cm1 = np.linalg.svd(phi, compute_uv=False)
    cm2 = -np.sort(-(lengths @ theta))
    cm1, cm2 = cm1 / cm1.sum(), cm2 / cm2.sum()
    tiny = np.finfo(float).tiny
    cm1, cm2 = np.maximum(cm1, tiny), np.maximum(cm2, tiny)
    return float(np.sum(cm1 * np.log(cm1 / cm2)) + np.sum(cm2 * np.log(cm2 / cm1)))


def cao_juan_2009(phi: np.ndarray) -> float:
    """Mean cosine similarity over the K (K - 1) / 2 pairs of topics."""
    phi = _phi(phi)
    unit = vmath.unit_rows(phi)
    cos = unit @ unit.T
    i, j = np.triu_indices(phi.shape[0], 1)
    return float(cos[i, j].mean())


def deveaud_2014(phi: np.ndarray) -> float:
    """Sum over pairs of 1/2 KL(i || j) + 1/2 KL(j || i), divided by K (K - 1)."""
    phi = _phi(phi)
    phi = np.where(phi == 0, np.finfo(float).tiny, phi)
    logp = np.log(phi)
    cross = phi @ logp.T  # cross[i, j] = sum_w phi_i log phi_j
    self_ = np.diag(cross)
    kl = self_[:, None] - cross  # kl[i, j] = KL(phi_i || phi_j)
    K = phi.shape[0]
    i, j = np.triu_indices(K, 1)
    return float(np.sum(0.5 * kl[i, j] + 0.5 * kl[j, i]) / (K * (K - 1)))


def griffiths_2004(log_likelihoods: Sequence[float]) -> float:
    """log of the harmonic mean of exp(log_likelihoods): -log mean exp(-ll), computed stably."""
    ll = np.asarray(log_likelihoods, dtype=np.float64)
    if ll.ndim != 1 or ll.size == 0 or not np.isfinite(ll).all():
        raise MethodError("Griffiths 2004 needs one or more finite log-likelihoods of Gibbs samples")
    neg = -ll
    top = neg.max()
    return float(-(top + np.log(np.mean(np.exp(neg - top)))))


def log_p_w_given_z(words: np.ndarray, topics: np.ndarray, num_topics: int, num_words: int,
                    beta: float) -> float:
    """log p(w | z) of one Gibbs state under a symmetric Dirichlet(beta) prior on the topics
    (Griffiths and Steyvers 2004, eq. 2): K [lgamma(V beta) - V lgamma(beta)]
    + sum_k [sum_w lgamma(n_kw + beta) - lgamma(n_k + V beta)]."""
    from scipy.special import gammaln

    words, topics = np.asarray(words), np.asarray(topics)
    if (b := finite_float(beta)) is None or b <= 0:
        raise MethodError(f"beta must be a positive number, got {beta!r}")
    for name, ids, n in (("word", words, num_words), ("topic", topics, num_topics)):
        if ids.size and (ids.dtype.kind not in "iu" or ids.min() < 0 or ids.max() >= n):
            raise MethodError(f"{name} ids must be whole numbers in 0..{n - 1}")
    if words.shape != topics.shape:
        raise MethodError(f"{words.size} words but {topics.size} topic assignments")
    counts = np.bincount(np.asarray(topics, np.int64) * num_words + np.asarray(words, np.int64),
                         minlength=num_topics * num_words)
    n_k = counts.reshape(num_topics, num_words).sum(axis=1)
    nz = counts[counts > 0]
    return float(num_topics * gammaln(num_words * beta) - gammaln(n_k + num_words * beta).sum()
                 + (gammaln(nz + beta) - gammaln(beta)).sum())


def fold_in(phi: np.ndarray, alpha: np.ndarray, rows: np.ndarray, cols: np.ndarray, counts: np.ndarray,
            num_docs: int, iterations: int = 50, block: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Document-topic proportions of fixed topics by expectation-maximisation from uniform:
    theta_d = (E[n_dk] + alpha_k) / (N_d + sum alpha), `iterations` times. The documents come as
    a sparse count matrix (`rows` sorted, `cols`, `counts`), worked through in blocks of whole
    documents of about `block` (entries x topics) numbers. Returns theta (D x K) and each
    document's plug-in log-likelihood sum_w n_dw log(theta_d . phi_w)."""
    phi = np.asarray(phi, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    K = phi.shape[0]
    theta = np.full((num_docs, K), 1.0 / K)
    loglik = np.zeros(num_docs)
    starts = np.searchsorted(rows, np.arange(num_docs + 1))  # each document's first entry
    per_block = max(1, block // K)
    d0 = 0
    while d0 < num_docs:
        d1 = int(np.searchsorted(starts, starts[d0] + per_block, side="right")) - 1
        d1 = min(num_docs, max(d1, d0 + 1))
        lo, hi = starts[d0], starts[d1]
        theta[d0:d1], loglik[d0:d1] = _fold_block(phi, alpha, rows[lo:hi] - d0, cols[lo:hi], counts[lo:hi],
                                                  d1 - d0, iterations)
        d0 = d1
    return theta, loglik


def _fold_block(phi: np.ndarray, alpha: np.ndarray, rows: np.ndarray, cols: np.ndarray, counts: np.ndarray,
                num_docs: int, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    K = phi.shape[0]
    theta = np.full((num_docs, K), 1.0 / K)
    cols_phi = np.ascontiguousarray(phi[:, cols].T)  # entries x K
    tiny = np.finfo(float).tiny
    starts = np.searchsorted(rows, np.arange(num_docs + 1))
    filled = np.flatnonzero(np.diff(starts) > 0)  # documents with entries (rows are sorted)
    for _ in range(iterations):
        mix = theta[rows] * cols_phi
        mix *= (counts / np.maximum(mix.sum(axis=1), tiny))[:, None]
        nk = np.zeros((num_docs, K))
        if filled.size:
            nk[filled] = np.add.reduceat(mix, starts[filled], axis=0)
        theta = nk + alpha
        theta /= theta.sum(axis=1, keepdims=True)
    p = np.maximum((theta[rows] * cols_phi).sum(axis=1), tiny)
    return theta, np.bincount(rows, weights=counts * np.log(p), minlength=num_docs)


BIAS = {  # metric -> (the direction it is known to err in: "few", "many" or "neither"; why)
    "log-lik/token": ("many", "held-out likelihood keeps rising with K on large corpora and disagrees with "
                              "human judgments of topics (Chang et al. 2009)"),
    "npmi": ("neither", "no consistent direction known (it found the true K on every synthetic corpus of "
                        "docs/select_experiment.md)"),
    "umass": ("few", "UMass rewards frequent, co-occurring words, which few broad topics have"),
    "diversity": ("few", "the share of unique top words can only fall as topics are added"),
    "exclusivity": ("many", "narrower topics have more exclusive top words"),
    "pred. rank": ("many", "more topics fit each document's words more closely"),
    "auto MP": ("neither", "automated intrusion has no known direction; it is noisy with few topics"),
    "Arun 2010": ("few", "it chose fewer topics than there were on corpora with a known K "
                         "(docs/select_experiment.md); on real corpora it often keeps falling as K grows"),
    "Cao Juan 2009": ("few", "topics that merge true topics of different words are dissimilar, so it chose "
                             "fewer topics than there were on corpora with a known K"),
    "Deveaud 2014": ("few", "few topics lie far apart, so the mean divergence is largest at small K"),
    "Griffiths 2004": ("many", "the harmonic mean estimator overestimates the likelihood, more so for large "
                               "K (Wallach et al. 2009), and the likelihood rises with K"),
}


__all__ = ["CLASSIC", "BIAS", "arun_2010", "cao_juan_2009", "deveaud_2014", "griffiths_2004",
           "log_p_w_given_z", "fold_in"]
