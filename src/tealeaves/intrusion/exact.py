"""Exact tests on intrusion scores: is a model better than chance, and do two models differ?

- `chance_test`: annotators who guess pick the intruder of an item with n options with probability
  1/n, every answer independently of every other (guessing knows no item or annotator), so the
  number of right answers is binomial (Poisson-binomial when items have different numbers of
  options) and the one-sided p-value P(K >= k) is exact.
- `permutation_test`: two models' per-item scores (model precision per topic, topic log odds per
  document) compared by the difference of their means, the item being the unit: the answers to one
  item are correlated (an easy topic is easy for everyone), so a test that counted answers as
  independent (Fisher's exact test on pooled right/wrong counts) would be too confident whenever
  items are answered several times. Under "the two models' items come from one distribution" the
  model labels are exchangeable between items; every split is enumerated when there are at most
  `exact_limit`, otherwise `permutations` random splits are drawn and p = (1 + b) / (1 + R)
  (Phipson & Smyth 2010), reported with its Monte Carlo standard error. Two-sided p-values are
  twice the smaller one-sided p-value (capped at 1), as scipy.stats.permutation_test computes them.
  With one answer per item this is Fisher's exact test (the one-sided p-values are equal).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import MethodError
from ..util.limits import OPS_RATE, check_int, check_work

EXACT_LIMIT = 100_000
PERMUTATIONS = 9_999
MAX_PERMUTATIONS = 10_000_000  # about a minute per comparison of 100 items
_CELLS = 2_000_000  # indices per batch of splits (16 MB)


def chance_test(correct: Sequence[int], options: Sequence[int]) -> dict[str, Any]:
    """One-sided exact test of "better than guessing": `correct[i]` is 1 when answer i found the
    intruder, `options[i]` the number of options of its item."""
    from scipy import stats

    correct_a, options_a = np.asarray(correct, dtype=int), np.asarray(options, dtype=int)
    if correct_a.size == 0 or correct_a.size != options_a.size:
        raise MethodError("the chance test needs one number of options per answer, and at least one answer")
    if options_a.min() < 2:
        raise MethodError(f"an item has {options_a.min()} option(s); the chance test needs at least 2")
    pmf = np.ones(1)
    for n_opt in np.unique(options_a):
        trials = int(np.sum(options_a == n_opt))
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(trials + 1), trials, 1 / n_opt))
    k = int(correct_a.sum())
    if len(np.unique(options_a)) == 1:  # one binomial: scipy's survival function, exact in the tail
        p = float(stats.binom.sf(k - 1, correct_a.size, 1 / options_a[0]))
    else:
        p = float(min(1.0, pmf[k:].sum()))
    return {"right": k, "answers": int(correct_a.size), "chance": float(np.mean(1 / options_a)),
            "p_value": p}


def _splits(n: int, k: int, permutations: int, rng: np.random.Generator | None):
    """Batches of index arrays (rows: the k items given to one group): every split, or random
    ones; a batch holds about _CELLS indices."""
    rows = max(1, _CELLS // max(n, 1))
    if rng is None:
        combos = itertools.combinations(range(n), k)
        while batch := list(itertools.islice(combos, rows)):
            yield np.array(batch, dtype=np.intp).reshape(len(batch), k)
        return
    for start in range(0, permutations, rows):
        size = min(rows, permutations - start)
        yield np.argpartition(rng.random((size, n)), k - 1, axis=1)[:, :k]


def permutation_test(a: Sequence[float], b: Sequence[float], permutations: int = PERMUTATIONS,
                     seed: int = 0, exact_limit: int = EXACT_LIMIT) -> dict[str, Any]:
    """Two-sided permutation test of mean(a) - mean(b) over items (see the module docstring)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        raise MethodError(f"a permutation test needs items in both groups (got {x.size} and {y.size})")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise MethodError("a permutation test needs finite values")
    permutations = check_int("permutations", permutations, 1, MAX_PERMUTATIONS)
    pooled, n_a, count = np.concatenate([x, y]), x.size, x.size + y.size
    total, observed = pooled.sum(), x.mean() - y.mean()
    k = min(n_a, count - n_a)  # the smaller group is the one enumerated or drawn
    log_splits = math.lgamma(count + 1) - math.lgamma(n_a + 1) - math.lgamma(count - n_a + 1)
    arrangements = math.comb(count, n_a) if log_splits < math.log(exact_limit + 1) + 1 else None
    exact = arrangements is not None and arrangements <= exact_limit
    draws = arrangements if exact else permutations
    check_work(f"a permutation test of {count:,} items", float(draws) * count, OPS_RATE, 8.0 * _CELLS * 3,
               how=f"{draws:,} splits x {count:,} items")
    rng = None if exact else np.random.default_rng(seed)
    tol = 1e-9 * max(1.0, abs(observed))
    less = greater = drawn = 0
    for idx in _splits(count, k, permutations, rng):
        s = pooled[idx].sum(axis=1)
        s_a = s if k == n_a else total - s
        diff = s_a / n_a - (total - s_a) / (count - n_a)
        less += int(np.sum(diff <= observed + tol))
        greater += int(np.sum(diff >= observed - tol))
        drawn += idx.shape[0]
    if exact:
        p_less, p_greater = less / drawn, greater / drawn
    else:
        p_less, p_greater = (less + 1) / (drawn + 1), (greater + 1) / (drawn + 1)
    p = min(1.0, 2 * min(p_less, p_greater))
    out = {"difference": float(observed), "p_value": p, "p_greater": p_greater, "p_less": p_less,
           "items": [int(x.size), int(y.size)], "exact": exact}
    if exact:
        out["arrangements"] = arrangements
    if not exact:
        smaller = min(p_less, p_greater)  # p is twice it: so is its standard error
        out["permutations"] = drawn
        out["monte_carlo_se"] = min(1.0, 2 * math.sqrt(smaller * (1 - smaller) / drawn))
    return out


def method_text(test: dict[str, Any]) -> str:
    """How a permutation p-value was computed, in a few words."""
    if test["exact"]:
        return f"exact over all {test['arrangements']:,} splits"
    return f"{test['permutations']:,} random splits, Monte Carlo s.e. {test['monte_carlo_se']:.4f}"
