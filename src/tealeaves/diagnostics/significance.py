"""Topic significance (AlSumait, Barbará, Gentle and Domeniconi 2009), as OCTIS computes it
(`octis/evaluation_metrics/topic_significance_metrics.py`, commit 8f9a0ac): per topic, the
Kullback-Leibler divergence KL(P || Q) = sum_i (P_i + e) log((P_i + e) / (Q_i + e)), e = 1e-5 added
to both sides (not renormalised), of

- KL uniform: the topic's word distribution (its row of phi, normalised) from the uniform
  distribution over words, 1 / V;
- KL vacuous: the same from the vacuous distribution sum_k phi_k P(k), P(k) the topic's mean
  proportion over documents (OCTIS uses phi's rows as they are here, not normalised);
- KL background: the topic's distribution over documents (its column of theta, normalised) from
  the uniform distribution over documents, 1 / D.

A row (topic) of phi or a column of theta that is all zero is replaced by the uniform row first,
as OCTIS does. OCTIS reports the mean over topics; these are the per-topic values (their mean is
OCTIS's number). Larger is more significant: a junk topic is close to uniform, to the vacuous
distribution, or spread evenly over the documents.
"""

from __future__ import annotations

import numpy as np

EPSILON = 1e-5  # OCTIS's _KL


def _kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Row-wise KL(p || q) with OCTIS's epsilon added to both."""
    p, q = p + EPSILON, q + EPSILON
    return np.sum(p * np.log(p / q), axis=-1)


def _zero_rows_uniform(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a[~a.any(axis=1)] = 1.0 / a.shape[1]
    return a


def significance(phi: np.ndarray, theta: np.ndarray) -> dict[str, np.ndarray]:
    """Per-topic KL uniform, KL vacuous and KL background of `phi` (K x V) and `theta` (D x K)."""
    phi = _zero_rows_uniform(phi)
    tk = _zero_rows_uniform(np.asarray(theta, dtype=float).T)  # K x D, OCTIS's topic-document matrix
    P = phi / phi.sum(axis=1, keepdims=True)
    V, D = phi.shape[1], tk.shape[1]
    vacuous = (phi * (tk.sum(axis=1) / D)[:, None]).sum(axis=0)
    background = tk / tk.sum(axis=1, keepdims=True)
    return {"kl_uniform": _kl(P, np.full(V, 1.0 / V)), "kl_vacuous": _kl(P, vacuous[None, :]),
            "kl_background": _kl(background, np.full(D, 1.0 / D))}
