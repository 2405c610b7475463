"""`Corpus`: documents as one flat int32 array of word ids plus offsets, and the readers
that build it from files. Out-of-vocabulary tokens and empty documents are counted, never
silently lost; `strict=True` turns them into errors."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ARCHIVE_ERRORS, InputFileError, InvalidCorpusError, shorten, shown
from .files.atomic import atomic_path, with_extension
from .files.records import MAX_DIGITS, strict_int
from .files.textfile import check_encoding, read_lines
from .util.limits import check_array_file
from .util.text import TOKENIZERS, shown_as, whitespace


@dataclass(frozen=True, eq=False)
class Corpus:
    """Documents `words[offsets[d]:offsets[d+1]]`, word ids into `vocab`.

    `oov_tokens` counts tokens dropped because their word is not in the vocabulary (the
    most frequent in `oov_words`); `empty_documents` lists documents with no scored token.
    `tokenizer_dropped` counts the whitespace-separated strings the tokenizer removed whole
    (numbers, one-letter words, `w29` under the default tokenizer) before any vocabulary lookup.
    `built_vocab` is true when the reader made `vocab` itself from text (ids in order of first
    appearance): such ids mean nothing to a model, and scoring them against one is an error.
    """

    words: np.ndarray
    offsets: np.ndarray
    vocab: tuple[str, ...] | None = None
    source: str = "<memory>"
    oov_tokens: int = 0
    oov_words: dict[str, int] = field(default_factory=dict)
    built_vocab: bool = False
    tokenizer_dropped: int = 0  # whitespace-separated strings in which the tokenizer found no token

    def __post_init__(self) -> None:
        raw_words, raw_offsets = np.asarray(self.words), np.asarray(self.offsets)
        for what, raw in (("words", raw_words), ("offsets", raw_offsets)):
            if raw.ndim != 1:
                raise InvalidCorpusError(f"{self.source}: {what} must be a 1-d array, got shape {raw.shape}")
            if raw.size and raw.dtype.kind not in "iu":
                raise InvalidCorpusError(f"{self.source}: {what} must be integers, got {raw.dtype}")
        if raw_words.size and int(raw_words.max()) > np.iinfo(np.int32).max:
            raise InvalidCorpusError(f"{self.source}: word id {int(raw_words.max())} is too large "
                                     f"(ids must be below {np.iinfo(np.int32).max})")
        words = np.ascontiguousarray(raw_words, dtype=np.int32)
        offsets = np.ascontiguousarray(raw_offsets, dtype=np.int64)
        if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or offsets[-1] != words.size:
            raise InvalidCorpusError(f"{self.source}: offsets do not describe the word array")
        if np.any(np.diff(offsets) < 0):
            raise InvalidCorpusError(f"{self.source}: offsets are not non-decreasing")
        if words.size and words.min() < 0:
            d = self.doc_of_token(int(np.argmax(words < 0)), offsets)
            raise InvalidCorpusError(f"{self.source}: document {d} has a negative word id")
        if self.vocab is not None:
            vocab = tuple(self.vocab)
            if words.size and words.max() >= len(vocab):
                d = self.doc_of_token(int(np.argmax(words >= len(vocab))), offsets)
                raise InvalidCorpusError(
                    f"{self.source}: document {d} has word id {int(words.max())} "
                    f">= vocabulary size {len(vocab)}"
                )
            object.__setattr__(self, "vocab", vocab)
        words.setflags(write=False)
        offsets.setflags(write=False)
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "offsets", offsets)

    @staticmethod
    def doc_of_token(i: int, offsets: np.ndarray) -> int:
        return int(np.searchsorted(offsets, i, side="right") - 1)

    @classmethod
    def from_word_ids(
        cls, docs: Iterable[Sequence[int] | np.ndarray], vocab: Sequence[str] | None = None,
        source: str = "<memory>",
    ) -> Corpus:
        arrays = []
        for d, doc in enumerate(docs):
            arr = np.asarray(doc)
            if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise InvalidCorpusError(f"{source}: document {d} is not a 1-d array of integer ids")
            arrays.append(arr.astype(np.int64))
        lengths = np.array([a.size for a in arrays], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        words = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
        if words.size and words.max() > np.iinfo(np.int32).max:
            raise InvalidCorpusError(f"{source}: word id {words.max()} is too large")
        return cls(words, offsets, tuple(vocab) if vocab is not None else None, source)

    @classmethod
    def from_tokens(cls, texts: Iterable[Sequence[str]], vocab: Sequence[str], source: str = "<memory>",
                    oov: int = 0, oov_words: dict[str, int] | None = None) -> Corpus:
        """Documents given as token lists, on `vocab`; tokens outside it are dropped and counted
        (added to `oov` and `oov_words`, the counts of an earlier step)."""
        vocab = tuple(vocab)
        index = {w: i for i, w in enumerate(vocab)}
        dropped = dict(oov_words or {})
        docs = []
        for toks in texts:
            ids = []
            for t in toks:
                j = index.get(t)
                if j is None:
                    oov += 1
                    dropped[t] = dropped.get(t, 0) + 1
                else:
                    ids.append(j)
            docs.append(np.array(ids, dtype=np.int64))
        c = cls.from_word_ids(docs, vocab, source)
        return cls(c.words, c.offsets, vocab, source, oov, dropped)

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    def __getitem__(self, d: int) -> np.ndarray:
        return self.words[self.offsets[d] : self.offsets[d + 1]]

    def __iter__(self):
        for d in range(len(self)):
            yield self[d]

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def num_tokens(self) -> int:
        return int(self.words.size)

    @property
    def empty_documents(self) -> list[int]:
        return [int(d) for d in np.flatnonzero(self.lengths == 0)]

    def subset(self, indices: Sequence[int]) -> Corpus:
        c = Corpus.from_word_ids([self[d] for d in indices], self.vocab, self.source)
        return Corpus(c.words, c.offsets, c.vocab, c.source, built_vocab=self.built_vocab)

    def lookalikes(self) -> tuple[int, list[str] | None]:
        """Dropped tokens that look like a vocabulary word (equal to it after NFKC normalisation and
        removal of invisible format characters: `util.text.shown_as`, the annotation app's rule):
        their count and the most frequent as [token, word]. They are still dropped (documents and
        vocabulary are compared as they are), but the report names them: the fix is to normalise
        the text, not to look for a missing word."""
        if not self.oov_words or self.vocab is None:
            return 0, None
        looks = {shown_as(w): w for w in self.vocab}
        found = [(n, tok, looks[key]) for tok, n in self.oov_words.items() if (key := shown_as(tok)) in looks]
        if not found:
            return 0, None
        n, tok, word = max(found, key=lambda f: (f[0], f[1]))
        return sum(f[0] for f in found), [shorten(tok), shorten(word)]

    def report(self, top: int = 10) -> dict[str, Any]:
        """What was kept and what was dropped, for every result."""
        top_oov: dict[str, int] = {}
        for w, n in sorted(self.oov_words.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
            top_oov[shorten(w)] = top_oov.get(shorten(w), 0) + n  # a huge token is cut
        lookalike, example = self.lookalikes()
        return {
            "source": self.source,
            "documents": len(self),
            "tokens": self.num_tokens,
            "oov_tokens": int(self.oov_tokens),
            "oov_top_words": top_oov,
            "oov_lookalike_tokens": lookalike,
            "oov_lookalike_example": example,
            "tokenizer_dropped": int(self.tokenizer_dropped),
            "empty_documents": len(self.empty_documents),
            "empty_document_indices": self.empty_documents[:top],
        }


DROPPED_SHARE = 0.5  # more than this share of a corpus's tokens dropped: every scoring command warns


def dropped_warning(report: dict[str, Any], where: str, whose: str = "the model's") -> str | None:
    """The one warning every command that scores documents gives (on stderr; `evaluate` also in its
    JSON and report, beside the ranking) when more than DROPPED_SHARE of the tokens of `where` were
    dropped because `whose` vocabulary lacks their words; None below it. `report`: `Corpus.report`."""
    kept, dropped = int(report.get("tokens") or 0), int(report.get("oov_tokens") or 0)
    if not kept + dropped or dropped / (kept + dropped) <= DROPPED_SHARE:
        return None
    return (f"{dropped / (kept + dropped):.0%} of the tokens in {where} ({dropped:,} of {kept + dropped:,}) "
            f"are not in {whose} vocabulary and were dropped: every number is about the other {kept:,}")


def read_corpus(
    path: str | os.PathLike,
    vocab: Sequence[str] | None = None,
    format: str | None = None,
    strict: bool = False,
    vocab_path: str | os.PathLike | None = None,
    tokenizer: str | Callable[[str], list[str]] = "whitespace",
    encoding: str = "utf-8",
) -> Corpus:
    """Read documents from the file `path` (the formats: `tealeaves.read_corpus`, which is
    this function that also takes the bundled corpus by name, `datasets.read_corpus`)."""
    path = os.fspath(path)
    check_encoding(encoding)
    fmt = format or ("npz" if path.endswith(".npz") else "text")
    if fmt == "npz":
        corpus = _read_npz(path, vocab)
    elif fmt == "ids":
        file_vocab = read_vocab_file(vocab_path, encoding) if vocab_path is not None else None
        if file_vocab is not None and vocab is not None:
            check_same_vocab(file_vocab, vocab, f"{vocab_path}", "the model")
        corpus = _read_ids(path, vocab if vocab is not None else file_vocab, encoding)
    elif fmt == "text":
        corpus = _read_text(path, vocab, _tokenizer(tokenizer), encoding)
    else:
        raise InputFileError(f"{path}: unknown corpus format {fmt!r} (expected text, ids or npz)")
    if strict:
        if corpus.oov_tokens:
            word, count = max(corpus.oov_words.items(), key=lambda kv: kv[1])
            raise InvalidCorpusError(
                f"{path}: {corpus.oov_tokens} tokens are not in the model's vocabulary "
                f"(most frequent: {shown(word)} x{count}); --strict forbids dropping them"
            )
        if corpus.empty_documents:
            d = corpus.empty_documents[0]
            raise InvalidCorpusError(
                f"{path}: line {d + 1} is an empty document "
                f"({len(corpus.empty_documents)} in all); --strict forbids them"
            )
    return corpus


def check_same_vocab(a: Sequence[str], b: Sequence[str], name_a: str, name_b: str) -> None:
    """Raise unless two vocabularies are identical (same words, same order)."""
    a, b = tuple(a), tuple(b)
    if a == b:
        return
    if len(a) != len(b):
        raise InvalidCorpusError(
            f"vocabulary of {name_a} has {len(a)} words but {name_b} has {len(b)}"
        )
    i = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    n = sum(x != y for x, y in zip(a, b, strict=True))
    raise InvalidCorpusError(
        f"vocabulary of {name_a} does not match {name_b}: {n} ids differ, first at id {i} "
        f"({shown(a[i])} vs {shown(b[i])})"
    )


def _lines(path: str, encoding: str | None = "utf-8"):
    """(line number, line) of a text file, bounded (`textfile.read_lines`)."""
    return read_lines(path, encoding)


def _tokenizer(tokenizer: str | Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    if callable(tokenizer):
        return tokenizer
    if tokenizer not in TOKENIZERS:
        known = ", ".join(TOKENIZERS)
        raise InputFileError(f"unknown tokenizer {tokenizer!r} (known: {known}, or a callable)")
    return TOKENIZERS[tokenizer]


def _read_text(path: str, vocab: Sequence[str] | None,
               tokenizer: Callable[[str], list[str]] = whitespace, encoding: str = "utf-8") -> Corpus:
    build = vocab is None
    index: dict[str, int] = {} if build else {w: i for i, w in enumerate(vocab)}
    words: list[int] = []
    offsets = [0]
    oov: Counter[str] = Counter()
    removed = 0
    for _, line in _lines(path, encoding):
        if tokenizer is not whitespace:  # what the tokenizer removed whole, counted
            removed += sum(1 for chunk in line.split() if not tokenizer(chunk))
        for tok in tokenizer(line):
            i = index.get(tok)
            if i is None:
                if build:
                    i = index[tok] = len(index)
                else:
                    oov[tok] += 1
                    continue
            words.append(i)
        offsets.append(len(words))
    out_vocab = tuple(index) if build else tuple(vocab)
    return Corpus(np.array(words, np.int64), np.array(offsets), out_vocab, path,
                  sum(oov.values()), dict(oov), built_vocab=build, tokenizer_dropped=removed)


def _read_ids(path: str, vocab: Sequence[str] | None, encoding: str = "utf-8") -> Corpus:
    words: list[int] = []
    offsets = [0]
    size = len(vocab) if vocab is not None else None
    for lineno, line in _lines(path, encoding):
        for tok in line.split():
            if tok.isascii() and tok.isdigit() and len(tok) <= MAX_DIGITS:  # the common case, fast
                i = int(tok)
            else:  # refused as every reader refuses it ('٣', '1_0', '-1' below, 5,000 digits)
                i = strict_int(tok, f"{path}:{lineno}", "token")
            if i < 0 or (size is not None and i >= size):
                raise InvalidCorpusError(
                    f"{path}:{lineno}: word id {i} is outside the vocabulary (size {size})"
                )
            words.append(i)
        offsets.append(len(words))
    return Corpus(np.array(words, np.int64), np.array(offsets), vocab, path)


def read_vocab_file(path: str | os.PathLike, encoding: str | None = None) -> tuple[str, ...]:
    """A vocabulary file (UTF-8 unless `encoding` is given): one word per line, word id = line
    number - 1. Blank lines at the end
    are ignored; a blank line or a line with whitespace inside would shift or merge ids: an error."""
    path = os.fspath(path)
    lines = [line.rstrip("\r\n") for _, line in _lines(path, encoding)]
    while lines and not lines[-1].strip():
        lines.pop()
    for n, line in enumerate(lines, 1):
        if not line.strip() or len(line.split()) != 1:
            raise InputFileError(f"{path}:{n}: expected one word per line (word id = line number - 1), "
                                 f"got {shown(line)}")
    words = tuple(line.strip() for line in lines)
    if not words:
        raise InputFileError(f"{path}: the vocabulary file has no words")
    return words


def _read_npz(path: str, vocab: Sequence[str] | None) -> Corpus:
    check_array_file(path)
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in ("words", "offsets") if k not in f.files]
            if missing:
                raise InputFileError(f"{path}: corpus file lacks {', '.join(missing)}")
            words, offsets = f["words"], f["offsets"]
            file_vocab = None
            if "vocab" in f.files:
                v = f["vocab"]
                if v.ndim != 1 or v.dtype.kind != "U":
                    raise InputFileError(f"{path}: vocab must be a 1-d array of strings, got {v.dtype} "
                                         f"of shape {v.shape}")
                file_vocab = tuple(str(w) for w in v)
    except ARCHIVE_ERRORS as exc:
        if isinstance(exc, InputFileError):
            raise
        raise InputFileError(f"{path}: cannot read corpus .npz ({exc})") from None
    if file_vocab is not None and vocab is not None:
        check_same_vocab(file_vocab, vocab, f"corpus {path}", "the model's")
    return Corpus(words, offsets, file_vocab if file_vocab is not None else vocab, path)


def save_corpus(corpus: Corpus, path: str | os.PathLike) -> None:
    """Write a corpus as .npz (words, offsets, vocab)."""
    arrays: dict[str, Any] = {"words": corpus.words, "offsets": corpus.offsets}
    if corpus.vocab is not None:
        arrays["vocab"] = np.array(corpus.vocab, dtype=str)
    path = with_extension(path, ".npz")
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, **arrays)


def write_text_corpus(corpus: Corpus, path: str | os.PathLike) -> None:
    """Write one document per line as words (requires a vocabulary)."""
    if corpus.vocab is None:
        raise InvalidCorpusError("cannot write words: the corpus has no vocabulary")
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for doc in corpus:
            fh.write(" ".join(corpus.vocab[i] for i in doc) + "\n")
