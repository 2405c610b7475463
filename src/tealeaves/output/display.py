"""How results show themselves: a one-line `repr`, a small HTML table in notebooks
(`_repr_html_`), and `to_frame()` for results with one value per document, topic, item or model
(pandas, the `pandas` extra). Each result class says what its headline numbers are
(`_headline`) and, where it has them, its per-unit columns (`_columns`)."""

from __future__ import annotations

import codecs
import contextlib
import math
import os
from html import escape
from typing import Any

from ..errors import MethodError


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if not math.isfinite(v) else (f"{v:.6g}" if abs(v) < 1e6 else f"{v:.4e}")
    return str(v)


def perplexity_text(p: float, digits: int = 2) -> str:
    """A perplexity for a table: fixed point below a million, else scientific (a badly biased
    estimate can give 1e64, which must not widen the table by sixty digits)."""
    if not math.isfinite(p):
        return "nan" if math.isnan(p) else "inf"
    return f"{p:.{digits}f}" if abs(p) < 1e6 else f"{p:.3e}"


class Display:
    """Mixin: subclasses define `_headline()` (name, value pairs) and may define `_columns()`
    ((index name, {column: values})) and `_name` (the class's short name in the repr)."""

    _name = "Result"

    def _headline(self) -> list[tuple[str, Any]]:
        raise NotImplementedError

    def _columns(self) -> tuple[str, dict[str, Any]] | None:
        return None

    def __repr__(self) -> str:
        body = ", ".join(f"{k} {_fmt(v)}" for k, v in self._headline())
        return f"{self._name}({body})"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{escape(str(k))}</th><td>{escape(_fmt(v))}</td></tr>"
                       for k, v in self._headline())
        cols = self._columns()
        more = (f"<p><small>.to_frame(): one row per {escape(cols[0])}, {len(next(iter(cols[1].values())))} "
                "rows</small></p>") if cols and cols[1] else ""
        return f"<div><strong>{escape(self._name)}</strong><table>{rows}</table>{more}</div>"

    def to_frame(self):
        """A pandas DataFrame with one row per document, topic, item or model."""
        cols = self._columns()
        if cols is None:
            raise MethodError(f"{self._name} has no per-document or per-topic values to tabulate")
        try:
            import pandas as pd
        except ImportError:
            raise MethodError('to_frame needs pandas: pip install "tealeaves[pandas]"') from None
        index, columns = cols
        frame = pd.DataFrame(columns)
        frame.index.name = index
        return frame


def words_text(words: Any, marked: Any = ()) -> str:
    """Top words as one line, separated by spaces: an n-gram word ("new york", as scikit-learn's and
    BERTopic's n-gram vectorizers name columns) in double quotes, so that it reads as one word; a
    word in `marked` followed by "*" (absent from the reference)."""
    return " ".join((f'"{w}"' if any(c.isspace() for c in w) else w) + ("*" if w in marked else "")
                    for w in words)


def terminal_safe(text: str) -> str:
    """`text` with every control character but tab, newline and carriage return (and every lone
    surrogate) written as its escape (`\\x1b`), as `repr` writes it: a word or token from an input
    file never moves the cursor, recolours, retitles or clears the terminal."""
    from ..util.text import UNSHOWABLE

    return UNSHOWABLE.sub(lambda m: repr(m.group())[1:-1], text)


class TerminalStream:
    """A text stream that writes `terminal_safe` text to `stream` (the CLI wraps standard output and
    standard error in one: every string printed passes one escaper); the rest is `stream`'s.
    A character the stream's encoding lacks is written as its escape (`\\xb1`: a cp1252 or ascii
    console never fails over a display character). A closed reader (`| head`) does not stop the
    command: the rest goes to the null device and `pipe_closed` is set (the CLI still commits its
    files and says so)."""

    def __init__(self, stream: Any, escape: bool = True) -> None:
        self._stream = stream
        self._escape = escape
        self.pipe_closed = False

    def write(self, text: str) -> int:
        out = terminal_safe(text) if self._escape else text
        encoding = getattr(self._stream, "encoding", None)
        if encoding and codecs.lookup(encoding).name != "utf-8":
            out = out.encode(encoding, "backslashreplace").decode(encoding, "replace")
        try:
            self._stream.write(out)
        except BrokenPipeError:
            self._closed()
        return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        """The reader went away: send the rest (and what is buffered) to the null device."""
        self.pipe_closed = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
