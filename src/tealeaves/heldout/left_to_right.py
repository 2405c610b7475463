"""`left-to-right`: P(w) = prod_n P(w_n | w_<n), each factor estimated by R particles (section 4.5;
section 5.3 for document completion, where only the factors of w2 are kept).

Variants (`variant=`):
- `smc` (default): a sequential Monte Carlo particle filter (Buntine 2009; the standard fully
  adapted construction): particles are reweighted by their predictive P(w_n | z_<n), resampled,
  extended and rejuvenated by Gibbs updates of earlier positions: a pass over all of them while
  there are at most K = `rejuvenate`, then K per position of a cyclic scan, so the cost per token
  stops growing with the document. Unbiased for P(w) at any R and K, so its log is low by
  Jensen's gap (which shrinks as R grows) and it converges to log P(w). For completion it
  estimates P(w2 | w1) consistently (the ratio of two unbiased estimates).
- `smc-full`: the same with a pass over all earlier positions at every position (the default
  before issue 21; `smc` is identical on documents of at most K + 1 tokens).
- `algorithm-3`: Wallach et al. (2009), algorithm 3, as published: particles re-sample z_<n
  but are never reweighted, so it does not converge to log P(w) as R grows; on real paragraphs
  it ends up to 3 nats off, in either direction. Kept to reproduce published numbers.
- `extend-only`: particles only extend (cost R N; the default of a widely used Java
  implementation). With one particle it is sequential importance sampling and unbiased; with
  more it is neither.

`order` (smc, smc-full): `peaked` (default) takes the tokens with the least topic entropy first,
a word's repeats in later rounds (`peaked_first`; under LDA the tokens are exchangeable, so the
estimand is the same, and on real paragraphs the summed squared error is less than half:
docs/linear_smc.md), `given` as in the document. `ess` (smc, smc-full): resample at every
position (1, default) or only when the effective sample size falls below ess R (adaptive
resampling, unbiased; no gain measured on real paragraphs).

`resampling` (smc, smc-full): `systematic` (default; the lower variance) or `multinomial`, with
which each run also carries V, the Lee & Whiteley (2018) estimate of Var(P-hat) / P^2 from the
particles' genealogy (`sequential.lee_whiteley`; docs/lee_whiteley.md measures it).

Cost in Gibbs site updates: R N(N-1)/2 (smc-full, algorithm-3), at most R N K (smc), R N
(extend-only). The draws are exact Gibbs draws from eq. (7) over sparse counts
(`sampling.sparse`). R and K were chosen by measurement on real text (docs/linear_smc.md,
docs/choosing_an_estimator.md)."""

from __future__ import annotations

import math

import numpy as np

from ..sampling import PreparedDoc, sequential
from .spec import MethodSpec, Param, register

VARIANTS = ("smc", "smc-full", "algorithm-3", "extend-only")
PARTICLES, REJUVENATE = 300, 128  # the defaults (docs/linear_smc.md chose them at T = 20 and 50)
MEASURED_TOPICS = 50  # past this the defaults were measured low (`caution`)
RESAMPLING = ("systematic", "multinomial")
ORDERS = ("given", "peaked")


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        particles: int, variant: str, rejuvenate: int = -1,
        resampling: str = "systematic", ess: float = 1.0, order: str = "peaked") -> tuple[float, float]:
    """(log estimate, V): V is the Lee-Whiteley estimate of Var(P-hat) / P^2 from the run's
    genealogy (`sequential.lee_whiteley`), unbiased (times P-hat^2 / P^2) with multinomial
    resampling; NaN with systematic resampling (there it is badly biased: tests/test_lee_whiteley.py),
    for completion and for the variants that are not particle filters. The tokens are taken as
    `doc` holds them: `order` is applied once per document, before its runs, by `ordered` (the
    registered `prepare` step), not here."""
    args = (doc.rows, doc.cum, float(doc.alpha.sum()), particles, n_obs, state)
    if variant in ("smc", "smc-full"):
        multinomial = resampling == "multinomial"
        est, v = sequential.smc(*args, rejuvenate if variant == "smc" else -1, multinomial, ess)
        v = v if multinomial and n_obs == 0 and ess >= 1 else math.nan
    else:
        est = (sequential.algorithm3 if variant == "algorithm-3" else sequential.extend_only)(*args)
        v = math.nan
    return est + float(doc.scales[n_obs:].sum()), v


def ordered(doc: PreparedDoc, n_obs: int, params: dict) -> PreparedDoc:
    """The document in the token order `params["order"]` asks for (smc, smc-full; the other
    variants take the given order)."""
    if params.get("order") == "peaked" and params.get("variant") in ("smc", "smc-full"):
        return peaked_first(doc, n_obs)
    return doc


