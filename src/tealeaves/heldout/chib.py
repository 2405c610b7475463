"""`chib`: the Chib-style estimator (algorithm 2) with the Murray & Salakhutdinov (2009)
proposal, eq. (23)-(24), which makes it unbiased for P(w) for any chain length S.

z* comes from `iterations` Gibbs sweeps followed by iterated conditional modes repeated
until a whole pass changes nothing; the chain's backward half starts from z^(s), as the
algorithm says (early public code did neither, which understated the method)."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, chains
from .spec import MethodSpec, Param, register

MAX_CLIMB_PASSES = 10_000


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        chain_length: int, iterations: int) -> float:
    est = chains.chib(doc.rows, doc.logrows, doc.cum, doc.alpha, chain_length, iterations,
                      MAX_CLIMB_PASSES, state)
    return est + doc.log_scale


register(MethodSpec(
    name="chib", fn=run, budget="chain_length",
    description="Chib-style estimator, algorithm 2 (Murray & Salakhutdinov proposal)",
    params={"chain_length": Param(1000, int, "chain length S"),
            "iterations": Param(10, int, "Gibbs sweeps before the z* search", minimum=0)},
    cost=lambda N, p: 2 * p["chain_length"] * N + p["iterations"] * N,
    unbiased=True,
))
