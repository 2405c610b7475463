"""`harmonic-mean` (section 4.2, eq. 15): the harmonic mean of P(w | z^(s)) over S Gibbs
samples after B burn-in sweeps. Consistent in theory, wildly optimistic in practice (its
inverse has infinite variance); offered so users can see how wrong it is."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, chains
from .result import log_mean_exp
from .spec import MethodSpec, Param, register


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        burn_in: int, samples: int) -> float:
    ll = chains.harmonic_mean_samples(doc.rows, doc.logrows, doc.cum, burn_in, samples, state)
    return -float(log_mean_exp(-ll)) + doc.log_scale


register(MethodSpec(
    name="harmonic-mean", fn=run,
    description="harmonic mean of P(w | z) over Gibbs samples, eq. (15)",
    params={"burn_in": Param(1000, int, "burn-in sweeps B", minimum=0),
            "samples": Param(1000, int, "samples S")},
    cost=lambda N, p: (p["burn_in"] + p["samples"]) * N,
))
