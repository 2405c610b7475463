"""Unbiased estimators: over many independent runs the mean of the estimated P(w) is within
4 standard errors of the exact value, on 20 random tiny models and documents (T 2 to 5,
N 1 to 12, asymmetric alpha). Cheap settings keep the variance visible, so a biased
implementation (a wrong weight, an off-by-one temperature, a chain started from the wrong
state) is caught."""

import numpy as np
import pytest
from conftest import random_tiny

import tealeaves as tl

RUNS = 400
CASES = range(20)
UNBIASED = [
    ("is-prior-theta", {"samples": 2}),
    ("is-pzw", {"samples": 2}),
    ("is-iterated", {"samples": 2, "iterations": 3}),
    ("ais", {"temperatures": 4}),
    ("ais", {"temperatures": 30, "schedule": "sigmoid"}),
    ("chib", {"chain_length": 3, "iterations": 1}),
    # one particle without re-sampling is sequential importance sampling: unbiased
    ("left-to-right", {"particles": 1, "variant": "extend-only"}),
]

_exact_cache: dict[int, float] = {}


def _case(seed):
    model, docs = random_tiny(1000 + seed)
    if seed not in _exact_cache:
        _exact_cache[seed] = tl.heldout(model, docs, method="exact").total
    return model, docs, _exact_cache[seed]


@pytest.mark.parametrize("method,params", UNBIASED, ids=lambda x: x if isinstance(x, str) else
                         ",".join(f"{k}={v}" for k, v in x.items()))
@pytest.mark.parametrize("seed", CASES)
def test_mean_of_estimates_is_the_exact_probability(method, params, seed):
    model, docs, exact = _case(seed)
    res = tl.heldout(model, docs, method=method, runs=RUNS, seed=seed, **params)
    ratio = np.exp(res.run_log_prob[:, 0] - exact)  # estimate of P(w) / P(w)
    se = ratio.std(ddof=1) / np.sqrt(RUNS)
    assert abs(ratio.mean() - 1.0) <= 4 * se + 1e-12, (ratio.mean(), se)
