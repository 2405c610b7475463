"""95% intervals for comparisons of two models, and what each one is about.

Two questions have two intervals:
- **population**: the per-token difference sum_d / sum_n of the population the documents were
  drawn from (document sampling + estimator noise). The per-token difference of a sample is a
  ratio estimator R = sum d_i / sum n_i; `jackknife_t` is a t interval with its jackknife
  variance and D - 1 degrees of freedom. Chosen by measurement against exact values at 5, 10 and
  30 documents (`experiments/compare_small_n.py`, docs/compare_small_n.md) over the percentile
  bootstrap tealeaves used before, BCa, the studentized bootstrap and the delta-method t: it
  covered best, or within half a point of the best, everywhere, and is narrower than the
  studentized bootstrap. On a skewed population (log-normal lengths) no candidate reached 95%.
- **documents**: the per-token difference of THESE documents (conditional on them: estimator
  noise only), from the chains' or runs' spread.

Per-document intervals of `method="difference"` come from each model's run-to-run spread
(`welch`): with one run there is no spread and the interval is unavailable (NaN, with a reason).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..output.jsonout import json_float
from ..util.limits import check_bootstrap

LEVEL = 0.95
# Coverage of `jackknife_t` was measured to hold (within 3 binomial SE of 95%) from this many documents up on
# every population of experiments/compare_small_n.py; below it a warning is shown.
POPULATION_MIN_DOCUMENTS = 30

ABOUT = {
    "population": "the population the documents were drawn from (document sampling + estimator noise)",
    "documents": "these documents (conditional on them: estimator noise only)",
}


@dataclass
class Interval:
    """A 95% interval of the per-token difference, what it is about (`scope`), how it was made
    (`method`), a `warning` when its coverage is not established, and a `reason` when it is
    unavailable (low = high = NaN)."""

    low: float
    high: float
    scope: str
    method: str
    documents: int
    warning: str | None = None
    reason: str | None = None

    @property
    def about(self) -> str:
        return ABOUT[self.scope]

    @property
    def available(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def short(self, digits: int = 5) -> str:
        """'[lo, hi]' or 'unavailable (reason)'."""
        if not self.available:
            return f"unavailable ({self.reason})"
        return f"[{self.low:+.{digits}f}, {self.high:+.{digits}f}]"

    def text(self, digits: int = 5) -> str:
        """`short()`, what the interval is about, and the warning."""
        out = f"{self.short(digits)}, about {self.about}"
        return out + (f"; WARNING: {self.warning}" if self.warning else "")

    def to_dict(self) -> dict[str, Any]:
        return {"low": json_float(self.low), "high": json_float(self.high), "scope": self.scope,
                "about": self.about, "method": self.method, "level": LEVEL, "documents": self.documents,
                "warning": self.warning, "reason": self.reason}


def unavailable(scope: str, method: str, documents: int, reason: str) -> Interval:
    return Interval(math.nan, math.nan, scope, method, documents, reason=reason)


def small_sample_warning(documents: int) -> str | None:
    """The warning shown with a population interval from fewer documents than were measured."""
    if documents >= POPULATION_MIN_DOCUMENTS:
        return None
    return (f"only {documents} documents: the population interval's coverage was measured to hold from "
            f"{POPULATION_MIN_DOCUMENTS} documents up (docs/compare_small_n.md); it may be too narrow")


def _t(level: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


def _ratio(d: np.ndarray, n: np.ndarray) -> float:
    return float(d.sum() / n.sum())


def ratio_t(d: np.ndarray, n: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """Delta-method t interval of sum d / sum n for documents drawn at random: residuals
    e_i = d_i - R n_i, se = sqrt(sum e^2 / (D (D-1))) / mean(n), D - 1 degrees of freedom."""
    D = d.size
    if D < 2 or n.sum() <= 0:
        return math.nan, math.nan
    r = _ratio(d, n)
    e = d - r * n
    se = math.sqrt(float((e**2).sum()) / (D * (D - 1))) / float(n.mean())
    h = _t(level, D - 1) * se
    return r - h, r + h


def _leave_one_out(d: np.ndarray, n: np.ndarray) -> np.ndarray:
    return (d.sum() - d) / np.maximum(n.sum() - n, 1e-300)


def jackknife_t(d: np.ndarray, n: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """t interval of sum d / sum n with the jackknife variance (D - 1 degrees of freedom)."""
    D = d.size
    if D < 2 or n.sum() <= 0:
        return math.nan, math.nan
    loo = _leave_one_out(d, n)
    se = math.sqrt((D - 1) / D * float(((loo - loo.mean()) ** 2).sum()))
    r, h = _ratio(d, n), _t(level, D - 1) * se
    return r - h, r + h


def _boot_ratios(d: np.ndarray, n: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    check_bootstrap(resamples, float(d.size), 3 * 8.0 * resamples * d.size)
    idx = rng.integers(0, d.size, size=(resamples, d.size))
    return d[idx].sum(axis=1) / np.maximum(n[idx].sum(axis=1), 1e-300)


def percentile(d: np.ndarray, n: np.ndarray, rng: np.random.Generator, resamples: int = 2000,
               level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap over documents (tealeaves' interval before issue 21)."""
    if d.size < 2 or n.sum() <= 0:
        return math.nan, math.nan
    lo, hi = np.percentile(_boot_ratios(d, n, resamples, rng), [50 - 50 * level, 50 + 50 * level])
    return float(lo), float(hi)


