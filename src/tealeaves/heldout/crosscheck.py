"""The built-in cross-check (`check=K`): on K random documents, an independent reference (the
exact value where the document is short enough, otherwise AIS with `temperatures` = 200,000 by
default, 2 runs) against the main estimate. Two tests, either flags the result:
- bias: b = sum_d (est_d - ref_d) / sum_d N_d per token over the K documents, with a 95%
  interval from the ratio estimator's linearised variance (t, K - 1 degrees of freedom);
  flagged when the interval excludes zero;
- excess error: the errors' mean square against what the two estimates' run-to-run noise
  explains, sum_d (est_d - ref_d)^2 / sum_d (v_est,d + v_ref,d), with the main method's
  variance from its own runs (2 more on these documents when the result has one) and the
  reference's from its 2 runs (0 when exact); flagged above the 95% point of F(K, K). An
  estimator whose errors go either way (algorithm 3) passes the first and fails the second.
An AIS reference is itself low in log space (too few temperatures: by up to nats per token),
which its 2 runs' spread does not show. An estimate unbiased for P(w) cannot lie far above
log P(w) by chance (Markov: by c nats with probability at most e^-c), so when such an estimate
is significantly above the AIS references (the bias test on those documents alone), they are
judged too weak ("reference_weak": the fix is more --check-temperatures, not a larger budget)
and only the documents with an exact reference are judged; above an exact value, such an
estimate is always flagged (the bias test on those documents alone): that is a bug."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..corpus import Corpus
from .exact import count_states

CHECK_TEMPERATURES = 200_000


def choose(scored: np.ndarray, k: int, seed: int) -> np.ndarray:
    """K random documents among those with scored tokens (seeded, sorted)."""
    candidates = np.flatnonzero(scored > 0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xC4EC]))
    return np.sort(rng.choice(candidates, min(k, candidates.size), replace=False))


def reference(estimate: Callable[..., Any], words: list[np.ndarray], n_obs: list[int],
              num_topics: int, max_states: int, temperatures: int,
              vocab: Any) -> tuple[np.ndarray, np.ndarray, dict, np.ndarray]:
    """log P of each document (task as `estimate` does it), the variance of that value, the
    counts of each kind and which documents' reference is exact: exact (variance 0) where
    C(N+T-1, T-1) (and the same for the observed part) is at most `max_states`, else AIS with
    2 runs."""
    exact = np.array([max(count_states(w.size, num_topics), count_states(n, num_topics)) <= max_states
                      for w, n in zip(words, n_obs, strict=True)])
    out, var = np.zeros(len(words)), np.zeros(len(words))
    how = {"exact": int(exact.sum()), "ais": int((~exact).sum()), "ais_temperatures": temperatures}
    for use_exact, method, params in ((True, "exact", {"max_states": max_states}),
                                      (False, "ais", {"temperatures": temperatures})):
        idx = np.flatnonzero(exact == use_exact)
        if idx.size:
            sub = Corpus.from_word_ids([words[i] for i in idx], vocab=vocab)
            res = estimate(sub, method, runs=1 if use_exact else 2, **params)
            out[idx] = res.doc_log_prob
            if not use_exact:
                var[idx] = res.doc_sd**2 / res.runs
    return out, var, how, exact


def _interval(diff: np.ndarray, tokens: np.ndarray) -> tuple[float, float, float]:
    """The bias per token and its 95% interval (infinite with fewer than 2 documents)."""
    from scipy import stats

    K = diff.size
    b = float(diff.sum() / tokens.sum())
    if K < 2:
        return b, -math.inf, math.inf
    resid = diff - b * tokens
    se = math.sqrt(K / (K - 1) * float((resid**2).sum())) / float(tokens.sum())
    half = float(stats.t.ppf(0.975, K - 1)) * se
    return b, b - half, b + half


def summarise(est: np.ndarray, ref: np.ndarray, tokens: np.ndarray, docs: np.ndarray, how: dict,
              seconds: float, noise: np.ndarray | None = None, unbiased: bool = False,
              exact: np.ndarray | None = None) -> dict[str, Any]:
    """The two tests; `noise` is each error's variance expected from run-to-run noise alone
    (est and reference together), or None to skip the excess-error test; `exact`: which
    documents' reference is exact (None: all when how["ais"] is 0, else none). `unbiased`: the
    estimate is unbiased for P(w), so one significantly above the AIS references convicts them
    (`reference_weak`), and then only the exact-reference documents are judged; one
    significantly above the exact references is flagged whatever the AIS ones show."""
    from scipy import stats

    diff = est - ref
    K = diff.size
    if exact is None:
        exact = np.full(K, how.get("ais", 0) == 0)
    b, lo, hi = _interval(diff, tokens)
    biased = bool(lo > 0 or hi < 0)
    excess = limit = float("nan")
    if noise is not None and K >= 2 and float(noise.sum()) > 0:
        excess = float((diff**2).sum() / noise.sum())
        limit = float(stats.f.ppf(0.95, K, K))
    noisy = bool(excess > limit)
    weak = bool(unbiased and (~exact).any() and _interval(diff[~exact], tokens[~exact])[1] > 0)
    if weak:  # judge the exact-reference documents alone
        part = (summarise(est[exact], ref[exact], tokens[exact], docs[exact], how, seconds,
                          None if noise is None else noise[exact]) if exact.any() else {"flags": []})
        biased, noisy = "bias" in part["flags"], "excess error" in part["flags"]
    if unbiased and exact.any() and _interval(diff[exact], tokens[exact])[1] > 0:
        biased = True  # above exact values: no chance explains it
    return {
        "documents": int(K),
        "indices": [int(i) for i in docs],
        "reference": how,
        "bias_per_token": b,
        "ci95": [lo, hi],
        "excess_error": excess,
        "excess_limit": limit,
        "flagged": biased or noisy,
        "reference_weak": weak,
        "flags": [name for name, on in (("bias", biased), ("excess error", noisy)) if on],
        "document_errors": [float(v) for v in diff],
        "seconds": seconds,
    }


def run_check(estimate: Callable[..., Any], rerun: Callable[[Corpus], Any], words: list[np.ndarray],
              n_obs: list[int], main_runs: np.ndarray, k: int, seed: int, num_topics: int,
              max_states: int, temperatures: int, vocab: Any, unbiased: bool = False) -> dict[str, Any]:
    """The cross-check of a result whose runs are `main_runs` (runs x documents); `rerun(sub)`
    gives 2 more runs of the main method on a sub-corpus when the result has only one;
    `unbiased`: the main method is unbiased for P(w) (see `summarise`)."""
    t0 = time.perf_counter()
    scored = np.array([w.size - n for w, n in zip(words, n_obs, strict=True)])
    docs = choose(scored, k, seed)
    sub_words = [words[i] for i in docs]
    ref, ref_var, how, exact = reference(estimate, sub_words, [n_obs[i] for i in docs], num_topics,
                                         max_states, temperatures, vocab)
    runs = main_runs[:, docs]
    if runs.shape[0] >= 2:
        est_var = runs.var(axis=0, ddof=1) / runs.shape[0]
    else:  # the variance of one run, from that run and two more
        more = rerun(Corpus.from_word_ids(sub_words, vocab=vocab)).run_log_prob
        est_var = np.vstack([runs, more]).var(axis=0, ddof=1)
    est = np.log(np.mean(np.exp(runs - runs.max(axis=0)), axis=0)) + runs.max(axis=0)
    return summarise(est, ref, scored[docs], docs, how, time.perf_counter() - t0, est_var + ref_var,
                     unbiased, exact)


def describe(check: dict[str, Any]) -> str:
    """One line for the terminal (a warning when flagged)."""
    lo, hi = check["ci95"]
    r = check["reference"]
    ref = " and ".join(x for x in (f"exact on {r['exact']}" if r["exact"] else "",
                                   f"AIS({r['ais_temperatures']}) on {r['ais']}" if r["ais"] else "") if x)
    text = (f"cross-check on {check['documents']} documents ({ref}): bias per token "
            f"{check['bias_per_token']:+.5f}, 95% interval [{lo:+.5f}, {hi:+.5f}]")
    if math.isfinite(check.get("excess_error", float("nan"))):
        text += (f"; errors {check['excess_error']:.2f}x the mean square that run-to-run noise "
                 f"explains (95% limit {check['excess_limit']:.2f})")
    if check.get("reference_weak") and not check["flagged"]:
        return (f"warning: {text}: the reference is too weak to judge: this estimate is unbiased for "
                "P(w) and cannot lie this far above it by chance, so AIS at "
                f"{r['ais_temperatures']} temperatures is low; raise --check-temperatures "
                f"(default {CHECK_TEMPERATURES})")
    if check["flagged"]:
        return (f"warning: {text}: flagged ({', '.join(check['flags'])}): this estimate is off at "
                "this budget; raise it (or use target_sd=), or use another method")
    return text + ": consistent with the reference"
