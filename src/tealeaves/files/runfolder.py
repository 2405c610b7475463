"""A folder of a long command's finished work, which a later run of the same command resumes from
(`select --out`): whose it is is settled before anything in it is touched.

The folder's manifest (a JSON file, written before any work) records what the work depends on:
the corpus, the split, the settings. `inspect` reads it, changing nothing, and a comparison given
by the command refuses a folder of another run; a folder that holds files in its work subfolders
but no manifest is not known to be this command's, and is refused too. Only a run accepted (its
other checks passed as well) `claim`s the folder: it is locked (`files.lock.exclusive`: one run at
a time), created with its subfolders, inspected again under the lock, its manifest written if
new, and the temporary files a killed run of ours left (names matching the command's pattern,
regular files only) removed. A run that fails before finishing any work removes exactly what it
created; finished work is kept for the next run. Each finished file is read back by the command's
own validating reader; one that fails is done again, and counted (`redone`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputFileError, MethodError
from .atomic import write_text
from .lock import exclusive
from .records import read_json

LOCK = ".tealeaves.lock"


@dataclass
class RunFolder:
    """A claimed run folder: `path`, its `manifest` (as saved), `resumed` (whether it was saved
    before this run), `redone` (what a validating reader refused and the run did again)."""

    path: str
    manifest: dict[str, Any]
    resumed: bool
    subfolders: tuple[str, ...]
    redone: list[str] = field(default_factory=list)

    def file(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)


def _is_folder(path: str) -> bool | None:
    """True for a folder, None when nothing is there; a link or anything else is refused."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
        raise MethodError(f"{path}: is {kind}; a run folder and its subfolders must be folders")
    return True


def inspect(path: str | os.PathLike, manifest: str, subfolders: tuple[str, ...],
            compare: Callable[[dict[str, Any]], None], what: str) -> dict[str, Any] | None:
    """The saved manifest of the run folder `path` after `compare(saved)` accepted it (it raises
    when the folder is another run's), or None when there is none yet. Changes nothing."""
    path = os.fspath(path)
    if not _is_folder(path):
        return None
    file = os.path.join(path, manifest)
    if not os.path.lexists(file):
        for sub in subfolders:
            folder = os.path.join(path, sub)
            if _is_folder(folder) and os.listdir(folder):
                raise MethodError(f"{path}: {sub}/ holds files but there is no {manifest}: not a {what} "
                                  "run folder (use another directory)")
        return None
    try:
        saved = read_json(file)
    except InputFileError as exc:
        raise InputFileError(f"{exc}; remove {file} to start again") from None
    if not isinstance(saved, dict):
        raise InputFileError(f"{file}: not a {what} run's {manifest} (a JSON object); remove it to start "
                             "again")
    compare(saved)
    return saved


@contextlib.contextmanager
def claim(path: str | os.PathLike, manifest: str, new: dict[str, Any], subfolders: tuple[str, ...],
          compare: Callable[[dict[str, Any]], None], temporary: str, what: str) -> Iterator[RunFolder]:
    """The run folder `path`, locked for the block and ready: created if missing, with its
    `subfolders`; its manifest `new` written unless one is saved (then `compare`d, as `inspect`
    does, now under the lock); the files of `subfolders` whose names match `temporary` (a
    regular expression: the temporary files of a killed run) removed. When the block fails and
    no work was finished in it, what this run created is removed again."""
    path = os.path.abspath(os.fspath(path))
    created: list[str] = []  # folders this run made, outermost first
    f = path
    while not os.path.isdir(f) and os.path.dirname(f) != f:
        created.insert(0, f)
        f = os.path.dirname(f)
    os.makedirs(path, exist_ok=True)
    wrote_manifest = False
    try:
        with exclusive(os.path.join(path, LOCK), path, f"{what} run in this folder"):
            saved = inspect(path, manifest, subfolders, compare, what)
            if saved is None:
                write_text(os.path.join(path, manifest), json.dumps(new), follow_link=False)
                wrote_manifest = True
            for sub in subfolders:
                folder = os.path.join(path, sub)
                if not _is_folder(folder):
                    os.mkdir(folder)
                    created.append(folder)
                for name in os.listdir(folder):
                    file = os.path.join(folder, name)
                    if re.fullmatch(temporary, name) and stat.S_ISREG(os.lstat(file).st_mode):
                        os.unlink(file)
            run = RunFolder(path, new if saved is None else saved, saved is not None, subfolders)
            yield run
    except BaseException:
        if wrote_manifest and not any(os.listdir(os.path.join(path, s)) for s in subfolders
                                      if os.path.isdir(os.path.join(path, s))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(path, manifest))
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)  # only if empty: nothing of anyone else's is removed
        raise
