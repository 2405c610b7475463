"""`bridge`: bridge sampling over theta from one collapsed Gibbs chain (issue 36).

P(w) = int p(w | theta) Dir(theta; alpha) d theta, and theta | z, w ~ Dir(alpha + n(z)) exactly, so the
posterior of theta is the mixture E_z[Dir(alpha + n(z))] over the chain. The proposal q is that
mixture over `samples` sweeps of the chain, each component widened to Dir(alpha + lambda n) by
`temper` = lambda (0.25: measured better than 1 on real paragraphs and whole documents at 20 and
50 topics, docs/heldout_bridge.md); 2 `samples` later sweeps give one posterior draw each,
and `samples` draws come from q; the optimal bridge of Meng & Wong (1996) combines the two sides
(`sampling.bridge`). Consistent for log P(w) as `samples` grows (not unbiased: it is a ratio of two
averages); each run also carries its relative mean squared error (Fruhwirth-Schnatter 2004), the
variance of its log to first order, from which the result gives the sd of the total and an
interval. Its cost per document is O(S N) Gibbs site updates plus O(S (T + U T + S k)) for the
draws (U distinct words, k topics a sweep uses): linear in the document, unlike the particle
filter's R N K. Measured against exact and AIS references in docs/heldout_bridge.md."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc
from ..sampling.bridge import gibbs_bridge
from .spec import MethodSpec, Param, register

# one draw's extra work in Gibbs-site-update equivalents (a site update is about 30 ns): a Gamma
# variate per topic (about 60 ns), a multiply-add per topic and distinct word (about 1 ns), an
# exponential per component (about 15 ns)
GAMMA_SITES = 2.0
FMA_SITES = 1.0 / 30.0
COMPONENT_SITES = 0.5


TOPICS_LIMIT = 20  # measured accurate up to here (docs/heldout_bridge.md)
TEMPER = 0.25  # the proposal's components Dir(alpha + TEMPER n^(k)): measured in docs/heldout_bridge.md


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray, samples: int,
        burn_in: int, topics_limit: int, temper: float) -> tuple[float, float]:
    """One run: (log estimate, its relative mean squared error)."""
    words = doc.words if doc.words is not None else np.arange(doc.length)
    est, rel = gibbs_bridge(doc.rows, doc.cum, doc.alpha, np.ascontiguousarray(words, np.int64), burn_in,
                            samples, 2 * samples, samples, state, temper)
    return est + doc.log_scale, rel


def work(N: int, T: int, p: dict) -> float:
    """Gibbs-site-update equivalents of one run: (burn_in + 3 S) N site updates, and 3 S draws, each
    T Gamma variates, at most N T multiply-adds and S components."""
    S = p["samples"]
    draws = 3 * S
    per_draw = GAMMA_SITES * T + FMA_SITES * N * T + COMPONENT_SITES * S
    return float((p["burn_in"] + 3 * S) * N + draws * per_draw)


def fallback(N: int, T: int, p: dict) -> str | None:
    """Past `topics_limit` topics the proposal (a mixture of S conditionals) covers the posterior too
    thinly at affordable S: measured at 50 topics, whole addresses up to 12 nats off at S = 200
    untempered and 3 nats with temper 0.25, totals 4.6 of their own sd off; no proposal tried (a
    moment-matched Dirichlet, a logistic normal fitted to the draws) had an effective sample size
    above about 1 in 100 there (docs/heldout_bridge.md); left-to-right scores those documents."""
    return "left-to-right" if T > p["topics_limit"] else None


register(MethodSpec(
    name="bridge", fn=run, budget="samples",
    description="bridge sampling over theta from one Gibbs chain (proposal: the chain's mixture of "
                "Dir(alpha + lambda n); consistent; carries its own error estimate)",
    params={"samples": Param(100, int, "S: the proposal's components (S sweeps), posterior draws (2 S "
                             "sweeps) and proposal draws (S)", minimum=2),
            "burn_in": Param(20, int, "Gibbs sweeps after the sequential initialisation", minimum=0),
            "temper": Param(TEMPER, float, "lambda: the proposal's components are Dir(alpha + lambda n), "
                            "widened for lambda < 1 (docs/heldout_bridge.md)", minimum=0.01),
            "topics_limit": Param(TOPICS_LIMIT, int, "models with more topics are scored by left-to-right "
                                  "(its defaults) instead: the bridge was measured accurate up to 20 "
                                  "topics, not at 50 or 200; raise it to use the bridge anyway")},
    fallback=fallback,
    topic_cost=work,
    tasks=("heldout",),
    variance=True,
    relabel=False,
    unbiased=False,
))
