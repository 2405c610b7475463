"""Output paths are checked before any work starts: each can be written (its folder exists and
is writable, it is not a folder), none names an input file or another output, and only `--json`
may be `-` (standard output). A long run is never lost at the end to a typo, and an output never
overwrites the documents or the model it was computed from. (Writes themselves are atomic:
`tealeaves.atomic`.)"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from .errors import MethodError

FILE_OUTPUTS = ("json", "csv", "report", "plot", "model_out", "docs_out", "output")
DIR_OUTPUTS = ("figures", "out")
INPUTS = ("model", "docs", "reference", "paths", "model_a", "model_b", "data", "pred", "gold",
          "results", "tasks", "responses", "theta", "texts", "heldout", "models", "corpus", "alpha",
          "vocab", "db", "key")


def _outputs(args: argparse.Namespace) -> Iterator[tuple[str, str, bool]]:
    """(option, path, is a folder) for every output the command will write."""
    for name in FILE_OUTPUTS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            yield name, value, False
    for name in DIR_OUTPUTS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            yield name, value, True
    if getattr(args, "intrusion_command", None) in ("words", "topics") and getattr(args, "key", None):
        yield "key", args.key, False


def _inputs(args: argparse.Namespace, outputs: set[str]) -> Iterator[str]:
    for name in INPUTS:
        if name in outputs:
            continue
        value = getattr(args, name, None)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v and v != "-" and os.path.exists(v):
                yield v


def _flag(name: str) -> str:
    return {"output": "-o/--output", "model_out": "MODEL_OUT", "docs_out": "DOCS_OUT"}.get(
        name, "--" + name.replace("_", "-"))


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(args: argparse.Namespace) -> None:
    """Raise a one-line MethodError for an output that cannot or must not be written."""
    outs = list(_outputs(args))
    names = {n for n, _, _ in outs}
    inputs = list(_inputs(args, names if getattr(args, "intrusion_command", None) in ("words", "topics")
                          else names - {"key"}))
    seen: list[tuple[str, str]] = []
    for name, path, folder in outs:
        if path == "-":
            if name != "json":
                raise MethodError(f"{_flag(name)} -: only --json can write to standard output")
            continue
        for other_name, other in seen:
            if _same(path, other):
                raise MethodError(f"{_flag(name)} and {_flag(other_name)} name the same file {path!r}")
        for inp in inputs:
            if _same(path, inp):
                raise MethodError(f"{_flag(name)} {path!r} is an input of this command; it would be "
                                  "overwritten")
        seen.append((name, path))
        parent = os.path.dirname(os.path.abspath(path)) or "."
        if folder:
            if os.path.exists(path) and not os.path.isdir(path):
                raise MethodError(f"{_flag(name)} {path!r} is a file, not a folder")
            continue
        if os.path.isdir(path):
            raise MethodError(f"{_flag(name)} {path!r} is a folder, not a file")
        if not os.path.isdir(parent):
            raise MethodError(f"{_flag(name)} {path!r}: the folder {parent!r} does not exist")
        if not os.access(parent, os.W_OK):
            raise MethodError(f"{_flag(name)} {path!r}: the folder {parent!r} is not writable")
