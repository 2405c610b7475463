"""OCTIS model output as `Topics`: the `.npz` that OCTIS's `save_model_output` writes
(`np.savez_compressed` of the dict a model's `train_model` returns).

Its members: "topics" (T lists of top words, a string array), "topic-word-matrix" (T x V, over
the columns of the model's own word ids, e.g. its gensim `id2word`: OCTIS saves no vocabulary),
"topic-document-matrix" (T x D: topics by training documents; given here transposed, D x T, as
`doc_topic`), and with partitions "test-topic-document-matrix" (kept in `metadata`). Every value
but the topics is rounded to 7 decimals (`appr_order`).

The kind of the topic-word rows is read from the values, never assumed: non-negative rows that sum
to 1 within what rounding to 7 decimals and the stored precision can move them (V x (5e-8 + the
dtype's epsilon)) are distributions, rescaled to sum to exactly 1 (the largest change is reported
in `metadata["rescaled_by"]`); other non-negative rows are "nonnegative" weights; any negative
value makes them "signed" (ProdLDA's decoder weights). No prior: OCTIS saves none.

Words: the top words come from "topics". The matrix's columns get words only from `vocab=` (the
words in the model's column order), checked against "topics": each topic's listed words must be
its row's largest values under that vocabulary."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ARCHIVE_ERRORS, InputFileError, InvalidModelError, TealeavesError, shown
from ..files.textfile import check_regular
from ..topics import Topics
from ..util.limits import check_array_file, check_memory

KEYS = ("topics", "topic-word-matrix", "topic-document-matrix", "test-topics", "test-topic-word-matrix",
        "test-topic-document-matrix")
EXPECTED = "OCTIS model output (the .npz save_model_output writes)"
ROUNDING = 0.5e-7  # appr_order=7


def is_octis_npz(path: str) -> bool:
    """An .npz whose members are all OCTIS's keys, with a topic-word matrix or topics."""
    try:
        with zipfile.ZipFile(path) as z:
            names = {n[:-4] for n in z.namelist() if n.endswith(".npy")}
            if len(names) != len(z.namelist()):
                return False
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return bool(names) and names <= set(KEYS) and bool(names & {"topics", "topic-word-matrix"})


def load_octis(path: str | os.PathLike, vocab: Sequence[str] | None = None,
               vocab_file: str | None = None) -> Topics:
    """The OCTIS model output at `path`; `vocab`: the words of the matrix's columns, in order
    (read from `vocab_file`, one word a line, when it is named)."""
    path = os.fspath(path)
    arrays = _members(path)
    missing = [k for k in ("topic-word-matrix",) if k not in arrays] if "topics" not in arrays else []
    if missing or not set(arrays) <= set(KEYS):
        other = sorted(set(arrays) - set(KEYS))
        raise InputFileError(f"{path}: members {', '.join(map(shown, other or sorted(arrays)))} are not "
                             f"OCTIS's; expected {EXPECTED} with topics and a topic-word-matrix")
    meta: dict[str, Any] = {"format": "octis", "source": path}
    top = _topics(arrays["topics"], path) if "topics" in arrays else None
    weights = kind = None
    note = ""
    if "topic-word-matrix" in arrays:
        weights, kind, note, meta["rescaled_by"] = _weights(arrays["topic-word-matrix"], path)
    if vocab is not None:
        vocab = tuple(str(w) for w in vocab)
        if weights is None:
            raise InvalidModelError(f"{path}: a vocabulary was given but the file has no topic-word-matrix")
        _check_unique(vocab, vocab_file)
        if len(vocab) != weights.shape[1]:
            raise InvalidModelError(f"{path}: the vocabulary has {len(vocab)} words, the topic-word-matrix "
                                    f"{weights.shape[1]} columns")
        if top is not None:
            _check_vocab(weights, vocab, top, path)
    doc_topic = None
    n_topics = weights.shape[0] if weights is not None else len(top or ())
    if "topic-document-matrix" in arrays:
        doc_topic = _proportions(arrays["topic-document-matrix"], path, "topic-document-matrix", n_topics)
    if "test-topic-document-matrix" in arrays:
        meta["test_doc_topic"] = _proportions(arrays["test-topic-document-matrix"], path,
                                              "test-topic-document-matrix", n_topics)
    return Topics(name=os.path.basename(path), source="OCTIS model output", vocab=vocab, top_words=top,
                  weights=weights, weights_kind=kind, weights_note=note, doc_topic=doc_topic, metadata=meta)


def _members(path: str) -> dict[str, np.ndarray]:
    """The arrays of the .npz; object arrays (a pickle inside) are refused, not unpickled."""
    check_regular(path)
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                raise InputFileError(f"{path}: not a readable .npz (no zip header); expected {EXPECTED}")
        check_array_file(path)  # every member's declared shape against its bytes and the memory
        with np.load(path, allow_pickle=False) as f:
            if not isinstance(f, np.lib.npyio.NpzFile):
                raise InputFileError(f"{path}: a single .npy array, not {EXPECTED}")
            check_memory(f"{path}: its {len(f.files)} arrays (read, then copied as float64)",
                         2 * sum(i.file_size for i in f.zip.infolist()))
            return {k: f[k] for k in f.files}
    except TealeavesError:
        raise
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise InputFileError(f"{path}: holds Python objects (a pickle: OCTIS stores topics of unequal "
                                 "lengths that way), which are not loaded; re-save the topics as equal-"
                                 "length lists") from None
        raise InputFileError(f"{path}: not {EXPECTED} ({shown(exc, 120)})") from None
    except ARCHIVE_ERRORS as exc:
        raise InputFileError(f"{path}: not a readable .npz; expected {EXPECTED} "
                             f"({shown(exc, 120)})") from None


