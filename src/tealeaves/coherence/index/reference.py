"""The reference index answering counts (`ReferenceIndex.counts`): any topic words' co-occurrence
counts without reading the text again (`counts.count` takes its path).

From the positions of a few target words every counting rule of `counts` is answered exactly, for
whole documents and for sliding windows of ANY size (`kernels`). Cost: linear in the occurrences
of the target words (a word such as "the", ~5% of all tokens, costs 5% of the corpus), not in the
corpus.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import InputFileError, MethodError
from . import kernels
from .tlx import MAGIC, SUFFIX, TlxFile


class ReferenceIndex(TlxFile):
    """An open `.tlx` file: `header` (how it was built), `counts(targets, window, rule)`."""

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path)
        self.starts = np.concatenate([[0], np.cumsum(self.arrays["doc_lengths"])]).astype(np.int64)
        self._cache: dict[str, np.ndarray] = {}
        self._docs: dict[str, np.ndarray] = {}
        self._units: dict[tuple, int] = {}
        self._counted: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def positions(self, word: str) -> np.ndarray:
        """The sorted global positions of `word` (empty if absent)."""
        if word in self._cache:
            return self._cache[word]
        g = self.lookup(word)
        if g < 0:
            out = np.zeros(0, np.int64)
        else:
            out = self.postings(g, word)
        if len(self._cache) > 4096:
            self._cache.clear()
            self._docs.clear()
        self._cache[word] = out
        return out

    def documents_of(self, word: str) -> np.ndarray:
        """The document of each occurrence of `word` (as `positions`)."""
        if word not in self._docs:
            self._docs[word] = kernels.docs_of(self.positions(word), self.starts)
        return self._docs[word]

    def units(self, window: int | None, rule: str) -> int:
        L = self.arrays["doc_lengths"]
        if rule == "context":
            return self.tokens - self.documents * (int(window) - 1)
        if window is None:
            return self.documents
        if window not in self._units:
            self._units[window] = int(np.maximum(1, L - min(int(window), 2**62) + 1).sum())
        return self._units[window]

    def counts(self, targets: Sequence[str], window: int | None, rule: str = "exact",
               pairs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """(single, upper triangle of joint, units) of `targets`, as `counts._kernel(rule)` gives.
        `pairs` (rows i < j of target indices): count only these pairs, the others' joint is -1
        (every pair is counted under the context rule)."""
        if rule not in self.rules:
            raise MethodError(f"{self.path}: the index answers the counting rules {', '.join(self.rules)}, "
                              f"not {rule!r}")
        K = len(targets)
        single = np.zeros(K, np.int64)
        upper = np.zeros((K, K), np.int64)
        if rule == "context":
            pairs = None
        key = (tuple(targets), window, rule, None if pairs is None else pairs.tobytes())
        if key in self._counted:
            single, upper = self._counted[key]
            return single.copy(), upper.copy(), self.units(window, rule)
        pos = [self.positions(t) for t in targets]
        if rule == "context":
            allp = np.concatenate(pos) if pos else np.zeros(0, np.int64)
            ids = np.concatenate([np.full(len(p), k, np.int32) for k, p in enumerate(pos)]) if pos else \
                np.zeros(0, np.int32)
            order = np.argsort(allp, kind="stable")
            allp = allp[order]
            docs = np.searchsorted(self.starts, allp, side="right") - 1
            kernels.context(allp, docs, ids[order], int(window), single, upper)
            return single, upper, self.units(window, rule)
        w = 0 if window is None else int(min(int(window), 2**62))
        L = np.asarray(self.arrays["doc_lengths"])
        a = np.empty(sum(len(p) for p in pos), np.int64)
        b = np.empty_like(a)
        off = np.zeros(K + 1, np.int64)
        for k, p in enumerate(pos):
            m = kernels.intervals(p, self.documents_of(targets[k]), self.starts, L, w, rule == "gensim",
                           a[off[k]:], b[off[k]:])
            off[k + 1] = off[k] + m
        if pairs is None:
            kernels.sweep_merged(a, b, off, K, single, upper)
        else:
            upper[np.triu_indices(K, 1)] = -1
            kernels.pairs(a, b, off, pairs[:, 0].copy(), pairs[:, 1].copy(), single, upper)
        if len(self._counted) >= 8:
            self._counted.clear()
        self._counted[key] = (single.copy(), upper.copy())
        return single, upper, self.units(window, rule)


_OPEN: dict[tuple, ReferenceIndex] = {}


def is_index(reference: object) -> bool:
    """Whether `reference` names a reference index: a path ending in .tlx, or a file starting
    with TLXINDEX."""
    if isinstance(reference, ReferenceIndex):
        return True
    if not isinstance(reference, str | os.PathLike):
        return False
    if os.fspath(reference).lower().endswith(SUFFIX):
        return True
    with contextlib.suppress(OSError):
        if os.path.isfile(reference):
            with open(reference, "rb") as fh:
                return fh.read(8) == MAGIC
    return False


def read_index(path: str | os.PathLike | ReferenceIndex) -> ReferenceIndex:
    """The index at `path` (opened once per file version and kept)."""
    if isinstance(path, ReferenceIndex):
        return path
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputFileError(f"{os.fspath(path)}: cannot read the reference index ({exc.strerror})") from None
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if key not in _OPEN:
        _OPEN.clear()
        _OPEN[key] = ReferenceIndex(path)
    return _OPEN[key]



def count_index(reference: Any, targets: Sequence[str], window: int | None, rule: str,
                pairs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """(single, upper joint, units, documents, tokens) of `targets` from the index `reference`
    (only `pairs`, if given: `ReferenceIndex.counts`)."""
    ix = read_index(reference)
    single, upper, units = ix.counts(targets, window, rule, pairs)
    return single, upper, units, ix.documents, ix.tokens
