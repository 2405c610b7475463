"""MALLET's text outputs (`mallet train-topics`), read without Java.

- `--output-state FILE.gz`: a gzip text file. Header lines `#doc source pos typeindex type topic`,
  `#alpha : a_0 a_1 ... a_{T-1}` (one value per topic) and `#beta : b` (one scalar); then one line
  per token: `doc source pos typeindex type topic` (source may contain spaces). The model is
  phi[t, w] = (n_wt + beta) / (n_t + V beta), V the number of word types (max typeindex + 1).
- `--topic-word-weights-file FILE`: `topic<TAB>word<TAB>weight` for every topic and word type,
  weight = beta + n_wt (unnormalised); phi is each topic's row normalised. It has no alpha: pass
  it, or the `--output-topic-keys` file, whose lines are `topic<TAB>alpha_t<TAB>top words`.
- `--output-doc-topics FILE`: MALLET >= 2.0.8 writes `doc<TAB>name<TAB>p_0 ... p_{T-1}`; older
  versions a header `#doc name topic proportion ...` and `doc name t p t p ...` pairs sorted by
  proportion. Both give a documents x topics matrix (for topic intrusion or B-Cubed).
"""

from __future__ import annotations

import gzip
import os
import zlib
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputFileError, InvalidModelError, shown
from ..files.records import check_proportions, strict_float, strict_floats, strict_int
from ..files.textfile import read_lines
from ..model import TopicModel, check_alpha
from ..util.limits import check_memory
from .common import build_model

STATE_HEADER = "#doc source pos typeindex type topic"
MAX_TOPICS = 1_000_000  # a topic number beyond this in a doc-topics file is corrupt, not a model


def _lines(path: str) -> Iterator[tuple[int, str]]:
    """(line number, line without its newline), gunzipped when gzip, bounded (`textfile`)."""
    for i, line in read_lines(path, decompress=True):
        yield i, line.rstrip("\n")


def check_matrix(path: str, rows: int, cols: int, what: str = "topics x words", copies: int = 3) -> None:
    """Refuse, before allocating, a matrix a file's counts declare that would not fit in memory
    (`copies` float64 matrices of that size held at once)."""
    check_memory(f"{path}: a {rows:,} x {cols:,} matrix ({what})", copies * 8.0 * rows * cols,
                 how=f"{copies} float64 cop{'y' if copies == 1 else 'ies'}")


def _floats(text: str, path: str, i: int, what: str) -> np.ndarray:
    return strict_floats(text, f"{path}:{i}", what)


def _model(phi, alpha, vocab, beta, path: str, fmt: str, normalize: bool = False) -> TopicModel:
    meta = {"source": path, "format": fmt}
    return build_model(phi, alpha, vocab, beta, os.path.basename(path), path, meta, normalize=normalize,
                       copy=False)


@dataclass(frozen=True)
class StateTokens:
    """Every token of a MALLET state, in order: its document, word type and topic (one entry per
    token), with the vocabulary (word of each type index), alpha (per topic) and beta."""

    docs: np.ndarray  # int64, non-decreasing
    words: np.ndarray  # int64
    topics: np.ndarray  # int32
    vocab: list[str]
    alpha: np.ndarray
    beta: float


def read_state_tokens(path: str | os.PathLike) -> StateTokens:
    """The per-token topic assignments of MALLET's `--output-state` file (16 bytes a token), checked
    as `read_state` checks them: what per-topic diagnostics are computed from."""
    return _parse_state(os.fspath(path), keep_docs=True)


def read_state(path: str | os.PathLike) -> TopicModel:
    """A model from MALLET's `--output-state` file (gzip, or plain text). Lines are read one at
    a time and each token kept as 12 bytes (its type and topic); the counts are accumulated
    straight into phi's memory (V x T), so the model costs phi's size and 12 bytes a token."""
    path = os.fspath(path)
    state = _parse_state(path, keep_docs=False)
    alpha, beta, words, topics = state.alpha, state.beta, state.words, state.topics
    T, V = alpha.size, len(state.vocab)
    check_matrix(path, T, V, copies=1)
    counts = np.zeros((V, T))  # phi's own memory (the model keeps it word-major): filled in place
    np.add.at(counts.reshape(-1), words * T + topics, 1.0)
    totals = counts.sum(axis=0)  # tokens per topic (whole numbers: exact)
    counts += beta
    counts /= totals + V * beta  # phi[t, w] = (n_wt + beta) / (n_t + V beta)
    return _model(counts.T, alpha, state.vocab, beta, path, "mallet-state")


