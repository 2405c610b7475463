"""Parameter checks in one place: the Python API's `check_int` / `check_float`, the command
line's argparse types built on them (`at_least`, `fraction`, ...), and the up-front cost check
(`check_budget`): a run whose cost is known before it starts and would take longer than
`max_hours` stops at once, saying how long it would take."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import MethodError, TealeavesError, TooLargeError

# Site updates per second per worker assumed for the time estimate: a little below the slowest
# sparse kernel measured (benchmarks/heldout_speed.py), so the estimate errs on the long side.
RATE = 1e7
MAX_HOURS = 24.0


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """`value` as an int, or a one-line MethodError naming `name` and the allowed range."""
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if ok and (low is None or value >= low) and (high is None or value <= high):
        return int(value)
    return _fail(name, value, "an integer", low, high)


def check_float(name: str, value: Any, low: float | None = None, high: float | None = None,
                low_open: bool = False, high_open: bool = False) -> float:
    """`value` as a finite float in the range (open or closed at either end)."""
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok and math.isfinite(float(value)):
        v = float(value)
        above = low is None or (v > low if low_open else v >= low)
        below = high is None or (v < high if high_open else v <= high)
        if above and below:
            return v
    return _fail(name, value, "a finite number", low, high, low_open, high_open)


def _fail(name: str, value: Any, kind: str, low: Any, high: Any, low_open: bool = False,
          high_open: bool = False) -> Any:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    raise MethodError(f"{name} must be {kind}{' ' + ' and '.join(parts) if parts else ''}, got {value!r}")


def _argtype(convert: Callable[[str], Any], check: Callable[[Any], Any], kind: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:  # ASCII only: int() and float() also accept '٣' (an Arabic-Indic 3) and '1_000'
            if not text.isascii() or "_" in text:
                raise ValueError(text)
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text[:40]!r}") from None
        try:
            return check(value)
        except MethodError as exc:
            raise argparse.ArgumentTypeError(str(exc).replace("value must", "must")) from None

    return parse


def at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """argparse type: an integer in [low, high]."""
    return _argtype(int, lambda v: check_int("value", v, low, high), "an integer")


def above(low: float, high: float | None = None) -> Callable[[str], float]:
    """argparse type: a finite number > low (and <= high)."""
    return _argtype(float, lambda v: check_float("value", v, low, high, low_open=True), "a number")


def text_encoding(text: str) -> str:
    """argparse type of `--encoding`: a text encoding Python knows (not rot13, hex, base64, ...)."""
    from .corpus import check_encoding

    try:
        return check_encoding(text)
    except TealeavesError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def fraction(open_high: bool = True, open_low: bool = False) -> Callable[[str], float]:
    """argparse type: a number in [0, 1) (or as the flags say)."""
    return _argtype(float, lambda v: check_float("value", v, 0.0, 1.0, low_open=open_low,
                                                 high_open=open_high), "a number")


def check_budget(site_updates: float, workers: int, max_hours: float | None, what: str) -> None:
    """Refuse a run whose estimated time (site updates at RATE per worker) exceeds max_hours."""
    limit = MAX_HOURS if max_hours is None else check_float("max_hours", max_hours, 0, low_open=True)
    hours = site_updates / (RATE * max(workers, 1)) / 3600
    if hours > limit:
        raise MethodError(
            f"{what} would take about {hours:,.1f} hours ({site_updates:.3g} Gibbs site updates at about "
            f"{RATE:.0e} per second per worker, {workers} worker(s)), more than max_hours={limit:g}; "
            "lower the budget, add workers, or raise max_hours (CLI --max-hours)")


def memory_bytes() -> int:
    """This machine's physical memory in bytes (0 when the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def check_memory(what: str, nbytes: float) -> None:
    """Refuse to build something that needs more than half of this machine's memory (it would
    swap or be killed part-way) with a one-line TooLargeError saying how much it needs."""
    total = memory_bytes()
    if total and nbytes > total / 2:
        raise TooLargeError(f"{what} needs about {nbytes / 2**30:,.1f} GiB of memory; this machine has "
                            f"{total / 2**30:,.1f} GiB (the limit is half)")
