"""Accuracy on request (`target_sd=`): each document's budget (the method's `budget` parameter:
particles, temperatures, chain length or samples) doubles until two things hold:
  1. the run-to-run standard deviation of its log estimate, per scored token, is at most
     `target_sd` (from `runs` >= 4 independent runs at that budget), and
  2. the estimates at this budget and the one before agree within their errors:
     |mean_b - mean_{b/2}| <= 2 sqrt(se_b^2 + se_{b/2}^2) + 1e-9 max(1, |mean_b|) (float rounding).
The runs at the final budget are the document's result. A document that reaches the largest
budget (the start times 2^MAX_DOUBLINGS) without both is reported as not converged."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..sampling import child, new_state
from .registry import for_document, get_method

MIN_RUNS = 4
MAX_DOUBLINGS = 12


def adaptive_doc_task(shared: tuple, item: tuple) -> tuple[np.ndarray, int, bool, float, float, np.ndarray]:
    """One document: (log estimates at the final budget, that budget, converged, site updates
    spent, seconds, the runs' relative variance estimates V as in `MethodSpec.call`)."""
    phi_wt, alpha, name, task, params, runs, target_sd = shared
    words, n_obs, seq = item
    t0 = time.perf_counter()
    scored = words.size - n_obs
    spec, params = for_document(get_method(name, task), params, task, int(words.size), phi_wt.shape[1])
    if scored == 0:
        return np.zeros(runs), int(params[spec.budget]), True, 0.0, 0.0, np.zeros(runs)
    doc = spec.document(phi_wt, alpha, words, n_obs, params)
    budget = int(params[spec.budget])
    previous: tuple[float, float] | None = None
    spent = 0.0
    for level in range(MAX_DOUBLINGS + 1):
        p = {**params, spec.budget: budget}
        rng = np.random.default_rng(child(seq, 2 * level))
        state = new_state(child(seq, 2 * level + 1))
        both = np.array([spec.call(doc, n_obs, rng, state, p) for _ in range(runs)])
        vals, rel_var = both[:, 0], both[:, 1]
        spent += runs * spec.work(int(words.size), p, doc.num_topics)
        sd = float(vals.std(ddof=1))
        mean = float(np.log(np.mean(np.exp(vals - vals.max()))) + vals.max())
        se = sd / math.sqrt(runs)
        # the float tolerance: runs with sd 0 at two budgets (an exact estimate) differ by ulps
        tol = 2 * math.hypot(se, previous[1]) + 1e-9 * max(1.0, abs(mean)) if previous else 0.0
        agree = previous is not None and abs(mean - previous[0]) <= tol
        if sd / scored <= target_sd and agree:
            return vals, budget, True, spent, time.perf_counter() - t0, rel_var
        previous = (mean, se)
        if level < MAX_DOUBLINGS:
            budget *= 2
    return vals, budget, False, spent, time.perf_counter() - t0, rel_var


def summarise(outcomes: list[tuple], target_sd: float, budget_name: str) -> dict[str, Any]:
    """What the result reports: the target, each document's budget, convergence and time."""
    budgets = [int(o[1]) for o in outcomes]
    converged = [bool(o[2]) for o in outcomes]
    return {
        "target_sd": target_sd,
        "budget_parameter": budget_name,
        "budgets": budgets,
        "converged": converged,
        "not_converged": int(len(converged) - sum(converged)),
        "document_seconds": [float(o[4]) for o in outcomes],
    }
