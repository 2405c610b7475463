"""Word vectors and the measures that use them: embedding coherence (pairwise and centroid) and
embedding-weighted IRBO.

Vectors come from a file the user has, read in one streamed pass that keeps only the rows of the
words asked for (`read_vectors`: word2vec text and binary, GloVe text without a header line,
fastText .vec, gzipped or not), or are trained on a reference corpus with gensim's Word2Vec
(`train_vectors`: offline, one worker, a fixed seed and a fixed word hash). Nothing is downloaded.

The policy for words without a vector (absent from the file, or an all-zero vector, whose cosine is
undefined): they are left out of the measure and listed per topic (`missing`); a topic with fewer
than two words with vectors has no coherence (NaN, counted in `params["undefined_topics"]`). In
embedding-weighted IRBO a word without a vector matches only itself (similarity 1 with the same
word, 0 with any other), as in plain RBO.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..corpus import Corpus
from ..errors import BadValueError, InputFileError, MethodError, shown
from ..files.records import strict_floats, strict_int
from ..files.textfile import MAX_LINE, open_binary
from ..output.display import Display
from ..output.jsonout import json_float
from ..util import vectors as vmath
from .rbo import check_p, equal_lengths, pairwise_irbo, rbo_ext

FORMATS = ("word2vec", "word2vec-binary", "glove", "fasttext")  # fasttext .vec is word2vec text
COHERENCE_MEASURES = ("pairwise", "centroid")
WE_IRBO_VARIANTS = ("match", "centroid")
MAX_WORD = 2**16  # bytes in one word of a binary file
MAX_DIM = 100_000
_HELD_PER_BYTE = 1e-3  # the reader keeps only the rows asked for, not the file

__all__ = ["Vectors", "read_vectors", "train_vectors", "embedding_coherence", "we_irbo", "EmbeddingResult",
           "FORMATS", "COHERENCE_MEASURES", "WE_IRBO_VARIANTS"]


@dataclass
class Vectors:
    """Word vectors (float64) for the words that were asked for and found; `info` says where they
    came from (source, format, dimension, rows read, duplicates skipped...)."""

    vectors: dict[str, np.ndarray]
    dim: int
    info: dict[str, Any] = field(default_factory=dict)

    def get(self, word: str) -> np.ndarray | None:
        """The word's vector, or None when it has none (or an all-zero one: no direction)."""
        v = self.vectors.get(word)
        return v if v is not None and np.any(v) else None

    @classmethod
    def from_mapping(cls, mapping: Any, words: Iterable[str], source: str = "<memory>") -> Vectors:
        """The vectors of `words` from anything with `in` and `[]` (a dict, gensim's KeyedVectors)."""
        found = {w: np.asarray(mapping[w], dtype=np.float64).ravel() for w in words if w in mapping}
        dims = {v.shape[0] for v in found.values()}
        if len(dims) > 1:
            raise MethodError(f"word vectors of different lengths: {sorted(dims)}")
        for w, v in found.items():
            if not np.all(np.isfinite(v)):
                raise MethodError(f"the vector of {shown(w)} has a NaN or infinite value")
        return cls(found, dims.pop() if dims else 0, {"source": source, "format": type(mapping).__name__})


# -- reading files -------------------------------------------------------------------------------

def _header(line: bytes, path: str) -> tuple[int, int] | None:
    """(rows, dimension) when `line` is a word2vec/fastText header: two integers (`strict_int`: one
    of more than 18 digits is damage, not a count)."""
    fields = line.split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        return None
    rows, dim = (strict_int(f.decode("ascii"), f"{path}:1", what) for f, what in zip(
        fields, ("the header's number of vectors", "the header's dimension"), strict=True))
    return rows, dim


def _floats(fields: Sequence[bytes], where: str) -> np.ndarray:
    """A vector's values, read by `strict_floats` (finite ASCII numbers: no '1_0', no NaN)."""
    try:
        return strict_floats(b" ".join(fields).decode("ascii", "replace"), where, "a vector's values")
    except BadValueError as exc:
        raise InputFileError(str(exc)) from None


def _is_float(b: bytes) -> bool:
    try:
        float(b)
    except ValueError:
        return False
    return True


