"""Reading records from JSON, JSON-lines and CSV files (and request bodies): every malformed input
(binary bytes, a byte-order mark, nesting deep enough to exhaust the parser, a line that is not an
object, a ragged CSV row, a repeated CSV column) becomes one `InputFileError` naming the file and line.

The values inside them are typed here too, strictly and in one place, for every reader: whole
numbers (`strict_int`, `strict_choice`), ids (`strict_id`), booleans (`strict_bool`), numbers (`strict_float`,
`strict_floats`), lists of strings (`strict_strings`) and topic-proportion matrices
(`check_proportions`). A value they refuse is a one-line error naming where it is and the field.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import unicodedata
import warnings
from collections import Counter
from typing import Any

import numpy as np

from ..errors import ARCHIVE_ERRORS, BadValueError, InputFileError, described, shorten, shown
from ..util.limits import check_array_file
from ..util.numbers import finite_float
from .csvout import uncell
from .textfile import read_text

MAX_DEPTH = 64  # nesting beyond this is not data any reader here expects
MAX_DIGITS = 18  # a whole number in a file longer than this is damage (and would overflow int64)
MAX_JSON_NUMBER = 400  # characters; a longer JSON number is not data (and a long integer crashes int())


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


def parse_json(text: str, where: str, max_depth: int = MAX_DEPTH, constants: tuple[str, ...] = ()) -> Any:
    """`json.loads(text)`, strictly: nesting deeper than `max_depth` is refused before parsing;
    so are an object naming a key twice (no silent "last one wins"), a number too long to be data
    or too large for a float (`1e999`, or an integer of 310 digits), and the non-standard literals
    NaN, Infinity and -Infinity (except those in `constants`: a key file's log proportion may be
    -Infinity, log 0)."""
    if json_depth(text) > max_depth:
        raise InputFileError(f"{where}: JSON nested more than {max_depth} levels deep")

    def constant(name: str) -> float:
        if name not in constants:
            raise ValueError(f"{name} is not a JSON number")
        return float(name.replace("Infinity", "inf"))

    try:
        return json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=constant,
                          object_pairs_hook=_json_object)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise InputFileError(f"{where}: not valid JSON ({shorten(exc, 120)})") from None


def _json_int(text: str) -> int:
    """A JSON integer; one too large for a float (beyond about 1.8e308) is refused as `1e999` is:
    every number a file holds must be usable where a reader needs a float."""
    if len(text) > MAX_JSON_NUMBER:
        raise ValueError(f"a number of {len(text)} digits")
    number = int(text)
    if finite_float(number) is None:
        raise ValueError(f"the number {shorten(text, 40)} is too large for a float")
    return number


def _json_float(text: str) -> float:
    if len(text) > MAX_JSON_NUMBER:
        raise ValueError(f"a number of {len(text)} characters")
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {shorten(text, 40)} is too large for a float")
    return number


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key named twice is an error (json.loads would keep the last silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        twice = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise ValueError(f"the key {_shown(twice)} appears twice in one object")
    return out


def _text(path: str) -> str:
    """The whole UTF-8 text of `path` (a byte-order mark dropped), bounded (`textfile.read_text`)."""
    return read_text(path)


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value in a file."""
    p = os.fspath(path)
    return parse_json(_text(p), p)


def read_json_lines(path: str | os.PathLike) -> list[dict[str, Any]]:
    """One JSON object per non-blank line."""
    return [row for _, row in numbered_json_lines(path)]


def numbered_json_lines(
    path: str | os.PathLike, constants: tuple[str, ...] = ()
) -> list[tuple[str, dict[str, Any]]]:
    """`read_json_lines` with each object's place, "FILE:LINE", for error messages (`constants`
    as `parse_json` takes them)."""
    p = os.fspath(path)
    rows = []
    for i, line in enumerate(_text(p).split("\n"), 1):
        if line.strip():
            row = parse_json(line, f"{p}:{i}", constants=constants)
            if not isinstance(row, dict):
                raise InputFileError(f"{p}:{i}: expected a JSON object, got {type(row).__name__}")
            rows.append((f"{p}:{i}", row))
    return rows


