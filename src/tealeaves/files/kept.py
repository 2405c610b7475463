"""Work kept: the finished items of a long run (each document of `heldout`, `completion` and
`compare`; each model's documents in `evaluate`), kept in a folder as they finish, so that a run
stopped by Ctrl-C, a crash or a full disk resumes where it stopped with the same numbers as a run
never stopped, and never mixes in another run's work.

The folder (`--keep DIR`, `keep=`):

- `run.json`, written before any work: what the items depend on (`fingerprint`: the SHA-256 of
  the models and documents, the method, its parameters, the seed, ...; `digest` makes them) and
  how many there are. A folder whose `run.json` says anything else is refused, naming what
  differs; a folder that is not empty and has no `run.json` is not known to be a kept run and is
  refused too. Nothing in a folder is touched before it is known to be this run's.
- `part-*.json`: finished items, each file written whole or not at all (`atomic.write_text`, put in
  place at once even inside a command's transaction), holding the run's id and the SHA-256 of its
  items: a part that does not match is refused, naming it (remove it and its items are computed
  again). Items are stored exactly (floats as `float.hex`), so a resumed run's numbers equal an
  uninterrupted run's bit for bit. Parts are written at most every FLUSH_SECONDS (or a share of the
  time run so far, so a long run writes few files), and at once when the run stops for any reason.
  Two runs on one folder never overwrite each other's parts (each name is new); an item both
  finished must be the same, or the folder is refused.

A run's items must not depend on what ran before them: every item carries its own seed
(`util.parallel`), so the items a resumed run computes are those an uninterrupted run computes.
On Ctrl-C the run raises `errors.Interrupted`, saying what was kept and where.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..errors import InputFileError, Interrupted, MethodError, shown
from .atomic import immediate, write_text
from .records import read_json

RUN = "run.json"
PART = re.compile(r"part-[0-9]+-[0-9]+\.json")
TEMPORARY = re.compile(r"\.(run|part-[0-9]+-[0-9]+)\.json\..*\.tmp")  # atomic_path's names, left by a kill
FLUSH_SECONDS = 2.0  # at least this long between two parts...
FLUSH_SHARE = 0.05  # ...and at least this share of the time run so far
MAGIC = "tealeaves kept work"


def digest(*parts: Any) -> str:
    """`sha256:...` of arrays (their dtype, shape and bytes, read a block at a time: no copy of a
    large model) and JSON-able values, in order: what a kept run's fingerprint names a model or a
    corpus by."""
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            h.update(f"array {p.dtype.str} {p.shape}\n".encode())
            flat = p.reshape(-1) if p.flags.c_contiguous else None
            rows = p if flat is None else flat
            step = max(1, 2**22 // max(1, p.itemsize * (rows[0].size if rows.ndim > 1 else 1)))
            for lo in range(0, len(rows), step):
                h.update(np.ascontiguousarray(rows[lo:lo + step]).tobytes())
        else:
            h.update(json.dumps(p, sort_keys=True, default=str).encode() + b"\n")
    return "sha256:" + h.hexdigest()


def encode(x: Any) -> Any:
    """A finished item as exact JSON: arrays and floats by `float.hex` (NaN and infinities too)."""
    if isinstance(x, np.ndarray):
        flat = x.reshape(-1)
        values = [float(v).hex() for v in flat] if x.dtype.kind == "f" else [int(v) for v in flat]
        return {"array": x.dtype.str, "shape": list(x.shape), "values": values}
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, float | np.floating):
        return {"float": float(x).hex()}
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, list | tuple):
        return [encode(v) for v in x]
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {"dict": {k: encode(v) for k, v in x.items()}}
    if x is None or isinstance(x, str):
        return x
    raise TypeError(f"cannot keep a {type(x).__name__}")


def decode(x: Any) -> Any:
    """`encode`'s inverse (lists come back as lists); a malformed value raises ValueError."""
    if isinstance(x, dict):
        if set(x) == {"float"} and isinstance(x["float"], str):
            return float.fromhex(x["float"])
        if set(x) == {"array", "shape", "values"}:
            kind = np.dtype(x["array"])
            if kind.kind not in "fiub" or not all(isinstance(n, int) and n >= 0 for n in x["shape"]):
                raise ValueError("not an array of numbers")
            values = [float.fromhex(v) for v in x["values"]] if kind.kind == "f" else x["values"]
            return np.array(values, dtype=kind).reshape(x["shape"])
        if set(x) == {"dict"} and isinstance(x["dict"], dict):
            return {k: decode(v) for k, v in x["dict"].items()}
        raise ValueError("an unknown kind of value")
    if isinstance(x, list):
        return [decode(v) for v in x]
    return x


