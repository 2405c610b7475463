"""`chib`: the Chib-style estimator (algorithm 2) with the Murray & Salakhutdinov (2009) proposal,
eq. (23)-(24), which makes it unbiased for P(w) for any chain length S.

z* comes from `iterations` Gibbs sweeps followed by iterated conditional modes repeated
until a whole pass changes nothing; the chain's backward half starts from z^(s), as the
algorithm says (early public code did neither, which understated the method).

Unbiased, but at small alpha not in practice (red team 6, F2; docs/chib_small_alpha.md): the
posterior over z then has separate modes (which topics the document uses), a Gibbs sweep leaves
one with probability of order alpha, and the chain stays in z*'s mode, so a run estimates about
P(w) P(mode of z* | w); the expectation is kept by rare runs, about 1/alpha times larger, that
no feasible number of runs sees. On 20 tiny models against exact values (S = 3, 30 and 300; 2,000
runs each) the runs' mean was more than 4 standard errors from P(w) in 1 of 120 (model, S) cases at
a mean alpha_t of 0.1 and above, and in 77 of 240 below it (at 1e-6 in 14 of 20 models at every S,
down to 0.11 P(w)): `caution` warns below 0.1."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, chains
from .spec import MethodSpec, Param, register

MAX_CLIMB_PASSES = 10_000
MIXING_ALPHA = 0.1  # below this mean alpha_t the runs' mean was often measured low (the module notes)


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        chain_length: int, iterations: int) -> float:
    est = chains.chib(doc.rows, doc.logrows, doc.cum, doc.alpha, chain_length, iterations,
                      MAX_CLIMB_PASSES, state)
    return est + doc.log_scale


def caution(params: dict, alpha: np.ndarray) -> str | None:
    """The warning below MIXING_ALPHA (see the module notes)."""
    mean = float(np.mean(alpha))
    if mean >= MIXING_ALPHA:
        return None
    return (f"at this model's mean alpha_t {mean:.3g} (below {MIXING_ALPHA}) chib's Gibbs chain may not "
            "leave the posterior mode of z*: a run then estimates P(w) times that mode's posterior mass, and "
            "its unbiasedness rests on rare runs far above P(w), so the mean of thousands of runs is low "
            "and their spread does not show it (docs/chib_small_alpha.md); use left-to-right or ais, or "
            "cross-check (check=K)")


register(MethodSpec(
    name="chib", fn=run, budget="chain_length",
    description="Chib-style estimator, algorithm 2 (Murray & Salakhutdinov proposal; low in practice at "
                f"mean alpha_t below {MIXING_ALPHA})",
    params={"chain_length": Param(1000, int, "chain length S"),
            "iterations": Param(10, int, "Gibbs sweeps before the z* search", minimum=0)},
    cost=lambda N, p: 2 * p["chain_length"] * N + p["iterations"] * N,
    unbiased=True,
    caution=caution,
))
