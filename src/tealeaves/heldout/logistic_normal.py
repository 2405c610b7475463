"""Held-out likelihood under a logistic-normal prior: P(w) = ∫ prod_n p(w_n | eta) N(eta; mean, cov) d eta,
theta = softmax(eta), by annealed importance sampling over eta with elliptical slice sampling as the
transition (exact for every tempered target N(eta) p(w | eta)^tau; no step size).

Decoders: `mixture`, p(w_n | eta) = sum_k theta_k phi[k, w_n] (CTM; ProdLDA or ETM read as a
mixture), and `product-of-experts`, p(w_n | eta) = softmax(theta @ B)[w_n] (ProdLDA).

The prior lives in R^T, T = the number of topics. A model with T - 1 free dimensions (Blei & Lafferty's
CTM, eta_T = 0) is the same model with its mean padded by a 0 and its covariance by a zero row and
column: a singular `cov` is allowed (its factor comes from an eigendecomposition), or give `factor`
L (T x r, cov = L L^T) directly. tomotopy's CTModel keeps all T dimensions: `prior_mean` (T) and
`prior_cov` (T x T) are the N(mean, cov) here, and theta = softmax(eta) over its T topics.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..errors import InvalidCorpusError, InvalidModelError, MethodError
from ..files.kept import digest, kept
from ..sampling import logistic_normal as kernel
from ..sampling.rng import child, new_state
from ..topics import PSD_TOLERANCE, check_covariance
from ..util.limits import OPS_RATE, RATE, check_bootstrap, check_cost, check_int, check_memory
from .ais import SCHEDULES, temperature_schedule

DECODERS = {"mixture": kernel.MIXTURE, "product-of-experts": kernel.PRODUCT}
ROW_SUM_TOLERANCE = 1e-6
MAX_LOG_LIKELIHOOD = 1e300  # |log P(w)| a document may reach before float64 arithmetic overflows
ELBO_ITERATIONS = 1000  # L-BFGS iterations per document at most
ELBO_SECONDS = 1e-4  # seconds per L-BFGS iteration on a small document (scipy's overhead), generous


def _matrix(name: str, value, shape: tuple[int | None, ...]) -> np.ndarray:
    """`value` as a finite float64 array of `shape` (None: any length)."""
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidModelError(f"{name} must be numbers: {e}") from None
    if a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape, strict=True)):
        want = " x ".join("?" if s is None else str(s) for s in shape)
        raise InvalidModelError(f"{name} has shape {a.shape}, expected {want}")
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        raise InvalidModelError(f"{name} has a non-finite value ({a[at]}) at index {at}")
    return np.ascontiguousarray(a)


def prior_factor(mean, cov=None, factor=None) -> tuple[np.ndarray, np.ndarray]:
    """(mean, L) with cov = L L^T: `factor` as given, or `cov`'s eigendecomposition with the
    directions of zero variance dropped (singular covariances allowed, not-PSD ones refused)."""
    mean = _matrix("mean", mean, (None,))
    T = mean.size
    if T == 0:
        raise InvalidModelError("mean is empty: a logistic-normal prior needs at least one topic")
    if (cov is None) == (factor is None):
        raise InvalidModelError("give exactly one of cov and factor")
    if factor is not None:
        L = _matrix("factor", factor, (T, None))
        return mean, L
    values, vectors = covariance(cov, T)
    keep = values > PSD_TOLERANCE * max(values.max(), 0.0)
    return mean, np.ascontiguousarray(vectors[:, keep] * np.sqrt(values[keep]))


def covariance(cov, T: int) -> tuple[np.ndarray, np.ndarray]:
    """`cov` checked as a T x T covariance (finite, symmetric, positive semi-definite): its
    eigenvalues and eigenvectors. Every reader of a covariance goes through here."""
    check_memory(f"a {T:,} x {T:,} covariance and its eigendecomposition", 4.0 * T * T * 8)
    cov = _matrix("cov", cov, (T, T))
    return check_covariance(cov)


def _decoder(decoder: str) -> int:
    if decoder not in DECODERS:
        raise MethodError(f"unknown decoder {decoder!r}: choose one of {', '.join(DECODERS)}",
                          options=("decoder",))
    return DECODERS[decoder]


def _topics(beta, T: int, code: int) -> np.ndarray:
    """beta checked: T x V; for the mixture, rows that are distributions (never normalised here);
    for the product of experts, log-weights with each row's maximum subtracted (softmax(theta @ B)
    is unchanged, theta summing to 1, and no score exceeds 0)."""
    beta = _matrix("beta", beta, (T, None))
    if code == kernel.PRODUCT and beta.size:
        with np.errstate(over="ignore", invalid="ignore"):
            beta = np.ascontiguousarray(beta - beta.max(axis=1, keepdims=True))
    if code == kernel.MIXTURE:
        if (beta < 0).any():
            k, v = np.argwhere(beta < 0)[0]
            raise InvalidModelError(f"beta[{k}, {v}] = {beta[k, v]} is negative: "
                                    f"mixture topics are distributions")
        sums = beta.sum(axis=1)
        off = np.abs(sums - 1.0)
        if off.max() > ROW_SUM_TOLERANCE:
            k = int(off.argmax())
            raise InvalidModelError(f"topic {k} of beta sums to {sums[k]!r}, not 1: mixture topics must be "
                                    f"distributions (normalise them yourself if that is what they mean)")
    return beta


def _documents(docs: Iterable, V: int) -> list[np.ndarray]:
    out = []
    for d, doc in enumerate(docs):
        a = np.asarray(doc)
        if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
            raise InvalidCorpusError(f"document {d} must be a sequence of integer word ids")
        if a.size and (a.min() < 0 or a.max() >= V):  # in the ids' own type: uint64 is not wrapped
            bad = a[(a < 0) | (a >= V)][0]
            raise InvalidCorpusError(f"document {d} has word id {bad}, outside the vocabulary of {V} words")
        out.append(a.astype(np.int64))
    return out


def _overflow(beta: np.ndarray, docs: Sequence[np.ndarray], code: int) -> None:
    """Refuse product-of-experts log-weights (rows already shifted to a maximum of 0) so spread
    that a document's log-likelihood, up to tokens x the spread, would overflow float64."""
    if code != kernel.PRODUCT or not beta.size:
        return
    spread = -float(beta.min())  # inf when a row's range itself overflowed
    longest = max((doc.size for doc in docs), default=0)
    if not spread * max(longest, 1) < MAX_LOG_LIKELIHOOD:
        raise InvalidModelError(f"beta's log-weights span {spread:.3g} within a topic: with documents of up "
                                f"to {longest:,} tokens log P(w) overflows float64 (rescale the log-weights)")


