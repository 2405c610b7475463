"""Turning raw text into tokens that can meet a model's vocabulary.

The default tokenizer (`tokenize`): Unicode case folding, then every maximal run of letters
(apostrophes inside a word are dropped: "nation's" -> "nations"); digits, punctuation and
one-letter tokens are dropped. No stop words are removed: words the model does not know are
dropped when the tokens are mapped through its vocabulary, and every such drop is counted and
reported (`Corpus.report`). Pass your own callable (str -> list of str) to match your training
preprocessing exactly."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from ..errors import BadValueError, shown

WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")

Tokenizer = Callable[[str], list[str]]

# C0 controls but tab, newline and carriage return; DEL and the C1 controls; lone surrogates: text
# that a database (PostgreSQL text holds no NUL) or a web page cannot carry
UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def showable(text: str) -> str:
    """`text` with every character in UNSHOWABLE replaced by a space (a form feed in a document
    shown to annotators)."""
    return UNSHOWABLE.sub(" ", text)


def shown_as(option: str) -> str:
    """How an option looks: compatibility-normalised (NFKC), without invisible format characters
    (zero-width space, soft hyphen, direction marks), runs of white space as one space, trimmed.
    Two options that look the same cannot be told apart by an annotator (the app's task check and
    the key reader both use this rule)."""
    text = unicodedata.normalize("NFKC", option)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())


def check_distinct_options(options: Sequence[str], where: str) -> None:
    """No blank option and no two that look the same (`shown_as`): an annotator could not tell
    them apart. A one-line BadValueError naming `where` and the options."""
    looks: dict[str, int] = {}
    for j, o in enumerate(options):
        key = shown_as(o)
        if not key:
            raise BadValueError(f"{where}: option {j} is blank")
        if key in looks:
            raise BadValueError(f"{where}: options {looks[key]} and {j} look the same ({shown(o)}); "
                                "an annotator cannot tell them apart")
        looks[key] = j


def tokenize(text: str) -> list[str]:
    """Lower-cased runs of letters of length >= 2 (see the module docstring)."""
    return [t.replace("'", "") for t in WORD.findall(text.casefold()) if len(t) >= 2]


def whitespace(text: str) -> list[str]:
    """Tokens separated by whitespace, unchanged (for text that is already preprocessed)."""
    return text.split()


TOKENIZERS: dict[str, Tokenizer] = {"whitespace": whitespace, "default": tokenize}


def excerpt(text: str, limit: int = 200) -> str:
    """`text` as a reader sees an excerpt: whitespace collapsed, cut at the last word boundary within
    `limit` characters with an ellipsis (a single word longer than `limit` is cut inside it)."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:.") + "…"
