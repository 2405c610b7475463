"""A reference index (`.tlx`): a reference corpus read once, then any topic words' co-occurrence
counts answered from it without reading the text again (`counts.count` takes its path).

What it stores: the vocabulary (sorted), every document's length, and for every word the sorted
global positions of its occurrences (an inverted index; position = tokens before the document +
position in it), delta + varint coded. From the positions of a few target words every counting
rule of `counts` is answered exactly, for whole documents and for sliding windows of ANY size:
each occurrence at position p of a document of n tokens makes its word present in the window
starts [p - w + 1, p] (clipped to the n - w + 1 starts; `_intervals`), gensim's flags are
simulated from the same positions (`_intervals`, gensim=True: set when a copy enters, unset when
any copy leaves), and the pair counts are the lengths of the overlaps of two words' presence
intervals (`_sweep_merged`, every pair; `_pairs`, only the pairs asked for: those within the
topics, as `coherence` asks, skipping through the longer of two words' intervals); Palmetto's
context windows pair occurrences at most w apart (`_context`). Cost: linear in the occurrences of
the target words (a word such as "the", ~5% of all tokens, costs 5% of the corpus), not in the
corpus.

Format (version 1, little-endian; docs/guide/coherence.md, "A reference index"):
`TLXINDEX`, uint32 version, uint32 0, the sections (8-byte aligned), the header (UTF-8 JSON: how
it was built, and each section's offset, length, dtype and CRC-32), uint64 the header's offset,
`TLXINDEX`. Sections: `postings` (bytes), `vocab` (UTF-8 bytes), `vocab_offsets` (uint64, V + 1),
`postings_offsets` (uint64, V + 1), `word_counts` (uint64, V), `doc_lengths` (int64, D),
`postings_crc` (uint32, V: each word's postings' CRC-32, checked when a query reads them).

Building (`build_index`) streams the corpus in chunks of about CHUNK_CHARS characters: each chunk's
postings (counted in parallel over `workers` processes or on Dask) are kept as files in a work
directory next to the output (`<output>.work/`), each marked with the SHA-256 of its text; an
interrupted build run again reuses every chunk whose text is unchanged. The chunks are then merged
word range by word range (MERGE_POSTINGS at a time) into the output, written atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import os
import shutil
import struct
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from numba import njit

from .. import __version__
from ..corpus import Corpus
from ..datasets import bundled_corpus
from ..errors import InputFileError, MethodError
from ..files.atomic import atomic_path
from ..files.records import parse_json
from ..files.textfile import check_encoding, check_regular, read_lines
from ..util.limits import check_cost, memory_bytes
from ..util.parallel import stream_tasks
from .fingerprint import corpus_digest

MAGIC = b"TLXINDEX"
VERSION = 1
SUFFIX = ".tlx"
RULES = ("exact", "gensim", "context")
CHUNK_CHARS = 4_000_000  # characters of text per build chunk
MERGE_POSTINGS = 8_000_000  # postings merged at a time
CHUNK_BYTES_PER_CHAR = 12.0  # a chunk's peak memory per character (token strings, ids, positions)
WORD_BYTES = 160.0  # memory per distinct word while merging (its string, its place in every chunk)
BUILD_RATE = 1e7  # characters per second per process (19 MB per CPU second: benchmarks/coherence_index.py)
_TAIL = 16
_SECTIONS = {"postings": "u1", "vocab": "u1", "vocab_offsets": "<u8", "postings_offsets": "<u8",
             "word_counts": "<u8", "doc_lengths": "<i8", "postings_crc": "<u4"}


# ---------------------------------------------------------------- varint postings

@njit(cache=True)
def _encode(pos, starts, out):
    """Delta + varint code of each word's positions pos[starts[g]:starts[g+1]] into `out`; returns
    the byte offset each word ends at."""
    ends = np.empty(starts.shape[0] - 1, np.int64)
    o = 0
    for g in range(starts.shape[0] - 1):
        prev = 0
        for i in range(starts[g], starts[g + 1]):
            v = pos[i] - prev
            prev = pos[i]
            while v >= 128:
                out[o] = (v & 127) | 128
                v >>= 7
                o += 1
            out[o] = v
            o += 1
        ends[g] = o
    return ends


@njit(cache=True)
def _decode(buf, count, limit):
    """The `count` positions coded in `buf`, and whether the code is sound: every byte used,
    positions strictly increasing and below `limit`."""
    out = np.empty(count, np.int64)
    o = 0
    prev = 0
    i = 0
    n = buf.shape[0]
    while o < count:
        v = 0
        shift = 0
        while True:
            if i >= n or shift > 56:
                return out, False
            b = buf[i]
            i += 1
            v |= np.int64(b & 127) << shift
            shift += 7
            if b < 128:
                break
        if o > 0 and v == 0:
            return out, False
        prev += v
        if prev >= limit:
            return out, False
        out[o] = prev
        o += 1
    return out, i == n


@njit(cache=True)
def _sound(buf, offsets, counts, limit):
    """The first word whose postings are unsound (`_decode`), or whose positions another word
    also holds (every position must belong to exactly one word), else -1."""
    seen = np.zeros(limit // 8 + 1, np.uint8)
    for g in range(counts.shape[0]):
        pos, ok = _decode(buf[offsets[g] : offsets[g + 1]], counts[g], limit)
        if not ok:
            return g
        for p in pos:
            bit = np.uint8(1 << (p & 7))
            if seen[p >> 3] & bit:
                return g
            seen[p >> 3] |= bit
    return -1


# ---------------------------------------------------------------- counting from positions

@njit(cache=True)
def _doc_of(p, d, starts):
    """The document of global position p, at or after document d (galloping search)."""
    if starts[d + 1] > p:
        return d
    step = 1
    lo = d + 1
    hi = lo + step
    D = starts.shape[0] - 1
    while hi < D and starts[hi] <= p:  # starts[lo] <= p < starts[hi]
        lo = hi
        step *= 2
        hi = lo + step
    hi = min(hi, D)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= p:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True)
def _docs_of(pos, starts):
    """The document of each of a word's occurrences `pos` (global, sorted)."""
    out = np.empty(pos.shape[0], np.int64)
    d = 0
    for i in range(pos.shape[0]):
        d = _doc_of(pos[i], d, starts)
        out[i] = d
    return out


