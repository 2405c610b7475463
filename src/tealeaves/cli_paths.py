"""Output paths are checked before any work starts, as the writers will name them (after any
extension they add: a model written to `x` goes to `x.npz`, an intrusion key `k` brings its
secret `k.secret`): each can be written (its folder exists and is writable, it is not a folder,
a device or FIFO is writable, a FIFO has a reader), none names an input file or another output,
none lies where a folder output (`--figures`, `select --out`) writes its own files, and only
`--json` may be `-` (standard output). A long run is never lost at the end to a typo, and an
output never overwrites the documents or the model it was computed from. (Writes themselves
are atomic, follow links, write through devices and FIFOs and happen together at the end:
`tealeaves.atomic`.)"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator

from . import atomic
from .errors import MethodError

FILE_OUTPUTS = ("json", "csv", "report", "plot", "model_out", "docs_out", "output")
DIR_OUTPUTS = ("figures", "out")
INPUTS = ("model", "docs", "reference", "paths", "model_a", "model_b", "data", "pred", "gold",
          "results", "tasks", "responses", "theta", "texts", "heldout", "models", "corpus", "alpha",
          "vocab", "db", "key")


def _outputs(args: argparse.Namespace) -> Iterator[tuple[str, str, bool]]:
    """(option, path as written, is a folder) for every output the command will write."""
    for name in FILE_OUTPUTS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            yield name, atomic.with_extension(value, ".npz") if name == "model_out" else value, False
    for name in DIR_OUTPUTS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            yield name, value, True
    if getattr(args, "intrusion_command", None) in ("words", "topics") and getattr(args, "key", None):
        from .intrusion.tasks import secret_path

        yield "key", args.key, False
        yield "key_secret", secret_path(args.key), False


# the files a folder output writes inside its folder: report figures NN-name.svg/.png; select's
# models/, evals/, split.json and selection.json
_FIGURE = re.compile(r"\d{2,}-[^/]*\.(svg|png)")
_SELECT_FILES = ("split.json", "selection.json")
_SELECT_FOLDERS = ("models", "evals")


def _owned_by(option: str, folder: str, path: str) -> bool:
    """Whether the folder output `option` at `folder` may write a file at `path`."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(folder))
    if rel == os.curdir or rel.startswith(os.pardir):
        return False
    if option == "figures":
        return bool(_FIGURE.fullmatch(rel))
    return rel in _SELECT_FILES or rel.split(os.sep)[0] in _SELECT_FOLDERS


def _inputs(args: argparse.Namespace, outputs: set[str]) -> Iterator[str]:
    for name in INPUTS:
        if name in outputs:
            continue
        value = getattr(args, name, None)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v and v != "-" and os.path.exists(v):
                yield v


def _flag(name: str) -> str:
    return {"output": "-o/--output", "model_out": "MODEL_OUT", "docs_out": "DOCS_OUT",
            "key_secret": "the secret of --key"}.get(
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
    folders = [(n, p) for n, p, folder in outs if folder and p != "-"]
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
        if folder:
            if os.path.exists(path) and not os.path.isdir(path):
                raise MethodError(f"{_flag(name)} {path!r} is a file, not a folder")
            continue
        for folder_name, folder_path in folders:
            if _owned_by(folder_name, folder_path, path):
                raise MethodError(f"{_flag(name)} {path!r} is where {_flag(folder_name)} {folder_path!r} "
                                  "writes its own files")
        _check_file(name, path)
        if name == "plot":  # matplotlib installed and able to write the extension's format
            from .intrusion.plots import check_plot_path

            check_plot_path(path)
    for folder_name, folder_path in folders:
        for inp in inputs:
            if _owned_by(folder_name, folder_path, inp):
                raise MethodError(f"{_flag(folder_name)} {folder_path!r} would write over the input {inp!r}")


def _check_file(name: str, path: str) -> None:
    """One file output: a folder, block device or socket is refused; a device or FIFO must be
    writable (a FIFO is opened now: it needs a reader); a file's folder must exist and be writable."""
    if os.path.isdir(path):
        raise MethodError(f"{_flag(name)} {path!r} is a folder, not a file")
    try:
        target, through = atomic.resolve(path)
    except MethodError as exc:
        raise MethodError(f"{_flag(name)} {exc}") from None
    if through:
        if not os.access(path, os.W_OK):
            raise MethodError(f"{_flag(name)} {path!r} is not writable")
        try:
            atomic.claim(path)
        except MethodError as exc:
            raise MethodError(f"{_flag(name)} {exc}") from None
        return
    parent = os.path.dirname(os.path.abspath(target)) or "."
    if not os.path.isdir(parent):
        raise MethodError(f"{_flag(name)} {path!r}: the folder {parent!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise MethodError(f"{_flag(name)} {path!r}: the folder {parent!r} is not writable")
