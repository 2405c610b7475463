"""Agreement between annotators: Fleiss' kappa and Krippendorff's alpha (nominal) on intrusion items,
and Krippendorff's alpha (interval and ordinal) on ratings (`rating_agreement`: ProxAnn's fit ratings).

Both read the same data, item -> the positions its annotators chose. Items may have any number of
answers (missing answers are simply absent); an item with a single answer carries no information
about agreement and is left out of both. Where a coefficient is undefined the result is None with a
one-line reason (`agreement`), never nan.

Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", section C):
from the coincidence matrix o_ck = sum over items of n_uc n_uk / (m_u - 1) (c = k: n_uc (n_uc - 1)),
alpha = 1 - (n - 1) sum_{c, k} o_ck delta2_ck / sum_{c, k} n_c n_k delta2_ck, with the metric's
squared difference delta2 (section E): nominal 1 for c != k; interval (c - k)^2; ordinal
(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2. For intrusion items the values are the chosen positions and
the metric nominal, as in Fleiss' kappa (R's oolong codes each answer right/wrong instead, which
counts two annotators who chose different wrong options as agreeing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MethodError
from ..util.numbers import finite_float

NEEDS_TWO = "n/a, needs two raters on at least one item"
ONE_VALUE = "n/a, every answer chose the same position (no disagreement is possible by chance)"


def _counts(choices_by_item: dict[str, list[int]], categories: int) -> np.ndarray:
    """Items x categories counts of the items answered at least twice; every choice must be a
    position among the options (a whole number from 0), else a one-line error naming the item."""
    for item, ch in choices_by_item.items():
        for c in ch:
            if isinstance(c, bool) or not isinstance(c, int | np.integer) or not 0 <= c < categories:
                raise MethodError(f"item {str(item)[:60]!r}: choice {c!r} is not a position among the "
                                  f"options (a whole number in 0..{categories - 1})")
    rows = [np.bincount(ch, minlength=categories) for ch in choices_by_item.values() if len(ch) >= 2]
    return np.array(rows, dtype=float).reshape(len(rows), categories)


def _categories(choices_by_item: dict[str, list[int]]) -> int:
    """One more than the largest choice (the options seen); non-numbers are left to `_counts`."""
    seen = [c for ch in choices_by_item.values() for c in ch
            if finite_float(c) is not None]
    return 1 + int(max(max(seen, default=0), 0))


def why_undefined(choices_by_item: dict[str, list[int]]) -> str | None:
    """The one-line reason agreement is undefined for these answers, or None when it is defined."""
    counts = _counts(choices_by_item, _categories(choices_by_item))
    if counts.shape[0] == 0:
        return NEEDS_TWO
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return ONE_VALUE
    return None


def fleiss_kappa(choices_by_item: dict[str, list[int]], categories: int | None = None) -> float:
    """Fleiss' kappa over items answered at least twice (the number of raters may vary per item:
    each item's observed agreement is over its own pairs); nan where undefined (see `agreement`)."""
    counts = _counts(choices_by_item, categories or _categories(choices_by_item))
    if counts.shape[0] == 0:
        return float("nan")
    m = counts.sum(axis=1)
    observed = float(np.mean(((counts * counts).sum(axis=1) - m) / (m * (m - 1))))
    p = counts.sum(axis=0) / counts.sum()
    chance = float(p @ p)
    return (observed - chance) / (1 - chance) if chance < 1 else float("nan")


METRICS = ("nominal", "interval", "ordinal")


def _delta2(n_c: np.ndarray, metric: str) -> np.ndarray:
    """Krippendorff's squared difference between categories 0..C-1 (section E), C x C."""
    c = np.arange(n_c.size, dtype=float)
    if metric == "nominal":
        return (c[:, None] != c[None, :]).astype(float)
    if metric == "interval":
        return (c[:, None] - c[None, :]) ** 2
    if metric == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])  # cum[k + 1] - cum[c] = sum_{g=c..k} n_g
        lo, hi = np.minimum.outer(c, c).astype(int), np.maximum.outer(c, c).astype(int)
        return (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2) ** 2
    raise MethodError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")


def krippendorff_alpha(choices_by_item: dict[str, list[int]], categories: int | None = None,
                       metric: str = "nominal") -> float:
    """Krippendorff's alpha over items answered at least twice (any number of answers per item),
    the values being categories 0..categories-1 compared by `metric` (nominal, interval or
    ordinal); nan where undefined (see `agreement`)."""
    counts = _counts(choices_by_item, categories or _categories(choices_by_item))
    if counts.shape[0] == 0:
        return float("nan")
    m = counts.sum(axis=1)
    coincidences = (counts.T / (m - 1)) @ counts  # o_ck, diagonal still including n_uc * n_uc
    coincidences[np.diag_indices_from(coincidences)] -= (counts.T / (m - 1)).sum(axis=1)
    n_c = coincidences.sum(axis=1)
    n = n_c.sum()
    d2 = _delta2(n_c, metric)
    expected = float(n_c @ d2 @ n_c)
    return float(1 - (n - 1) * float((coincidences * d2).sum()) / expected) if expected > 0 else float("nan")


def agreement(choices_by_item: dict[str, list[int]], categories: int | None = None) -> dict[str, Any]:
    """Both coefficients and the items and answers they use; a coefficient that is undefined is None
    and `note` says why in one line."""
    note = why_undefined(choices_by_item)
    used = [ch for ch in choices_by_item.values() if len(ch) >= 2]
    out: dict[str, Any] = {"fleiss_kappa": None, "krippendorff_alpha": None, "items": len(used),
                           "answers": sum(len(ch) for ch in used), "note": note}
    if note is None:
        out["fleiss_kappa"] = fleiss_kappa(choices_by_item, categories)
        out["krippendorff_alpha"] = krippendorff_alpha(choices_by_item, categories)
    return out



def rating_agreement(ratings_by_unit: dict[str, list[int]], scale: int) -> dict[str, Any]:
    """Agreement on ratings 1..`scale` (a unit is one thing rated, e.g. one document of one
    topic): Krippendorff's alpha with the interval and the ordinal metric, and Fleiss' kappa
    (nominal, for comparison with intrusion items); units rated once are left out; an undefined
    coefficient is None and `note` says why."""
    bad = [(u, r) for u, rs in ratings_by_unit.items() for r in rs
           if isinstance(r, bool) or not isinstance(r, int | np.integer) or not 1 <= r <= scale]
    if bad:
        raise MethodError(f"unit {str(bad[0][0])[:60]!r}: rating {bad[0][1]!r} is not a whole number "
                          f"in 1..{scale}")
    shifted = {u: [int(r) - 1 for r in rs] for u, rs in ratings_by_unit.items()}
    note = why_undefined(shifted)
    used = [rs for rs in shifted.values() if len(rs) >= 2]
    out: dict[str, Any] = {"krippendorff_alpha_interval": None, "krippendorff_alpha_ordinal": None,
                           "fleiss_kappa": None, "items": len(used), "answers": sum(map(len, used)),
                           "note": note}
    if note is None:
        out["krippendorff_alpha_interval"] = krippendorff_alpha(shifted, scale, "interval")
        out["krippendorff_alpha_ordinal"] = krippendorff_alpha(shifted, scale, "ordinal")
        out["fleiss_kappa"] = fleiss_kappa(shifted, scale)
    return out