def read_csv(
    path: str | os.PathLike, required: tuple[str, ...] = ()
) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a CSV file (a UTF-8 byte-order mark, as Excel writes, is accepted);
    every row must have the header's number of fields and the `required` columns, and no
    column may be named twice."""
    header, rows = numbered_csv(path, required)
    return header, [row for _, row in rows]


def numbered_csv(
    path: str | os.PathLike, required: tuple[str, ...] = ()
) -> tuple[list[str], list[tuple[str, dict[str, str]]]]:
    """`read_csv` with each row's place, "FILE:LINE" (the line the row ends on), for error messages."""
    p = os.fspath(path)
    text = _text(p)
    rows = []
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = list(reader.fieldnames or [])
        for row in reader:
            rows.append((f"{p}:{reader.line_num}", row))
    except csv.Error as exc:
        raise InputFileError(f"{p}: cannot read CSV ({exc})") from None
    repeated = sorted(c for c, n in Counter(header).items() if n > 1)
    if repeated:
        raise InputFileError(f"{p}:1: the header names column(s) {', '.join(map(_shown, repeated[:5]))} "
                             "more than once")
    missing = [c for c in required if c not in header]
    if missing:
        raise InputFileError(f"{p}: the header {header[:8]} lacks column(s) {', '.join(missing)}")
    for where, r in rows:
        if None in r or None in r.values():
            raise InputFileError(f"{where}: the row has a different number of fields than the header")
    return header, [(w, {k: uncell(v) for k, v in r.items()}) for w, r in rows]  # undo formula quoting


def read_npy(path: str | os.PathLike, what: str) -> np.ndarray:
    """The array in a .npy file (no pickles; numpy's warnings about odd headers are not printed:
    the checks that follow say what is wrong); its declared shape is checked first (`check_array_file`)."""
    p = os.fspath(path)
    check_array_file(p)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.load(p, allow_pickle=False)
    except ARCHIVE_ERRORS as exc:
        raise InputFileError(f"{p}: cannot read a .npy file of {what} ({exc})") from None
    if not isinstance(arr, np.ndarray):
        arr.close()
        raise InputFileError(f"{p}: cannot read a .npy file of {what} (got an .npz archive)")
    return arr


# -- values inside files ---------------------------------------------------------------------------

TRUE_WORDS = ("true", "1", "yes")
FALSE_WORDS = ("false", "0", "no")


def _shown(value: Any) -> str:
    """`value` for an error message (`errors.shown`): a string quoted and cut, a number its repr,
    anything else its type only (a file's nested list may print forever)."""
    return shown(value) if isinstance(value, str) else shorten(described(value))


def _int_text(text: str) -> int | None:
    """The integer that `text` spells as ASCII digits 0-9 with an optional leading '-' (at most
    MAX_DIGITS of them), else None: no spaces, '+', '_', '3.0', '1e3', '0x1f', '²' or '٣'."""
    body = text[1:] if text[:1] == "-" else text
    if body.isascii() and body.isdigit() and len(body) <= MAX_DIGITS:
        return int(text)
    return None


def strict_int(value: Any, where: str, field: str, low: int | None = None, high: int | None = None,
               text: bool = True) -> int:
    """A whole number from a file: a JSON integer or a numpy integer (not a boolean, not 3.0) or,
    when `text` (a CSV cell), text of ASCII digits with an optional leading '-'; within
    `low`..`high` when given. `text=False` for a JSON number field: "12" is not 12 there."""
    number: int | None = None
    if isinstance(value, str):
        number = _int_text(value) if text else None
    elif isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        number = int(value) if abs(int(value)) < 10**MAX_DIGITS else None
    if number is None:
        form = (f"digits 0-9, at most {MAX_DIGITS}, optionally after '-'" if text
                else f"a JSON integer of at most {MAX_DIGITS} digits")
        raise BadValueError(f"{where}: {field} {_shown(value)} is not a whole number ({form})")
    if (low is not None and number < low) or (high is not None and number > high):
        span = f"{low}..{high}" if high is not None else f">= {low}" if low is not None else f"<= {high}"
        raise BadValueError(f"{where}: {field} {number} is out of range ({span})")
    return number


def strict_choice(value: Any, count: int, where: str, field: str = "choice") -> int:
    """An option position 0..count-1, parsed as `strict_int` parses."""
    try:
        number = strict_int(value, where, field)
    except BadValueError:
        raise BadValueError(f"{where}: {field} {_shown(value)} is not an option position "
                            f"(a whole number 0..{count - 1})") from None
    if not 0 <= number < count:
        raise BadValueError(f"{where}: {field} {number}: the item has no option {number} "
                            f"(positions 0..{count - 1})")
    return number


