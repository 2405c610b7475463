"""Output paths are checked before any work starts, as the writers will name them (after any extension
they add: a model written to `x` goes to `x.npz`, an intrusion key `k` brings its secret
`k.secret`): each can be written (its folder exists and is writable, it is not a folder, a device or
FIFO is writable, a FIFO has a reader), none names an input file or another output, none lies where
a folder output (`--figures`, `select --out`, all of `--keep`) writes its own files, and only
`--json` may be `-` (standard output). The files that belong to an input are inputs too: an intrusion key's
`KEY.secret`, a SQLite database's `-wal`, `-shm` and `-journal` files (given as a path or a
`sqlite:///` URL), a gensim model's `MODEL.state`, `MODEL.id2word` and `MODEL.*.npy`; a bundled name
(`sotu:train`) is the file it stands for; no output lies inside an input folder (a BERTopic model)
or tealeaves' own data folder. Each file output's temporary file (and the file, when new) is created
and removed now, and each folder output's nearest existing folder must take a new folder: every
reason the write at the end would fail is found before the work. Two names that differ only in case
are the same file (on macOS and Windows). An empty name is an error, not "no output". An intrusion
key must be a regular file (its secret is written beside it); tasks, keys and exports are CSV or
JSON lines by extension, any case (`csvout.table_format`), another extension is refused. A long run
is never lost at the end to a typo, and an output never overwrites the documents or the model it was
computed from. (Writes themselves are atomic, follow links, write through devices and FIFOs and
happen together at the end: `tealeaves.files.atomic`.)"""

from __future__ import annotations

import argparse
import glob
import os
import re
import tempfile
from collections.abc import Iterator

from ..errors import MethodError
from ..files import atomic, csvout

FILE_OUTPUTS = ("json", "csv", "report", "plot", "model_out", "docs_out", "output", "latex", "markdown")
DIR_OUTPUTS = ("figures", "out", "keep")
# argparse's own values, never files: the command's name, a group's sub-command, the function run
NOT_PATHS = ("command", "verb", "func")


REGULAR_ONLY = ("key", "key_secret")  # outputs with a companion written beside them


def _given(args: argparse.Namespace, name: str) -> str | None:
    """The output `name` names, None when not asked for; an empty name is an error."""
    value = getattr(args, name, None)
    if value == "":
        raise MethodError(f"{_flag(name)} is empty; give a file name")
    return value if isinstance(value, str) else None


def _writes_key(args: argparse.Namespace) -> bool:
    return getattr(args, "intrusion_command", None) in ("words", "topics") or \
        getattr(args, "proxann_command", None) == "tasks"


def _outputs(args: argparse.Namespace) -> Iterator[tuple[str, str, bool]]:
    """(option, path as written, is a folder) for every output the command will write."""
    for name in FILE_OUTPUTS:
        value = _given(args, name)
        if value:
            yield name, atomic.with_extension(value, ".npz") if name == "model_out" else value, False
    for name in DIR_OUTPUTS:
        value = _given(args, name)
        if value:
            yield name, value, True
    if _writes_key(args):
        from ..intrusion.tasks import secret_path

        key = _given(args, "key")
        if key:
            yield "key", key, False
            yield "key_secret", secret_path(key), False


def _table_outputs(args: argparse.Namespace) -> tuple[str, ...]:
    """The outputs whose format (CSV or JSON lines) is chosen by their extension."""
    if _writes_key(args):
        return ("output", "key")
    return ("output",) if getattr(args, "annotate_command", None) == "export" else ()


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
    if option == "keep":  # a run's kept work (`files.kept`): everything in it is the run's
        return True
    return rel in _SELECT_FILES or rel.split(os.sep)[0] in _SELECT_FOLDERS


def _inputs(args: argparse.Namespace, outputs: set[str]) -> Iterator[tuple[str, str]]:
    """(path, what it is) for every input file and the files that belong to it (`companions`).
    Every argument that is not an output and names an existing file (or folder) is an input: no
    command can forget to register one (a vector file, a corpus to train on, --doc-topic...)."""
    from .. import datasets  # the bundled names' files (not at start-up: it reads the model code)

    for name, value in sorted(vars(args).items()):
        if name in outputs or name in NOT_PATHS or name.endswith("_command") \
                or name in FILE_OUTPUTS or name in DIR_OUTPUTS:
            continue
        for v in value if isinstance(value, list | tuple) else [value]:
            if not isinstance(v, str) or not v or v == "-":
                continue
            if name == "db" and "://" in v:  # sqlite:///path: its file; other databases have none
                from ..annotate import sqlite_files

                v = next(iter(sqlite_files(v)), "")
            bundled = datasets.bundled_file(v)
            if bundled:
                yield bundled, f"the bundled data {v!r} stands for"
            elif v and os.path.exists(v):
                yield v, "an input of this command"
                for companion, what in companions(v):
                    yield companion, f"{what} of the input {v!r}"


def companions(path: str) -> list[tuple[str, str]]:
    """(file, what it is) for the files that belong to an input file and are read with it: an
    intrusion key's secret `KEY.secret`; a SQLite database's `-wal`, `-shm` and `-journal` (which
    hold committed data while a server runs); a gensim model's `MODEL.state`, `MODEL.id2word` and
    the arrays `save` writes beside it (`MODEL.NAME.npy`). Any input may be any of these, so every
    input has them. (The files inside an input folder, a BERTopic model, are its `_inside`.)"""
    from ..intrusion.tasks import secret_path

    gensim = [path + ".state", path + ".id2word", *glob.glob(glob.escape(path) + ".*.npy")]
    return [(secret_path(path), "the secret"),
            *((path + end, f"SQLite's {end} file") for end in ("-wal", "-shm", "-journal")),
            *((f, "a file gensim saved as part of the model") for f in gensim)]