def _parse_state(path: str, keep_docs: bool) -> StateTokens:
    """The tokens of a state file, checked (documents and positions in order, one word per type,
    topics within #alpha's, every type index up to the largest occurring); `docs` is empty unless
    `keep_docs`."""
    alpha = beta = None
    types: dict[int, str] = {}
    indices: dict[str, int] = {}  # each word's type index: one word, one index
    doc_ids, word_ids, topic_ids = array("q"), array("q"), array("i")
    last = (-1, -1, 0)  # document, position and line of the previous token
    for i, line in _lines(path):
        if not line.strip():
            continue
        if line.startswith("#"):
            if line.startswith("#alpha :"):
                alpha = _alpha(_floats(line[len("#alpha :") :], path, i, "#alpha values"), path, i)
            elif line.startswith("#beta :"):
                b = _floats(line[len("#beta :") :], path, i, "#beta")
                if b.size != 1 or not b[0] > 0:
                    raise InputFileError(f"{path}:{i}: #beta must be one positive number, got "
                                         f"{line[len('#beta :'):].strip()[:40]!r}")
                beta = float(b[0])
            continue
        f = line.split()
        if len(f) < 6:
            raise InputFileError(
                f"{path}:{i}: expected 'doc source pos typeindex type topic', got {line[:80]!r}"
            )
        last = _in_order(f, path, i, last)
        typeindex = strict_int(f[-3], f"{path}:{i}", "typeindex", low=0, high=2**62)
        topic = strict_int(f[-1], f"{path}:{i}", "topic", low=0, high=MAX_TOPICS - 1)
        if types.setdefault(typeindex, f[-2]) != f[-2]:
            raise InputFileError(
                f"{path}:{i}: type {typeindex} is {f[-2]!r} here but {types[typeindex]!r} before"
            )
        if indices.setdefault(f[-2], typeindex) != typeindex:
            raise InputFileError(f"{path}:{i}: the word {shown(f[-2], 60)} is type {typeindex} here but "
                                 f"type {indices[f[-2]]} before; the vocabulary names a word twice")
        if keep_docs:
            doc_ids.append(last[0])
        word_ids.append(typeindex)
        topic_ids.append(topic)
    if alpha is None or beta is None:
        raise InputFileError(f"{path}: not a MALLET state file (no '#alpha :' or '#beta :' line)")
    if not word_ids:
        raise InputFileError(f"{path}: the state file has no tokens")
    T = alpha.size
    words = np.frombuffer(word_ids, dtype=np.int64)
    topics = np.frombuffer(topic_ids, dtype=np.int32)
    if topics.max() >= T:
        raise InputFileError(f"{path}: topic {topics.max()} but #alpha has {T} values")
    V = int(words.max()) + 1
    if V > len(types):
        missing = [w for w in range(min(V, len(types) + 5)) if w not in types]
        raise InputFileError(f"{path}: type indices reach {V - 1} but only {len(types)} types occur "
                             f"(types {missing[:5]} never occur, so their words are unknown)")
    docs = np.frombuffer(doc_ids, dtype=np.int64) if keep_docs else np.zeros(0, dtype=np.int64)
    return StateTokens(docs, words, topics, [types[w] for w in range(V)], alpha, beta)


def _alpha(values: np.ndarray, path: str, i: int) -> np.ndarray:
    """#alpha's values checked as every model's alpha is (`model.check_alpha`)."""
    try:
        return check_alpha(values, values.size)
    except InvalidModelError as exc:
        raise InputFileError(f"{path}:{i}: #alpha: {exc}") from None


def _in_order(f: list[str], path: str, i: int, last: tuple[int, int, int]) -> tuple[int, int, int]:
    """A state line's document and position: whole numbers >= 0, documents in order and, within a
    document, positions increasing (MALLET writes each token once, in order)."""
    doc = strict_int(f[0], f"{path}:{i}", "document", low=0)
    pos = strict_int(f[-4], f"{path}:{i}", "position", low=0)
    if doc < last[0]:
        raise InputFileError(f"{path}:{i}: document {doc} after document {last[0]} (line {last[2]}); "
                             "a state file lists documents in order")
    if doc == last[0] and pos <= last[1]:
        what = "is listed twice" if pos == last[1] else f"comes after position {last[1]}"
        raise InputFileError(f"{path}:{i}: position {pos} of document {doc} {what} (line {last[2]}); "
                             "a state file lists each token once, in order")
    return doc, pos, i


