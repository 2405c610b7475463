"""`estimated-theta` (document completion only, section 5.1, eq. 27): Gibbs samples of z1 | w1
give theta_t = (N_t + alpha_t) / (N1 + alpha); the estimate is
(1/S) sum_s prod_{n in w2} sum_t phi[t, w_n] theta^(s)_t. A plug-in estimate: it ignores how
w2 would change theta, and is biased (the paper found it poor)."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, chains
from .result import log_mean_exp
from .spec import MethodSpec, Param, register


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        burn_in: int, samples: int) -> float:
    lp = chains.estimated_theta(doc.rows, doc.cum, doc.alpha, n_obs, burn_in, samples, state)
    return float(log_mean_exp(lp)) + float(doc.scales[n_obs:].sum())


register(MethodSpec(
    name="estimated-theta", fn=run, budget="samples",
    description="plug-in theta from Gibbs samples of w1, eq. (27)",
    params={"burn_in": Param(200, int, "burn-in sweeps B", minimum=0),
            "samples": Param(1000, int, "samples S")},
    cost=lambda N, p: (p["burn_in"] + p["samples"]) * N,
    tasks=("completion",),
))