def _looks_text(fh: IO[bytes]) -> bool:
    """After a header: is the next line text (UTF-8, no control characters), or binary floats?"""
    chunk = fh.peek(MAX_LINE)  # type: ignore[attr-defined]
    line = chunk.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return len(line.split()) >= 2 and not any(ord(ch) < 32 and ch != "\t" for ch in text)


def _unmarked(line: bytes) -> bytes:
    """A text line without a byte-order mark at its start (`cat a.txt b.txt` of two files that
    had one), as `files.textfile.read_lines` reads every other text input."""
    return line[3:] if line.startswith(b"\xef\xbb\xbf") else line


def _detect(fh: IO[bytes], path: str, format: str | None) -> tuple[str, tuple[int, int] | None, bytes]:
    """The file's format, its header (None for GloVe) and its first line when that is a row."""
    first = _unmarked(fh.readline(MAX_LINE))
    if b"\r" in first.rstrip(b"\r\n"):  # as files.textfile.read_lines: never one long "line"
        raise InputFileError(f"{path}: its lines end in lone carriage returns (CR, classic Mac OS), but "
                             "only LF or CRLF ends a line; convert it (tr '\\r' '\\n')")
    if not first.strip():
        raise InputFileError(f"{path}: empty, or a blank first line; expected word vectors "
                             f"({', '.join(FORMATS)})")
    header = _header(first, path)
    if header is not None and not (1 <= header[1] <= MAX_DIM):
        raise InputFileError(f"{path}:1: header says dimension {header[1]}; expected 1 to {MAX_DIM}")
    if format is None:
        if header is None:
            return "glove", None, first
        return ("word2vec" if _looks_text(fh) else "word2vec-binary"), header, b""
    if format not in FORMATS:
        raise MethodError(f"unknown vector format {format!r} (known: {', '.join(FORMATS)})")
    if format == "glove":
        return format, None, first
    if header is None:
        raise InputFileError(f"{path}:1: no header line 'ROWS DIMENSION', which {format} files start with "
                             f"(GloVe files have none: format 'glove')")
    return format, header, b""


def _read_text(fh: IO[bytes], path: str, first: bytes, header: tuple[int, int] | None,
               wanted: dict[bytes, str], out: Vectors) -> None:
    """Rows 'word v1 ... vD', one a line; only the wanted ones are parsed."""
    dim = header[1] if header else len(first.split()) - 1
    if dim < 1:
        raise InputFileError(f"{path}:1: a word with no numbers; expected word vectors")
    out.dim = dim
    lineno = 1 if header else 0
    rows = blank = spaced = duplicates = 0
    line = first if not header else _unmarked(fh.readline(MAX_LINE))
    while line:
        lineno += 1
        where = f"{path}:{lineno}"
        if len(line) >= MAX_LINE:
            raise InputFileError(f"{where}: line longer than {MAX_LINE // 2**20} MiB")
        fields = line.split()
        if not fields:
            blank += 1
        else:
            rows += 1
            if len(fields) != dim + 1:
                if len(fields) < dim + 1 or all(_is_float(f) for f in fields[1:-dim]):
                    raise InputFileError(f"{where}: {len(fields) - 1} values, expected {dim} "
                                         "(a damaged or truncated file?)")
                spaced += 1  # a word with spaces (GloVe 840B has some): never a topic word
            elif fields[0] in wanted:
                word = wanted[fields[0]]
                if word in out.vectors:
                    duplicates += 1
                else:
                    out.vectors[word] = _floats(fields[1:], where)
        line = _unmarked(fh.readline(MAX_LINE))
    if header is not None and rows != header[0]:
        raise InputFileError(f"{path}: the header says {header[0]:,} vectors, the file has {rows:,} "
                             "(truncated or damaged?)")
    out.info.update(rows=rows, blank_lines=blank, words_with_spaces=spaced, duplicates=duplicates)


