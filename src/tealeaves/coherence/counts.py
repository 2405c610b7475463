"""Co-occurrence counts of a few target words over a reference corpus.

Two ways of cutting the corpus into units:
- `window=None`: each document is one unit (boolean document counts, as UMass coherence uses);
- `window=w`: sliding windows of w tokens; a document of n tokens gives max(1, n - w + 1)
  windows (a shorter document is one window, an empty one too, as gensim and Palmetto count it:
  blank lines lower every word's probability, so `Counts.empty` counts them and the fingerprint
  says how many). A window contains a word if *any* copy of it is
  inside. gensim's sliding-window accumulator instead marks a word absent as soon as one copy
  leaves the window, even if another copy is still inside, and so undercounts words (and pairs)
  that repeat within a window; the counts here do not, so they agree with gensim only on text
  where no target word repeats inside a window. `rule="gensim"` counts as gensim does
  (`_count_gensim`), for `coherence(..., convention="gensim")`;
  `rule="context"` counts Palmetto's context windows (`_count_context`, C_A).
Counts: `single[k]` units containing target k, `joint[a, b]` units containing both (symmetric;
the diagonal equals `single`), `units` the number of units.

The reference is read in chunks of documents (a path is streamed line by line, so a corpus
larger than memory works) and chunks can be counted in parallel processes; integer counts add
up, so the result is the same for any chunking and any number of processes.
"""

from __future__ import annotations

import operator
import os
import stat
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from numba import njit

from ..corpus import Corpus
from ..datasets import bundled_corpus
from ..errors import InvalidCorpusError
from ..files.textfile import check_encoding, is_pipe, read_lines
from ..util.limits import check_memory
from ..util.parallel import stream_tasks
from . import index
from .fingerprint import StreamHash, corpus_digest

CHUNK_DOCS = 500  # documents per chunk: bounds memory (ids of the chunk only)
COUNT_BYTES_RATE = 2e7  # bytes of reference text counted per second by one process (28-55 MB/s measured)
CORPUS_CHUNK_TOKENS = 1 << 16


@dataclass
class Counts:
    targets: tuple[str, ...]
    single: np.ndarray  # (K,) int64
    joint: np.ndarray  # (K, K) int64, symmetric, diagonal = single
    units: int
    window: int | None
    documents: int = 0
    tokens: int = 0
    rule: str = "exact"  # how windows were counted: "exact" or "gensim"
    digest: str = ""  # the reference's content hash, taken while counting (`fingerprint`)
    partial: bool = False  # only the pairs within `count`'s groups counted; the others' joint is -1
    digest_of: str = ""  # an index's: what `digest` hashes ("text" or "arrays"; `fingerprint`)
    empty: int = 0  # documents with no token (blank lines): each is still one unit, said in the fingerprint

    def index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.targets)}

    def covers(self, groups: Sequence[Sequence[str]]) -> bool:
        """Whether these counts hold every word of `groups` and every pair within a group."""
        idx = self.index()
        if not all(w in idx for g in groups for w in g):
            return False
        if not self.partial:
            return True
        return all(self.joint[idx[u], idx[v]] >= 0 for g in groups for i, u in enumerate(g) for v in g[:i])

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.targets, self.single + other.single, self.joint + other.joint,
                      self.units + other.units, self.window, self.documents + other.documents,
                      self.tokens + other.tokens, self.rule, self.digest, empty=self.empty + other.empty)


@njit(inline="always")
def _tally(present, m, single, joint):
    """One unit (a window or a document) of the sliding-window kernels: each of the `m` targets
    present in it counted once, and each pair of them once (upper triangle of `joint`)."""
    for a in range(m):
        pa = present[a]
        single[pa] += 1
        for b in range(a + 1, m):
            pb = present[b]
            if pa < pb:
                joint[pa, pb] += 1
            else:
                joint[pb, pa] += 1


