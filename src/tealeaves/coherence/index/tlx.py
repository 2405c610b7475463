"""The reference index's file (`.tlx`): written (`TlxWriter`), opened and checked (`TlxFile`).

Format (version 1, little-endian; docs/guide/coherence.md, "A reference index"):
`TLXINDEX`, uint32 version, uint32 0, the sections (8-byte aligned), the header (UTF-8 JSON: how
it was built, and each section's offset, length, dtype and CRC-32), uint64 the header's offset,
`TLXINDEX`. Sections: `postings` (bytes), `vocab` (UTF-8 bytes), `vocab_offsets` (uint64, V + 1),
`postings_offsets` (uint64, V + 1), `word_counts` (uint64, V), `doc_lengths` (int64, D),
`postings_crc` (uint32, V: each word's postings' CRC-32, checked when a query reads them).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from typing import Any, BinaryIO

import numpy as np

from ... import __version__
from ...errors import BadValueError, InputFileError, shorten
from ...files.records import parse_json, strict_int
from ...files.textfile import check_regular
from . import kernels

MAGIC = b"TLXINDEX"
VERSION = 1
SUFFIX = ".tlx"
RULES = ("exact", "gensim", "context")  # the counting rules an index answers
_TAIL = 16
SECTIONS = {"postings": "u1", "vocab": "u1", "vocab_offsets": "<u8", "postings_offsets": "<u8",
            "word_counts": "<u8", "doc_lengths": "<i8", "postings_crc": "<u4"}


def fail(path: str, what: str) -> InputFileError:
    return InputFileError(f"{path}: not a usable tealeaves reference index: {what}")


class TlxFile:
    """An open `.tlx` file, memory-mapped: its `header`, its sections (`arrays`, each checked
    against its CRC-32 but the postings, whose words are checked as they are read), `documents`,
    `tokens`, the `rules` it answers; a word's id (`lookup`) and positions (`postings`)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        p = self.path
        check_regular(p, "a reference index")  # memory-mapped: a pipe or device would block or fail
        try:
            size = os.path.getsize(p)
            with open(p, "rb") as fh:
                head = fh.read(16)
                if len(head) < 16 or head[:8] != MAGIC:
                    raise fail(p, "it does not start with TLXINDEX")
                version = struct.unpack("<I", head[8:12])[0]
                if version != VERSION:
                    raise fail(p, f"format version {version}; this tealeaves ({__version__}) reads "
                                  f"version {VERSION}")
                if size < 16 + _TAIL:
                    raise fail(p, f"truncated ({size} bytes)")
                fh.seek(size - _TAIL)
                tail = fh.read(_TAIL)
                if tail[8:] != MAGIC:
                    raise fail(p, "truncated or damaged (no TLXINDEX at its end)")
                hoff = struct.unpack("<Q", tail[:8])[0]
                if not 16 <= hoff < size - _TAIL:
                    raise fail(p, f"damaged (header offset {hoff} outside the file)")
                fh.seek(hoff)
                raw = fh.read(size - _TAIL - hoff)
            self.data = np.memmap(p, np.uint8, "r") if size else None
        except OSError as exc:
            raise InputFileError(f"{p}: cannot read the reference index ({exc.strerror or exc})") from None
        try:
            self.header = parse_json(raw.decode("utf-8"), "header")
        except InputFileError as exc:
            raise fail(p, f"damaged {exc}") from None
        except UnicodeError:
            raise fail(p, "damaged header (not UTF-8)") from None
        try:
            sections = self.header["sections"]
            corpus = self.header["corpus"]
            self.documents = strict_int(corpus["documents"], "header", "corpus.documents", low=0)
            self.tokens = strict_int(corpus["tokens"], "header", "corpus.tokens", low=0)
            rules = self.header["rules"]
        except BadValueError as exc:
            raise fail(p, f"damaged {exc}") from None
        except (KeyError, TypeError) as exc:
            raise fail(p, f"damaged header ({type(exc).__name__})") from None
        if (not isinstance(rules, list) or not all(isinstance(r, str) and r in RULES for r in rules)
                or len(set(rules)) != len(rules)):
            raise fail(p, f"damaged header (rules {shorten(repr(rules))}; known: {', '.join(RULES)})")
        self.rules = tuple(rules)
        self.arrays: dict[str, np.ndarray] = {}
        for name, dtype in SECTIONS.items():
            self.arrays[name] = self._section(sections, name, dtype, hoff, check=name != "postings")
        self._check()

    def _section(self, sections: Any, name: str, dtype: str, end: int, check: bool) -> np.ndarray:
        try:
            off, length, kind, crc = sections[name]
            off, length, crc = int(off), int(length), int(crc)
        except (KeyError, TypeError, ValueError):
            raise fail(self.path, f"damaged header (section {name!r})") from None
        item = np.dtype(dtype).itemsize
        if kind != dtype or off < 16 or length < 0 or off + length > end or length % item:
            raise fail(self.path, f"damaged header (section {name!r} at {off}, {length} bytes, {kind!r})")
        raw = self.data[off : off + length]
        if check and zlib.crc32(raw) != crc:
            raise fail(self.path, f"damaged (section {name!r} fails its CRC-32)")
        return raw.view(dtype)

    def _check(self) -> None:
        """What the sections hold, checked against each other and against what the file can hold
        (the checksums say only that nothing changed since they were taken): offsets that fit
        their sections; a vocabulary of UTF-8 words in strictly increasing byte order (`lookup`
        is a binary search); each word's count at least 1 and at most the bytes of its postings
        (a position takes 1 to 10 bytes), so the counts add up to at most the postings' size and
        never wrap; the tokens their sum; each document's length at most the tokens, and their
        exact sum the tokens."""
        a = self.arrays
        V = a["word_counts"].shape[0]
        for name, blob in (("vocab_offsets", "vocab"), ("postings_offsets", "postings")):
            o = a[name]
            if o.shape[0] != V + 1 or o[0] != 0 or o[-1] != a[blob].shape[0] or (o[1:] < o[:-1]).any():
                raise fail(self.path, f"damaged ({name} do not fit {blob})")
        if a["postings_crc"].shape[0] != V:
            raise fail(self.path, "damaged (postings_crc does not fit the vocabulary)")
        try:
            if a["vocab"].size and a["vocab"].max() >= 128:  # ASCII is UTF-8
                bytes(a["vocab"]).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise fail(self.path, f"damaged (the vocabulary is not UTF-8: byte {exc.start:,})") from None
        g, kind = kernels.unsorted(np.asarray(a["vocab"]), a["vocab_offsets"].astype(np.int64))
        if kind == 2:
            raise fail(self.path, f"damaged (word {g:,} of the vocabulary starts inside a UTF-8 character)")
        if kind == 1:
            this, before = self.word(g), self.word(g - 1)
            order = f"{this!r} twice" if this == before else f"{this!r} after {before!r}"
            raise fail(self.path, f"damaged (the vocabulary is not in order: {order})")
        counts, offsets = a["word_counts"], a["postings_offsets"]
        g = kernels.miscounted(counts, offsets)
        if g >= 0:
            raise fail(self.path, f"damaged (word {self.word(g)!r} declares {int(counts[g]):,} occurrences "
                                  f"in {int(offsets[g + 1] - offsets[g]):,} bytes of postings)")
        if int(counts.sum()) != self.tokens:  # exact: at most the postings' size
            raise fail(self.path, "damaged (tokens do not add up)")
        lengths = a["doc_lengths"]
        if lengths.shape[0] != self.documents:
            raise fail(self.path, "damaged (document lengths: as many as the documents)")
        if lengths.size and (lengths.min() < 0 or lengths.max() > self.tokens):
            d = int(np.flatnonzero((lengths < 0) | (lengths > self.tokens))[0])
            raise fail(self.path, f"damaged (document lengths: document {d:,} of {int(lengths[d]):,} tokens, "
                                  f"the corpus {self.tokens:,})")
        step = max(1, 2**62 // max(self.tokens, 1))  # blocks whose int64 sums cannot wrap
        if sum(int(lengths[i : i + step].sum()) for i in range(0, lengths.size, step)) != self.tokens:
            raise fail(self.path, "damaged (document lengths do not add up to the tokens)")

    def verify(self) -> None:
        """Check the postings (reads them all): their CRC-32, and that they decode to what an index
        holds: each word's positions increasing, inside the corpus, as many as its count, and every
        position held by exactly one word."""
        off, length, _, crc = self.header["sections"]["postings"]
        if zlib.crc32(self.data[int(off) : int(off) + int(length)]) != int(crc):
            raise fail(self.path, "damaged (section 'postings' fails its CRC-32)")
        a = self.arrays
        bad = kernels.sound(np.asarray(a["postings"]), a["postings_offsets"].astype(np.int64),
                            a["word_counts"].astype(np.int64), self.tokens)
        if bad >= 0:
            raise fail(self.path, f"damaged (the postings of {self.word(bad)!r} do not fit the others)")

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
        return bytes(self.arrays["vocab"][int(o[g]) : int(o[g + 1])]).decode("utf-8", "surrogatepass")

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

    def postings(self, g: int, word: str) -> np.ndarray:
        """The sorted global positions of word `g` (named `word`), checked: its CRC-32, and a code
        that ends where the next word's starts, positions increasing and inside the corpus."""
        o = self.arrays["postings_offsets"]
        raw = np.asarray(self.arrays["postings"][int(o[g]) : int(o[g + 1])])
        out, ok = kernels.decode(raw, int(self.arrays["word_counts"][g]), self.tokens)
        if not ok or zlib.crc32(raw) != int(self.arrays["postings_crc"][g]):
            raise fail(self.path, f"damaged (the postings of {word!r})")
        return out


class TlxWriter:
    """Writes a `.tlx` into `fh` (open, empty, binary): the coded postings of the words in
    vocabulary order (`add_postings`, as many calls as wanted), then the other sections and the
    header (`finish`)."""

    def __init__(self, fh: BinaryIO, words: int) -> None:
        self.fh = fh
        fh.write(MAGIC + struct.pack("<II", VERSION, 0))
        self.start = fh.tell()
        self.ends = np.zeros(words + 1, np.uint64)
        self.crcs = np.zeros(words, "<u4")
        self.crc = 0
        self.written = 0
        self.next = 0  # the next word's id

    def add_postings(self, buf: np.ndarray, ends: np.ndarray) -> None:
        """The coded postings (`kernels.encode`) of the next len(ends) words: buf[:ends[-1]], word
        x's ending at ends[x]."""
        used = int(ends[-1]) if len(ends) else 0
        self.fh.write(buf[:used].tobytes())
        self.crc = zlib.crc32(buf[:used], self.crc)
        view = memoryview(buf)
        lo, g0 = 0, self.next
        for x, hi in enumerate(ends.tolist()):
            self.crcs[g0 + x] = zlib.crc32(view[lo:hi])
            lo = hi
        self.ends[g0 + 1 : g0 + len(ends) + 1] = ends + self.written
        self.written += used
        self.next += len(ends)

    def finish(self, vocab: list[bytes], word_counts: np.ndarray, doc_lengths: np.ndarray,
               fields: dict[str, Any]) -> dict[str, Any]:
        """Write the other sections and the header (`fields`: how the index was built, between the
        format's own entries and the sections); returns the header."""
        fh = self.fh
        sections: dict[str, list] = {"postings": [self.start, self.written, "u1", self.crc]}
        voff = np.concatenate([[0], np.cumsum([len(v) for v in vocab])]).astype("<u8")
        for name, arr in (("vocab", np.frombuffer(b"".join(vocab), np.uint8)), ("vocab_offsets", voff),
                          ("postings_offsets", self.ends.astype("<u8")),
                          ("word_counts", word_counts.astype("<u8")),
                          ("doc_lengths", doc_lengths.astype("<i8")), ("postings_crc", self.crcs)):
            fh.write(b"\0" * (-fh.tell() % 8))
            raw = arr.tobytes()
            sections[name] = [fh.tell(), len(raw), SECTIONS[name], zlib.crc32(raw)]
            fh.write(raw)
        header = {"format": "tealeaves reference index", "version": VERSION, "tealeaves": __version__,
                  **fields, "sections": sections}
        hoff = fh.tell()
        fh.write(json.dumps(header, indent=1).encode("utf-8"))
        fh.write(struct.pack("<Q", hoff) + MAGIC)
        return header