def _same(a: Any, b: Any) -> bool:
    return json.dumps(encode(a), sort_keys=True) == json.dumps(encode(b), sort_keys=True)


class Kept:
    """The kept run in `folder`: `done` (item index -> its finished value, read and verified when
    opened), `add` each item as it finishes, `flush` to write what is not written yet."""

    def __init__(self, folder: str | os.PathLike, what: str, fingerprint: dict[str, Any], total: int,
                 unit: str = "document", valid: Callable[[Any], bool] | None = None) -> None:
        self.folder, self.what, self.total, self.unit = os.fspath(folder), what, int(total), unit
        self.fingerprint = json.loads(json.dumps(fingerprint, sort_keys=True, default=str))
        self.id = digest(MAGIC, what, self.fingerprint, self.total)
        self.valid = valid
        self.pending: dict[int, Any] = {}
        self.started = time.monotonic()
        self.flushed = -float("inf")  # the first finished item is written at once
        self.done = self._open()
        self.resumed = len(self.done)

    def _open(self) -> dict[int, Any]:
        """The items this folder keeps, after checking that it is this run's (see the module notes)."""
        f = self.folder
        self.created = False  # this run made the folder (removed again if it ends with nothing kept)
        try:
            mode = os.stat(f).st_mode
        except FileNotFoundError:
            os.makedirs(f)
            self.created = True
            mode = os.stat(f).st_mode
        if not stat.S_ISDIR(mode):
            raise MethodError(f"{shown(f, 120)}: is not a folder; give a folder to keep finished work in",
                              options=("keep",))
        run = os.path.join(f, RUN)
        names = os.listdir(f)
        if RUN not in names:
            if any(not TEMPORARY.fullmatch(n) for n in names):
                raise MethodError(f"{shown(f, 120)}: holds files but no {RUN}: not a folder of kept work; "
                                  "give a new or empty folder", options=("keep",))
            with immediate():
                write_text(run, json.dumps({"kept": MAGIC, "what": self.what, "id": self.id,
                                            "total": self.total, "fingerprint": self.fingerprint}, indent=1),
                           follow_link=False)
            return {}
        saved = read_json(run)
        if not isinstance(saved, dict) or saved.get("kept") != MAGIC:
            raise InputFileError(f"{run}: not the record of a kept run; give another folder")
        if saved.get("id") != self.id:
            raise MethodError(f"{shown(f, 120)} keeps the work of another run ({self._differs(saved)}); "
                              "give another folder, or the same inputs and settings to resume it",
                              options=("keep",))
        for n in names:  # ours: the temporary files a killed write left go
            path = os.path.join(f, n)
            if TEMPORARY.fullmatch(n) and stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
        done: dict[int, Any] = {}
        for n in sorted(n for n in names if PART.fullmatch(n)):
            for i, v in self._read_part(os.path.join(f, n)).items():
                if i in done and not _same(done[i], v):
                    raise InputFileError(f"{os.path.join(f, n)}: {self.unit} {i} differs from another "
                                         "part's; remove the folder to start again")
                done[i] = v
        return done

    def _differs(self, saved: dict[str, Any]) -> str:
        if saved.get("what") != self.what:
            return f"{saved.get('what')}, not {self.what}"
        old = saved.get("fingerprint") if isinstance(saved.get("fingerprint"), dict) else {}
        keys = [k for k in {**old, **self.fingerprint} if old.get(k) != self.fingerprint.get(k)]
        if saved.get("total") != self.total:  # named once, with the counts
            units = f"{self.unit}s"
            keys = [k for k in keys if k != units] + [f"{units} ({saved.get('total')}, now {self.total})"]
        return "it differs in " + ", ".join(keys) if keys else "its record differs"

    def _read_part(self, path: str) -> dict[int, Any]:
        damaged = (f"{path}: damaged or not this run's ({{}}); remove it and its {self.unit}s are computed "
                   "again")
        part = read_json(path)
        ours = isinstance(part, dict) and part.get("run") == self.id
        if not (ours and isinstance(part.get("items"), dict)):
            raise InputFileError(damaged.format("another run's id, or not a part"))
        if part.get("sha256") != digest(part["items"]):
            raise InputFileError(damaged.format("its checksum does not match"))
        out = {}
        for key, value in part["items"].items():
            try:
                i = int(key)
                v = decode(value)
            except (ValueError, TypeError, OverflowError):
                raise InputFileError(damaged.format(f"{self.unit} {shown(key, 40)}")) from None
            if not (0 <= i < self.total and str(i) == key):
                raise InputFileError(damaged.format(f"{self.unit} {shown(key, 40)} is not one of its "
                                                    f"{self.total}"))
            if self.valid is not None and not self.valid(v):
                raise InputFileError(damaged.format(f"{self.unit} {i}: not a value this run gives"))
            out[i] = v
        return out

    def add(self, i: int, value: Any) -> None:
        """Item `i` finished: kept, and written when the last part is old enough."""
        self.done[i] = value
        self.pending[i] = value
        now = time.monotonic()
        if now - self.flushed >= max(FLUSH_SECONDS, FLUSH_SHARE * (now - self.started)):
            self.flush()

    def flush(self) -> None:
        """Write the items not written yet as one new part."""
        if not self.pending:
            return
        items = {str(i): encode(v) for i, v in sorted(self.pending.items())}
        name = f"part-{time.time_ns()}-{os.getpid()}.json"
        with immediate():
            write_text(os.path.join(self.folder, name),
                       json.dumps({"run": self.id, "sha256": digest(items), "items": items}),
                       follow_link=False)
        self.pending.clear()
        self.flushed = time.monotonic()

    def taken(self) -> str:
        """What this run took from an earlier one ("" if nothing)."""
        return (f"{self.resumed} of {self.total} {self.unit}s of {self.what} taken from {self.folder}, kept "
                "by an earlier run") if self.resumed else ""

    def summary(self) -> str:
        """What is kept: "12 of 40 documents of heldout by left-to-right kept in DIR"."""
        return f"{len(self.done)} of {self.total} {self.unit}s of {self.what} kept in {self.folder}"