def read_topic_keys(path: str | os.PathLike) -> tuple[np.ndarray, list[list[str]]]:
    """alpha (one value per topic) and each topic's top words from `--output-topic-keys`: every
    topic 0..T-1 on exactly one line, alpha a positive number."""
    path = os.fspath(path)
    entries: dict[int, tuple[float, list[str]]] = {}
    lines: dict[int, int] = {}
    for i, line in _lines(path):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) < 2:
            raise InputFileError(f"{path}:{i}: expected 'topic<TAB>alpha<TAB>words', got {line[:80]!r}")
        t = strict_int(f[0], f"{path}:{i}", "topic", low=0, high=MAX_TOPICS - 1)
        if t in lines:
            raise InputFileError(f"{path}:{i}: topic {t} is listed twice (lines {lines[t]} and {i})")
        a = strict_float(f[1], f"{path}:{i}", "alpha")
        if not a > 0:
            raise InputFileError(f"{path}:{i}: alpha {a} must be positive")
        entries[t], lines[t] = (a, f[2].split() if len(f) > 2 else []), i
    if not entries:
        raise InputFileError(f"{path}: no topics")
    missing = sorted(set(range(len(entries))) - set(entries))
    if missing:
        raise InputFileError(f"{path}: topics must be numbered 0..T-1 (topic {missing[0]} is missing, "
                             f"topic {max(entries)} is listed)")
    return (
        np.array([entries[t][0] for t in range(len(entries))]),
        [entries[t][1] for t in range(len(entries))],
    )


def read_word_weights(
    path: str | os.PathLike, alpha: Sequence[float] | np.ndarray | str | os.PathLike
) -> TopicModel:
    """A model from `--topic-word-weights-file`; `alpha` is a vector or the topic-keys file."""
    path = os.fspath(path)
    keys = os.fspath(alpha) if isinstance(alpha, str | os.PathLike) else None
    top: list[list[str]] = []
    if keys is not None:
        alpha, top = read_topic_keys(keys)
    words: dict[str, int] = {}
    triples: list[tuple[int, int, float]] = []
    for i, line in _lines(path):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) != 3:
            raise InputFileError(f"{path}:{i}: expected 'topic<TAB>word<TAB>weight', got {line[:80]!r}")
        t = strict_int(f[0], f"{path}:{i}", "topic", low=0, high=MAX_TOPICS - 1)
        w = strict_float(f[2], f"{path}:{i}", "weight", low=0)
        triples.append((t, words.setdefault(f[1], len(words)), w))
    if not triples:
        raise InputFileError(f"{path}: no topic-word weights")
    arr = np.array(triples)
    T, V = int(arr[:, 0].max()) + 1, len(words)
    if keys is not None and len(alpha) != T:
        raise InputFileError(f"{keys}: {len(alpha)} topic(s), but {path} has {T} (a keys file must "
                             "list every topic of the model)")
    if len(triples) != T * V:
        raise InputFileError(
            f"{path}: {len(triples)} weights for {T} topics x {V} words (expected every pair once)"
        )
    check_matrix(path, T, V)
    pairs = arr[:, 0].astype(np.int64) * V + arr[:, 1].astype(np.int64)
    if np.unique(pairs).size != pairs.size:
        _, first, counts = np.unique(pairs, return_index=True, return_counts=True)
        t, w = divmod(int(pairs[first[counts > 1][0]]), V)
        raise InputFileError(f"{path}: topic {t} and word {list(words)[w]!r} are listed more than once "
                             f"(and so some other pair is missing)")
    phi = np.zeros((T, V))
    phi[arr[:, 0].astype(int), arr[:, 1].astype(int)] = arr[:, 2]
    if (phi < 0).any():
        raise InputFileError(f"{path}: negative weights")
    if keys is not None:
        check_keys(keys, top, phi, words, path)
    # beta is not stated in this file (the smallest weight is beta only if some pair has count 0)
    return _model(phi, alpha, list(words), None, path, "mallet-weights", normalize=True)