def _topics(arr: np.ndarray, path: str) -> tuple[tuple[str, ...], ...]:
    if arr.ndim != 2 or arr.dtype.kind != "U" or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidModelError(f"{path}: topics must be T lists of words (a 2-d string array), got "
                                f"{arr.dtype} of shape {arr.shape}")
    top = tuple(tuple(str(w) for w in row) for row in arr)
    for k, words in enumerate(top):
        twice = next((w for i, w in enumerate(words) if w in words[:i]), None)
        if twice is not None:
            raise InvalidModelError(f"{path}: topic {k} lists {shown(twice)} twice in its top words")
    return top


def _matrix(arr: np.ndarray, path: str, key: str) -> np.ndarray:
    if arr.ndim != 2 or arr.dtype.kind not in "iuf" or 0 in arr.shape:
        raise InvalidModelError(f"{path}: {key} must be a numeric matrix, got {arr.dtype} of shape "
                                f"{arr.shape}")
    out = arr.astype(np.float64)
    if not np.isfinite(out).all():
        raise InvalidModelError(f"{path}: {key} has a value that is not finite")
    return out


def _proportions(arr: np.ndarray, path: str, key: str, topics: int) -> np.ndarray:
    """A topics x documents matrix of proportions, as documents x topics: `topics` rows, each
    column non-negative and summing to 1 within OCTIS's rounding of values its models compute in
    float32 (T x (5e-8 + float32's epsilon)); anything else is refused, naming the first column
    that is not."""
    m = _matrix(arr, path, key)
    if m.shape[0] != topics:
        raise InvalidModelError(f"{path}: {key} has {m.shape[0]} rows (topics) for a model of {topics} "
                                f"topics (shape {m.shape}: topics x documents)")
    if (m < 0).any():
        k, d = (int(i) for i in np.argwhere(m < 0)[0])
        raise InvalidModelError(f"{path}: {key} holds {m[k, d]:.6g} (topic {k}, document {d}): topic "
                                "proportions cannot be negative")
    sums = m.sum(axis=0)
    bad = np.abs(sums - 1.0) > topics * (ROUNDING + np.finfo(np.float32).eps)
    if bad.any():
        d = int(np.argmax(bad))
        raise InvalidModelError(f"{path}: {key}'s column for document {d} sums to {sums[d]:.6g}, not 1: not "
                                "topic proportions")
    return m.T


def _check_unique(vocab: tuple[str, ...], vocab_file: str | None) -> None:
    """A vocabulary names each word once (two columns with one word would be ambiguous)."""
    first: dict[str, int] = {}
    for i, w in enumerate(vocab):
        if w in first:
            where, what = (vocab_file, "lines") if vocab_file else ("the vocabulary", "positions")
            raise InvalidModelError(f"{where}: lists {shown(w)} twice ({what} {first[w] + 1} and {i + 1})")
        first[w] = i


def _weights(arr: np.ndarray, path: str) -> tuple[np.ndarray, str, str, float | None]:
    """The topic-word matrix, its kind and note, and how much its rows were rescaled (distributions
    only, within the rounding tolerance)."""
    w = _matrix(arr, path, "topic-word-matrix")
    if (w < 0).any():
        return w, "signed", "topic-word weights with negative values", None
    sums = w.sum(axis=1)
    eps = np.finfo(arr.dtype).eps if arr.dtype.kind == "f" else 0.0
    tol = w.shape[1] * (ROUNDING + eps)
    if (sums > 0).all() and (np.abs(sums - 1.0) <= tol).all():
        return w / sums[:, None], "distributions", "", float(np.abs(sums - 1.0).max())
    bad = int(np.argmax(np.abs(sums - 1.0)))
    return w, "nonnegative", f"topic-word weights (topic {bad}'s sum to {sums[bad]:.6g})", None


def _check_vocab(weights: np.ndarray, vocab: tuple[str, ...], top: tuple[tuple[str, ...], ...],
                 path: str) -> None:
    """Each topic's listed words are among its row's largest values under `vocab` (ties allowed)."""
    if len(top) != weights.shape[0]:
        raise InvalidModelError(f"{path}: {len(top)} lists of topics for {weights.shape[0]} topic-word rows")
    index = {w: i for i, w in enumerate(vocab)}
    for k, words in enumerate(top):
        n = min(len(words), weights.shape[1])
        floor = np.partition(weights[k], -n)[-n]
        for w in words:
            if w not in index or weights[k, index[w]] < floor:
                raise InvalidModelError(
                    f"{path}: topic {k}'s top word {shown(w)} is not among its {n} largest weights under the "
                    "vocabulary given: it is not the one the model's columns follow (OCTIS saves none; give "
                    "the model's own word ids in order, e.g. its id2word)")