def _read_word(fh: IO[bytes], path: str, row: int, rows: int) -> bytes:
    parts, size = [], 0
    while True:
        chunk = fh.peek(1)[:MAX_WORD]  # type: ignore[attr-defined]
        if not chunk:
            raise InputFileError(f"{path}: truncated: ends in vector {row + 1:,} of {rows:,}")
        k = chunk.find(b" ")
        if k >= 0:
            parts.append(fh.read(k))
            fh.read(1)
            return b"".join(parts).lstrip(b"\n")
        parts.append(fh.read(len(chunk)))
        size += len(chunk)
        if size > MAX_WORD:
            raise InputFileError(f"{path}: vector {row + 1:,}: no space after {MAX_WORD:,} bytes of its word "
                                 "(not a word2vec binary file, or a damaged one)")


def _read_binary(fh: IO[bytes], path: str, header: tuple[int, int], wanted: dict[bytes, str],
                 out: Vectors) -> None:
    """word2vec binary: per row the word, a space, then `dim` little-endian float32s."""
    rows, dim = header
    out.dim = dim
    duplicates = 0
    for row in range(rows):
        word = _read_word(fh, path, row, rows)
        data = fh.read(4 * dim)
        if len(data) < 4 * dim:
            raise InputFileError(f"{path}: truncated: ends in vector {row + 1:,} of {rows:,}")
        if word in wanted:
            if wanted[word] in out.vectors:
                duplicates += 1
                continue
            v = np.frombuffer(data, dtype="<f4").astype(np.float64)
            if not np.all(np.isfinite(v)):
                raise InputFileError(f"{path}: vector {row + 1:,} ({shown(wanted[word])}) has a NaN or "
                                     "infinite value")
            out.vectors[wanted[word]] = v
    rest = fh.read(MAX_WORD)
    if rest.strip():
        raise InputFileError(f"{path}: more data after the {rows:,} vectors the header announces "
                             "(damaged, or not a word2vec binary file)")
    out.info.update(rows=rows, duplicates=duplicates)


def read_vectors(path: str | os.PathLike, words: Iterable[str], format: str | None = None) -> Vectors:
    """The vectors of `words` from a word-vector file, in one streamed pass that keeps only their
    rows. The format is detected unless given (`FORMATS`): a first line of two integers is a
    word2vec/fastText header, then text rows or binary float32s; otherwise GloVe text. Words are
    UTF-8. Damage (wrong number of values, a truncated file, a header that disagrees with the rows,
    NaN) is a one-line InputFileError naming the file and line; a repeated word keeps its first
    vector (counted in `info["duplicates"]`)."""
    p = os.fspath(path)
    wanted = {}
    for w in words:
        with contextlib.suppress(UnicodeError):  # a word UTF-8 cannot spell is in no vector file
            wanted[w.encode("utf-8")] = w
    out = Vectors({}, 0, {"source": p})
    try:
        with open_binary(p, decompress=True, factor=_HELD_PER_BYTE) as fh:
            fmt, header, first = _detect(fh, p, format)
            out.info["format"] = fmt
            if fmt == "word2vec-binary":
                _read_binary(fh, p, header, wanted, out)  # type: ignore[arg-type]
            else:
                _read_text(fh, p, first, header, wanted, out)
    except (OSError, EOFError, zlib.error) as exc:  # as files.textfile.read_lines: a damaged gzip stream
        raise InputFileError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    out.info["dim"] = out.dim
    return out


# -- training on the reference corpus ----------------------------------------------------------

def _stable_hash(word: str) -> int:
    """Word2Vec seeds each word's initial vector with seed ^ hash(word); Python's own string hash
    changes from one process to the next, this one does not."""
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=4).digest(), "little")


GENSIM_MAX_WORDS = 10_000  # gensim's Word2Vec cuts longer sentences; documents are given in pieces


