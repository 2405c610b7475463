"""`left-to-right`: P(w) = prod_n P(w_n | w_<n), each factor estimated by R particles (section 4.5;
section 5.3 for document completion, where only the factors of w2 are kept).

Variants (`variant=`):
- `smc` (default): a sequential Monte Carlo particle filter (Buntine 2009; the standard fully
  adapted construction): particles are reweighted by their predictive P(w_n | z_<n), resampled,
  extended and rejuvenated by a Gibbs pass. Unbiased for P(w) at any R, so its log is low by
  Jensen's gap (which shrinks as R grows) and it converges to log P(w). For completion it
  estimates P(w2 | w1) consistently (the ratio of two unbiased estimates).
- `algorithm-3`: Wallach et al. (2009), algorithm 3, as published: particles re-sample z_<n
  but are never reweighted, so it does not converge to log P(w) as R grows; on real paragraphs
  it ends up to 3 nats off, in either direction. Kept to reproduce published numbers.
- `extend-only`: particles only extend (cost R N; the default of a widely used Java
  implementation). With one particle it is sequential importance sampling and unbiased; with
  more it is neither.

Cost in Gibbs site updates: R N(N-1)/2 (smc, algorithm-3), R N (extend-only). The draws are
exact Gibbs draws from eq. (7) over sparse counts (`sampling.sparse`). The default R = 100 was
chosen by measurement on real paragraphs (docs/choosing_an_estimator.md): about 0.002 nats per
token low on short State of the Union paragraphs, 0.0003 on long ones (R = 20: 0.008)."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, sequential
from .registry import MethodSpec, Param, register

VARIANTS = {"smc": sequential.smc, "algorithm-3": sequential.algorithm3,
            "extend-only": sequential.extend_only}


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        particles: int, variant: str) -> float:
    est = VARIANTS[variant](doc.rows, doc.cum, float(doc.alpha.sum()), particles, n_obs, state)
    return est + float(doc.scales[n_obs:].sum())


def cost(N: int, p: dict) -> float:
    return p["particles"] * (N if p["variant"] == "extend-only" else N * (N - 1) / 2)


register(MethodSpec(
    name="left-to-right", fn=run, budget="particles",
    description="left-to-right sequential estimator (smc: unbiased particle filter; algorithm-3)",
    params={"particles": Param(100, int, "particles R"),
            "variant": Param("smc", str, "smc (unbiased for P(w)), algorithm-3 (the paper's; not "
                             "consistent in R) or extend-only (unbiased only with R = 1)",
                             choices=tuple(VARIANTS))},
    cost=cost,
    tasks=("heldout", "completion"),
    # completion: a ratio of two unbiased estimates, consistent but not unbiased
    unbiased=lambda p: p["variant"] == "smc" or (p["variant"] == "extend-only" and p["particles"] == 1),
    renamed={"resample": "variant: 'smc' (default, unbiased), 'algorithm-3' (was resample=True), "
                         "'extend-only' (was resample=False)"},
))
