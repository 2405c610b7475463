"""Plain arrays (format "arrays"): a topic-word matrix, its words, and optionally the training
documents' topic proportions and a prior, from any library that can save a NumPy array or a CSV.

- the topic-word matrix (T x V): a `.npy` file, a CSV / TSV / text file (one topic per line, values
  separated by commas, tabs or spaces), or a `.npz` archive holding `topic_word` and optionally
  `vocab` (strings), `doc_topic`, `alpha`, `mean`, `cov` and `decoder` (no pickles in any of them);
- `vocab`: the words, one per line in column order (CLI `--vocab`), unless the archive holds them;
- `doc_topic`: the training documents' proportions, D x T, a `.npy` or CSV file (CLI `--doc-topic`)
  or an array;
- `weights`: what the values are (CLI `--weights`): "distributions" (the default: every row must
  sum to 1; `normalize=True` / `--normalize` rescales the rows that do not and says how many in the
  model's metadata, "normalized"), "nonnegative" (NMF-like weights) or "signed" (LSI-like);
- a prior: `alpha` (a number, a vector or a file of numbers; CLI `--alpha`; refused when the archive
  holds its own) for a Dirichlet: with
  distributions that is an LDA, a `TopicModel`, and every metric applies; or `mean` and `cov` in
  the archive for a logistic-normal prior (CTM, ETM, ProdLDA), with `decoder` "mixture" (rows are
  distributions) or "product-of-experts" (`topic_word` holds B, p(w | θ) = softmax(θ B), signed);
- an archive may say what its values are (`weights`, a string; `weights=` / `--weights` overrides):
  `save_arrays` writes one for any model that is not an LDA (`tealeaves convert` of an HDP, NMF, CTM).

Distributions are never normalised silently: a row that does not sum to 1 is an error naming it.
An archive is checked as the other readers check theirs before numpy reads it (every array's
declared shape against the bytes it holds, `check_array_file`); every member must be a NumPy array
of its key's shape (a vector for `vocab`, `alpha` and `mean`, strings for `vocab`)."""

from __future__ import annotations

import os
import re
import zipfile
from typing import Any

import numpy as np

from ..corpus import read_vocab_file
from ..errors import BadValueError, InputFileError, InvalidModelError, MethodError
from ..files.atomic import atomic_path, with_extension
from ..files.records import read_npy, strict_floats
from ..files.textfile import read_lines
from ..model import TopicModel, normalized_rows, row_sums
from ..topics import WEIGHTS_KINDS, Topics
from ..util.limits import check_array_file
from .common import build_model, refuse_alpha

ARCHIVE_KEYS = ("topic_word", "vocab", "doc_topic", "alpha", "mean", "cov", "decoder", "weights")
ROW_TOLERANCE = 1e-6


def is_arrays_archive(path: str) -> bool:
    """A .npz archive in this format (it holds `topic_word`), not tealeaves' own (`phi`)."""
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return "topic_word.npy" in names and "phi.npy" not in names


def read_matrix(path: str, what: str) -> np.ndarray:
    """A 2-d float matrix from a .npy file or a text file of numbers (commas, tabs or spaces)."""
    if path.endswith(".npy") or _is_npy(path):
        return _matrix(read_npy(path, what), path, what)
    rows = []
    for n, line in read_lines(path):
        if line.strip():
            try:
                rows.append(strict_floats(re.sub(r"[,;\t]", " ", line), f"{path}:{n}", what))
            except BadValueError as exc:
                raise InputFileError(str(exc)) from None
    if not rows:
        raise InputFileError(f"{path}: no rows of {what}")
    if len({r.size for r in rows}) > 1:
        n = next(i for i, r in enumerate(rows) if r.size != rows[0].size)
        raise InputFileError(f"{path}: row {n + 1} of {what} has {rows[n].size} values, the first "
                             f"{rows[0].size}")
    return _matrix(np.stack(rows), path, what)