def bca(d: np.ndarray, n: np.ndarray, rng: np.random.Generator, resamples: int = 2000,
        level: float = LEVEL) -> tuple[float, float]:
    """Bias-corrected and accelerated bootstrap (Efron 1987), acceleration from the jackknife."""
    from scipy import stats

    if d.size < 2 or n.sum() <= 0:
        return math.nan, math.nan
    boot, r = _boot_ratios(d, n, resamples, rng), _ratio(d, n)
    frac = float(np.clip((boot < r).mean() + 0.5 * (boot == r).mean(), 1 / resamples, 1 - 1 / resamples))
    z0 = stats.norm.ppf(frac)
    loo = _leave_one_out(d, n)
    u = loo.mean() - loo
    denom = 6 * float((u**2).sum()) ** 1.5
    a = float((u**3).sum()) / denom if denom > 0 else 0.0
    qs = []
    for z in stats.norm.ppf([0.5 - level / 2, 0.5 + level / 2]):
        qs.append(100 * stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    lo, hi = np.percentile(boot, qs)
    return float(lo), float(hi)


def satterthwaite(variances: np.ndarray, dfs: np.ndarray) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance estimates
    (`variances`, each with `dfs` degrees of freedom), along the last axis."""
    with np.errstate(invalid="ignore", divide="ignore"):
        df = variances.sum(axis=-1) ** 2 / (variances**2 / dfs).sum(axis=-1)
    return np.where(np.isfinite(df) & (df > 0), df, dfs.min(axis=-1))


def welch(estimate: np.ndarray | float, variances: np.ndarray, dfs: np.ndarray,
          level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """estimate +- t * sqrt(sum of `variances`) (last axis: independent components, each
    estimated with `dfs` degrees of freedom), t with Welch-Satterthwaite degrees of freedom.
    Zero variance (an exact estimator) gives a zero-width interval."""
    from scipy import stats

    h = stats.t.ppf(0.5 + level / 2, satterthwaite(variances, dfs)) * np.sqrt(variances.sum(axis=-1))
    return estimate - h, estimate + h


def difference_variances(run_a: np.ndarray, run_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per document, the variances of each model's run-averaged log estimate (runs x D arrays:
    run-to-run variance / runs, the delta method for log mean exp) as (D, 2), and their degrees
    of freedom (runs - 1) as (2,)."""
    ra, rb = run_a.shape[0], run_b.shape[0]
    var = np.stack([run_a.var(axis=0, ddof=1) / ra, run_b.var(axis=0, ddof=1) / rb], axis=-1)
    return var, np.array([ra - 1, rb - 1], dtype=float)


def bootstrap_t(d: np.ndarray, n: np.ndarray, rng: np.random.Generator, resamples: int = 2000,
                level: float = LEVEL) -> tuple[float, float]:
    """Studentized (bootstrap-t) interval of sum d / sum n: the quantiles of (R* - R) / se*
    over resamples of documents, se the delta-method standard error (`ratio_t`)."""
    D = d.size
    if D < 2 or n.sum() <= 0:
        return math.nan, math.nan
    r = _ratio(d, n)
    check_bootstrap(resamples, float(D), 3 * 8.0 * resamples * D)
    idx = rng.integers(0, D, size=(resamples, D))
    db, nb = d[idx], n[idx]
    rb = db.sum(axis=1) / np.maximum(nb.sum(axis=1), 1e-300)
    seb = np.sqrt(((db - rb[:, None] * nb) ** 2).sum(axis=1) / (D * (D - 1))) / nb.mean(axis=1)
    ok = seb > 0
    t = (rb[ok] - r) / seb[ok]
    se = math.sqrt(float(((d - r * n) ** 2).sum()) / (D * (D - 1))) / float(n.mean())
    qlo, qhi = np.percentile(t, [50 - 50 * level, 50 + 50 * level])
    return r - qhi * se, r - qlo * se