def train_vectors(reference: Corpus | str | os.PathLike, dim: int = 100, window: int = 5, min_count: int = 1,
                  epochs: int = 5, seed: int = 1, encoding: str = "utf-8") -> Vectors:
    """Word2Vec (gensim, CBOW) vectors trained on the reference corpus itself: a Corpus, a bundled
    name (`sotu:train`) or a text file (one document per line). One worker, `seed` and a fixed word
    hash: the same vectors on every run. Offline."""
    try:
        from gensim.models import Word2Vec
    except ImportError:
        raise MethodError('training word vectors needs gensim: pip install gensim') from None
    from ..datasets import read_corpus

    for name, v in (("dim", dim), ("window", window), ("min_count", min_count), ("epochs", epochs)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise MethodError(f"{name} must be a positive integer, got {v!r}", options=(name,))
    corpus = reference if isinstance(reference, Corpus) else read_corpus(reference, encoding=encoding)
    if corpus.vocab is None:
        raise MethodError("training word vectors needs a corpus with its words (a vocabulary)")
    vocab = corpus.vocab
    sentences = [[vocab[i] for i in doc[s:s + GENSIM_MAX_WORDS]]
                 for doc in corpus for s in range(0, len(doc), GENSIM_MAX_WORDS)]
    if not any(sentences):
        raise MethodError(f"{corpus.source}: no words to train word vectors on")
    model = Word2Vec(sentences, vector_size=dim, window=window, min_count=min_count, epochs=epochs, seed=seed,
                     workers=1, hashfxn=_stable_hash)
    wv = model.wv
    vectors = {w: np.asarray(wv[w], dtype=np.float64) for w in wv.index_to_key}
    return Vectors(vectors, dim, {"source": f"word2vec trained on {corpus.source}", "format": "trained",
                                  "dim": dim, "window": window, "min_count": min_count, "epochs": epochs,
                                  "seed": seed, "documents": len(corpus), "tokens": corpus.num_tokens,
                                  "words": len(vectors)})


# -- measures ----------------------------------------------------------------------------------

@dataclass(repr=False)
class EmbeddingResult(Display):
    """A measure over word vectors: the model's `score`, a value per topic (coherence; for IRBO,
    1 - the topic's mean RBO with the others) and the words left out (no vector) per topic."""

    measure: str
    score: float
    topics: list[list[str]]
    per_topic: np.ndarray
    missing: list[list[str]]
    params: dict[str, Any]

    _name = "EmbeddingResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [("measure", self.measure), ("score", self.score), ("topics", len(self.topics)),
                ("top words", self.params.get("topn")),
                ("words without a vector", sum(map(len, self.missing))),
                ("vectors", self.params.get("vectors", {}).get("source"))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        return "topic", {"score": self.per_topic, "words": [" ".join(t) for t in self.topics],
                         "missing": [" ".join(m) for m in self.missing]}

    def to_dict(self) -> dict[str, Any]:
        return {"task": "embedding", "measure": self.measure, "score": json_float(self.score),
                "params": self.params,
                "topics": [{"words": t, "score": json_float(s), "missing": m}
                           for t, s, m in zip(self.topics, self.per_topic, self.missing, strict=True)]}


def _vectors_for(vectors: Any, words: list[list[str]], format: str | None) -> Vectors:
    needed = sorted({w for t in words for w in t})
    if isinstance(vectors, Vectors):
        return vectors
    if isinstance(vectors, str | os.PathLike):
        return read_vectors(vectors, needed, format)
    if hasattr(vectors, "__contains__") and hasattr(vectors, "__getitem__"):
        return Vectors.from_mapping(vectors, needed)
    raise MethodError("word vectors must be a file, a Vectors or a mapping of words, got "
                      f"{type(vectors).__name__}")


def _unit_rows(words: list[str], vec: Vectors) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Unit vectors (NaN rows where none), the raw vectors (zero rows where none), missing words."""
    raw = np.zeros((len(words), max(vec.dim, 1)))
    missing = []
    for i, w in enumerate(words):
        v = vec.get(w)
        if v is None:
            missing.append(w)
        else:
            raw[i] = v
    return vmath.unit_rows(raw), raw, missing


def _topic_coherence(unit: np.ndarray, raw: np.ndarray, measure: str) -> float:
    ok = ~np.isnan(unit[:, 0])
    if ok.sum() < 2:
        return math.nan
    u, r = unit[ok], raw[ok]
    if measure == "pairwise":
        sims = u @ u.T
        return float(sims[np.triu_indices(len(u), 1)].mean())
    centre = vmath.unit(vmath.scaled_rows(r).mean(axis=0))
    return float(np.mean(u @ centre)) if centre is not None else math.nan


def _octis_coherence(raw: np.ndarray, measure: str, topn: int) -> float:
    """OCTIS 1.14.0's WECoherencePairwise / WECoherenceCentroid, as its code computes them: each
    vector divided by the sum of its components (a negative sum turns it round, changing the sign
    of its cosines), the total divided by topn (topn - 1) or topn whatever the number of words with
    vectors, -1 for a topic with none; centroid: the mean cosine *distance* to the words' sum."""
    rows = vmath.unit_rows(raw)  # each row's direction: its component sum's sign is the same
    rows = np.where(np.isnan(rows), 0.0, rows)
    sums = rows.sum(axis=1)
    ok = sums != 0  # no vector, or components summing to 0 (OCTIS would divide by zero): left out
    if not ok.any():
        return -1.0
    units = vmath.unit_rows(rows[ok] / sums[ok, None])
    if measure == "pairwise":
        sims = units @ units.T
        return float((sims.sum() - np.trace(sims)) / (topn * (topn - 1)))
    total = vmath.scaled_rows(raw[ok]).sum(axis=0)
    t = vmath.unit(total)
    if t is None:
        return math.nan
    t = t * (1.0 if total.sum() >= 0 else -1.0)  # OCTIS divides t by len(t) * sum(t)
    return float(np.sum(np.linalg.norm(units - t, axis=1) ** 2 / 2) / topn)  # 1 - u.t, as |u - t|^2 / 2


CONVENTIONS = ("tealeaves", "octis")


def embedding_coherence(topics, vectors: Any, measure: str = "pairwise", topn: int = 10,
                        format: str | None = None, convention: str = "tealeaves") -> EmbeddingResult:
    """Word-embedding coherence of each topic's top `topn` words. `pairwise`: the mean cosine
    similarity over pairs of words (Aletras & Stevenson 2013; OCTIS's WECoherencePairwise);
    `centroid`: the mean cosine similarity of each word with the mean of the topic's vectors
    (OCTIS's WECoherenceCentroid reports a distance). `vectors`: a file (`read_vectors`), a
    `Vectors` or a mapping of words to vectors (gensim's KeyedVectors). Words without a vector are
    left out and listed; the score is the mean over topics with at least two words with vectors.
    `convention="octis"` gives OCTIS's numbers instead (`_octis_coherence`)."""
    from . import topic_words

    if measure not in COHERENCE_MEASURES:
        raise MethodError(f"unknown embedding coherence {measure!r} (known: {', '.join(COHERENCE_MEASURES)})")
    if convention not in CONVENTIONS:
        raise MethodError(f"unknown embedding coherence convention {convention!r} "
                          f"(known: {', '.join(CONVENTIONS)})")
    words = topic_words(topics, topn, "coherence")
    vec = _vectors_for(vectors, words, format)
    per, missing = [], []
    for t in words:
        unit, raw, miss = _unit_rows(t, vec)
        per.append(_topic_coherence(unit, raw, measure) if convention == "tealeaves"
                   else _octis_coherence(raw, measure, topn))
        missing.append(miss)
    values = np.array(per)
    ok = values[~np.isnan(values)]
    policy = ("words without a vector left out; a topic needs two with vectors" if convention == "tealeaves"
              else "OCTIS: words without a vector left out, the sum still divided by all topn words; "
                   "a topic with none scores -1")
    return EmbeddingResult(f"we_{measure}", float(ok.mean()) if ok.size else math.nan, words, values, missing,
                           {"topn": topn, "convention": convention, "vectors": vec.info,
                            "undefined_topics": int(np.isnan(values).sum()), "policy": policy})


def _similarities(ua: np.ndarray, ub: np.ndarray, normalize: bool) -> np.ndarray:
    """Each row of `ua` against each row of `ub` (unit vectors; NaN rows give NaN): the angular
    similarity 1 - theta/pi (in [0, 1]; OCTIS's normalize=True) or the cosine. theta is computed as
    2 atan2(|u - v|, |u + v|), exact to rounding everywhere; arccos(u . v) loses half the digits near
    parallel vectors (arccos(1 - e) ~ sqrt(2e): a rounding of 1e-16 in the cosine is 1.4e-8 in theta)."""
    if not normalize:
        return np.clip(ua @ ub.T, -1.0, 1.0)
    out = np.empty((len(ua), len(ub)))
    for i, u in enumerate(ua):  # one row at a time: memory len(ub) x dim, not len(ua) x len(ub) x dim
        theta = 2.0 * np.arctan2(np.linalg.norm(ub - u, axis=1), np.linalg.norm(ub + u, axis=1))
        out[i] = 1.0 - theta / np.pi
    return out


def _greedy_match(sims: np.ndarray) -> float:
    """OCTIS's embedding overlap: take the most similar pair of words, drop both, repeat; the sum
    of the similarities taken (ties: the earlier word of the first list, then of the second)."""
    order = np.argsort(-sims, axis=None, kind="stable")
    rows, cols = set(), set()
    total = 0.0
    n = sims.shape[0]
    for flat in order:
        i, j = divmod(int(flat), sims.shape[1])
        if i not in rows and j not in cols:
            rows.add(i)
            cols.add(j)
            total += float(sims[i, j])
            if len(rows) == n:
                break
    return total


def _match_overlaps(a: list[str], b: list[str], ua: np.ndarray, ub: np.ndarray,
                    normalize: bool) -> list[float]:
    with np.errstate(invalid="ignore"):
        sims = _similarities(ua, ub, normalize)
    same = np.array([[x == y for y in b] for x in a])
    sims = np.where(same, 1.0, np.where(np.isnan(sims), 0.0, sims))
    return [_greedy_match(sims[:d, :d]) for d in range(1, len(a) + 1)]


def _centroid_overlaps(a: list[str], b: list[str], ra: np.ndarray, rb: np.ndarray,
                       normalize: bool) -> list[float]:
    """X_d = the similarity of the centroids of the two depth-d prefixes (OCTIS: its agreement is
    then X_d / d); a prefix with no vector: 1 if both prefixes hold the same words, else 0."""
    out = []
    for d in range(1, len(a) + 1):  # each prefix scaled on its own: a sum neither overflows nor vanishes
        ua = vmath.unit(vmath.scaled_rows(ra[:d]).sum(axis=0))
        ub = vmath.unit(vmath.scaled_rows(rb[:d]).sum(axis=0))
        if ua is None or ub is None:
            out.append(1.0 if set(a[:d]) == set(b[:d]) else 0.0)
        else:
            out.append(float(_similarities(ua[None], ub[None], normalize)[0, 0]))
    return out


def we_irbo(topics, vectors: Any, topn: int = 10, p: float = 0.9, variant: str = "match",
            normalize: bool = True, format: str | None = None) -> EmbeddingResult:
    """Embedding-weighted IRBO (Terragni et al. 2021; OCTIS's WE-IRBO-Match and -Centroid): IRBO
    whose overlap X_d of two depth-d prefixes is, for `match`, the sum of the similarities of a
    greedy one-to-one matching of their words and, for `centroid`, the similarity of the prefixes'
    centroids; similarity is angular (1 - theta/pi, theta the angle: `_similarities`) when
    `normalize`, else the cosine."""
    from . import topic_words

    if variant not in WE_IRBO_VARIANTS:
        raise MethodError(f"unknown WE-IRBO variant {variant!r} (known: {', '.join(WE_IRBO_VARIANTS)})")
    p = check_p(p)
    words = topic_words(topics, topn, "diversity")
    equal_lengths(words, topn)
    vec = _vectors_for(vectors, words, format)
    rows = [_unit_rows(t, vec) for t in words]
    if variant == "match":
        def overlaps(i: int, j: int) -> list[float]:
            return _match_overlaps(words[i], words[j], rows[i][0], rows[j][0], normalize)
    else:
        def overlaps(i: int, j: int) -> list[float]:
            return _centroid_overlaps(words[i], words[j], rows[i][1], rows[j][1], normalize)
    score, per = pairwise_irbo(words, lambda i, j: rbo_ext(overlaps(i, j), topn, p))
    return EmbeddingResult(f"we_irbo_{variant}", score, words, per, [r[2] for r in rows],
                           {"topn": topn, "p": p, "normalize": normalize, "vectors": vec.info,
                            "policy": "a word without a vector matches only itself"})
