"""Top-words files: one topic per line, its words ranked and separated by white space (the
format coherence, diversity and the embedding measures take when the file is no model). Read
strictly: a blank line between topics would shift every later topic's number (an error; blank lines
at the end are ignored); a MALLET `--output-topic-keys` file (`topic<TAB>alpha<TAB>words`) is
recognised and its words read (never its topic numbers and alphas as words); a matrix of numbers
(topic-word weights saved as text or CSV) is an error, not a list of "words"."""

from __future__ import annotations

import os
import re

from ..errors import BadValueError, InputFileError
from ..files.records import strict_float
from ..files.textfile import read_lines
from .mallet import read_topic_keys

KEYS_LINE = re.compile(r"\d+\t[^\t]+\t")  # MALLET's topic keys: topic<TAB>alpha<TAB>words


def read_top_words(path: str | os.PathLike) -> list[list[str]]:
    """Each topic's words from a top-words file (see the module notes)."""
    p = os.fspath(path)
    lines = [line.rstrip("\n") for _, line in read_lines(p)]
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and all(KEYS_LINE.match(line) and _number(line.split("\t")[1]) for line in lines):
        return read_topic_keys(p)[1]
    if lines and all(_numeric(line) for line in lines if line.strip()):
        raise InputFileError(f"{p}: holds only numbers (a topic-word matrix?), not topics' top words; a "
                             "matrix is a model: give its words too (--model-format arrays --vocab FILE)")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            raise InputFileError(f"{p}:{n}: a blank line between topics (each line is one topic's words: "
                                 "it would shift every later topic's number); remove it")
    return [line.split() for line in lines]


def _number(text: str) -> bool:
    try:
        strict_float(text.strip(), "", "value")
    except BadValueError:
        return False
    return True


def _numeric(line: str) -> bool:
    return all(_number(x) for x in re.split(r"[\s,;]+", line.strip()))