def _inside(path: str, folder: str) -> bool:
    """Whether `path` lies inside the existing folder `folder` (a folder given as an input: every
    file in it may be read, as a BERTopic model's are)."""
    if not os.path.isdir(folder):
        return False
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(folder))
    return rel != os.curdir and not rel.startswith(os.pardir)


def _flag(name: str) -> str:
    return {"output": "-o/--output", "model_out": "MODEL_OUT", "docs_out": "DOCS_OUT",
            "key_secret": "the secret of --key"}.get(
        name, "--" + name.replace("_", "-"))


def _same(a: str, b: str) -> bool:
    """The same file, or names that differ only in case (one file on macOS and Windows)."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return os.path.realpath(a).casefold() == os.path.realpath(b).casefold()


def check_outputs(args: argparse.Namespace) -> None:
    """Raise a one-line MethodError for an output that cannot or must not be written: first the
    names (standard output, collisions with each other and with inputs), then each file."""
    from .. import datasets

    outs = [(n, p, folder) for n, p, folder in _outputs(args) if not _stdout(n, p)]
    names = {n for n, _, _ in outs}
    inputs = list(_inputs(args, names if _writes_key(args) else names - {"key"}))
    for i, (name, path, _) in enumerate(outs):
        for other_name, other, _ in outs[:i]:
            if _same(path, other):
                raise MethodError(f"{_flag(name)} and {_flag(other_name)} name the same file {path!r}"
                                  f"{_case_note(path, other)}")
        for inp, what in inputs:
            if _same(path, inp):
                raise MethodError(f"{_flag(name)} {path!r} is {what}{_case_note(path, inp)}; it would be "
                                  "overwritten")
            if _inside(path, inp):
                raise MethodError(f"{_flag(name)} {path!r} is inside the folder {inp!r}, {what}; it "
                                  "could overwrite a file read from it")
        if _inside(path, datasets.data_folder()):
            raise MethodError(f"{_flag(name)} {path!r} is inside tealeaves' bundled data folder; it "
                              "would overwrite the installed package's data")
    tables = _table_outputs(args)
    folders = [(n, p) for n, p, folder in outs if folder]
    for name, path, folder in outs:
        if folder:
            _check_folder(name, path)
            continue
        for folder_name, folder_path in folders:
            if _owned_by(folder_name, folder_path, path):
                raise MethodError(f"{_flag(name)} {path!r} is where {_flag(folder_name)} {folder_path!r} "
                                  "writes its own files")
        if name in tables:
            csvout.table_format(path, _flag(name))
        _check_file(name, path)
        if name == "plot":  # matplotlib installed and able to write the extension's format
            from ..intrusion.plots import check_plot_path

            check_plot_path(path)
    for folder_name, folder_path in folders:
        for inp, _ in inputs:
            if _owned_by(folder_name, folder_path, inp):
                raise MethodError(f"{_flag(folder_name)} {folder_path!r} would write over the input {inp!r}")


def _case_note(path: str, other: str) -> str:
    """Why `path` is `other` when only the case of their names differs, else nothing."""
    a, b = os.path.realpath(path), os.path.realpath(other)
    if a == b or a.casefold() != b.casefold():
        return ""
    return f" ({other!r}: names that differ only in case are one file on macOS and Windows)"


def _stdout(name: str, path: str) -> bool:
    """Whether the output is `-`, standard output (only --json may be)."""
    if path != "-":
        return False
    if name != "json":
        raise MethodError(f"{_flag(name)} -: only --json can write to standard output")
    return True


def _check_folder(name: str, path: str) -> None:
    """A folder output: an existing folder, or one that can be made where the nearest existing
    folder above it is (a file in the way, no permission, a read-only file system: said now)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise MethodError(f"{_flag(name)} {path!r} is a file, not a folder")
    above = os.path.abspath(path)
    while not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise MethodError(f"{_flag(name)} {path!r}: {above!r} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".tealeaves-probe.", dir=above))
    except OSError as exc:
        raise MethodError(f"{_flag(name)} {path!r} cannot be made in {above!r} "
                          f"({exc.strerror or exc})") from None


def _check_file(name: str, path: str) -> None:
    """One file output: a folder, block device or socket is refused; a device or FIFO must be
    writable (a FIFO is opened now: it needs a reader); a file's folder must exist and be writable."""
    if os.path.isdir(path):
        raise MethodError(f"{_flag(name)} {path!r} is a folder, not a file")
    try:
        target, through = atomic.resolve(path)
    except MethodError as exc:
        raise MethodError(f"{_flag(name)} {exc}") from None
    if through and name in REGULAR_ONLY:
        raise MethodError(f"{_flag(name)} {path!r} is a device, FIFO or stream, not a regular file; a key's "
                          "secret is written beside it as KEY.secret, so the key and its secret must be "
                          "regular files")
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
        there = "is a file, not a folder" if os.path.lexists(parent) else "does not exist"
        raise MethodError(f"{_flag(name)} {path!r}: the folder {parent!r} {there}")
    if not os.access(parent, os.W_OK):
        raise MethodError(f"{_flag(name)} {path!r}: the folder {parent!r} is not writable")
    try:
        atomic.probe(target)
    except OSError as exc:
        raise MethodError(f"{_flag(name)} {path!r} cannot be written ({exc.strerror or exc})") from None
