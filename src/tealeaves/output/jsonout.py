"""JSON output shared by every result and command, and result files carry the tealeaves version.

JSON has no non-finite numbers, so every result writes them the same documented way (`json_safe`):
NaN (no value: an sd of one run, a metric not computed) as `null`; +inf and -inf (a perplexity
of a token given probability 0, a log of 0) as the strings `"Infinity"` and `"-Infinity"`, the
spellings of JavaScript and of Python's `float()`, so an infinity is never read as a missing value.
Readers turn a value back with `json_number` (the report does for every numeric field)."""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, TextIO

STDOUT: TextIO = sys.stdout  # where `--json -` goes (the CLI sets it before redirecting stdout)


POS_INF, NEG_INF = "Infinity", "-Infinity"  # how +inf and -inf are written (NaN: null)


def json_float(v: float) -> float | str | None:
    """`v` as JSON holds it: a finite float as it is, NaN as None, +-inf as "Infinity" / "-Infinity"."""
    v = float(v)
    if math.isfinite(v):
        return v
    return None if math.isnan(v) else (POS_INF if v > 0 else NEG_INF)


def json_number(v: Any) -> float | None:
    """A number as `json_float` wrote it, read back: a finite number as a float, "Infinity" and
    "-Infinity" as the infinities, None (null: no value) as None; anything else is None too."""
    if v == POS_INF or v == NEG_INF:
        return math.inf if v == POS_INF else -math.inf
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        return float(v)
    except OverflowError:  # an integer past a float
        return None


def json_safe(x: Any) -> Any:
    """`x` with every non-finite float written as `json_float` says (NaN None, +-inf "Infinity" /
    "-Infinity"), through dicts, lists, tuples."""
    if isinstance(x, float):
        return json_float(x)
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    return x


def write_json(path: str | os.PathLike, data: dict[str, Any]) -> None:
    """Write a command's result file (atomically): `data` made JSON-safe, plus the record of the
    Dask session it ran in (if any: `util.parallel.session_record`) and the tealeaves version.
    `-` writes to standard output."""
    from .. import __version__
    from ..files.atomic import write_text
    from ..util.parallel import session_record

    record = session_record()
    text = json.dumps(json_safe({**({"dask": record} if record is not None else {}), **data,
                                 "version": __version__}), indent=1)
    if os.fspath(path) == "-":
        try:
            STDOUT.write(text + "\n")
            STDOUT.flush()
        except OSError as exc:  # a write error names its file (`> /dev/full`)
            if exc.filename is None:
                exc.filename = "standard output"
            raise
    else:
        write_text(path, text)
