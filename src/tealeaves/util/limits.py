"""Parameter limits in one place: the Python API's `check_int` / `check_float`, the command
line's argparse types built on them (`at_least`, `fraction`, ...), and the up-front cost check
(`check_cost`, the one place every declared size goes through; `check_budget`, `check_work`
and `check_memory` call it): a run whose cost is known before it starts and would take longer
than `max_hours` or need more than half of the memory stops at once, giving the estimate."""

from __future__ import annotations

import argparse
import math
import os
import warnings
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ARCHIVE_ERRORS, InputFileError, MethodError, TealeavesError, TooLargeError
from .numbers import finite_float

# Site updates per second per worker assumed where no kernel is measured (CSL, logistic-normal
# priors): a little below the slowest sparse kernel measured (benchmarks/heldout_speed.py).
RATE = 1e7
RATE_TOPICS = 1000  # the largest number of topics RATE was measured at
# CPU seconds of one Gibbs site update at T topics, a + b T, per kernel, each fitted on its own
# runs (kernels whose work differs grow differently with T: one shared line was 2.7x short for
# Ratio-AIS at 200 topics): "sparse" (left-to-right's sparse exact draws, the default held-out
# estimator), "dense" (a Gibbs chain drawing over every topic: Chib-style; also the dense
# estimators not timed on their own: harmonic mean, estimated theta, bridge, exact), "ais" (AIS's
# annealed draws), "importance" (a theta drawn and every topic summed per token and sample:
# the importance samplers), "pair" (compare's two-model paths: Ratio-AIS, Iteration-AIS), "theta"
# (the Gibbs sweeps that estimate theta: `predictive`, `infer_theta`). Least squares of the
# relative error over benchmarks/estimates.py's full-size run at 20, 50 and 200 topics on this
# project's 2-core machine (CPU seconds of one process; benchmarks/results/estimates.json "fit";
# tests/test_doc_figures.py keeps them equal; estimates_check.json checks them on a run of other
# sizes). Beyond 200 topics they are extrapolated.
SITE_SECONDS = {"sparse": (3.4e-08, 2.4e-10), "dense": (7.5e-08, 2.2e-10), "ais": (7.3e-08, 9e-10),
                "importance": (1.5e-07, 2.8e-09), "pair": (5.6e-08, 1.1e-09), "theta": (3.4e-08, 3.1e-10)}
# Elements per second assumed for vectorised numpy work (a random draw, a gather and a log-sum-exp
# per element, or a sort): generous, so nothing that would finish in time is refused.
OPS_RATE = 1e8
FLOP_RATE = 1e9  # floating-point operations per second of a matrix product (BLAS, one core)
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
    if (v := finite_float(value)) is not None:
        above = low is None or (v > low if low_open else v >= low)
        below = high is None or (v < high if high_open else v <= high)
        if above and below:
            return v
    return _fail(name, value, "a finite number", low, high, low_open, high_open)


def check_bool(name: str, value: Any, none: bool = False) -> bool | None:
    """`value` as a bool (numpy's too; None too if `none`): a flag is not a number or text, so
    `"no"` (truthy) and 1 are refused rather than read as true (red team 6, F18)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if none and value is None:
        return None
    raise MethodError(f"{name} must be true or false{' or None' if none else ''}, got {value!r}")


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


def not_below(low: float) -> Callable[[str], float]:
    """argparse type: a finite number >= low."""
    return _argtype(float, lambda v: check_float("value", v, low), "a number")


def fraction(open_high: bool = True, open_low: bool = False) -> Callable[[str], float]:
    """argparse type: a number in [0, 1) (or as the flags say)."""
    return _argtype(float, lambda v: check_float("value", v, 0.0, 1.0, low_open=open_low,
                                                 high_open=open_high), "a number")


def check_cost(what: str, nbytes: float = 0.0, seconds: float = 0.0, max_hours: float | None = None,
               how: str = "") -> None:
    """The one check every declared size (a file header, an option, a Python parameter) goes
    through before any work: refuse with a one-line TooLargeError (memory: more than half of this
    machine's) or MethodError (time: more than `max_hours`, default MAX_HOURS) that gives the
    estimate. `how` says what the estimate counts ("1e11 resamples x 2 runs x 40 documents")."""
    detail = f" ({how})" if how else ""
    total = memory_bytes()
    nbytes = float(nbytes)
    if total and not nbytes <= total / 2:
        raise TooLargeError(f"{what} needs about {_gib(nbytes)} of memory{detail}; this machine has "
                            f"{_gib(total)} (the limit is half)")
    limit = MAX_HOURS if max_hours is None else check_float("max_hours", max_hours, 0, low_open=True)
    hours = float(seconds) / 3600
    if not hours <= limit:
        took, allowed = _durations(hours, limit)
        raise MethodError(f"{what} would take about {took}{detail}, more than max_hours={limit:g}{allowed}; "
                          "ask for less, or raise max_hours (CLI --max-hours, where the command has it)")


def check_work(what: str, operations: float, rate: float = OPS_RATE, nbytes: float = 0.0,
               max_hours: float | None = None, how: str = "") -> None:
    """`check_cost` for `operations` steps at `rate` per second (OPS_RATE: vectorised numpy work;
    FLOP_RATE: matrix products; RATE: Gibbs site updates)."""
    check_cost(what, nbytes, float(operations) / rate, max_hours, how)


def check_bootstrap(resamples: int, draws: float, peak_bytes: float, max_hours: float | None = None,
                    what: str = "the bootstrap") -> int:
    """`resamples` (an integer >= 0) of a bootstrap that draws `draws` values per resample and
    holds `peak_bytes` at once, checked against the budget before the work starts."""
    resamples = check_int("bootstrap", resamples, 0)
    check_work(f"{what} with {resamples:,} resamples", float(resamples) * draws, OPS_RATE, peak_bytes,
               max_hours, how=f"{float(resamples) * draws:.3g} draws at about {OPS_RATE:.0e} per second")
    return resamples


def site_seconds(topics: int, kernel: str = "sparse") -> float:
    """CPU seconds of one Gibbs site update at `topics` topics on `kernel` (a key of SITE_SECONDS)."""
    a, b = SITE_SECONDS[kernel]
    return a + b * max(int(topics), 1)


def update_seconds(site_updates: float, workers: int, topics: int = 0, kernel: str = "sparse") -> float:
    """Estimated seconds for `site_updates` Gibbs site updates at `topics` topics on `kernel`
    (`site_seconds`), spread over `workers`."""
    return float(site_updates) * site_seconds(topics, kernel) / max(int(workers), 1)


def check_budget(site_updates: float, workers: int, max_hours: float | None, what: str,
                 topics: int = 0, shares: dict[str, float] | None = None, kernel: str = "sparse") -> None:
    """Refuse a run whose estimated time (`update_seconds`) exceeds max_hours. `shares`: the site
    updates of each stage of the run (name -> updates, summing to `site_updates`), each named in
    the refusal with its share, so that it says which stage to cut."""
    w = max(int(workers), 1)
    rate = 1.0 / site_seconds(topics, kernel)
    parts = ""
    if shares:
        total = max(float(site_updates), 1e-300)
        parts = ": " + ", ".join(f"{name} {float(n):.3g} ({float(n) / total:.0%})"
                                 for name, n in shares.items()) + ";"
    check_cost(what, seconds=update_seconds(site_updates, w, topics, kernel), max_hours=max_hours,
               how=f"{float(site_updates):.3g} Gibbs site updates{parts} at about {rate:.2g} per second per "
                   f"worker ({kernel} kernels, {max(int(topics), 1):,} topics), {w} worker(s)")


def memory_bytes() -> int:
    """This machine's physical memory in bytes (0 when the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def check_memory(what: str, nbytes: float, how: str = "") -> None:
    """Refuse to build something that needs more than half of this machine's memory (it would
    swap or be killed part-way) with a one-line TooLargeError saying how much it needs."""
    check_cost(what, nbytes=nbytes, how=how)


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:,.1f} GiB" if nbytes < 2**30 * 1e6 else f"{nbytes / 2**30:.3g} GiB"