def strict_bool(value: Any, where: str, field: str) -> bool:
    """A boolean from a file: JSON true/false, the numbers 0/1, or (any case) the text true/false,
    1/0 or yes/no, as spreadsheets write them. Anything else, the empty cell included, is an error."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in TRUE_WORDS + FALSE_WORDS:
        return value.lower() in TRUE_WORDS
    raise BadValueError(f"{where}: {field} {_shown(value)} is not true or false "
                         "(accepted: true/false, 1/0, yes/no)")


def _float_text(text: str, finite: bool) -> float | None:
    """The number `text` spells in ASCII (decimal or exponent form; 'nan'/'inf' only when not
    `finite`), else None: no '_', no spaces, no non-ASCII digits."""
    if not text.isascii() or "_" in text or text != text.strip():
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) or not finite else None


def strict_float(
    value: Any, where: str, field: str, finite: bool = True, low: float | None = None,
    high: float | None = None, text: bool = True,
) -> float:
    """A number from a file: a JSON number or a numpy scalar (not a boolean; `finite_float`) or,
    when `text`, ASCII text; finite unless `finite` is False; within `low`..`high` when given."""
    number: float | None = None
    if isinstance(value, str):
        number = _float_text(value, finite) if text else None
    else:
        number = finite_float(value)
        if number is None and not finite and isinstance(value, float | np.floating):
            number = float(value)  # NaN or an infinity, allowed here
    if number is None:
        kind = "a finite number" if finite else "a number"
        raise BadValueError(f"{where}: {field} {_shown(value)} is not {kind}")
    if (low is not None and number < low) or (high is not None and number > high):
        span = f"{low}..{high}" if high is not None else f">= {low}" if low is not None else f"<= {high}"
        raise BadValueError(f"{where}: {field} {number} is out of range ({span})")
    return number


def strict_id(value: Any, where: str, field: str) -> str:
    """An identifier (an annotator, an item): a non-empty string with no leading or trailing white
    space and no control character (NUL, newline, tab, ESC, ...): " alice " and "alice" would count
    as two people, and a newline breaks every line-based output. A number is not an id (JSON `5`)."""
    if not isinstance(value, str):
        raise BadValueError(f"{where}: {field} {_shown(value)} is not a string (an id is text)")
    if not value:
        raise BadValueError(f"{where}: {field} is empty")
    if value != value.strip():
        raise BadValueError(f"{where}: {field} {_shown(value)} has white space at its start or end")
    bad = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise BadValueError(f"{where}: {field} {_shown(value)} holds the control character U+{ord(bad):04X}")
    return value


def strict_floats(text: str, where: str, field: str) -> np.ndarray:
    """The finite numbers in whitespace-separated `text` (as `strict_float` reads each)."""
    if not text.isascii():  # a non-ASCII space would split words, a non-ASCII digit is no digit here
        bad = next(ch for ch in text if not ch.isascii())
        raise BadValueError(f"{where}: {field} must be finite numbers in ASCII, got the character "
                            f"U+{ord(bad):04X}")
    out = np.empty(len(words := text.split()), dtype=np.float64)
    for i, word in enumerate(words):
        number = _float_text(word, finite=True)  # the word named is the one that is not a number
        if number is None:
            raise BadValueError(f"{where}: {field} must be finite numbers, got {_shown(word)}")
        out[i] = number
    return out


def strict_strings(value: Any, where: str, field: str) -> list[str]:
    """A list of strings: a JSON list, or a CSV cell holding one (parsed with the depth limit)."""
    if isinstance(value, str):
        value = parse_json(value, f"{where}: {field}")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadValueError(f"{where}: {field} must be a list of strings, got {_shown(value)}")
    return value


ROW_SUM_TOLERANCE = 1e-3


def check_proportions(
    theta: Any, where: str, rows_sum_to_one: bool = True, places: list[str] | None = None
) -> np.ndarray:
    """`theta` as a documents x topics float matrix of topic proportions: finite, in 0..1 and (when
    `rows_sum_to_one`) each row summing to 1 within ROW_SUM_TOLERANCE. Errors name the row's place
    (`places[d]`, else "WHERE: document d", counting from 0)."""
    arr = np.asarray(theta)
    if arr.ndim != 2 or arr.dtype.kind not in "fiu":
        raise BadValueError(f"{where}: topic proportions must be a 2-d numeric matrix, "
                            f"got {arr.ndim}-d {arr.dtype}")
    arr = arr.astype(np.float64)

    def place(d: int) -> str:
        return places[d] if places is not None else f"{where}: document {d}"

    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1 + ROW_SUM_TOLERANCE)
    if bad.any():
        d, t = (int(i) for i in np.argwhere(bad)[0])
        raise BadValueError(f"{place(d)}: topic {t}'s proportion {arr[d, t]} is not a number in 0..1 "
                            f"({int(bad.any(axis=1).sum())} document(s) like it)")
    if rows_sum_to_one and arr.size:
        off = np.abs(arr.sum(axis=1) - 1) > ROW_SUM_TOLERANCE
        if off.any():
            d = int(np.argmax(off))
            raise BadValueError(f"{place(d)}: the topic proportions sum to {arr[d].sum():.6g}, not 1 "
                                f"({int(off.sum())} document(s) like it); save every topic's proportion "
                                "(gensim: minimum_probability=0)")
    return arr
