"""The built-in cross-check (`check=K`): on K random documents, an independent reference (the
exact value where the document is short enough, otherwise AIS with `temperatures` = 200,000 by
default, 2 runs) against the main estimate. Reported: the estimated bias of the main estimate
per token, b = sum_d (est_d - ref_d) / sum_d N_d over the K documents, with a 95% interval
from the ratio estimator's linearised variance (t with K - 1 degrees of freedom); the check is
flagged when the interval excludes zero."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from ..corpus import Corpus
from .exact import count_states

CHECK_TEMPERATURES = 200_000


def choose(scored: np.ndarray, k: int, seed: int) -> np.ndarray:
    """K random documents among those with scored tokens (seeded, sorted)."""
    candidates = np.flatnonzero(scored > 0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xC4EC]))
    return np.sort(rng.choice(candidates, min(k, candidates.size), replace=False))


def reference(estimate: Callable[..., Any], words: list[np.ndarray], n_obs: list[int],
              num_topics: int, max_states: int, temperatures: int, vocab: Any) -> tuple[np.ndarray, dict]:
    """log P of each document (task as `estimate` does it): exact where C(N+T-1, T-1) (and
    the same for the observed part) is at most `max_states`, else AIS."""
    exact = np.array([max(count_states(w.size, num_topics), count_states(n, num_topics)) <= max_states
                      for w, n in zip(words, n_obs, strict=True)])
    out = np.zeros(len(words))
    how = {"exact": int(exact.sum()), "ais": int((~exact).sum()), "ais_temperatures": temperatures}
    for use_exact, method, params in ((True, "exact", {"max_states": max_states}),
                                      (False, "ais", {"temperatures": temperatures})):
        idx = np.flatnonzero(exact == use_exact)
        if idx.size:
            sub = Corpus.from_word_ids([words[i] for i in idx], vocab=vocab)
            res = estimate(sub, method, runs=1 if use_exact else 2, **params)
            out[idx] = res.doc_log_prob
    return out, how


def summarise(est: np.ndarray, ref: np.ndarray, tokens: np.ndarray, docs: np.ndarray, how: dict,
              seconds: float) -> dict[str, Any]:
    diff = est - ref
    K = diff.size
    b = float(diff.sum() / tokens.sum())
    if K >= 2:
        resid = diff - b * tokens
        se = math.sqrt(K / (K - 1) * float((resid**2).sum())) / float(tokens.sum())
        half = float(stats.t.ppf(0.975, K - 1)) * se
    else:
        half = float("inf")
    lo, hi = b - half, b + half
    return {
        "documents": int(K),
        "indices": [int(i) for i in docs],
        "reference": how,
        "bias_per_token": b,
        "ci95": [lo, hi],
        "flagged": bool(lo > 0 or hi < 0),
        "document_errors": [float(v) for v in diff],
        "seconds": seconds,
    }


def run_check(estimate: Callable[..., Any], words: list[np.ndarray], n_obs: list[int],
              main_doc: np.ndarray, k: int, seed: int, num_topics: int, max_states: int,
              temperatures: int, vocab: Any) -> dict[str, Any]:
    """The cross-check of a result whose per-document estimates are `main_doc`."""
    t0 = time.perf_counter()
    scored = np.array([w.size - n for w, n in zip(words, n_obs, strict=True)])
    docs = choose(scored, k, seed)
    ref, how = reference(estimate, [words[i] for i in docs], [n_obs[i] for i in docs], num_topics,
                         max_states, temperatures, vocab)
    return summarise(main_doc[docs], ref, scored[docs], docs, how, time.perf_counter() - t0)


def describe(check: dict[str, Any]) -> str:
    """One line for the terminal (a warning when flagged)."""
    lo, hi = check["ci95"]
    r = check["reference"]
    ref = " and ".join(x for x in (f"exact on {r['exact']}" if r["exact"] else "",
                                   f"AIS({r['ais_temperatures']}) on {r['ais']}" if r["ais"] else "") if x)
    text = (f"cross-check on {check['documents']} documents ({ref}): bias per token "
            f"{check['bias_per_token']:+.5f}, 95% interval [{lo:+.5f}, {hi:+.5f}]")
    if check["flagged"]:
        return ("warning: " + text + " excludes 0: this estimate is biased at this budget; raise it "
                "(or use target_sd=)")
    return text + " (includes 0)"