def peaked_first(doc: PreparedDoc, n_obs: int) -> PreparedDoc:
    """The document with its tokens reordered, the observed part (< n_obs) and the scored part each
    on its own, in rounds: the first occurrence of every word, then the second ones, and so on;
    within a round, words whose topic distribution phi[:, w] / sum_t phi[t, w] has the least
    entropy first (stable). Rounds keep a word's repeats from coming in a block, which with sparse
    alpha lets the particles settle on the wrong topics (red team 6, F7: tests/test_linear_smc.py).
    Under LDA the tokens are exchangeable, so P(w), and P(w2 | w1), are the same in any order, and
    so is what an unbiased estimator estimates; the particles' variance is not (docs/linear_smc.md)."""
    N = doc.rows.shape[0]
    if N < 2:
        return doc
    q = doc.rows / doc.rows.sum(axis=1, keepdims=True)
    log_q = np.zeros_like(q)
    np.log(q, out=log_q, where=q > 0)
    ent = -(q * log_q).sum(axis=1)
    ids = doc.words if doc.words is not None else np.arange(N)
    perm = np.concatenate([lo + np.lexsort((ent[lo:hi], _occurrence(ids[lo:hi])))
                           for lo, hi in ((0, n_obs), (n_obs, N))])
    words = doc.words[perm] if doc.words is not None else None
    return PreparedDoc(np.ascontiguousarray(doc.rows[perm]), doc.alpha, doc.scales[perm], doc.order,
                       doc.phi_wt, words)


def _occurrence(words: np.ndarray) -> np.ndarray:
    """For each token, how many earlier tokens hold the same word (0 for a word's first)."""
    idx = np.argsort(words, kind="stable")
    w = words[idx]
    start = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
    sorted_rank = np.arange(w.size) - np.repeat(start, np.diff(np.r_[start, w.size]))
    rank = np.empty(w.size, np.int64)
    rank[idx] = sorted_rank
    return rank


def caution(params: dict, alpha: np.ndarray) -> str | None:
    """The warning past MEASURED_TOPICS topics at the default budget or below: there, on real held-out
    text, `smc` with 300 particles and K = 128 was low by more than the 0.001 nats per token it keeps
    at 20 and 50 topics (benchmarks/heldout_vs_peers.py, at 200 and 1,000 topics, on paragraphs and
    whole addresses, against `smc-full` and longer references; docs/performance.md)."""
    T = len(alpha)
    if (T <= MEASURED_TOPICS or params.get("variant") != "smc" or params.get("particles", 0) > PARTICLES
            or params.get("rejuvenate", 0) > REJUVENATE):
        return None
    return (f"at {T} topics (more than {MEASURED_TOPICS}) this budget was measured low by more than 0.001 "
            "nats per token on real held-out text, more on long documents (docs/performance.md); "
            "check=K measures the error on these documents, and more particles or a larger rejuvenate "
            "lower it")


def cost(N: int, p: dict) -> float:
    """Gibbs site updates of rejuvenation: R N(N-1)/2 for a pass over all earlier positions at
    every position (smc-full, algorithm-3); smc stops growing at K per position (R N K for long
    documents); R N (extend-only)."""
    R, v = p["particles"], p["variant"]
    if v == "extend-only":
        return R * N
    if v != "smc" or N <= 1:
        return R * N * (N - 1) / 2
    m = min(N - 1, p["rejuvenate"])  # positions with a full pass: 0..m, then K each
    return R * (m * (m + 1) / 2 + (N - 1 - m) * p["rejuvenate"])


register(MethodSpec(
    name="left-to-right", fn=run, budget="particles", grow=("rejuvenate", "particles"),
    description="left-to-right sequential estimator (smc: unbiased particle filter at linear cost; "
                "smc-full; algorithm-3; extend-only)",
    params={"particles": Param(PARTICLES, int, "particles R"),
            "variant": Param("smc", str, "smc (unbiased for P(w); rejuvenation bounded by --rejuvenate), "
                             "smc-full (unbiased; a pass over all earlier positions at every position, "
                             "the earlier default, with 100 particles), algorithm-3 (the "
                             "paper's; not consistent in R) or extend-only (unbiased only with R = 1)",
                             choices=VARIANTS),
            "rejuvenate": Param(REJUVENATE, int, "smc: Gibbs site updates per particle and position K (a "
                                "pass over all earlier positions while there are at most K, then K of a "
                                "cyclic scan: cost at most R N K)", minimum=0,
                                only_for=("variant", ("smc",))),
            "resampling": Param("systematic", str, "smc, smc-full: systematic (lower variance) or "
                                "multinomial (heldout: each run then carries the Lee-Whiteley estimate "
                                "of its relative variance)", choices=RESAMPLING, minimum=None,
                                only_for=("variant", ("smc", "smc-full"))),
            "order": Param("peaked", str, "smc, smc-full: the order in which the tokens are taken: peaked "
                           "(words with the least topic entropy first, repeats in later rounds: the "
                           "same P(w), less variance) or "
                           "given (as in the document, the earlier order)", choices=ORDERS,
                           minimum=None,
                           only_for=("variant", ("smc", "smc-full"))),
            "ess": Param(1.0, float, "smc, smc-full: resample at every position (1, the default) or only "
                         "when the effective sample size of the weighted particles falls below this "
                         "fraction of R (adaptive resampling; still unbiased; above 1 means 1)", minimum=0,
                         saturates_at=1.0, only_for=("variant", ("smc", "smc-full")))},
    cost=cost,
    caution=caution,
    prepare=ordered,
    tasks=("heldout", "completion"),
    variance=True,
    relabel=False,  # 4-7% faster on 50-token documents at T = 1000 (docs/performance.md)
    kernel="sparse",
    # completion: a ratio of two unbiased estimates, consistent but not unbiased
    unbiased=lambda p: p["variant"] in ("smc", "smc-full")
    or (p["variant"] == "extend-only" and p["particles"] == 1),
    renamed={"resample": "variant: 'smc' (default, unbiased), 'algorithm-3' (was resample=True), "
                         "'extend-only' (was resample=False)"},
))