@njit(cache=True)
def _intervals(pos, docs, starts, lengths, window, gensim, a_out, b_out):
    """The window starts (global: document start + local start) in which one word is present, as
    disjoint intervals [a, b); its occurrences `pos` (global, sorted; documents begin at
    `starts`) and their documents `docs`. window 0: whole documents. `gensim`: gensim's flags (a
    word is unset when any copy leaves); otherwise present if any copy is inside. Returns the
    number of intervals written."""
    m = 0
    i = 0
    r = pos.shape[0]
    while i < r:
        d = docs[i]
        j = i
        while j < r and docs[j] == d:
            j += 1
        n = lengths[d]
        base = starts[d]
        w = n if window == 0 or n <= window else window
        last = n - w  # the last window start
        if not gensim:
            ca = -1
            cb = -1
            for t in range(i, j):
                p = pos[t] - base
                a = max(0, p - w + 1)
                b = min(p, last) + 1
                if ca >= 0 and a <= cb:
                    cb = max(cb, b)
                else:
                    if ca >= 0:
                        a_out[m] = base + ca
                        b_out[m] = base + cb
                        m += 1
                    ca = a
                    cb = b
            a_out[m] = base + ca
            b_out[m] = base + cb
            m += 1
        else:
            # enter at step max(0, p - w + 1), leave at step p + 1 (if <= last); leave first on a tie
            e = i
            lv = i
            flag = False
            start = 0
            while e < j or lv < j:
                lp = pos[lv] - base + 1 if lv < j else -1
                if lv < j and lp > last:
                    lv = j  # later copies never leave either
                    continue
                ep = max(0, pos[e] - base - w + 1) if e < j else -1
                if lv < j and (e >= j or lp <= ep):
                    if flag:
                        a_out[m] = base + start
                        b_out[m] = base + lp
                        m += 1
                        flag = False
                    lv += 1
                else:
                    if not flag:
                        flag = True
                        start = ep
                    e += 1
            if flag:
                a_out[m] = base + start
                b_out[m] = base + last + 1
                m += 1
        i = j
    return m


@njit(cache=True)
def _key(a, b, off, fill, s, K):
    """The next event's sort key of stream s (s < K: the leaves of word s; else the enters of word
    s - K): 2 x time (+1 for an enter, so that leaves come first at one time); -1 when done."""
    k = s if s < K else s - K
    i = off[k] + fill[s]
    if i >= off[k + 1]:
        return -1
    return b[i] * 2 if s < K else a[i] * 2 + 1