def ais_updates(code: int, T: int, V: int, tokens: float, documents: int, runs: int,
                temperatures: int) -> float:
    """The work of the AIS estimate, in topic x word products: per run and temperature, every
    token's T topics (mixture) or every document's T x V scores (product of experts)."""
    per_temperature = tokens * T if code == kernel.MIXTURE else documents * T * V + tokens * T
    return float(runs) * temperatures * per_temperature


def _check_ais_cost(code: int, T: int, V: int, docs: Sequence[np.ndarray], runs: int, temperatures: int,
                    max_hours: float | None) -> float:
    """Before any allocation: the run's memory (the chains' states and the estimates, runs x
    documents; the schedule; the documents' columns) and time against the budget."""
    tokens = float(sum(doc.size for doc in docs))
    nbytes = 40.0 * runs * len(docs) + 32.0 * temperatures + 8.0 * T * (tokens + V)
    updates = ais_updates(code, T, V, tokens, len(docs), runs, temperatures)
    what = (f"AIS over a logistic-normal prior ({runs:,} runs x {temperatures:,} temperatures x "
            f"{len(docs):,} documents)")
    check_cost(what, nbytes, updates / RATE, max_hours,
               how=f"{updates:.3g} topic-word products at about {RATE:.0e} per second")
    return updates


