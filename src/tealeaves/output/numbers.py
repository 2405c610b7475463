"""How many decimals each metric is shown with: ONE rule for the terminal tables (`evaluate`,
`select`, `diagnostics`) and the HTML report and its LaTeX and Markdown tables, so a number reads
the same everywhere.

`metric(key, v)`: a model-level metric by its row key (`per_token`, `coherence.npmi`, ...);
`score(v)`: a per-topic diagnostic (three significant digits when small, two decimals otherwise,
whole numbers without decimals)."""

from __future__ import annotations

import math
from typing import Any

from ..util.numbers import finite_float
from .display import perplexity_text

MISSING = "-"
DIGITS = {  # row key (or its prefix before ".") -> decimals
    "per_token": 4, "per_token_sd": 4, "perplexity": 1, "total": 2, "sd": 2, "jensen_gap": 2,
    "heldout_perplexity": 2, "seconds": 2,
    "coherence": 3, "diversity": 3, "exclusivity": 2, "predictive_rank": 1, "auto_model_precision": 2,
    "stability": 2, "bcubed": 4, "judge_model_precision": 2, "judge_rating": 2,
    # select's classic K-selection metrics (select/classic.py)
    "classic.arun_2010": 4, "classic.cao_juan_2009": 4, "classic.deveaud_2014": 3,
    "classic.griffiths_2004": 1,
}


SMALL_SD = ("per_token_sd",)  # an estimator's own sd: nonzero, however small (0.0000 read as exact)
ALIASES = {"log-lik/token": "per_token", "pred. rank": "predictive_rank", "auto MP": "auto_model_precision",
           "judge MP": "judge_model_precision", "judge rating": "judge_rating",
           # select's names of the classic K-selection metrics (select/classic.py CLASSIC)
           "Arun 2010": "classic.arun_2010", "Cao Juan 2009": "classic.cao_juan_2009",
           "Deveaud 2014": "classic.deveaud_2014", "Griffiths 2004": "classic.griffiths_2004"}


def digits(key: str) -> int:
    """The decimals of the metric `key`, a row key or `select`'s column name ("coherence.npmi" and
    a coherence measure's name take coherence's); 3 for one not listed."""
    key = ALIASES.get(key, key)
    return DIGITS.get(key, DIGITS.get(key.split(".", 1)[0], 3))


def _missing(v: Any) -> bool:
    return finite_float(v) is None


def fixed(v: Any, places: int, missing: str = MISSING) -> str:
    """`v` with `places` decimals; `missing` for None or NaN, "inf" or "-inf" for an infinity."""
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return missing if _missing(v) else f"{v:.{places}f}"


def signed(v: Any, places: int, missing: str = MISSING) -> str:
    """`v` with its sign and `places` decimals ("+0.01234"); `missing` for None, NaN or text, "+inf"
    or "-inf" for an infinity (a result file's "Infinity", read back)."""
    if isinstance(v, float) and math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return missing if _missing(v) else f"{v:+.{places}f}"


def metric(key: str, v: Any, missing: str = MISSING) -> str:
    """A metric's value as every table shows it (perplexity: scientific from a million on; an
    estimator's sd too small for its decimals with two significant digits, never as 0)."""
    if key in ("perplexity", "heldout_perplexity") and not _missing(v):
        return perplexity_text(v, digits(key))
    if key in SMALL_SD and not _missing(v) and 0 < abs(v) < 0.5 * 10 ** -digits(key):
        return f"{v:.1e}"
    return fixed(v, digits(key), missing)


def versus(v: Any, missing: str = MISSING) -> str:
    """A model's held-out difference from the best model with its 95% interval (evaluate's
    `vs_best`): "-0.1716 [-0.1910, -0.1522]" (the interval `missing` when unavailable)."""
    if not isinstance(v, dict) or _missing(v.get("difference")):
        return missing
    d = digits("per_token")
    lo, hi = v.get("interval") or (None, None)
    if _missing(lo) or _missing(hi):
        return f"{v['difference']:+.{d}f} [{missing}]"
    return f"{v['difference']:+.{d}f} [{lo:+.{d}f}, {hi:+.{d}f}]"


def score(v: Any, missing: str = "nan") -> str:
    """A per-topic diagnostic: whole numbers (and magnitudes from 1000) without decimals, 3
    significant digits below 0.01, else two decimals; "nan", "inf" or "-inf" for a non-finite
    float, `missing` for anything else that is not a number (None, bool, text)."""
    if finite_float(v) is None:
        if not isinstance(v, float):
            return missing
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if abs(v) >= 1000 or float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) < 0.01 else f"{v:.2f}"