@njit(cache=True)
def _sweep_merged(a, b, off, K, single, joint):
    """Each word's presence length into `single`, each pair's overlap into the upper triangle of
    `joint`, from every word's intervals a[off[k]:off[k+1]], b[...] (each word's sorted), their
    events taken in time order from a heap of the 2K streams (no sort of all events)."""
    fill = np.zeros(2 * K, np.int64)
    heap_key = np.empty(2 * K, np.int64)
    heap_s = np.empty(2 * K, np.int64)
    n = 0
    for s in range(2 * K):
        key = _key(a, b, off, fill, s, K)
        if key >= 0:
            i = n
            n += 1
            while i > 0 and heap_key[(i - 1) // 2] > key:
                heap_key[i] = heap_key[(i - 1) // 2]
                heap_s[i] = heap_s[(i - 1) // 2]
                i = (i - 1) // 2
            heap_key[i] = key
            heap_s[i] = s
    entered = np.zeros(K, np.int64)
    present = np.empty(K, np.int64)
    where = np.empty(K, np.int64)
    m = 0
    while n > 0:
        key = heap_key[0]
        s = heap_s[0]
        t = key // 2
        if s >= K:
            k = s - K
            entered[k] = t
            where[k] = m
            present[m] = k
            m += 1
        else:
            k = s
            single[k] += t - entered[k]
            last = present[m - 1]
            present[where[k]] = last
            where[last] = where[k]
            m -= 1
            for x in range(m):
                j = present[x]
                v = t - max(entered[k], entered[j])
                if k < j:
                    joint[k, j] += v
                else:
                    joint[j, k] += v
        fill[s] += 1
        key = _key(a, b, off, fill, s, K)
        if key < 0:  # the stream is done: the last entry takes the root
            n -= 1
            key = heap_key[n]
            s = heap_s[n]
        i = 0  # sift down
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and heap_key[c + 1] < heap_key[c]:
                c += 1
            if heap_key[c] >= key:
                break
            heap_key[i] = heap_key[c]
            heap_s[i] = heap_s[c]
            i = c
        if n > 0:
            heap_key[i] = key
            heap_s[i] = s


@njit(cache=True)
def _first_end_after(b, lo, hi, t):
    """The first i in [lo, hi) with b[i] > t (galloping from lo; b sorted), or hi."""
    step = 1
    while lo + step < hi and b[lo + step - 1] <= t:
        lo += step
        step *= 2
    hi = min(hi, lo + step)
    while lo < hi:
        mid = (lo + hi) // 2
        if b[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _overlap(a, b, s0, s1, l0, l1):
    """The total length of the overlaps of two words' disjoint sorted intervals a[s0:s1], b[...]
    (the shorter list) and a[l0:l1] (the longer), skipping ahead in the longer list."""
    total = 0
    j = l0
    for i in range(s0, s1):
        j = _first_end_after(b, j, l1, a[i])  # the longer's first interval ending after a[i]
        k = j
        while k < l1 and a[k] < b[i]:
            total += min(b[i], b[k]) - max(a[i], a[k])
            k += 1
        if k > j:
            j = k - 1  # the last one may reach into the next interval of the shorter list
    return total


@njit(cache=True)
def _pairs(a, b, off, first, second, single, joint):
    """Each word's presence length into `single`, and only the listed pairs' overlaps
    (first[x] < second[x]) into `joint`: cost linear in the intervals of the pairs' shorter words
    (times a logarithm), not in all pairs of the words present together."""
    for k in range(off.shape[0] - 1):
        for i in range(off[k], off[k + 1]):
            single[k] += b[i] - a[i]
    for x in range(first.shape[0]):
        p, q = first[x], second[x]
        if off[p + 1] - off[p] > off[q + 1] - off[q]:
            p, q = q, p
        joint[first[x], second[x]] = _overlap(a, b, off[p], off[p + 1], off[q], off[q + 1])


@njit(cache=True)
def _context(pos, doc, ids, window, single, joint):
    """Palmetto's context windows over the merged occurrences (sorted by position)."""
    r = pos.shape[0]
    for a in range(r):
        ka = ids[a]
        single[ka] += 1
        for b in range(a + 1, r):
            if pos[b] - pos[a] > window or doc[b] != doc[a]:
                break
            kb = ids[b]
            if ka < kb:
                joint[ka, kb] += 1
            elif kb < ka:
                joint[kb, ka] += 1


# ---------------------------------------------------------------- reading

def _fail(path: str, what: str) -> InputFileError:
    return InputFileError(f"{path}: not a usable tealeaves reference index: {what}")


class ReferenceIndex:
    """An open `.tlx` file: `header` (how it was built), `counts(targets, window, rule)`."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        p = self.path
        check_regular(p, "a reference index")  # memory-mapped: a pipe or device would block or fail
        try:
            size = os.path.getsize(p)
            with open(p, "rb") as fh:
                head = fh.read(16)
                if len(head) < 16 or head[:8] != MAGIC:
                    raise _fail(p, "it does not start with TLXINDEX")
                version = struct.unpack("<I", head[8:12])[0]
                if version != VERSION:
                    raise _fail(p, f"format version {version}; this tealeaves ({__version__}) reads "
                                   f"version {VERSION}")
                if size < 16 + _TAIL:
                    raise _fail(p, f"truncated ({size} bytes)")
                fh.seek(size - _TAIL)
                tail = fh.read(_TAIL)
                if tail[8:] != MAGIC:
                    raise _fail(p, "truncated or damaged (no TLXINDEX at its end)")
                hoff = struct.unpack("<Q", tail[:8])[0]
                if not 16 <= hoff < size - _TAIL:
                    raise _fail(p, f"damaged (header offset {hoff} outside the file)")
                fh.seek(hoff)
                raw = fh.read(size - _TAIL - hoff)
            self.data = np.memmap(p, np.uint8, "r") if size else None
        except OSError as exc:
            raise InputFileError(f"{p}: cannot read the reference index ({exc.strerror or exc})") from None
        try:
            self.header = parse_json(raw.decode("utf-8"), "header")
        except InputFileError as exc:
            raise _fail(p, f"damaged {exc}") from None
        except UnicodeError:
            raise _fail(p, "damaged header (not UTF-8)") from None
        try:
            sections = self.header["sections"]
            self.documents = int(self.header["corpus"]["documents"])
            self.tokens = int(self.header["corpus"]["tokens"])
            self.rules = tuple(self.header["rules"])
        except (UnicodeError, ValueError, KeyError, TypeError) as exc:
            raise _fail(p, f"damaged header ({type(exc).__name__})") from None
        self.arrays: dict[str, np.ndarray] = {}
        for name, dtype in _SECTIONS.items():
            self.arrays[name] = self._section(sections, name, dtype, hoff, check=name != "postings")
        self._check()
        self.starts = np.concatenate([[0], np.cumsum(self.arrays["doc_lengths"])]).astype(np.int64)
        self._cache: dict[str, np.ndarray] = {}
        self._docs: dict[str, np.ndarray] = {}
        self._units: dict[tuple, int] = {}
        self._counted: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def _section(self, sections: Any, name: str, dtype: str, end: int, check: bool) -> np.ndarray:
        try:
            off, length, kind, crc = sections[name]
            off, length, crc = int(off), int(length), int(crc)
        except (KeyError, TypeError, ValueError):
            raise _fail(self.path, f"damaged header (section {name!r})") from None
        item = np.dtype(dtype).itemsize
        if kind != dtype or off < 16 or length < 0 or off + length > end or length % item:
            raise _fail(self.path, f"damaged header (section {name!r} at {off}, {length} bytes, {kind!r})")
        raw = self.data[off : off + length]
        if check and zlib.crc32(raw) != crc:
            raise _fail(self.path, f"damaged (section {name!r} fails its CRC-32)")
        return raw.view(dtype)

    def _check(self) -> None:
        a = self.arrays
        V = a["word_counts"].shape[0]
        for name, blob in (("vocab_offsets", "vocab"), ("postings_offsets", "postings")):
            o = a[name]
            if (o.shape[0] != V + 1 or o[0] != 0 or o[-1] != a[blob].shape[0]
                    or (np.diff(o.astype(np.int64)) < 0).any()):
                raise _fail(self.path, f"damaged ({name} do not fit {blob})")
        if a["postings_crc"].shape[0] != V:
            raise _fail(self.path, "damaged (postings_crc does not fit the vocabulary)")
        if a["doc_lengths"].shape[0] != self.documents or (a["doc_lengths"] < 0).any():
            raise _fail(self.path, "damaged (document lengths)")
        if int(a["doc_lengths"].sum()) != self.tokens or int(a["word_counts"].sum()) != self.tokens:
            raise _fail(self.path, "damaged (tokens do not add up)")

    def verify(self) -> None:
        """Check the postings (reads them all): their CRC-32, and that they decode to what an index
        holds: each word's positions increasing, inside the corpus, as many as its count, and every
        position held by exactly one word."""
        off, length, _, crc = self.header["sections"]["postings"]
        if zlib.crc32(self.data[int(off) : int(off) + int(length)]) != int(crc):
            raise _fail(self.path, "damaged (section 'postings' fails its CRC-32)")
        a = self.arrays
        bad = _sound(np.asarray(a["postings"]), a["postings_offsets"].astype(np.int64),
                     a["word_counts"].astype(np.int64), self.tokens)
        if bad >= 0:
            raise _fail(self.path, f"damaged (the postings of {self.word(bad)!r} do not fit the others)")

    @property
    def content(self) -> str:
        """The SHA-256 of the corpus as coherence hashes it (`fingerprint`), '' if not recorded."""
        value = self.header["corpus"].get("content") if isinstance(self.header["corpus"], dict) else None
        return value if isinstance(value, str) and value.startswith("sha256:") else ""

    @property
    def content_of(self) -> str:
        """What `content` hashes: 'text' or 'arrays' (a Corpus's, `fingerprint.corpus_digest`)."""
        return "arrays" if self.header["corpus"].get("content_of") == "arrays" else "text"

    @property
    def vocab_size(self) -> int:
        return int(self.arrays["word_counts"].shape[0])

    def word(self, g: int) -> str:
        o = self.arrays["vocab_offsets"]
        return bytes(self.arrays["vocab"][int(o[g]) : int(o[g + 1])]).decode("utf-8")

    def lookup(self, word: str) -> int:
        """The word's id, or -1 if the corpus lacks it (binary search of the sorted vocabulary)."""
        key = word.encode("utf-8", "surrogatepass")
        o, v = self.arrays["vocab_offsets"], self.arrays["vocab"]
        lo, hi = 0, self.vocab_size
        while lo < hi:
            mid = (lo + hi) // 2
            if bytes(v[int(o[mid]) : int(o[mid + 1])]) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < self.vocab_size and bytes(v[int(o[lo]) : int(o[lo + 1])]) == key else -1

    def positions(self, word: str) -> np.ndarray:
        """The sorted global positions of `word` (empty if absent)."""
        if word in self._cache:
            return self._cache[word]
        g = self.lookup(word)
        if g < 0:
            out = np.zeros(0, np.int64)
        else:
            o = self.arrays["postings_offsets"]
            raw = np.asarray(self.arrays["postings"][int(o[g]) : int(o[g + 1])])
            out, ok = _decode(raw, int(self.arrays["word_counts"][g]), self.tokens)
            if not ok or zlib.crc32(raw) != int(self.arrays["postings_crc"][g]):
                raise _fail(self.path, f"damaged (the postings of {word!r})")
        if len(self._cache) > 4096:
            self._cache.clear()
            self._docs.clear()
        self._cache[word] = out
        return out

    def documents_of(self, word: str) -> np.ndarray:
        """The document of each occurrence of `word` (as `positions`)."""
        if word not in self._docs:
            self._docs[word] = _docs_of(self.positions(word), self.starts)
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
            _context(allp, np.searchsorted(self.starts, allp, side="right") - 1, ids[order], int(window),
                     single, upper)
            return single, upper, self.units(window, rule)
        w = 0 if window is None else int(min(int(window), 2**62))
        L = np.asarray(self.arrays["doc_lengths"])
        a = np.empty(sum(len(p) for p in pos), np.int64)
        b = np.empty_like(a)
        off = np.zeros(K + 1, np.int64)
        for k, p in enumerate(pos):
            m = _intervals(p, self.documents_of(targets[k]), self.starts, L, w, rule == "gensim",
                           a[off[k]:], b[off[k]:])
            off[k + 1] = off[k] + m
        if pairs is None:
            _sweep_merged(a, b, off, K, single, upper)
        else:
            upper[np.triu_indices(K, 1)] = -1
            _pairs(a, b, off, pairs[:, 0].copy(), pairs[:, 1].copy(), single, upper)
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


# ---------------------------------------------------------------- building

def _source(corpus: Any, encoding: str) -> tuple[str, Iterator[str | list[str]], str]:
    """The corpus's name, its documents (lines of text, or token lists of a bundled corpus) and,
    for a Corpus, its content hash as coherence takes it (`fingerprint.corpus_digest`), else ''."""
    bundled = bundled_corpus(corpus)
    if bundled is not None:
        corpus_obj, name = bundled, str(corpus)
    else:
        corpus_obj, name = corpus, None
    if isinstance(corpus_obj, Corpus):
        if corpus_obj.vocab is None:
            raise MethodError("a Corpus needs a vocabulary to be indexed")
        vocab = corpus_obj.vocab
        return name or "corpus", ([vocab[i] for i in doc] for doc in corpus_obj), corpus_digest(corpus_obj)
    if isinstance(corpus_obj, str | os.PathLike):
        check_encoding(encoding)
        lines = (line for _, line in read_lines(corpus_obj, encoding))
        return os.path.basename(os.fspath(corpus_obj)), lines, ""
    return "documents", (d if isinstance(d, str) else list(d) for d in corpus_obj), ""


def _chunks(docs: Iterable[str | list[str]], chunk_chars: int, whole: Any = None
            ) -> Iterator[tuple[list, str, int]]:
    """Chunks of documents of about `chunk_chars` characters: (documents, SHA-256 of their text,
    UTF-8 bytes); the text of a token list is its tokens joined by spaces, one line (as
    `fingerprint.StreamHash`, which `whole`, a hashlib object, takes of all the text)."""
    chunk: list = []
    h = hashlib.sha256()
    chars = nbytes = 0
    for d in docs:
        text = d if isinstance(d, str) else " ".join(d) + "\n"
        b = text.encode("utf-8", "surrogatepass")
        h.update(b)
        if whole is not None:
            whole.update(b)
        nbytes += len(b)
        chars += len(text)
        chunk.append(d)
        if chars >= chunk_chars:
            yield chunk, h.hexdigest(), nbytes
            chunk, h, chars, nbytes = [], hashlib.sha256(), 0, 0
    if chunk:
        yield chunk, h.hexdigest(), nbytes


def _postings(shared: Any, item: tuple[int, list]) -> tuple:
    """One chunk's postings: (chunk number, its sorted words, occurrences per word, the positions
    grouped by word (uint32, chunk-local, ascending), document lengths)."""
    i, docs = item
    lists = [d.split() if isinstance(d, str) else d for d in docs]
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    ids_of: dict[str, int] = {}
    flat = [ids_of.setdefault(t, len(ids_of)) for doc in lists for t in doc]
    words = list(ids_of)
    order = sorted(range(len(words)), key=words.__getitem__)
    rank = np.empty(len(words), np.int64)
    rank[order] = np.arange(len(words))
    ids = rank[np.asarray(flat, np.int64)] if flat else np.zeros(0, np.int64)
    pos = np.argsort(ids, kind="stable").astype(np.uint32)
    counts = np.bincount(ids, minlength=len(words)).astype(np.int64)
    return i, [words[j] for j in order], counts, pos, lengths


def _chunk_files(work: str, i: int) -> tuple[str, str]:
    return os.path.join(work, f"chunk-{i:06d}.npz"), os.path.join(work, f"chunk-{i:06d}.pos")


def _chunk_check(pos: np.ndarray, words: np.ndarray, counts: np.ndarray, lengths: np.ndarray) -> str:
    """SHA-256 of a chunk's contents: its positions, words, counts and document lengths."""
    h = hashlib.sha256()
    for arr, dtype in ((pos, "<u4"), (words, np.uint8), (counts, "<i8"), (lengths, "<i8")):
        h.update(f"{arr.size}\n".encode())
        h.update(np.ascontiguousarray(arr, dtype=dtype).tobytes())
    return h.hexdigest()


def _save_chunk(work: str, result: tuple, digest: str, nbytes: int) -> None:
    """A chunk's files, each written under a temporary name then renamed; the .npz (its words,
    counts, lengths, text hash and the SHA-256 of all these and the positions) last, so a chunk
    with its .npz is complete, and one whose files changed since is told (`_load_chunk`)."""
    i, words, counts, pos, lengths = result
    meta, posf = _chunk_files(work, i)
    pos = pos.astype("<u4")
    pos.tofile(posf + ".tmp")
    os.replace(posf + ".tmp", posf)
    blob = np.frombuffer("\n".join(words).encode("utf-8", "surrogatepass"), np.uint8)
    with open(meta + ".tmp", "wb") as fh:
        np.savez(fh, words=blob, counts=counts, lengths=lengths, digest=np.array(digest),
                 nbytes=np.array(nbytes), version=np.array(VERSION),
                 check=np.array(_chunk_check(pos, blob, counts, lengths)))
    os.replace(meta + ".tmp", meta)


def _load_chunk(work: str, i: int, digest: str | None = None, check: bool = True) -> dict | None:
    """A chunk's saved postings (its positions file's name), or None if missing, of other text
    (`digest`) or, with `check`, damaged: its files no longer give the SHA-256 recorded with them."""
    meta, posf = _chunk_files(work, i)
    try:
        with np.load(meta, allow_pickle=False) as z:
            if int(z["version"]) != VERSION or (digest is not None and str(z["digest"]) != digest):
                return None
            out = {k: z[k] for k in ("counts", "lengths", "words")}
            out["nbytes"] = int(z["nbytes"])
            recorded = str(z["check"])
        text = out.pop("words")
        if check and _chunk_check(np.fromfile(posf, "<u4"), text, out["counts"], out["lengths"]) != recorded:
            return None
        words = text.tobytes().decode("utf-8", "surrogatepass")
        out["words"] = words.split("\n") if len(out["counts"]) else []
        out["pos"] = posf
        size = os.path.getsize(posf)
    except Exception:  # noqa: BLE001 - any damage: the chunk is counted again
        return None
    if len(out["words"]) != len(out["counts"]) or size != 4 * int(out["counts"].sum()):
        return None
    return out


@njit(cache=True)
def _scatter(pos, counts, gids, g0, base, out, fill):
    """Place a chunk's positions (grouped by word) at their word's place in `out` (fill[g - g0]:
    the next free slot of word g), adding the chunk's first global position `base`."""
    i = 0
    for x in range(counts.shape[0]):
        g = gids[x] - g0
        for _ in range(counts[x]):
            out[fill[g]] = np.int64(pos[i]) + base
            fill[g] += 1
            i += 1


def build_estimate(nbytes: float, workers: int, chunk_chars: int = CHUNK_CHARS) -> dict[str, float]:
    """Memory (bytes) and seconds a build of `nbytes` of text needs: chunks in flight, the merge's
    word range, and the vocabulary (Heaps' law, 40 x tokens^0.6, tokens ~ bytes / 6)."""
    w = max(int(workers), 1)
    vocab = 40.0 * (max(nbytes, 1.0) / 6.0) ** 0.6
    memory = (CHUNK_BYTES_PER_CHAR * chunk_chars * (2 * w + 1) + 24.0 * MERGE_POSTINGS
              + WORD_BYTES * vocab + 100e6)
    return {"memory": memory, "seconds": nbytes / (BUILD_RATE * w), "vocabulary": vocab}


def _corpus_bytes(corpus: Any) -> float:
    if isinstance(corpus, str | os.PathLike) and bundled_corpus(corpus) is None:
        with contextlib.suppress(OSError):
            return float(os.path.getsize(corpus))
    return 0.0


def build_index(corpus: Any, output: str | os.PathLike, workers: int = 1, encoding: str = "utf-8",
                max_memory: float | None = None, chunk_chars: int = CHUNK_CHARS, keep_work: bool = False,
                progress: Any = None) -> dict[str, Any]:
    """Index `corpus` (a text file, one document per line, whitespace tokens as coherence reads
    it; `sotu:train`; a Corpus; or an iterable of documents) into `output` (.tlx), in one streamed
    pass. Memory is estimated before any work (`build_estimate`) and refused above `max_memory` GB
    (default: half this machine). The chunks are kept in `<output>.work/` until the index is
    written, so a build run again after an interruption counts only what is missing. Returns the
    header. $SOURCE_DATE_EPOCH, if set, is the date recorded (reproducible builds)."""
    output = os.fspath(output)
    nbytes = _corpus_bytes(corpus)
    est = build_estimate(nbytes, workers, chunk_chars)
    limit = memory_bytes() / 2 if max_memory is None else float(max_memory) * 2**30
    how = (f"{nbytes / 1e6:,.0f} MB of text: {2 * max(int(workers), 1) + 1} chunks of {chunk_chars:,} "
           f"characters in flight, {MERGE_POSTINGS:,} postings merged at a time, ~{est['vocabulary']:,.0f} "
           "distinct words")
    if max_memory is not None and est["memory"] > limit:
        raise MethodError(f"indexing needs about {est['memory'] / 2**30:.1f} GiB ({how}); "
                          f"--max-memory is {max_memory:g} GB")
    check_cost("indexing the reference", est["memory"], how=how)
    name, docs, content = _source(corpus, encoding)
    work = output + ".work"
    os.makedirs(work, exist_ok=True)
    total = hashlib.sha256()
    whole = hashlib.sha256()
    meta: list[tuple[str, int]] = []

    def todo() -> Iterator[tuple[int, list]]:
        for i, (chunk, digest, size) in enumerate(_chunks(docs, chunk_chars, whole)):
            total.update(digest.encode())
            meta.append((digest, size))
            if _load_chunk(work, i, digest) is None:
                yield i, chunk

    try:
        for result in stream_tasks(_postings, None, todo(), workers, seconds=est["seconds"],
                                   what="indexing the reference"):
            _save_chunk(work, result, meta[result[0]][0], meta[result[0]][1])
            if progress:
                progress(result[0])
    except BaseException:
        with contextlib.suppress(OSError):
            os.rmdir(work)  # only if no chunk was finished: those are kept for the next run
        raise
    chunks = [_load_chunk(work, i, d, check=False) for i, (d, _) in enumerate(meta)]  # checked above
    if any(c is None for c in chunks):
        raise InputFileError(f"{work}: a chunk file vanished while indexing")
    created = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    info = {"name": name, "bytes": sum(s for _, s in meta), "sha256": total.hexdigest(),
            "content": content or "sha256:" + whole.hexdigest(),
            "content_of": "arrays" if content else "text",
            "documents": sum(len(c["lengths"]) for c in chunks),
            "tokens": sum(int(c["counts"].sum()) for c in chunks), "chunk_chars": chunk_chars}
    header = _merge(chunks, output, info, created)
    if not keep_work:
        shutil.rmtree(work, ignore_errors=True)
    return header


def _keyed(words: list[str], ci: int) -> Iterator[tuple[str, int, int]]:
    return ((w, ci, li) for li, w in enumerate(words))


def _merge(chunks: list[dict], output: str, info: dict, created: int) -> dict[str, Any]:
    """Merge the chunks' postings word range by word range into `output` (atomically)."""
    gids = [np.empty(len(c["words"]), np.int64) for c in chunks]
    vocab: list[bytes] = []
    merged = heapq.merge(*[_keyed(c["words"], ci) for ci, c in enumerate(chunks)])
    for w, ci, li in merged:
        b = w.encode("utf-8", "surrogatepass")
        if not vocab or vocab[-1] != b:
            vocab.append(b)
        gids[ci][li] = len(vocab) - 1
    V = len(vocab)
    totals = np.zeros(V, np.int64)
    for c, g in zip(chunks, gids, strict=True):
        np.add.at(totals, g, c["counts"])
    bases = np.concatenate([[0], np.cumsum([int(c["counts"].sum()) for c in chunks])])
    cstart = [np.concatenate([[0], np.cumsum(c["counts"])]) for c in chunks]
    sections: dict[str, list] = {}
    with atomic_path(output) as tmp, open(tmp, "wb") as fh:
        fh.write(MAGIC + struct.pack("<II", VERSION, 0))
        post_ends = np.zeros(V + 1, np.uint64)
        word_crc = np.zeros(V, "<u4")
        crc, start, written = 0, fh.tell(), 0
        g0 = 0
        while g0 < V:
            cum = np.cumsum(totals[g0:])
            g1 = g0 + max(1, int(np.searchsorted(cum, MERGE_POSTINGS, side="right")))
            g1 = min(g1, V)
            n = int(totals[g0:g1].sum())
            out = np.empty(n, np.int64)
            fill = np.concatenate([[0], np.cumsum(totals[g0:g1])[:-1]]).astype(np.int64)
            starts = np.concatenate([fill, [n]]).astype(np.int64)
            for ci, c in enumerate(chunks):
                lo, hi = np.searchsorted(gids[ci], [g0, g1])
                if hi > lo:
                    part = np.fromfile(c["pos"], "<u4", int(cstart[ci][hi] - cstart[ci][lo]),
                                       offset=4 * int(cstart[ci][lo]))  # read, not mapped: bounded memory
                    _scatter(part, c["counts"][lo:hi],
                             gids[ci][lo:hi], g0, int(bases[ci]), out, fill)
            buf = np.empty(10 * n, np.uint8)
            ends = _encode(out, starts, buf)
            used = int(ends[-1]) if len(ends) else 0
            fh.write(buf[:used].tobytes())
            crc = zlib.crc32(buf[:used], crc)
            view = memoryview(buf)
            lo = 0
            for x, hi in enumerate(ends.tolist()):
                word_crc[g0 + x] = zlib.crc32(view[lo:hi])
                lo = hi
            post_ends[g0 + 1 : g1 + 1] = ends + written
            written += used
            g0 = g1
        sections["postings"] = [start, written, "u1", crc]
        vocab_blob = b"".join(vocab)
        voff = np.concatenate([[0], np.cumsum([len(v) for v in vocab])]).astype("<u8")
        lengths = np.concatenate([c["lengths"] for c in chunks]).astype("<i8") if chunks else \
            np.zeros(0, "<i8")
        for name, arr in (("vocab", np.frombuffer(vocab_blob, np.uint8)), ("vocab_offsets", voff),
                          ("postings_offsets", post_ends.astype("<u8")),
                          ("word_counts", totals.astype("<u8")), ("doc_lengths", lengths),
                          ("postings_crc", word_crc)):
            fh.write(b"\0" * (-fh.tell() % 8))
            raw = arr.tobytes()
            sections[name] = [fh.tell(), len(raw), _SECTIONS[name], zlib.crc32(raw)]
            fh.write(raw)
        header = {"format": "tealeaves reference index", "version": VERSION, "tealeaves": __version__,
                  "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
                  "corpus": {k: info[k] for k in ("name", "bytes", "sha256", "content", "content_of",
                                                  "documents", "tokens")},
                  "tokenizer": "whitespace (str.split), as coherence reads a reference", "lowercase": False,
                  "vocabulary": V, "rules": list(RULES), "windows": "any (positions stored)",
                  "hash": "corpus.sha256: SHA-256 of the chunks' SHA-256 hex digests, each of the UTF-8 "
                          f"text of {info['chunk_chars']:,}-character chunks of whole documents; "
                          "corpus.content: the SHA-256 a coherence fingerprint takes of the same "
                          "reference (of its text, UTF-8; of a Corpus's arrays)",
                  "sections": sections}
        hoff = fh.tell()
        fh.write(json.dumps(header, indent=1).encode("utf-8"))
        fh.write(struct.pack("<Q", hoff) + MAGIC)
    return header


def count_index(reference: Any, targets: Sequence[str], window: int | None, rule: str,
                pairs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """(single, upper joint, units, documents, tokens) of `targets` from the index `reference`
    (only `pairs`, if given: `ReferenceIndex.counts`)."""
    ix = read_index(reference)
    single, upper, units = ix.counts(targets, window, rule, pairs)
    return single, upper, units, ix.documents, ix.tokens