def _hours(hours: float) -> str:
    return f"{hours:,.1f} hours" if hours < 1e6 else f"{hours:.3g} hours"


def _durations(hours: float, limit: float) -> tuple[str, str]:
    """An estimate and, when it is under 0.1 hours, the limit in the same unit (seconds or minutes),
    with as many digits as it takes for the two to read differently: (estimate, ' (limit)' or '')."""
    if not hours < 0.1:
        return _hours(hours), ""
    unit, scale = ("seconds", 3600.0) if hours * 3600 < 60 else ("minutes", 60.0)
    for digits in range(2, 17):
        a, b = f"{hours * scale:.{digits}g}", f"{limit * scale:.{digits}g}"
        if a != b:
            break
    return f"{a} {unit}", f" ({b} {unit})"


NPY_MAGIC = b"\x93NUMPY"


def check_array_file(path: str | os.PathLike) -> None:
    """Before numpy loads an .npz or .npy file: every array's declared shape must fit in the
    bytes the file holds for it and in half of the memory (a few header bytes can declare
    terabytes). Every member of an archive that starts as a .npy file does is checked, whatever
    its name (numpy reads any such member as an array); damage numpy would report itself is left
    to the reader."""
    p = os.fspath(path)
    if os.path.exists(p) and not os.path.isfile(p) and not os.path.isdir(p):
        raise InputFileError(f"{p}: is not a regular file (a device or a pipe); array files are read "
                             "more than once, give a regular file")
    try:
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                _unique_members(z.namelist(), p)
                for info in z.infolist():
                    with z.open(info) as fh:
                        if fh.read(len(NPY_MAGIC)) != NPY_MAGIC:
                            continue  # not an array (the reader names it if it needs it)
                    with z.open(info) as fh:
                        name = info.filename.removesuffix(".npy")
                        _check_npy_header(fh, f"{p}: array {name!r}", info.file_size)
        elif os.path.isfile(p):
            with open(p, "rb") as fh:
                _check_npy_header(fh, p, os.fstat(fh.fileno()).st_size)
    except TealeavesError:
        raise
    except ARCHIVE_ERRORS:
        return


def _unique_members(names: list[str], path: str) -> None:
    """Each array of an archive named once: numpy keys a member "x.npy" as "x", and of two members
    with one key it silently gives one (which one depends on the zip library)."""
    seen: set[str] = set()
    for name in names:
        key = name.removesuffix(".npy")
        if key in seen:
            raise InputFileError(f"{path}: two members named {key!r} (an archive made by appending to a "
                                 "zip file?); cannot tell which array is meant")
        seen.add(key)


def _check_npy_header(fh: Any, where: str, size: int) -> None:
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    with warnings.catch_warnings():  # numpy's notes on odd headers: the checks below say what is wrong
        warnings.simplefilter("ignore")
        shape, _, dtype = read(fh)
    if dtype.hasobject:
        return
    nbytes = math.prod(int(n) for n in shape) * dtype.itemsize
    held = size - fh.tell()
    if nbytes > held:
        raise InputFileError(f"{where} declares shape {tuple(shape)} ({nbytes:,} bytes) but the file holds "
                             f"{held:,} bytes for it")
    check_memory(f"{where} of shape {tuple(shape)}", nbytes)
