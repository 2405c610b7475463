"""Reading records from JSON, JSON-lines and CSV files (and request bodies): every malformed input
(binary bytes, a byte-order mark, nesting deep enough to exhaust the parser, a line that is not an
object, a ragged CSV row) becomes one `InputFileError` naming the file and line."""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any

from .errors import InputFileError
from .textfile import read_text

MAX_DEPTH = 64  # nesting beyond this is not data any reader here expects


def json_depth(text: str) -> int:
    """The deepest nesting of [ and { in JSON `text` (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json(text: str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, refusing nesting deeper than `max_depth` before parsing."""
    if json_depth(text) > max_depth:
        raise InputFileError(f"{where}: JSON nested more than {max_depth} levels deep")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InputFileError(f"{where}: not valid JSON ({exc})") from None


def _text(path: str) -> str:
    """The whole UTF-8 text of `path` (a byte-order mark dropped), bounded (`textfile.read_text`)."""
    return read_text(path, encoding="utf-8-sig", newline="")


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value in a file."""
    p = os.fspath(path)
    return parse_json(_text(p), p)


def read_json_lines(path: str | os.PathLike) -> list[dict[str, Any]]:
    """One JSON object per non-blank line."""
    p = os.fspath(path)
    rows = []
    for i, line in enumerate(_text(p).split("\n"), 1):
        if line.strip():
            row = parse_json(line, f"{p}:{i}")
            if not isinstance(row, dict):
                raise InputFileError(f"{p}:{i}: expected a JSON object, got {type(row).__name__}")
            rows.append(row)
    return rows


def read_csv(
    path: str | os.PathLike, required: tuple[str, ...] = ()
) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a CSV file (a UTF-8 byte-order mark, as Excel writes, is accepted);
    every row must have the header's number of fields and the `required` columns."""
    p = os.fspath(path)
    text = _text(p)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = list(reader)
        header = list(reader.fieldnames or [])
    except csv.Error as exc:
        raise InputFileError(f"{p}: cannot read CSV ({exc})") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise InputFileError(f"{p}: the header {header[:8]} lacks column(s) {', '.join(missing)}")
    for i, r in enumerate(rows, 2):
        if None in r or None in r.values():
            raise InputFileError(f"{p}:{i}: the row has a different number of fields than the header")
    return header, rows
