"""How many items and annotators tell two models' model precisions apart (a sample-size planner).

The test planned for is the one `intrusion score` runs (`exact.permutation_test`: per-topic model
precisions of the two models, difference of means, two-sided at `alpha`), approximated by the
two-sample test of proportions. Answers to one item are correlated: with intra-item correlation
rho (the ICC of right/wrong answers; 0 = every answer independent, 1 = an item is either always or
never solved) and m annotators per item, n items carry the information of n m / deff independent
answers, deff = 1 + (m - 1) rho (the design effect; Donner & Klar 2000). The approximate power of
n items per model is Phi((|p1 - p2| - 1 / (n m)) sqrt(n m / deff) - t sqrt(2 pbar qbar)) /
sqrt(p1 q1 + p2 q2)), with Fleiss, Levin & Paik's continuity correction (the permutation test is
discrete) and t the 1 - alpha/2 quantile of Student's t with 2n - 2 degrees of freedom (the items'
variance is estimated, as the permutation test does implicitly); the plan is the smallest n whose
power reaches the target. More annotators help less and less: however many, n >= rho times the
number of independent answers needed. tests/test_agreement.py checks the power by simulating
beta-binomial answers and running the permutation test on them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MethodError
from ..output.display import Display
from ..output.jsonout import json_safe
from ..util.limits import check_float, check_int

ANNOTATORS = (1, 2, 3, 5, 10, 20)
MAX_ANNOTATORS = 10_000
MAX_ANSWERS = 1e9  # independent answers per model beyond which no plan is made


@dataclass(repr=False)
class IntrusionPlan(Display):
    p1: float
    p2: float
    power: float
    alpha: float
    icc: float
    independent_answers: int  # per model, with rho = 0 (one annotator per item)
    rows: list[dict[str, Any]] = field(default_factory=list)  # per number of annotators
    max_items: int | None = None
    note: str = ""

    _name = "IntrusionPlan"

    def _headline(self) -> list[tuple[str, Any]]:
        best = min(self.rows, key=lambda r: r["answers"])
        return [("p1", self.p1), ("p2", self.p2), ("power", self.power), ("alpha", self.alpha),
                ("icc", self.icc), ("items per model (1 annotator)", self.rows[0]["items"]),
                ("fewest answers per model", best["answers"])]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        keys = ("annotators", "items", "answers", "power", "fits")
        return "row", {k: [r[k] for r in self.rows] for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": "intrusion-plan", "p1": self.p1, "p2": self.p2, "power": self.power,
                          "alpha": self.alpha, "icc": self.icc, "max_items": self.max_items,
                          "independent_answers": self.independent_answers, "rows": self.rows,
                          "note": self.note, "method": "normal approximation with design effect "
                          "1 + (m - 1) icc, for the two-sided permutation test of mean model precision"})


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(q))


def _power(n: int, m: int, p1: float, p2: float, alpha: float, icc: float) -> float:
    """Approximate power of the two-sided test with n items per model, m annotators each."""
    from scipy.stats import norm, t

    deff = 1 + (m - 1) * icc
    pbar = (p1 + p2) / 2
    shift = abs(p1 - p2) - 1 / (n * m)  # the continuity correction: half a step of each precision
    critical = float(t.ppf(1 - alpha / 2, 2 * n - 2))  # the items' variance is estimated: t, not z
    z = (shift * math.sqrt(n * m / deff) - critical * math.sqrt(2 * pbar * (1 - pbar))) \
        / math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return float(norm.cdf(z))


def independent_answers(p1: float, p2: float, power: float, alpha: float) -> float:
    """Independent answers per model the two-sample test of proportions needs, with the continuity
    correction (Fleiss, Levin & Paik 2003, eq. 4.14, whose exact-test power it tracks; unrounded)."""
    pbar = (p1 + p2) / 2
    root = _z(1 - alpha / 2) * math.sqrt(2 * pbar * (1 - pbar)) \
        + _z(power) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    delta = abs(p1 - p2)  # solve delta - 1 / N = root / sqrt(N) for sqrt(N)
    x = (root + math.sqrt(root * root + 4 * delta)) / (2 * delta)
    return x * x


def _check(p1: float, p2: float, power: float, alpha: float, icc: float) -> tuple[float, ...]:
    p1 = check_float("p1 (model precision of the first model)", p1, 0, 1, low_open=True, high_open=True)
    p2 = check_float("p2 (model precision of the second model)", p2, 0, 1, low_open=True, high_open=True)
    alpha = check_float("alpha", alpha, 0, 1, low_open=True, high_open=True)
    power = check_float("power", power, 0, 1, low_open=True, high_open=True)
    icc = check_float("icc (intra-item correlation)", icc, 0, 1)
    if p1 == p2:
        raise MethodError(f"p1 and p2 are both {p1}: no number of items tells equal precisions apart")
    if power <= alpha / 2:
        raise MethodError(f"power {power} is not above alpha / 2 = {alpha / 2}: plan for a power a "
                          "test could fail to reach")
    return p1, p2, power, alpha, icc


def plan_intrusion(p1: float, p2: float, power: float = 0.8, alpha: float = 0.05, icc: float = 0.1,
                   annotators: Sequence[int] = ANNOTATORS, max_items: int | None = None) -> IntrusionPlan:
    """Items per model (and answers) to tell model precisions p1 and p2 apart with the given power
    in a two-sided test at `alpha`, for each number of annotators per item, when answers to one
    item have intra-item correlation `icc`; `max_items` (the models' number of topics: word
    intrusion has one item per topic) marks the designs that need more items than there are."""
    p1, p2, power, alpha, icc = _check(p1, p2, power, alpha, icc)
    counts = sorted({check_int("annotators", a, 1, MAX_ANNOTATORS) for a in annotators})
    if not counts:
        raise MethodError("annotators is empty: give at least one number of annotators per item")
    if max_items is not None:
        max_items = check_int("max_items", max_items, 1)
    need = independent_answers(p1, p2, power, alpha)
    if need > MAX_ANSWERS:
        raise MethodError(f"p1 = {p1:.10g} and p2 = {p2:.10g} differ by {abs(p1 - p2):.3g}: about {need:.2g} "
                          "independent answers per model would be needed; no study is that large")
    design = (p1, p2, power, alpha, icc, need)
    rows = []
    for m in counts:
        n = _items(m, *design)
        rows.append({"annotators": m, "items": n, "answers": n * m,
                     "power": _power(n, m, p1, p2, alpha, icc),
                     "fits": max_items is None or n <= max_items})
    return IntrusionPlan(p1, p2, power, alpha, icc, math.ceil(need), rows, max_items,
                         _note(design, max_items))


def _items(m: int, p1: float, p2: float, power: float, alpha: float, icc: float, need: float) -> int:
    """The smallest number of items per model (at least 2) whose approximate power reaches `power`
    with m annotators each: bisection between bounds found by doubling from the design-effect
    estimate (the power rises with n)."""
    def enough(n: int) -> bool:
        return _power(n, m, p1, p2, alpha, icc) >= power

    guess = max(2, math.ceil(need * (1 + (m - 1) * icc) / m))
    lo, hi, step = guess, guess, 1
    while not enough(hi):
        lo, hi, step = hi, hi + step, 2 * step
    while lo > 2 and enough(lo):
        lo, step = max(2, lo - step), 2 * step
    if enough(lo):
        return lo
    while hi - lo > 1:  # lo is not enough, hi is
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def intra_item_correlation(correct_by_item: Sequence[Sequence[int]]) -> float | None:
    """The one-way ANOVA estimate of the intra-item correlation of right (1) / wrong (0) answers
    (items may have different numbers of answers; Donner & Klar 2000, eq. 2.4); None when items
    with at least two answers are fewer than two or every answer is the same. May be negative."""
    groups = [list(map(float, g)) for g in correct_by_item if len(g) >= 2]
    k, total = len(groups), sum(len(g) for g in groups)
    if k < 2:
        return None
    grand = sum(map(sum, groups)) / total
    between = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups) / (k - 1)
    within = sum((v - sum(g) / len(g)) ** 2 for g in groups for v in g) / (total - k)
    n0 = (total - sum(len(g) ** 2 for g in groups) / total) / (k - 1)
    denominator = between + (n0 - 1) * within
    return (between - within) / denominator if denominator > 0 else None


def _note(design: tuple[float, ...], max_items: int | None) -> str:
    """What no number of annotators can change: the items needed with as many annotators per item
    as the planner allows (MAX_ANNOTATORS; the same power computation as the table's rows, so the
    note and the rows agree), or, with `max_items`, the fewest annotators per item that reach the
    power with that many items."""
    icc, fewest = design[4], _items(MAX_ANNOTATORS, *design)
    if max_items is None:
        return (f"however many annotators (up to {MAX_ANNOTATORS:,} per item), at least {fewest} items per "
                "model are needed")
    if fewest > max_items:
        return (f"n/a: with {max_items} items per model no number of annotators reaches the power "
                f"(at least {fewest} items are needed at icc {icc:g})")
    lo, hi = 0, MAX_ANNOTATORS  # bisection: items needed fall as annotators rise; hi is enough
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _items(mid, *design) <= max_items else (mid, hi)
    return f"with {max_items} items per model, the fewest annotators per item that reach the power: {hi}"
