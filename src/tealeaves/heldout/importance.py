"""Simple importance sampling (section 4.1 of Wallach et al. 2009).

- `is-prior-theta` (alias `empirical-likelihood`), eq. (12)-(13): theta^(s) ~ Dir(alpha m),
  estimate (1/S) sum_s prod_n sum_t theta_t phi[t, w_n]; as MALLET implements empirical
  likelihood (the limit of infinitely long synthetic documents).
- `is-pzw`: z_n ~ Q(z_n) ∝ alpha_t phi[t, w_n] independently, weight P(w, z) / Q(z).
- `is-iterated`: Q from `iterations` rounds of the pseudo-count update (11), then as is-pzw.
All three are unbiased for P(w) and notoriously high-variance on long documents.
"""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, kernels
from .result import log_mean_exp as _logmean
from .spec import MethodSpec, Param, register


def prior_theta(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        samples: int) -> float:
    theta = rng.dirichlet(doc.alpha, size=samples)  # (S, T)
    log_pw = np.empty(samples)
    step = max(1, 2_000_000 // max(doc.length, 1))  # bound the S x N matrix in memory
    for lo in range(0, samples, step):
        with np.errstate(divide="ignore"):
            log_pw[lo : lo + step] = np.log(theta[lo : lo + step] @ doc.rows.T).sum(axis=1)
    return float(_logmean(log_pw)) + doc.log_scale


def pzw(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        samples: int) -> float:
    q = doc.rows * doc.alpha
    q /= q.sum(axis=1, keepdims=True)
    return float(_logmean(kernels.independent_is(doc.logrows, doc.alpha, q, samples, state))) + doc.log_scale


def iterated(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        samples: int, iterations: int) -> float:
    q = kernels.iterated_pseudo_counts(doc.rows, doc.alpha, iterations)
    return float(_logmean(kernels.independent_is(doc.logrows, doc.alpha, q, samples, state))) + doc.log_scale


_SAMPLES = Param(2000, int, "importance samples S")

register(MethodSpec(
    name="is-prior-theta", fn=prior_theta, aliases=("empirical-likelihood",), budget="samples",
    description="importance sampling from the prior P(theta | alpha m), eq. (12)-(13)",
    params={"samples": _SAMPLES}, cost=lambda N, p: p["samples"] * N, unbiased=True, kernel="importance",
))
register(MethodSpec(
    name="is-pzw", fn=pzw, budget="samples",
    description="importance sampling, Q(z_n) ∝ alpha m_t phi[t, w_n]",
    params={"samples": _SAMPLES}, cost=lambda N, p: p["samples"] * N, unbiased=True, kernel="importance",
))
register(MethodSpec(
    name="is-iterated", fn=iterated, budget="samples",
    description="importance sampling, Q from iterated pseudo-counts, eq. (11)",
    params={"samples": _SAMPLES,
            "iterations": Param(10, int, "pseudo-count iterations I", minimum=0)},
    cost=lambda N, p: (p["iterations"] + p["samples"]) * N, unbiased=True, kernel="importance",
))
