"""pyLDAvis-style data: a dict (or a JSON file of one) with `topic_term_dists` (T x V),
`vocab` (V words) and optionally `doc_topic_dists`, `doc_lengths`, `term_frequency`. It carries no
Dirichlet parameter, so alpha must be given (a number for every topic, or a vector)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import InputFileError, MethodError
from ..files.records import read_json
from ..model import TopicModel
from .common import build_model

KEYS = ("topic_term_dists", "vocab")


def is_pyldavis(obj: Any) -> bool:
    return isinstance(obj, dict) and "topic_term_dists" in obj


def from_pyldavis(
    data: dict[str, Any], alpha: Any = None, name: str = "pyldavis", source: str | None = None
) -> TopicModel:
    where = source or name
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise InputFileError(f"{where}: pyLDAvis data lacks {', '.join(missing)}")
    if alpha is None:
        raise MethodError(f"{where}: pyLDAvis data has no alpha; pass alpha= (a number or one per topic)")
    try:
        phi = np.asarray(data["topic_term_dists"], dtype=np.float64)
    except (TypeError, ValueError):
        raise InputFileError(f"{where}: topic_term_dists is not a numeric matrix") from None
    vocab = data["vocab"]
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        bad = next((i for i, w in enumerate(vocab) if not isinstance(w, str)), None) \
            if isinstance(vocab, list) else None
        raise InputFileError(f"{where}: vocab must be a list of words (strings)"
                             + (f"; entry {bad} is {vocab[bad]!r}" if bad is not None else ""))
    meta = {"format": "pyldavis", "source": source}
    return build_model(phi, alpha, vocab, None, name, source, meta)


def load_pyldavis(path: str | os.PathLike, alpha: Any = None) -> TopicModel:
    path = os.fspath(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputFileError(f"{path}: expected a JSON object with topic_term_dists and vocab")
    return from_pyldavis(data, alpha, name=os.path.basename(path), source=path)