def _matrix(value: Any, where: str, what: str) -> np.ndarray:
    """`value` (an array, or a file's) as a non-empty 2-d matrix of finite floats."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise InvalidModelError(f"{where}: {what} must be numbers, got {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim != 2 or 0 in arr.shape:
        raise InvalidModelError(f"{where}: {what} must be a non-empty 2-d matrix, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        t, w = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidModelError(f"{where}: {what} has a non-finite value at row {t}, column {w}")
    return arr


def _is_npy(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(6) == b"\x93NUMPY"
    except OSError:
        return False


def check_rows(arr: np.ndarray, where: str, what: str, normalize: bool,
               weights: bool = True) -> tuple[np.ndarray, str | None]:
    """Rows that must be distributions: non-negative, and summing to 1 (within ROW_TOLERANCE)
    unless `normalize`, which rescales those that do not. Returns the rows and what was done.
    `weights`: the error names the weights option too (the arrays format has it)."""
    if (arr < 0).any():
        t, w = np.argwhere(arr < 0)[0]
        raise InvalidModelError(f"{where}: {what} has a negative value ({arr[t, w]:.3g}) at row {t}, "
                                f"column {w}: not a distribution")
    sums = row_sums(arr)
    if (sums <= 0).any():
        raise InvalidModelError(f"{where}: {what} row {int(np.argmax(sums <= 0))} is all zeros")
    off = np.abs(sums - 1.0) > ROW_TOLERANCE
    if not off.any():
        return arr, None
    t = int(np.argmax(off))
    if not normalize:
        raise InvalidModelError(
            f"{where}: {what} row {t} sums to {_total(sums[t])}, not 1 ({int(off.sum())} of "
            f"{arr.shape[0]} rows); "
            "these are not distributions: pass normalize=True (CLI --normalize) to rescale them"
            + (", or weights='nonnegative' (CLI --weights nonnegative) if they are weights"
               if weights else ""))
    note = (f"{what}: {int(off.sum())} of {arr.shape[0]} rows rescaled to sum to 1 (their sums were "
            f"{_total(sums[off].min())} to {_total(sums[off].max())})")
    return normalized_rows(arr, sums), note


def _total(x: float) -> str:
    return f"{x:.6g}" if np.isfinite(x) else "more than float64 holds (1.8e308)"


def _numbers(value: Any, what: str) -> np.ndarray:
    """A number, a sequence of numbers, or a file of them (.npy or text)."""
    if isinstance(value, str | os.PathLike):
        path = os.fspath(value)
        if path.endswith(".npy") or _is_npy(path):
            arr = read_npy(path, what)
        else:
            text = " ".join(line for _, line in read_lines(path))
            try:
                arr = strict_floats(re.sub(r"[,;\t]", " ", text), path, what)
            except BadValueError as exc:
                raise InputFileError(str(exc)) from None
        value = arr
    try:
        out = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise MethodError(f"{what} must be numbers, got {type(value).__name__}") from None
    if not np.isfinite(out).all():
        raise InvalidModelError(f"{what} has a non-finite value")
    return out


def load_arrays(path: str, vocab: Any = None, doc_topic: Any = None, alpha: Any = None,
                weights: str | None = None, normalize: bool = False,
                name: str | None = None) -> TopicModel | Topics:
    """The model the arrays describe (see the module notes): a `TopicModel` for distributions with
    a Dirichlet prior, else `Topics`."""
    name = name or os.path.basename(path)
    parts: dict[str, Any] = {}
    if path.endswith(".npz") or zipfile.is_zipfile(path):
        parts = _archive(path)
        tw = parts.pop("topic_word")
    else:
        tw = read_matrix(path, "the topic-word matrix")
    stored = parts.pop("weights", None)
    kind = weights or stored or "distributions"
    if kind not in WEIGHTS_KINDS:
        raise MethodError(f"weights must be one of {', '.join(WEIGHTS_KINDS)}, got {kind!r}")
    words = _words(vocab, parts.pop("vocab", None), tw.shape[1], path)
    meta: dict[str, Any] = {"format": "arrays", "weights": kind}
    decoder = str(parts.pop("decoder", "mixture"))
    if decoder == "product-of-experts" and weights is None:
        kind = "signed"  # B holds log-weights
    if kind == "distributions":
        tw, note = check_rows(tw, path, "the topic-word matrix", normalize)
        if note:
            meta["normalized"] = note
    theta = None
    if doc_topic is not None or "doc_topic" in parts:
        named = isinstance(doc_topic, str | os.PathLike)
        where = (os.fspath(doc_topic) if named else "doc_topic=" if doc_topic is not None
                 else f"{path}: doc_topic")
        if doc_topic is None:
            theta = parts.pop("doc_topic")
        elif named:
            theta = read_matrix(os.fspath(doc_topic), "the document-topic matrix")
        else:
            theta = _matrix(doc_topic, where, "the document-topic matrix")
        if theta.shape[1] != tw.shape[0]:
            raise InvalidModelError(f"{where}: the document-topic matrix has {theta.shape[1]} columns for "
                                    f"{tw.shape[0]} topics")
        theta, note = check_rows(theta, where, "the document-topic matrix", normalize)
        if note:
            meta["normalized"] = "; ".join(filter(None, [meta.get("normalized"), note]))
    if alpha is not None and "alpha" in parts:
        refuse_alpha(alpha, f"{path} (an arrays archive holding alpha)")
    a = _numbers(alpha, "alpha") if alpha is not None else parts.pop("alpha", None)
    mean, cov = parts.pop("mean", None), parts.pop("cov", None)
    if a is not None and mean is not None:
        raise MethodError(f"{path}: give a Dirichlet prior (alpha) or a logistic-normal one (mean, cov), "
                          "not both")
    if a is not None:
        if kind != "distributions":
            raise MethodError(f"{path}: a Dirichlet prior (alpha) needs topic-word distributions, not "
                              f"{kind} weights")
        if a.size == 1:
            a = np.full(tw.shape[0], float(a[0]))
        model = build_model(tw, a, words, None, name, path, meta, normalize=False)
        if theta is None:
            return model
        return _with_doc_topic(model, theta)
    if (mean is None) != (cov is None):
        raise MethodError(f"{path}: a logistic-normal prior needs both mean and cov")
    return Topics(name=name, source="arrays", vocab=words, weights=tw, weights_kind=kind, doc_topic=theta,
                  prior=None if mean is None else "logistic-normal",
                  mean=None if mean is None else np.asarray(mean, dtype=np.float64).reshape(-1),
                  cov=None if cov is None else np.asarray(cov, dtype=np.float64),
                  decoder=None if mean is None else decoder, metadata=meta)


def _with_doc_topic(model: TopicModel, theta: np.ndarray) -> Topics:
    t = Topics.from_lda(model, source="arrays (LDA)")
    return Topics(name=t.name, source=t.source, vocab=t.vocab, weights=t.weights, weights_kind=t.weights_kind,
                  doc_topic=theta, prior=t.prior, alpha=t.alpha, decoder=t.decoder, lda=model,
                  metadata=t.metadata)


def _words(vocab: Any, stored: Any, num_words: int, path: str) -> tuple[str, ...] | None:
    if vocab is not None and stored is not None:
        raise MethodError(f"{path}: the archive holds its vocabulary; vocab= (CLI --vocab) is not needed")
    if vocab is not None:
        is_file = isinstance(vocab, str | os.PathLike)
        words = read_vocab_file(vocab) if is_file else tuple(str(w) for w in vocab)
        where = os.fspath(vocab) if is_file else "vocab="
    elif stored is not None:
        words, where = tuple(str(w) for w in stored), f"{path}: vocab"  # 1-d strings (`_archive`)
    else:
        return None
    if len(words) != num_words:
        raise InvalidModelError(f"{where}: {len(words)} words for {num_words} columns of the topic-word "
                                "matrix")
    if len(set(words)) != len(words):
        raise InvalidModelError(f"{where}: a word appears twice")
    return words


def _archive(path: str) -> dict[str, Any]:
    check_array_file(path)  # declared shapes against the bytes held, before numpy allocates them
    try:
        with np.load(path, allow_pickle=False) as z:
            keys = set(z.files)
            if "topic_word" not in keys:
                raise InputFileError(f"{path}: no topic_word array (an arrays archive holds topic_word and "
                                     f"optionally {', '.join(ARCHIVE_KEYS[1:])})")
            extra = sorted(keys - set(ARCHIVE_KEYS))
            if extra:
                raise InputFileError(f"{path}: unknown array {extra[0]!r} (known: {', '.join(ARCHIVE_KEYS)})")
            out = {k: z[k] for k in keys}
    except ValueError as exc:  # object arrays need pickles
        raise InputFileError(f"{path}: cannot read it without unpickling ({exc})") from None
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise InputFileError(f"{path}: not a readable .npz archive ({exc})") from None
    raw = sorted(k for k, v in out.items() if not isinstance(v, np.ndarray))
    if raw:  # numpy gives a member without the .npy header as its bytes
        raise InputFileError(f"{path}: {raw[0]} is not a NumPy array (a member of raw bytes, without the "
                             ".npy header np.save writes)")
    for k in ("topic_word", "doc_topic", "cov"):
        if k in out:
            arr = out[k]
            if arr.ndim != 2 or arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
                raise InvalidModelError(f"{path}: {k} must be a finite 2-d numeric matrix")
            out[k] = arr.astype(np.float64)
    for k, dims in (("vocab", (1,)), ("alpha", (0, 1)), ("mean", (1,)), ("decoder", (0,))):
        if k in out and out[k].ndim not in dims:
            shape = {(1,): "a vector", (0,): "a single value"}.get(dims, "a number or a vector")
            raise InvalidModelError(f"{path}: {k} must be {shape}, got an array of shape {out[k].shape}")
    if "vocab" in out and out["vocab"].dtype.kind != "U":
        raise InvalidModelError(f"{path}: vocab must be a 1-d array of strings (words), got "
                                f"{out['vocab'].dtype}"
                                " (numbers are not words: save the words, np.array(words))")
    if "decoder" in out and out["decoder"].dtype.kind != "U":
        raise InvalidModelError(f"{path}: decoder must be a string, got {out['decoder'].dtype}")
    for k in ("alpha", "mean"):
        if k in out:
            out[k] = _numbers(out[k], f"{path}: {k}")
    for k in ("decoder", "weights"):
        if k in out:
            if out[k].ndim != 0 or out[k].dtype.kind != "U":
                raise InvalidModelError(f"{path}: {k} must be a single string")
            out[k] = str(out[k])
    if out.get("weights", WEIGHTS_KINDS[0]) not in WEIGHTS_KINDS:
        raise InvalidModelError(f"{path}: weights must be one of {', '.join(WEIGHTS_KINDS)}, got "
                                f"{out['weights']!r}")
    return out


def save_arrays(model: Topics, path: str) -> list[str]:
    """Write a model that is not an LDA as an arrays archive (`path`, .npz: no pickle): its
    topic-word weights and their kind, vocabulary, training documents' proportions and a
    logistic-normal prior with its decoder. Returns what of the model the archive does not keep,
    named (empty when nothing is lost); a model without topic-word weights cannot be written."""
    if model.weights is None:
        raise MethodError(f"{model.name} ({model.source}) has top words only, no topic-word weights: "
                          "there is no matrix to write; the commands that need top words (coherence, "
                          "diversity, intrusion words) read it as it is")
    arrays: dict[str, Any] = {"topic_word": np.asarray(model.weights, dtype=np.float64),
                              "weights": np.array(model.weights_kind)}
    if model.vocab is not None:
        arrays["vocab"] = np.array(model.vocab, dtype=str)
    if model.doc_topic is not None:
        arrays["doc_topic"] = np.asarray(model.doc_topic, dtype=np.float64)
    if model.prior == "logistic-normal":
        arrays.update(mean=model.mean, cov=model.cov, decoder=np.array(model.decoder or "mixture"))
    lost = []
    if model.prior == "dirichlet":
        lost.append("its Dirichlet prior (alpha), which needs topic-word distributions")
    if model.topic_weights is not None:
        lost.append("its topic weights: " + str((model.metadata or {}).get("topic_weights", "one per topic")))
    if model.topic_names is not None:
        lost.append("its topic names")
    path = with_extension(path, ".npz")
    try:
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez_compressed(tmp, **arrays)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot write model ({exc.strerror or exc})") from None
    return lost