@njit(cache=True)
def _count(ids, offsets, window, single, joint):
    """Add the counts of one chunk into `single` and the upper triangle of `joint`; return the
    number of units. ids: target index per token (int32, -1 for other words); window 0 = whole
    documents."""
    K = single.shape[0]
    cnt = np.zeros(K, np.int64)
    present = np.empty(K, np.int64)
    pos = np.empty(K, np.int64)
    units = 0
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        n = hi - lo
        w = n if window == 0 or n <= window else window
        m = 0
        for i in range(lo, lo + w):
            k = ids[i]
            if k >= 0:
                cnt[k] += 1
                if cnt[k] == 1:
                    pos[k] = m
                    present[m] = k
                    m += 1
        for s in range(max(1, n - w + 1)):
            if s > 0:
                # enter/leave are written out: as njit helpers the whole count ran 2x slower (numba 0.68)
                k = ids[lo + s - 1]  # leaves the window
                if k >= 0:
                    cnt[k] -= 1
                    if cnt[k] == 0:
                        last = present[m - 1]
                        present[pos[k]] = last
                        pos[last] = pos[k]
                        m -= 1
                k = ids[lo + s + w - 1]  # enters
                if k >= 0:
                    cnt[k] += 1
                    if cnt[k] == 1:
                        pos[k] = m
                        present[m] = k
                        m += 1
            units += 1
            _tally(present, m, single, joint)
        for i in range(max(lo, hi - w), hi):  # clear what is left
            k = ids[i]
            if k >= 0:
                cnt[k] = 0
    return units


def _window_arg(window: int | None) -> int:
    """The kernel's window: 0 for whole documents; a window longer than any document is the whole
    document, so a huge one (2**63) is capped where the kernel's int64 arithmetic is safe."""
    return 0 if window is None else int(min(int(window), 2**62))


def check_counts_memory(targets: int, copies: int = 3) -> None:
    """Refuse, before counting, a targets x targets co-occurrence matrix that would not fit."""
    check_memory(f"co-occurrence counts of {targets:,} distinct topic words", 8.0 * copies * targets**2,
                 how=f"{copies:,} int64 {targets:,} x {targets:,} matrices")


