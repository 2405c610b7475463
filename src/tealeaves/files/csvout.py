"""CSV output shared by every command that writes CSV, safe to open in a spreadsheet.

A cell that is text beginning with `=`, `+`, `-`, `@`, a tab or a carriage return would be run as
a formula by Excel, LibreOffice or Google Sheets (CSV injection; vocabulary words, model names
and participant ids are chosen by whoever made the data). Such a cell gets a leading single quote,
the spreadsheet convention for "this is text": `=HYPERLINK(...)` is written `'=HYPERLINK(...)`.
Numbers stay numbers: a cell that is a plain number (`-1.25`, `+3`, `-2e-05`, `-inf`, `nan`) is
never quoted. So that the rule can be undone, text that already begins with a single quote
followed by one of those characters or another quote (`'=x`, `''`) gets one more; tealeaves' own
CSV readers (`tealeaves.files.records.read_csv`) remove it again, so every file tealeaves writes reads
back as it was."""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterable, Sequence
from typing import IO, Any, Literal

from ..errors import MethodError

JSON_LINES_EXTENSIONS = (".jsonl", ".ndjson")


def is_csv(path: str | os.PathLike) -> bool:
    """Whether a task, key or responses file is CSV: its extension is .csv, in any case."""
    return os.path.splitext(os.fspath(path))[1].lower() == ".csv"


def table_format(path: str | os.PathLike, what: str = "the output") -> Literal["csv", "jsonl"]:
    """The format a writer of tasks, keys or responses writes to `path`, from its extension in any
    case: .csv is CSV; .jsonl, .ndjson or none (`/dev/stdout`) is JSON lines. Any other extension
    (`t.xlsx`, `t.json`) is a one-line MethodError, never JSON lines under a misleading name."""
    ext = os.path.splitext(os.path.basename(os.fspath(path)))[1].lower()
    if ext == ".csv":
        return "csv"
    if ext in ("", *JSON_LINES_EXTENSIONS):
        return "jsonl"
    raise MethodError(f"{what} {os.fspath(path)!r} has the extension {ext}; tealeaves writes .csv (CSV) or "
                      ".jsonl (JSON lines)")


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ESCAPED = "".join(FORMULA_START) + "'"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)",
                     re.IGNORECASE)


def cell(value: Any) -> Any:
    """`value` as a CSV cell: text that a spreadsheet would run as a formula is quoted (see the
    module docstring); numbers, None and other text are unchanged."""
    if value is None or isinstance(value, int | float):
        return value
    text = str(value)
    if (text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text)) or uncell(text) != text:
        return "'" + text
    return text


def uncell(text: str) -> str:
    """The text `cell` quoted, as it was (a cell that `cell` did not quote is unchanged)."""
    if len(text) > 1 and text[0] == "'" and text[1] in _ESCAPED:
        return text[1:]
    return text


class Writer:
    """`csv.writer` whose every cell goes through `cell`."""

    def __init__(self, fh: IO[str]) -> None:
        self._w = csv.writer(fh)

    def writerow(self, row: Iterable[Any]) -> None:
        self._w.writerow([cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(fh: IO[str]) -> Writer:
    return Writer(fh)


def write_dicts(fh: IO[str], rows: Sequence[dict[str, Any]]) -> None:
    """A header and one line per dict; the columns are every key of any row, in the order first
    seen (rows may differ: a missing value is an empty cell)."""
    fields: dict[str, None] = {}
    for r in rows:
        fields.update(dict.fromkeys(r))
    w = writer(fh)
    w.writerow(fields)
    for r in rows:
        w.writerow(r.get(f, "") for f in fields)