def _flat(beta: np.ndarray, docs: Sequence[np.ndarray], code: int):
    """Each document's distinct words' columns of beta (rows), their counts, offsets, tokens."""
    rows, counts, offsets, tokens = [], [], [0], []
    for d, doc in enumerate(docs):
        ids, c = np.unique(doc, return_counts=True)
        cols = beta[:, ids].T
        if code == kernel.MIXTURE and ids.size:
            zero = cols.max(axis=1) <= 0
            if zero.any():
                raise InvalidCorpusError(f"document {d}: word id {ids[zero][0]} has probability 0 "
                                         f"under every topic, so P(w) = 0")
        rows.append(cols)
        counts.append(c.astype(np.float64))
        offsets.append(offsets[-1] + ids.size)
        tokens.append(float(doc.size))
    T = beta.shape[0]
    return (np.ascontiguousarray(np.concatenate(rows) if rows else np.zeros((0, T))),
            np.concatenate(counts) if counts else np.zeros(0), np.array(offsets, dtype=np.int64),
            np.array(tokens))


def _count(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise MethodError(f"{name} must be an integer >= {minimum}, not {value!r}", options=(name,))
    return int(value)


def _finite(estimates: np.ndarray, what: str) -> np.ndarray:
    """The estimates, or a one-line error naming the first document whose estimate is not finite."""
    bad = np.argwhere(~np.isfinite(estimates))
    if bad.size:
        raise InvalidModelError(f"{what} of document {int(bad[0][-1])} is {estimates[tuple(bad[0])]} "
                                "(float64 overflowed: the model's scale is too extreme)")
    return estimates


def logistic_normal_log_prob(beta, mean, cov, docs: Iterable, *, factor=None,
                             decoder: str = "mixture", temperatures: int = 1000,
                             schedule: str = "geometric", runs: int = 1, seed: int = 0,
                             max_hours: float | None = None, done: dict[int, np.ndarray] | None = None,
                             on_result: Callable[[int, np.ndarray], None] | None = None) -> np.ndarray:
    """log P(w) estimates, runs x documents, for documents `docs` (sequences of word ids in
    [0, V)) under eta ~ N(mean, cov) (or, with cov None, cov = factor factor^T), theta = softmax(eta), and the
    decoder: `mixture` (beta: T x V topic-word distributions) or `product-of-experts` (beta: T x V
    log weights B, p(w | theta) = softmax(theta @ B)). Each estimate's exp is unbiased for P(w);
    combine runs as log(mean(exp(.))) (logsumexp over runs minus log runs), not by averaging logs.
    Document d's runs depend only on (seed, d, run). The cost is checked against `max_hours` (and
    the memory) before any work. `done` (document -> its runs, a resumed run's) and `on_result`
    (called with each other document's runs as it finishes): documents one at a time, the same
    numbers (`files.kept`)."""
    code = _decoder(decoder)
    seed = check_int("seed", seed, 0)
    mean, L = prior_factor(mean, cov, factor)
    beta = _topics(beta, mean.size, code)
    temperatures = _count("temperatures", temperatures)
    runs = _count("runs", runs)
    if schedule not in SCHEDULES:
        raise MethodError(f"unknown schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}",
                          options=("schedule",))
    docs = _documents(docs, beta.shape[1])
    _check_ais_cost(code, mean.size, beta.shape[1], docs, runs, temperatures, max_hours)
    _overflow(beta, docs, code)
    rows, counts, offsets, tokens = _flat(beta, docs, code)
    words = np.ascontiguousarray(beta.T) if code == kernel.PRODUCT else np.zeros((1, mean.size))
    root = np.random.SeedSequence(seed)
    states = np.empty((runs, len(docs), 4), dtype=np.uint64)
    for d in range(len(docs)):
        doc_seed = child(root, d)
        for r in range(runs):
            states[r, d] = new_state(child(doc_seed, r))
    taus = temperature_schedule(schedule, temperatures)
    if done is None and on_result is None:
        return _finite(kernel.ais(mean, L, code, rows, counts, offsets, tokens, words, taus, states),
                       "the AIS estimate")
    out = np.empty((runs, len(docs)))
    for d in range(len(docs)):  # each document alone: its own rows and generator states, as above
        if done and d in done:
            out[:, d] = done[d]
            continue
        lo, hi = offsets[d], offsets[d + 1]
        one = kernel.ais(mean, L, code, rows[lo:hi], counts[lo:hi], np.array([0, hi - lo], dtype=np.int64),
                         tokens[d:d + 1], words, taus, np.ascontiguousarray(states[:, d:d + 1]))
        out[:, d] = one[:, 0]
        if not np.isfinite(one).all():  # named as the one-call estimate names it: by its document
            _finite(np.where(np.arange(len(docs)) == d, out, 0.0), "the AIS estimate")
        if on_result is not None:
            on_result(d, out[:, d].copy())
    return out


CHAINS = 4  # independent AIS chains per document and budget: their spread is the run's own diagnostic
START_TEMPERATURES = 100  # the first budget; each further one doubles it
MAX_TEMPERATURES = 102_400  # the last budget (START_TEMPERATURES x 2^10)
# nats per document: two consecutive budgets, and the standard error, agree this well. 0.03: the chains'
# t interval (3.18 standard errors with 3 degrees of freedom) within 0.1 nat (experiments/ctm_adaptive.py)
TOLERANCE = 0.03
# The mean last budget on short real documents (tomotopy CTMs, T = 8 and 20: 48,000 to 96,000 in
# experiments/ctm_adaptive.py): what cost estimates assume; the budgets before it add less than as much again
EXPECTED_TEMPERATURES = 100_000


def spread(estimates: np.ndarray) -> np.ndarray:
    """Per document, the standard error of `combine_runs` (runs x documents) by the delta method: the
    sd over runs of P_r / mean_r P_r, over sqrt(runs) (NaN with one run)."""
    estimates = np.asarray(estimates, dtype=np.float64)
    if estimates.shape[0] < 2:
        return np.full(estimates.shape[1:], np.nan)
    p = np.exp(estimates - estimates.max(axis=0))
    return p.std(axis=0, ddof=1) / p.mean(axis=0) / np.sqrt(estimates.shape[0])


def adaptive_log_prob(beta, mean, cov, docs: Iterable, *, factor=None, decoder: str = "mixture",
                      chains: int = CHAINS, start: int = START_TEMPERATURES,
                      max_temperatures: int = MAX_TEMPERATURES, tolerance: float = TOLERANCE,
                      schedule: str = "geometric", seed: int = 0, max_hours: float | None = None,
                      done: dict[int, list] | None = None,
                      on_result: Callable[[int, list], None] | None = None) -> dict[str, np.ndarray]:
    """AIS over a logistic-normal prior (`logistic_normal_log_prob`) with each document's budget set by
    its own diagnostics: `chains` independent runs at `start` temperatures, then at twice as many, and so
    on, until two consecutive budgets' estimates (log mean exp over the chains) differ by at most
    `tolerance` nats and the standard error is at most `tolerance`, or the budget reaches
    `max_temperatures`. The standard error pools this budget's chains' `spread` with the previous
    budget's (its variance halved, as AIS's variance falls like 1 / temperatures (Neal 2001); at the
    first budget, this one's alone): se^2 = (spread_S^2 + spread_{S/2}^2 / 2) / 2, 6 degrees of
    freedom instead of 3, so the doubling stops less often on chains that agree by chance, and the error
    it states is less often too small. A posterior with several modes that the chains reach in
    different proportions spreads their weights, and a budget too small to reach one mode at all moves
    the estimate when it doubles: both raise the budget.

    Returns a dict of arrays over documents: "runs" (chains x documents, the last budget's log weights:
    each one's exp is unbiased for P(w)), "se" (the pooled standard error of their log mean exp),
    "temperatures" (the last budget), "change" (last estimate minus the one before, NaN when the first
    budget was already the bound), "converged". Document d's numbers depend only on (seed, d); chain c
    of budget l is seeded by (seed, d, l, c). The expected cost (the budgets
    up to EXPECTED_TEMPERATURES, at most `max_temperatures`) is checked against `max_hours` before any
    work. `done` / `on_result`: as in `logistic_normal_log_prob`, with each document's (runs,
    temperatures, change, converged, se)."""
    code = _decoder(decoder)
    seed = check_int("seed", seed, 0)
    mean, L = prior_factor(mean, cov, factor)
    beta = _topics(beta, mean.size, code)
    chains = _count("chains", chains, 2)
    start = _count("start", start)
    max_temperatures = _count("max_temperatures", max_temperatures, start)
    if not (isinstance(tolerance, int | float) and not isinstance(tolerance, bool) and tolerance > 0
            and np.isfinite(tolerance)):
        raise MethodError(f"tolerance must be a positive number of nats, not {tolerance!r}",
                          options=("tolerance",))
    if schedule not in SCHEDULES:
        raise MethodError(f"unknown schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}",
                          options=("schedule",))
    docs = _documents(docs, beta.shape[1])
    _check_ais_cost(code, mean.size, beta.shape[1], docs, chains,
                    2 * min(max(EXPECTED_TEMPERATURES, start), max_temperatures), max_hours)
    _overflow(beta, docs, code)
    rows, counts, offsets, tokens = _flat(beta, docs, code)
    words = np.ascontiguousarray(beta.T) if code == kernel.PRODUCT else np.zeros((1, mean.size))
    D = len(docs)
    out = np.empty((chains, D))
    se = np.full(D, np.nan)
    temps = np.zeros(D, dtype=np.int64)
    change = np.full(D, np.nan)
    converged = np.zeros(D, dtype=bool)
    root = np.random.SeedSequence(seed)
    active = []
    for d in range(D):
        if done and d in done:
            out[:, d], temps[d], change[d], converged[d], se[d] = done[d]
        else:
            active.append(d)
    previous = np.full(D, np.nan)
    previous_var = np.full(D, np.nan)  # the previous budget's spread^2 x chains (one chain's variance)
    S, level = start, 0
    while active:
        last = S * 2 > max_temperatures
        idx = np.array(active)
        parts = [np.arange(offsets[d], offsets[d + 1]) for d in idx]
        sizes = np.array([p.size for p in parts], dtype=np.int64)
        pick = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        sub_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        states = np.empty((chains, idx.size, 4), dtype=np.uint64)
        for j, d in enumerate(idx):
            doc_seed = child(child(root, int(d)), level)
            for c in range(chains):
                states[c, j] = new_state(child(doc_seed, c))
        est = kernel.ais(mean, L, code, np.ascontiguousarray(rows[pick]), counts[pick], sub_offsets,
                         tokens[idx], words, temperature_schedule(schedule, S), states)
        now = combine_runs(est)
        bad = ~np.isfinite(now)
        if bad.any():
            _finite(np.where(np.arange(D) == idx[bad][0], np.inf, 0.0), "the AIS estimate")
        var = spread(est) ** 2
        pooled = np.sqrt(np.where(np.isnan(previous_var[idx]), var,
                                  (var + previous_var[idx] / (2 * chains)) / 2))
        moved = now - previous[idx]
        agree = (np.abs(moved) <= tolerance) & (pooled <= tolerance)
        still = []
        for j, d in enumerate(idx):
            if agree[j] or last:
                out[:, d], temps[d], se[d] = est[:, j], S, pooled[j]
                change[d], converged[d] = moved[j], agree[j]
                if on_result is not None:
                    on_result(int(d), [out[:, d].copy(), int(S), float(moved[j]), bool(agree[j]),
                                       float(pooled[j])])
            else:
                previous[d], previous_var[d] = now[j], var[j] * chains
                still.append(int(d))
        active = still
        S, level = 2 * S, level + 1
    return {"runs": out, "se": se, "temperatures": temps, "change": change, "converged": converged}


def combine_runs(estimates: np.ndarray) -> np.ndarray:
    """Per document, log of the mean over runs of exp(estimate): unbiased for P(w) in probability."""
    from scipy.special import logsumexp

    estimates = np.asarray(estimates, dtype=np.float64)
    return logsumexp(estimates, axis=0) - np.log(estimates.shape[0])


def logistic_normal_elbo(phi, mean, cov, docs: Iterable, return_q: bool = False,
                         max_hours: float | None = None):
    """The correlated topic model's variational lower bound on log P(w) per document (Blei &
    Lafferty 2007), mixture decoder, full-rank cov: q(eta) = N(lam, diag(s^2)), with the topic
    assignments' q and the bound's zeta at their optima (closed forms), which leaves
        sum_n log sum_k exp(lam_k) phi[k, w_n] - N log sum_k exp(lam_k + s_k^2 / 2) - KL(q || N(mean, cov)),
    maximised over (lam, log s) by L-BFGS from lam = mean, s^2 = diag(cov). With `return_q`, also
    the fitted lam and s (documents x T each). The cost (at most ELBO_ITERATIONS iterations per
    document) is checked against `max_hours` before the work."""
    from scipy.optimize import minimize

    mean = _matrix("mean", mean, (None,))
    T = mean.size
    values, vectors = covariance(cov, T)
    if not values.min() > PSD_TOLERANCE * values.max():
        raise InvalidModelError(f"cov must be positive definite for the variational bound (smallest "
                                f"eigenvalue {values.min():.3g}, largest {values.max():.3g})")
    cov = (vectors * values) @ vectors.T
    precision = (vectors / values) @ vectors.T
    logdet = float(np.log(values).sum())
    phi = _topics(phi, T, kernel.MIXTURE)
    docs = _documents(docs, phi.shape[1])
    rows, counts, offsets, tokens = _flat(phi, docs, kernel.MIXTURE)  # refuses words of probability 0
    evaluations = ELBO_ITERATIONS * (float(rows.size) + len(docs) * T * T)
    check_cost(f"the variational bound of {len(docs):,} documents", 16.0 * len(docs) * T,
               ELBO_ITERATIONS * len(docs) * ELBO_SECONDS + evaluations / OPS_RATE, max_hours,
               how=f"up to {ELBO_ITERATIONS:,} L-BFGS iterations per document at about "
                   f"{ELBO_SECONDS:g} s each")
    with np.errstate(divide="ignore"):  # a word of probability 0 under some topics: log 0 = -inf is right
        logrows = np.log(rows)
    start = np.concatenate([mean, 0.5 * np.log(np.diag(cov))])
    out, qs = [], []
    for d in range(len(docs)):
        lo, hi = offsets[d], offsets[d + 1]
        args = (logrows[lo:hi], counts[lo:hi], tokens[d], mean, precision, logdet)
        with np.errstate(over="ignore", invalid="ignore"):
            fit = minimize(_negative_bound, start, args=args, jac=True, method="L-BFGS-B",
                           options={"maxiter": ELBO_ITERATIONS, "gtol": 1e-9})
        out.append(-fit.fun)
        qs.append(fit.x)
    bounds = _finite(np.array(out), "the variational bound")
    if not return_q:
        return bounds
    q = np.array(qs).reshape(len(out), 2 * T)
    return bounds, q[:, :T], np.exp(q[:, T:])


def _negative_bound(p: np.ndarray, logcols: np.ndarray, c: np.ndarray, N: float, mean: np.ndarray,
                    precision: np.ndarray, logdet: float) -> tuple[float, np.ndarray]:
    """Minus the CTM bound at (lam, log s) = p, and its gradient; logcols: log phi of the distinct
    words (U x T), c: their counts."""
    from scipy.special import logsumexp

    T = mean.size
    lam, u = p[:T], p[T:]
    s2 = np.exp(2 * u)
    a = logcols + lam
    lse = logsumexp(a, axis=1)
    r = np.exp(a - lse[:, None])
    b = lam + s2 / 2
    lb = logsumexp(b)
    sb = np.exp(b - lb)
    diff = lam - mean
    pd = precision @ diff
    kl = 0.5 * (precision.diagonal() @ s2 + diff @ pd - T + logdet - 2 * u.sum())
    value = c @ lse - N * lb - kl
    g_lam = c @ r - N * sb - pd
    g_u = -N * sb * s2 - precision.diagonal() * s2 + 1.0
    return -value, -np.concatenate([g_lam, g_u])


def heldout_logistic_normal(model, docs, runs: int = 1, seed: int = 0, bootstrap: int = 10000,
                            max_hours: float | None = None, temperatures: int | None = None,
                            schedule: str = "geometric", keep: str | os.PathLike | None = None,
                            tolerance: float | None = None, check: int = 0,
                            check_temperatures: int | None = None):
    """`tl.heldout` for a `Topics` with a logistic-normal prior (documents already checked against
    its vocabulary by the caller), as a `HeldoutResult` (method "ais", its params saying the prior and
    decoder). By default (`temperatures` None) each document's budget comes from its own diagnostics
    (`adaptive_log_prob`: `runs` chains, at least CHAINS, doubled temperatures until two
    budgets and the chains agree within `tolerance` nats): the runs are the last budget's chains, the
    sd of the total sqrt(sum_d spread_d^2) from their spread (`spread`), and `extra["adaptive"]` each
    document's temperatures, last change and whether it converged. With `temperatures`: that many for
    every document, `runs` runs. Its cost is checked against `max_hours` before the work; `keep`: a
    folder keeping every finished document, as `tl.heldout`'s. `check=K`: the cross-check of
    `heldout.crosscheck` on K random documents, the reference AIS from the prior with 2 runs of
    `check_temperatures` (default 200,000)."""
    import time

    from ..corpus import Corpus
    from .crosscheck import CHECK_TEMPERATURES
    from .result import HeldoutResult, bootstrap_bytes, bootstrap_sd

    corpus = docs if isinstance(docs, Corpus) else Corpus.from_word_ids(docs, model.vocab)
    runs = _count("runs", runs)
    adaptive = temperatures is None
    if not adaptive and tolerance is not None:  # never ignored silently (session 8)
        raise MethodError("tolerance applies only to the adaptive budget (no temperatures given); with "
                          f"temperatures={temperatures!r} every document gets that many",
                          options=("tolerance",))
    if adaptive:
        runs = max(runs, CHAINS)
        tolerance = TOLERANCE if tolerance is None else tolerance
    else:
        temperatures = _count("temperatures", temperatures)
    check = check_int("check", check, 0)
    check_temperatures = _count("check_temperatures", CHECK_TEMPERATURES if check_temperatures is None
                                else check_temperatures)
    resampled = runs >= 2 and len(corpus) > 0  # else bootstrap_sd has nothing to resample
    bootstrap = check_bootstrap(bootstrap, float(runs) * len(corpus) * resampled,
                                bootstrap_bytes(bootstrap, runs) * resampled, max_hours)
    T, V = model.weights.shape
    code = _decoder(model.decoder)
    planned = 2 * EXPECTED_TEMPERATURES if adaptive else temperatures
    updates = ais_updates(code, T, V, corpus.num_tokens, len(corpus), runs, planned)
    if check:  # the cross-check's reference, before any work: 2 runs on the documents it will pick
        from .crosscheck import choose

        picked = choose(np.asarray(corpus.lengths), check, int(seed))
        _check_ais_cost(code, T, V, [np.asarray(corpus[int(d)]) for d in picked], 2, check_temperatures,
                        max_hours)
    fingerprint = {"model": digest(model.weights, model.mean, model.cov, model.decoder, model.vocab),
                   "documents": digest(corpus.words, corpus.offsets),
                   "temperatures": "adaptive" if adaptive else temperatures,
                   "schedule": schedule, "runs": runs, "seed": int(seed)}
    if adaptive:  # the rule: a kept run of another rule (the 3-degree-of-freedom one before) is not resumed
        fingerprint.update({"tolerance": float(tolerance), "rule": "pooled standard error"})

    def valid(v) -> bool:  # a kept document: its runs (adaptive: with its budget, change, convergence, se)
        runs_of = v[0] if adaptive and isinstance(v, list) and len(v) == 5 else v
        return isinstance(runs_of, np.ndarray) and runs_of.shape == (runs,)
    with kept(keep, "heldout by ais over eta", fingerprint, len(corpus), valid=valid) as k:
        t0 = time.perf_counter()
        where = {"done": k.done if k is not None else None, "on_result": k.add if k is not None else None}
        if adaptive:
            out = adaptive_log_prob(model.weights, model.mean, model.cov, corpus, decoder=model.decoder,
                                    chains=runs, tolerance=tolerance, schedule=schedule, seed=seed,
                                    max_hours=max_hours, **where)
            est = out["runs"]
            budgets = out["temperatures"].astype(np.float64)
            updates = float(sum(ais_updates(code, T, V, float(n), 1, runs, 2 * S)
                                for n, S in zip(corpus.lengths, budgets, strict=True)))
        else:
            est = logistic_normal_log_prob(model.weights, model.mean, model.cov, corpus,
                                           decoder=model.decoder, temperatures=temperatures,
                                           schedule=schedule, runs=runs, seed=seed, max_hours=max_hours,
                                           **where)
        seconds = time.perf_counter() - t0
    extra: dict = {"estimator": "annealed importance sampling over eta with elliptical slice sampling "
                                "(heldout.logistic_normal)"}
    if k is not None:
        extra["kept"] = {"folder": k.folder, "resumed_documents": k.resumed}
    if adaptive:  # the total's sd: each document's pooled standard error (`adaptive_log_prob`), not a
        # bootstrap of 4 chains (which divides by 4, not 3: low by 13%)
        total_sd = float(np.sqrt((out["se"] ** 2).sum())) if len(corpus) else float("nan")
        extra["adaptive"] = {"chains": runs, "tolerance": float(tolerance), "start": START_TEMPERATURES,
                             "bound": MAX_TEMPERATURES, "budget_parameter": "temperatures",
                             "budgets": out["temperatures"].tolist(),
                             "change": [float(c) for c in out["change"]],
                             "converged": [bool(c) for c in out["converged"]],
                             "not_converged": int((~out["converged"]).sum()),
                             "se": [float(s) for s in out["se"]]}
    result = HeldoutResult(
        method="ais", params={"temperatures": "adaptive" if adaptive else temperatures, "schedule": schedule,
                              "prior": "logistic-normal", "decoder": model.decoder},
        run_log_prob=est, doc_tokens=np.asarray(corpus.lengths, dtype=np.int64), seconds=seconds,
        seed=int(seed), workers=1, corpus=corpus.report(), model=model.name, task="heldout",
        site_updates=updates, sd=total_sd if adaptive else bootstrap_sd(est, int(bootstrap), int(seed)),
        bootstrap=int(bootstrap), extra=extra, unbiased=True)
    if check:
        from .crosscheck import run_check

        def estimate(sub: Corpus, method: str, runs: int, **p) -> HeldoutResult:
            return heldout_logistic_normal(model, sub, runs=runs, seed=int(seed) + 1, bootstrap=0,
                                           temperatures=p["temperatures"], schedule=schedule)

        def rerun(sub: Corpus) -> HeldoutResult:  # never called: the result has at least 2 runs
            return heldout_logistic_normal(model, sub, runs=2, seed=int(seed) + 2, bootstrap=0,
                                           temperatures=temperatures, schedule=schedule, tolerance=tolerance)

        words = [np.asarray(corpus[d]) for d in range(len(corpus))]
        result.extra["check"] = run_check(estimate, rerun, words, [0] * len(words), est, check, int(seed),
                                          T, 0, check_temperatures, model.vocab, unbiased=True)
    return result