def _finish(single: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The symmetric joint matrix from its upper triangle, with single counts on the diagonal."""
    full = upper + upper.T
    full[np.diag_indices_from(full)] = single
    return full


@njit(cache=True)
def _count_gensim(ids, offsets, window, single, joint):
    """gensim's boolean sliding-window count of one chunk, added into `single` and the upper
    triangle of `joint`; returns the number of units. Same arguments as `counts._count`."""
    K = single.shape[0]
    flag = np.zeros(K, np.bool_)
    present = np.empty(K, np.int64)
    pos = np.empty(K, np.int64)
    units = 0
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        n = hi - lo
        w = n if window == 0 or n <= window else window
        m = 0
        for i in range(lo, lo + w):  # the first window: every word in it
            k = ids[i]
            if k >= 0 and not flag[k]:
                flag[k] = True
                pos[k] = m
                present[m] = k
                m += 1
        for s in range(max(1, n - w + 1)):
            if s > 0:
                k = ids[lo + s - 1]  # the token that left: its word is unset, other copies or not
                if k >= 0 and flag[k]:
                    flag[k] = False
                    last = present[m - 1]
                    present[pos[k]] = last
                    pos[last] = pos[k]
                    m -= 1
                k = ids[lo + s + w - 1]  # the token that entered
                if k >= 0 and not flag[k]:
                    flag[k] = True
                    pos[k] = m
                    present[m] = k
                    m += 1
            units += 1
            _tally(present, m, single, joint)
        for a in range(m):
            flag[present[a]] = False
    return units


@njit(cache=True)
def _count_context(ids, offsets, window, single, joint):
    """Palmetto's context-window counts of one chunk, added into `single` (occurrences) and the
    upper triangle of `joint` (pairs of occurrences of two different targets at most `window`
    tokens apart); returns the chunk's N: the sum over documents of n - (window - 1)."""
    units = 0
    pos = np.empty(ids.shape[0], np.int64)
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        units += (hi - lo) - (window - 1)
        m = 0
        for i in range(lo, hi):
            if ids[i] >= 0:
                pos[m] = i
                m += 1
        for a in range(m):
            ka = ids[pos[a]]
            single[ka] += 1
            for b in range(a + 1, m):
                if pos[b] - pos[a] > window:
                    break
                kb = ids[pos[b]]
                if ka < kb:
                    joint[ka, kb] += 1
                elif kb < ka:
                    joint[kb, ka] += 1
    return units


RULES = ("exact", "gensim", "context")


def _kernel(rule: str):
    """The counting kernel of a rule: "exact" (a word is in a window if any copy is), "gensim"
    (gensim's boolean sliding window, `gensim_convention`) or "context" (Palmetto's context
    windows, `palmetto`). Whole documents count alike under exact and gensim."""
    if rule == "gensim":
        return _count_gensim
    if rule == "context":
        return _count_context
    return _count


def count_arrays(ids: np.ndarray, offsets: np.ndarray, targets: Sequence[str], window: int | None,
                 rule: str = "exact") -> Counts:
    single = np.zeros(len(targets), np.int64)
    upper = np.zeros((len(targets), len(targets)), np.int64)
    units = _kernel(rule)(np.asarray(ids, np.int32), np.asarray(offsets, np.int64),
                          _window_arg(window), single, upper)
    return Counts(tuple(targets), single, _finish(single, upper), int(units), window,
                  int(len(offsets) - 1), int(len(ids)), rule, empty=_empty(offsets))


def _empty(offsets: np.ndarray) -> int:
    """How many documents the offsets give no token."""
    return int((np.diff(np.asarray(offsets, np.int64)) == 0).sum())


def _count_texts(shared, texts: list) -> Counts:
    """Count a chunk of documents given as strings (one per line) or token lists. Whole-document
    counts need only each document's set of targets (a C-level set intersection); windows need
    every token's target index, built with one `np.fromiter` over the chunk."""
    targets, window, rule = shared
    lists = [doc.split() if isinstance(doc, str) else doc for doc in texts]
    if window is None:
        index = {w: i for i, w in enumerate(targets)}
        keys = index.keys()
        present = [[index[w] for w in keys & set(doc)] for doc in lists]
        lengths = np.fromiter(map(len, present), dtype=np.int64, count=len(present))
        ids = np.fromiter(chain.from_iterable(present), dtype=np.int32, count=int(lengths.sum()))
        c = count_arrays(ids, np.concatenate([[0], np.cumsum(lengths)]), targets, None, rule)
        c.tokens = sum(map(len, lists))
        c.empty = sum(1 for doc in lists if not doc)
        return c
    index = defaultdict(lambda: -1, {w: i for i, w in enumerate(targets)})
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    ids = np.fromiter(map(index.__getitem__, chain.from_iterable(lists)), dtype=np.int32,
                      count=int(lengths.sum()))
    return count_arrays(ids, np.concatenate([[0], np.cumsum(lengths)]), targets, window, rule)


def _chunks(reference, chunk_docs: int, encoding: str = "utf-8",
            hasher: StreamHash | None = None) -> Iterator[list]:
    """Chunks of documents; `hasher` sees every document as it is read (the content hash)."""
    update = hasher.update if hasher is not None else (lambda doc: None)
    if isinstance(reference, str | os.PathLike):
        chunk: list = []
        for _, line in read_lines(reference, encoding):
            update(line)
            chunk.append(line)
            if len(chunk) >= chunk_docs:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
        return
    chunk = []
    for doc in reference:
        chunk.append(doc if isinstance(doc, str | list | tuple) else list(doc))
        update(chunk[-1])
        if len(chunk) >= chunk_docs:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _count_seconds(reference: object) -> float | None:
    """Estimated seconds to count a reference file in one process (None: not a regular file)."""
    if not isinstance(reference, str | os.PathLike):
        return None
    try:
        st = os.stat(reference)
    except OSError:
        return None  # the reader says what is wrong
    return st.st_size / COUNT_BYTES_RATE if stat.S_ISREG(st.st_mode) else None


def group_pairs(targets: Sequence[str], groups: Sequence[Sequence[str]]) -> np.ndarray:
    """The distinct pairs (i < j, target indices) of two different words within a group."""
    idx = {w: i for i, w in enumerate(targets)}
    pairs = {(min(idx[u], idx[v]), max(idx[u], idx[v])) for g in groups for u in g for v in g
             if u in idx and v in idx and u != v}
    return np.array(sorted(pairs), np.int64).reshape(-1, 2)


def _from_index(reference, targets: tuple[str, ...], window: int | None, rule: str,
                groups: Sequence[Sequence[str]] | None = None) -> Counts:
    """Counts answered by a reference index (`index.py`): the same numbers as counting its text;
    with `groups`, only the pairs within them."""
    if rule not in RULES:
        raise InvalidCorpusError(f"unknown counting rule {rule!r} (known: {', '.join(RULES)})")
    if rule == "context" and window is None:
        raise InvalidCorpusError("context-window counts need a window")
    if window is not None and (not isinstance(window, int | np.integer) or window < 1):
        raise InvalidCorpusError(f"window must be a positive integer, got {window!r}")
    check_counts_memory(len(targets))
    pairs = None if groups is None or rule == "context" else group_pairs(targets, groups)
    single, upper, units, documents, tokens = index.count_index(reference, targets, window, rule, pairs)
    idx = index.read_index(reference)
    return Counts(targets, single, _finish(single, upper), units, window, documents, tokens, rule,
                  idx.content, partial=pairs is not None, digest_of=idx.content_of,
                  empty=int((np.asarray(idx.arrays["doc_lengths"]) == 0).sum()))


def read_once(reference: Any, encoding: str = "utf-8") -> Any:
    """`reference`, or, when it is a pipe (`<(zcat ref.gz)`, `/dev/stdin`), its text read once into a
    Corpus: every measure and window counts the same documents, where the pipe yields them once."""
    if isinstance(reference, str | os.PathLike) and is_pipe(reference) and not index.is_index(reference):
        # (a pipe named as an index is refused by the index reader, never opened here: it would wait)
        from ..datasets import read_corpus

        return read_corpus(reference, format="text", encoding=encoding)
    return reference


def count(reference: Corpus | str | os.PathLike | Iterable[Sequence[str]], targets: Sequence[str],
          window: int | None = None, workers: int = 1, chunk_docs: int = CHUNK_DOCS,
          encoding: str = "utf-8", rule: str = "exact", groups: Sequence[Sequence[str]] | None = None
          ) -> Counts:
    """Counts of `targets` in `reference`: a `Corpus` (with a vocabulary), a path to a text file
    (one document per line, whitespace tokens, in `encoding`; `sotu:train` names the bundled
    training paragraphs), a reference index (`.tlx`, `index.build_index`: answered from it) or an
    iterable of token lists / strings. `rule`: "exact", "gensim"
    or "context" (how windows are counted; see the module docstring). `groups` (the topics): the
    pairs needed are those within a group; an index then counts only those (`Counts.partial`:
    the other pairs' joint is -1), the text is counted whole either way."""
    targets = tuple(targets)
    if index.is_index(reference):
        return _from_index(reference, targets, window, rule, groups)
    if (bundled := bundled_corpus(reference)) is not None:  # sotu:train, sotu:heldout
        reference = bundled
    check_encoding(encoding)
    if rule not in RULES:
        raise InvalidCorpusError(f"unknown counting rule {rule!r} (known: {', '.join(RULES)})")
    if rule == "context" and window is None:
        raise InvalidCorpusError("context-window counts need a window")
    kernel = _kernel(rule)
    if window is not None and (not isinstance(window, int | np.integer) or window < 1):
        raise InvalidCorpusError(f"window must be a positive integer, got {window!r}")
    check_counts_memory(len(targets), 3 + (0 if isinstance(reference, Corpus) else 2 * max(int(workers), 1)))
    if isinstance(reference, Corpus):
        if reference.vocab is None:
            raise InvalidCorpusError("a reference Corpus needs a vocabulary to find the topic words")
        lookup = np.full(len(reference.vocab), -1, np.int32)
        pos = {w: i for i, w in enumerate(reference.vocab)}
        for k, t in enumerate(targets):
            if t in pos:
                lookup[pos[t]] = k
        off = reference.offsets
        single = np.zeros(len(targets), np.int64)
        upper = np.zeros((len(targets), len(targets)), np.int64)
        units = 0
        d = 0
        while d < len(reference):  # slices of about CORPUS_CHUNK_TOKENS tokens, counted in place
            e = max(d + 1, int(np.searchsorted(off, off[d] + CORPUS_CHUNK_TOKENS, side="right")) - 1)
            e = min(e, len(reference))
            units += kernel(lookup[reference.words[off[d] : off[e]]], off[d : e + 1] - off[d],
                            _window_arg(window), single, upper)
            d = e
        return Counts(targets, single, _finish(single, upper), units, window, len(reference),
                      reference.num_tokens, rule, corpus_digest(reference), empty=_empty(off))
    total = Counts(targets, np.zeros(len(targets), np.int64), np.zeros((len(targets),) * 2, np.int64),
                   0, window, rule=rule)
    hasher = StreamHash()
    chunks = _chunks(reference, chunk_docs, encoding, hasher)
    for part in stream_tasks(_count_texts, (targets, window, rule), chunks,
                             workers, combine=operator.add, seconds=_count_seconds(reference),
                             what="coherence counting"):
        total = total + part
    total.digest = hasher.hexdigest()
    return total
