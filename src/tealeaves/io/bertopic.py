"""BERTopic models as `Topics`, read without importing BERTopic or torch.

`topic_model.save(DIR, serialization="safetensors", save_ctfidf=True)` writes a directory:
`topics.json` (each topic's representation: its top words with scores; topic sizes; each
training document's topic; labels), `config.json`, `topic_embeddings.safetensors`, and with
`save_ctfidf`, `ctfidf.safetensors` (the c-TF-IDF matrix as CSR parts `indptr`, `indices`,
`data`, `shape`, one row per topic in ascending topic id, the outlier topic -1 first when there
is one) and `ctfidf_config.json` (the CountVectorizer's vocabulary: word -> column).

What it gives: top words from the representations (BERTopic pads a short representation with
empty words: those are dropped); with the c-TF-IDF file, the topic-word matrix as `weights`
("nonnegative", "c-TF-IDF scores": not probabilities, so no likelihood); topic sizes (training
documents per topic) as `topic_weights`. The outlier topic -1 (documents HDBSCAN left unassigned)
is not a topic: it is left out of the topics, its size and words kept in `metadata["outliers"]`.
Each training document's topic (hard assignments, -1 for outliers) is in
`metadata["assignments"]`; no document-topic proportions (BERTopic saves none).

A BERTopic pickle (`save(path, serialization="pickle")`, a joblib file) is read as data by the
restricted reader (`safepickle`): nothing in it runs, neither BERTopic nor its sub-models' libraries
(UMAP, HDBSCAN, torch) are imported, so it needs no consent; its attributes give what the directory
gives. `from_bertopic` reads a live BERTopic object the same way."""

from __future__ import annotations

import io
import os
import pickletools
from typing import Any

import numpy as np

from ..errors import BadValueError, InputFileError, InvalidModelError, MethodError, shown
from ..files.records import read_json, strict_float, strict_int
from ..files.textfile import check_regular
from ..topics import Topics
from ..util.limits import check_memory
from ..util.text import UNSHOWABLE
from .common import words_by_column
from .pickled import describe_pickle
from .safepickle import Stored, as_array, read_pickle
from .safetensors import read_safetensors

FILES = ("topics.json", "config.json")
NOTE = "c-TF-IDF scores"
EXPECTED = "a BERTopic directory (save(DIR, serialization='safetensors', save_ctfidf=True))"


def is_bertopic_dir(path: str) -> bool:
    """A directory holding BERTopic's topics.json and config.json."""
    return os.path.isdir(path) and all(os.path.isfile(os.path.join(path, f)) for f in FILES)


def is_bertopic(obj: Any) -> bool:
    return type(obj).__module__.startswith("bertopic") and hasattr(obj, "topic_representations_")


def pickled_class(head: bytes) -> str | None:
    """The first class a pickle names ("module.Name": the class of the object it holds), read
    from its opcodes without running anything; None if `head` names none."""
    strings: list[str] = []
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(head)):
            if op.name == "GLOBAL":
                return str(arg).replace(" ", ".")
            if op.name == "STACK_GLOBAL":
                return ".".join(strings[-2:]) if len(strings) >= 2 else None
            if isinstance(arg, str):
                strings.append(arg)
    except Exception:  # noqa: BLE001 - a truncated head or damaged bytes: no class named
        return None
    return None


def _topic_names(topics: dict[str, Any], ids: list[int], kept: list[int], tj: str) -> list[str]:
    """Each kept topic's name: `custom_labels` (a list, one per topic, -1's first when there are
    outliers; or a dict), else `topic_labels` (topic id -> name), else the topic id. A label that is
    not a string, or a list of the wrong length, is an error (never a silent mismatch)."""
    key = "custom_labels" if topics.get("custom_labels") else "topic_labels"
    labels = topics.get(key)
    if not labels:
        return [str(t) for t in kept]
    if isinstance(labels, list):
        if len(labels) != len(ids):
            raise InvalidModelError(f"{tj}: {key} has {len(labels)} labels for the {len(ids)} topics "
                                    f"({', '.join(map(str, ids[:8]))}{', ...' if len(ids) > 8 else ''})")
        labels = dict(zip([str(t) for t in ids], labels, strict=True))
    if not isinstance(labels, dict):
        raise InvalidModelError(f"{tj}: {key} is a {type(labels).__name__}, not topic id -> name")
    out = []
    for t in kept:
        name = labels.get(str(t), str(t))
        if not isinstance(name, str):
            raise InvalidModelError(f"{tj}: {key}[{t}] is {shown(name)}, not a string")
        out.append(name)
    return out


