"""Top-words files: one topic per line, its words ranked and separated by white space (the
format coherence, diversity and the embedding measures take when the file is no model). Read
strictly: a blank line between topics would shift every later topic's number (an error; blank lines
at the end are ignored); a MALLET `--output-topic-keys` file (`topic<TAB>alpha<TAB>words`) is
recognised and its words read (never its topic numbers and alphas as words; an irregular line of
such a file is an error naming it); a file of numbers only (topic-word weights saved as text or
CSV, or topics whose words are numbers) is refused as ambiguous unless read with layout="words"."""

from __future__ import annotations

import os
import re

from ..errors import BadValueError, InputFileError
from ..files.records import strict_float
from ..files.textfile import read_lines
from .mallet import read_topic_keys

# MALLET's topic keys: topic<TAB>alpha<TAB>words (an alpha of digits, or nan/inf: a bad one is named)
KEYS_LINE = re.compile(r"(\d+)\t *([^\t\s]*\d[^\t\s]*|[+-]?(?i:nan|inf|infinity)) *\t")
LAYOUTS = ("auto", "words", "keys")
AS_WORDS = "--model-format top-words (Python: read_top_words(path, layout='words'))"


def read_top_words(path: str | os.PathLike, layout: str = "auto") -> list[list[str]]:
    """Each topic's words from a top-words file (see the module notes). `layout`: "words" (every
    field of a line is a word, numbers too: topics of years or of pixel ids), "keys" (MALLET's topic
    keys) or "auto": topic keys when the lines numbered as topics (`topic<TAB>alpha<TAB>`, topic
    numbers within 0..lines-1) are at least half, then read strictly (an irregular line is an error
    naming it, never words); else words, where a file of numbers only is refused as ambiguous."""
    if layout not in LAYOUTS:
        raise InputFileError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    p = os.fspath(path)
    lines = [line.rstrip("\n") for _, line in read_lines(p)]
    while lines and not lines[-1].strip():
        lines.pop()
    if layout == "keys" or (layout == "auto" and _keys_layout(lines)):
        return read_topic_keys(p)[1]
    if layout == "auto" and lines and all(_numeric(line) for line in lines if line.strip()):
        raise InputFileError(f"{p}: holds only numbers (a topic-word matrix?), not topics' top words; a "
                             "matrix is a model: give its words too (--model-format arrays --vocab FILE); "
                             f"topics whose words are numbers (years, ids) are read with {AS_WORDS}")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            raise InputFileError(f"{p}:{n}: a blank line between topics (each line is one topic's words: "
                                 "it would shift every later topic's number); remove it")
    return [line.split() for line in lines]


def _keys_layout(lines: list[str]) -> bool:
    """Whether at least half the lines are MALLET topic keys: `topic<TAB>alpha<TAB>`, the topic a number below
    the count of lines (a words file's first fields, years or ids, are not topic numbers)."""
    filled = [line for line in lines if line.strip()]
    keys = [m for m in map(KEYS_LINE.match, filled) if m and int(m.group(1)) < len(filled)]
    return bool(filled) and 2 * len(keys) >= len(filled) and any(int(m.group(1)) == 0 for m in keys)


def _number(text: str) -> bool:
    try:
        strict_float(text.strip(), "", "value")
    except BadValueError:
        return False
    return True


def _numeric(line: str) -> bool:
    return all(_number(x) for x in re.split(r"[\s,;]+", line.strip()))