_RECORD: list[Kept] | None = None  # while `recording`: every kept run opened in the block


@contextlib.contextmanager
def recording() -> Iterator[list[Kept]]:
    """For the block, the list of every kept run opened in it (`Kept`: its folder, what it took
    from an earlier run, what it holds now), so that the command line says once, whichever command
    ran, what a resumed run took, and on a Ctrl-C that lands after the kept work (while the
    result is being written) what is kept all the same."""
    global _RECORD
    before, _RECORD = _RECORD, []
    try:
        yield _RECORD
    finally:
        _RECORD = before


@contextlib.contextmanager
def kept(folder: str | os.PathLike | None, what: str, fingerprint: dict[str, Any], total: int,
         unit: str = "document", valid: Callable[[Any], bool] | None = None) -> Iterator[Kept | None]:
    """The kept run in `folder` for the block (None without a folder): whatever finished is written
    when the block ends, however it ends; Ctrl-C becomes `Interrupted`, saying what was kept."""
    if folder is None:
        yield None
        return
    k = Kept(folder, what, fingerprint, total, unit, valid)
    if _RECORD is not None:
        _RECORD.append(k)
    try:
        yield k
    except KeyboardInterrupt as exc:
        k.flush()
        inner = f"; {exc}" if isinstance(exc, Interrupted) else ""
        raise Interrupted(f"{k.summary()}{inner}", k.folder) from None
    except BaseException:
        k.flush()
        if k.created and not k.done:  # refused before any work (a cost, a parameter): nothing left
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(k.folder, RUN))
                os.rmdir(k.folder)
        raise
    finally:
        k.flush()
