"""JSON output shared by every result and command: non-finite floats become null, and result
files carry the tealeaves version."""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, TextIO

STDOUT: TextIO = sys.stdout  # where `--json -` goes (the CLI sets it before redirecting stdout)


def json_float(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def json_safe(x: Any) -> Any:
    """`x` with every non-finite float (nan, inf) replaced by None, through dicts, lists, tuples."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
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
