"""The one test of "a finite real number" (`finite_float`) that every check, table and chart uses,
so a value counts as a number, or as missing, the same way everywhere."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def finite_float(v: Any) -> float | None:
    """`v` as a float when it is a finite real number, else None.

    Numbers: Python int and float and numpy integer and floating scalars (np.float32, np.int64, ...).
    Not numbers (None): None, bool and numpy bool (True is not 1 here), strings (even "1.5": text
    is parsed by `files.records.strict_float`, not here), complex, containers and anything else.
    Not finite (None): NaN, +inf and -inf, and an int too large for a float (beyond about 1.8e308)."""
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None