def load_bertopic_dir(path: str | os.PathLike) -> Topics:
    """The BERTopic model saved in the directory `path`."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise InputFileError(f"{path}: not a directory; expected {EXPECTED}")
    tj, config = (_member(path, f, required=True) for f in FILES)
    topics = _object(read_json(tj), tj, "topics.json")
    _object(read_json(config), config, "config.json")
    for key in ("topic_representations", "topic_sizes"):
        if key not in topics:
            raise InputFileError(f"{tj}: no {key!r}; not BERTopic's topics.json ({EXPECTED})")
    ctfidf = vocab = None
    cf, cc = _member(path, "ctfidf.safetensors"), _member(path, "ctfidf_config.json")
    if cf is not None:
        if cc is None:
            raise InputFileError(f"{path}: ctfidf.safetensors without ctfidf_config.json (its vocabulary)")
        ctfidf = read_safetensors(cf, "BERTopic's c-TF-IDF matrix")
        vocab = _vocab(_object(read_json(cc), cc, "ctfidf_config.json"), cc)
    return build(topics, ctfidf, vocab, os.path.basename(os.path.normpath(path)), "BERTopic directory", tj,
                 cf or "", {"format": "bertopic", "source": path})


def _member(path: str, name: str, required: bool = False) -> str | None:
    """The path of the directory's file `name`, None if there is no such entry (an error if
    `required`); an entry that is not a regular file (a pipe, a device, a broken or looping
    symbolic link, a folder) is an error naming it, never taken for an absent file."""
    f = os.path.join(path, name)
    if not os.path.lexists(f):
        if required:
            raise InputFileError(f"{path}: no {name}; expected {EXPECTED}")
        return None
    check_regular(f, f"BERTopic's {name}")
    return f


def load_bertopic_pickle(path: str | os.PathLike, allow_pickle: bool = False) -> Topics:
    """A BERTopic model saved with `serialization="pickle"`, read as data (`safepickle`: nothing in
    the file runs, so `allow_pickle` is not needed)."""
    path = os.fspath(path)
    check_regular(path)
    try:
        return _bertopic_pickle(path)
    except RecursionError:  # a value nested too deeply for a check that walks it
        raise InvalidModelError(f"{path}: a value nested too deeply (damaged or hostile)") from None


def _bertopic_pickle(path: str) -> Topics:
    obj = read_pickle(path)
    if not (isinstance(obj, Stored) and obj.cls.startswith("bertopic.")
            and "topic_representations_" in obj.attrs()):
        what = f"a pickled {type(obj).__name__}"
        if isinstance(obj, Stored):
            what = describe_pickle(obj.cls if obj.cls.isprintable() else repr(obj.cls))
        raise InputFileError(f"{path}: holds {what}, not a fitted BERTopic model")
    a = obj.attrs()
    return _from_attributes({**a, "topic_labels_": _labels(a)}, os.path.basename(path), "BERTopic pickle",
                            path, {"format": "bertopic-pickle", "source": path})


def _labels(a: dict[str, Any]) -> dict[Any, Any] | None:
    """BERTopic's `topic_labels_` (a property, so not in a pickle's attributes): each topic's id and
    first four words joined by "_", or its zero-shot label where the topic came from one."""
    reps = a.get("topic_representations_")
    if not isinstance(reps, dict) or not all(isinstance(v, list) for v in reps.values()):
        return None  # the representations' own checks name what is wrong
    labels = {k: f"{k}_" + "_".join(p[0] for p in v[:4] if isinstance(p, tuple | list) and p
                                    and isinstance(p[0], str))  # other words: `_words` refuses them
              for k, v in reps.items()}
    shots, chosen = a.get("zeroshot_topic_list"), a.get("_topic_id_to_zeroshot_topic_idx")
    if isinstance(shots, list) and a.get("embedding_model") is not None and isinstance(chosen, dict):
        labels.update({k: shots[i] for k, i in chosen.items() if type(i) is int and 0 <= i < len(shots)})
    return labels


def from_bertopic(obj: Any, name: str = "bertopic", source: str | None = None) -> Topics:
    """`Topics` from a fitted BERTopic object (its c-TF-IDF matrix and vectorizer's words)."""
    if not is_bertopic(obj):
        raise MethodError(f"expected a fitted BERTopic model, got {type(obj).__module__}."
                          f"{type(obj).__name__}")
    return _from_attributes({**vars(obj), "topic_labels_": obj.topic_labels_}, name, "BERTopic object",
                            source or name,
                            {"format": "bertopic-pickle", "source": source})


def _from_attributes(a: dict[str, Any], name: str, source: str, where: str, meta: dict[str, Any]) -> Topics:
    """`Topics` from a BERTopic object's attributes (a live object's, or a pickle's `Stored` ones):
    put in topics.json's form, then read as the directory is."""
    reps = a.get("topic_representations_")
    if not isinstance(reps, dict):
        raise InvalidModelError(f"{where}: topic_representations_ is a {type(reps).__name__}, not a dict")
    sizes = a.get("topic_sizes_")
    assigned = a.get("topics_")
    if isinstance(assigned, np.ndarray | Stored):
        assigned = as_array(assigned, where).tolist()
    topics = {"topic_representations": {_key(k, where): [list(p) if isinstance(p, tuple) else p for p in v]
                                        if isinstance(v, list) else v for k, v in reps.items()},
              "topic_sizes": ({_key(k, where): v for k, v in sizes.items()} if isinstance(sizes, dict)
                              else sizes),
              "topics": assigned, "topic_labels": a.get("topic_labels_"),
              "custom_labels": a.get("custom_labels_")}
    for key in ("topic_labels", "custom_labels"):
        if isinstance(topics[key], dict):
            topics[key] = {_key(k, where): v for k, v in topics[key].items()}
    ctfidf = vocab = None
    matrix = a.get("c_tf_idf_")
    if matrix is not None:
        ctfidf = _csr_parts(matrix, where)
        vocab = _vectorizer_words(a.get("vectorizer_model"), where)
    return build(topics, ctfidf, vocab, name, source, where, where, meta)


def _key(k: Any, where: str) -> str:
    """A topic id of the object (an int, or a numpy integer) as topics.json spells it."""
    try:
        return str(strict_int(k, where, "a topic id", text=False))
    except BadValueError as exc:
        raise InvalidModelError(str(exc)) from None


def _csr_parts(matrix: Any, where: str) -> dict[str, np.ndarray]:
    """The CSR parts of c_tf_idf_: a live scipy matrix's, or a pickled one's stored attributes."""
    if not isinstance(matrix, Stored):
        m = matrix.tocsr()
        return {"indptr": m.indptr, "indices": m.indices, "data": m.data, "shape": np.array(m.shape)}
    if not matrix.cls.startswith("scipy.sparse.") or not matrix.cls.endswith(("csr_matrix", "csr_array")):
        raise InvalidModelError(f"{where}: c_tf_idf_ is a {shown(matrix.cls, 80)}, not a scipy CSR matrix")
    a = matrix.attrs()
    shape = a.get("_shape")
    if not (isinstance(shape, tuple) and len(shape) == 2):
        raise InvalidModelError(f"{where}: c_tf_idf_ has no shape (damaged)")
    parts = {k: as_array(a.get(k), f"{where}: c_tf_idf_.{k}") for k in ("indptr", "indices", "data")}
    return {**parts, "shape": np.array([strict_int(n, where, "c_tf_idf_'s shape", 0, text=False)
                                        for n in shape])}


def _vectorizer_words(vectorizer: Any, where: str) -> tuple[str, ...]:
    """The vectorizer's words in column order, from its `vocabulary_` (word -> column)."""
    vocab = vectorizer.attrs().get("vocabulary_") if isinstance(vectorizer, Stored) \
        else getattr(vectorizer, "vocabulary_", None)
    if vocab is None and vectorizer is not None and not isinstance(vectorizer, Stored):
        return tuple(str(w) for w in vectorizer.get_feature_names_out())  # a vectorizer without one
    return _vocab({"vectorizer_model": {"vocab": vocab}}, f"{where}: vectorizer_model.vocabulary_")


def build(topics: dict, ctfidf: dict | None, vocab: tuple[str, ...] | None, name: str, source: str,
          tj: str, cf: str, meta: dict[str, Any]) -> Topics:
    """`Topics` from topics.json's content and, when saved, the c-TF-IDF CSR parts and words."""
    reps = _object(topics["topic_representations"], tj, "topic_representations")
    ids = sorted(_topic_id(k, tj) for k in reps)
    if not ids or ids == [-1]:
        raise InvalidModelError(f"{tj}: no topics (only the outlier topic -1 or none)")
    if ids[0] < -1:
        raise InvalidModelError(f"{tj}: topic id {ids[0]} (BERTopic's ids are -1 for outliers, then 0, "
                                "1, ...)")
    kept = [t for t in ids if t != -1]
    words = {t: _words(reps[str(t)], tj, t) for t in ids}
    sizes = _object(topics["topic_sizes"], tj, "topic_sizes")
    size_of = {}
    for t in ids:
        if str(t) not in sizes:
            raise InvalidModelError(f"{tj}: topic {t} has no size in topic_sizes (its number of documents)")
        size_of[t] = _number(strict_int, sizes[str(t)], tj, f"topic_sizes[{t}] (a count of documents)", low=0)
    weights = None
    if ctfidf is not None and vocab is not None:
        weights = _ctfidf(ctfidf, len(ids), len(vocab), cf)
        weights = weights[1:] if ids[0] == -1 else weights  # the outlier topic's row is the first
    names = _topic_names(topics, ids, kept, tj)
    outliers = {"documents": size_of.get(-1, 0), "words": list(words.get(-1, ()))} if -1 in ids else None
    meta.update(topic_ids=kept, topic_names=names, topic_weights="training documents per topic (counts)",
                outliers=outliers,
                assignments=_assignments(topics.get("topics"), set(ids) | {-1}, tj))
    top = tuple(words[t] for t in kept)
    if any(not w for w in top):
        empty = kept[next(i for i, w in enumerate(top) if not w)]
        raise InvalidModelError(f"{tj}: topic {empty} has no words in its representation")
    return Topics(name=name, source=source, vocab=vocab if weights is not None else None, top_words=top,
                  weights=weights, weights_kind="nonnegative" if weights is not None else None,
                  weights_note=NOTE if weights is not None else "",
                  topic_weights=np.array([size_of[t] for t in kept], dtype=np.float64),
                  topic_names=tuple(names), metadata=meta)


def _number(parse: Any, value: Any, where: str, field: str, **limits: Any) -> Any:
    """`parse` (`strict_int` or `strict_float`) of a JSON number field: a number, a numpy scalar
    from a pickle, never text; refused as a damaged model."""
    try:
        return parse(value, where, field, text=False, **limits)
    except BadValueError as exc:
        raise InvalidModelError(str(exc)) from None


def _object(value: Any, where: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise InputFileError(f"{where}: {what} is not a JSON object; expected {EXPECTED}")
    return value


def _topic_id(key: str, where: str) -> int:
    """A topic id in BERTopic's form ("-1", "0", "12"; not "01", " 2" or "1_0", which int() takes)."""
    try:
        t = int(key)
    except ValueError:
        t = None
    if t is None or str(t) != key:
        raise InvalidModelError(f"{where}: topic id {shown(key)} is not a whole number in BERTopic's form")
    return t


def _assignments(values: Any, ids: set[int], where: str) -> list[int]:
    """Each training document's topic (topics.json "topics"): ids of the model's topics or -1."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise InvalidModelError(f"{where}: topics (each document's topic) is {shown(values, 40)}, not a list")
    out = []
    for i, t in enumerate(values):
        try:
            topic = strict_int(t, where, "", text=False)
        except BadValueError:
            topic = None
        if topic not in ids:
            raise InvalidModelError(f"{where}: topics[{i}] (document {i}'s topic) is {shown(t, 40)}, not one "
                                    "of the model's topic ids or -1")
        out.append(topic)
    return out


def _words(rep: Any, where: str, topic: int) -> tuple[str, ...]:
    """A representation's words in order: [[word, score], ...]; BERTopic's padding ("") dropped."""
    if not isinstance(rep, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and _finite(p[1]) for p in rep):
        raise InvalidModelError(f"{where}: topic {topic}'s representation is not a list of [word, score] "
                                "pairs (a word and a finite number)")
    words = tuple(p[0] for p in rep if p[0] != "")
    odd = next((w for w in words if UNSHOWABLE.search(w) or any(c in w for c in "\t\n\r")), None)
    if odd is not None:
        raise InvalidModelError(f"{where}: topic {topic}'s word {shown(odd)} holds a control character")
    twice = next((w for i, w in enumerate(words) if w in words[:i]), None)
    if twice is not None:
        raise InvalidModelError(f"{where}: topic {topic}'s representation lists {shown(twice)} twice")
    return words


def _finite(score: Any) -> bool:
    """A representation's score: a finite number (`strict_float`: a JSON number or a numpy scalar)."""
    try:
        strict_float(score, "", "score", text=False)
    except BadValueError:
        return False
    return True


def _vocab(config: dict, where: str) -> tuple[str, ...]:
    """The vectorizer's words in column order, from {word: column}: every column 0..V-1 once."""
    vectorizer = config.get("vectorizer_model")
    vocab = vectorizer.get("vocab") if isinstance(vectorizer, dict) else None
    if not isinstance(vocab, dict) or not vocab:
        raise InputFileError(f"{where}: no vectorizer_model.vocab (BERTopic's word -> column map)")
    return words_by_column(vocab, where, "vectorizer_model.vocab")


def _ctfidf(parts: dict, rows: int, cols: int, where: str) -> np.ndarray:
    """The dense c-TF-IDF matrix from its CSR parts, every part checked against the others."""
    missing = [k for k in ("indptr", "indices", "data", "shape") if k not in parts]
    if missing:
        raise InputFileError(f"{where}: no {missing[0]!r} tensor; not BERTopic's c-TF-IDF file")
    indptr, indices, data, shape = (np.asarray(parts[k]) for k in ("indptr", "indices", "data", "shape"))
    damaged = InvalidModelError(f"{where}: the c-TF-IDF matrix's CSR parts do not agree (damaged)")
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or tuple(int(s) for s in shape) != (rows, cols):
        raise InvalidModelError(f"{where}: the c-TF-IDF matrix is {shape.tolist()}, but topics.json has "
                                f"{rows} topics and the vocabulary {cols} words")
    if (indptr.shape != (rows + 1,) or indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu"
            or indices.shape != data.shape or data.ndim != 1):
        raise damaged
    indptr, indices = _int64(indptr, damaged), _int64(indices, damaged)
    if indptr[0] != 0 or (np.diff(indptr) < 0).any() or indptr[-1] != indices.size:
        raise damaged
    if indices.size and (indices.min() < 0 or indices.max() >= cols):
        raise InvalidModelError(f"{where}: the c-TF-IDF matrix names a column outside 0..{cols - 1}")
    if data.dtype.kind != "f" or not np.isfinite(data).all() or (data < 0).any():
        raise InvalidModelError(f"{where}: the c-TF-IDF scores must be finite and non-negative")
    check_memory(f"{where}: a {rows:,} x {cols:,} matrix (topics x words)", 8.0 * rows * cols)
    row_of = np.repeat(np.arange(rows), np.diff(indptr))
    if indices.size and np.unique(row_of * cols + indices).size != indices.size:
        raise InvalidModelError(f"{where}: the c-TF-IDF matrix gives a word twice in one topic's row "
                                "(damaged)")
    dense = np.zeros((rows, cols))
    dense[row_of, indices] = data.astype(np.float64)
    return dense


def _int64(a: np.ndarray, damaged: Exception) -> np.ndarray:
    """Integer CSR part `a` as int64 (unsigned values past int64's range are damage, not wrapped)."""
    if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise damaged
    return a.astype(np.int64)