def check_keys(keys: str, top: list[list[str]], weights: np.ndarray, words: dict[str, int],
               path: str) -> None:
    """A one-line error unless the topic-keys file `keys` describes the weights it is paired with:
    each topic's n listed words are words of `path`, in order of weight, and among that topic's n
    largest weights (ties allowed). Another model's keys file, or one whose topics are in another
    order, would give its alphas to the wrong topics."""
    why = "is the keys file from another model, or are its topics in another order?"
    for t, listed in enumerate(top):
        unknown = [w for w in listed if w not in words]
        if unknown:
            raise InputFileError(f"{keys}: topic {t}'s top word {shown(unknown[0], 40)} is not a word of "
                                 f"{path} ({why})")
        if not listed:
            continue
        row = weights[t]
        ws = row[[words[w] for w in listed]]
        up = np.flatnonzero(ws[1:] > ws[:-1])
        if up.size:
            a, b = (shown(listed[i], 40) for i in (up[0], up[0] + 1))
            raise InputFileError(f"{keys}: topic {t} lists {a} before {b}, but in {path} topic {t} weighs "
                                 f"{b} more (MALLET lists top words by weight; {why})")
        n = min(len(listed), row.size)
        if ws.min() < np.partition(row, row.size - n)[row.size - n]:
            low = shown(listed[int(np.argmin(ws))], 40)
            raise InputFileError(f"{keys}: topic {t} lists {low} among its {n} top words, but in {path} it "
                                 f"is not among topic {t}'s {n} largest weights ({why})")


def read_doc_topics(path: str | os.PathLike, num_topics: int | None = None) -> tuple[list[str], np.ndarray]:
    """Document names and the documents x topics matrix of `--output-doc-topics` (either layout).
    Proportions must be finite numbers in 0..1; a row of the dense layout must sum to 1 (the sparse
    layout may leave out topics below MALLET's `--doc-topics-threshold`)."""
    path = os.fspath(path)
    names: list[str] = []
    places: list[str] = []
    rows: list[np.ndarray] = []
    sparse = False
    pairs: list[list[tuple[int, float]]] = []
    for i, line in _lines(path):
        if not line.strip():
            continue
        if line.startswith("#"):
            sparse = sparse or line.startswith("#doc name topic proportion")
            continue
        f = line.split("\t") if "\t" in line else line.split()
        if len(f) < 3:
            raise InputFileError(f"{path}:{i}: expected 'doc name values...', got {line[:80]!r}")
        names.append(f[1])
        places.append(f"{path}:{i}")
        if sparse:
            words = " ".join(f[2:]).split()
            if len(words) % 2:
                raise InputFileError(f"{path}:{i}: expected 'topic proportion' pairs")
            topics = [strict_int(t, f"{path}:{i}", "topic", low=0, high=MAX_TOPICS - 1) for t in words[0::2]]
            pairs.append(list(zip(topics, _floats(" ".join(words[1::2]), path, i, "topic proportions"),
                                  strict=True)))
        else:
            rows.append(_floats(" ".join(f[2:]), path, i, "topic proportions"))
    if not names:
        raise InputFileError(f"{path}: no documents")
    if sparse:
        T = num_topics or 1 + max((t for p in pairs for t, _ in p), default=0)
        check_matrix(path, len(pairs), T, "documents x topics")
        theta = np.zeros((len(pairs), T))
        for d, p in enumerate(pairs):
            if len({t for t, _ in p}) != len(p):
                raise InputFileError(f"{places[d]}: a topic is listed twice")
            for t, v in p:
                if t >= T:
                    raise InputFileError(f"{places[d]}: topic {t}, but there are {T}")
                theta[d, t] = v
        return names, check_proportions(theta, path, rows_sum_to_one=False, places=places)
    widths = {r.size for r in rows}
    if len(widths) != 1:
        raise InputFileError(f"{path}: rows have different numbers of topics {sorted(widths)}")
    theta = np.array(rows)
    if num_topics is not None and theta.shape[1] != num_topics:
        raise InputFileError(f"{path}: {theta.shape[1]} topics per row, expected {num_topics}")
    return names, check_proportions(theta, path, places=places)


def sniff(path: str, head: bytes) -> str | None:
    """'mallet-state' or 'mallet-weights' when the first bytes look like one, else None."""
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                first = fh.readline(len(STATE_HEADER))
        except (OSError, UnicodeDecodeError, EOFError, zlib.error):  # a damaged stream: not sniffed
            return None
        return "mallet-state" if first.startswith(STATE_HEADER) else None
    text = head.decode("utf-8", "replace")
    if text.startswith(STATE_HEADER):
        return "mallet-state"
    f = text.split("\n", 1)[0].split("\t")
    if len(f) == 3 and f[0].isascii() and f[0].isdigit():
        try:  # a sniff: the reader checks every value strictly
            float(f[2])
            return "mallet-weights"
        except ValueError:
            return None
    return None
