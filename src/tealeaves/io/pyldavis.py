"""pyLDAvis-style data: a dict (or a JSON file of one) with `topic_term_dists` (T x V),
`vocab` (V words) and optionally `doc_topic_dists`, `doc_lengths`, `term_frequency`. It carries no
Dirichlet parameter, so alpha must be given (a number for every topic, or a vector). Its rows
must be distributions (numbers, summing to 1) unless `normalize` is given, as for plain arrays."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..errors import InputFileError, MethodError
from ..files.records import read_json
from ..model import TopicModel
from .arrays import check_rows
from .common import build_model

KEYS = ("topic_term_dists", "vocab")


def is_pyldavis(obj: Any) -> bool:
    return isinstance(obj, dict) and "topic_term_dists" in obj


def tealeaves_result(data: Any) -> str | None:
    """What tealeaves result a JSON object is ("a tealeaves result (the --json output of `tealeaves
    coherence`), not a model; give the model it was computed from (m.npz)"), or None when it is
    none (every command's --json has "command"; a result's to_dict has "task")."""
    if not isinstance(data, dict):
        return None
    command, task = data.get("command"), data.get("task")
    if isinstance(command, str):
        out = f"a tealeaves result (the --json output of `tealeaves {command}`)"
    elif isinstance(task, str) and "topic_term_dists" not in data:
        out = f"a tealeaves result (a {task} result's to_dict)"
    else:
        return None
    made = [data.get(k) for k in ("model", "model_path", "model_a", "model_b")]
    made += [m for k in ("models", "model_paths") if isinstance(data.get(k), list) for m in data[k]]
    made = [m for m in made if isinstance(m, str)]
    hint = f"; give the model it was computed from ({', '.join(made[:3])})" if made else ""
    return out + ", not a model" + hint


def from_pyldavis(
    data: dict[str, Any], alpha: Any = None, name: str = "pyldavis", source: str | None = None,
    normalize: bool = False,
) -> TopicModel:
    """A model from pyLDAvis data. `topic_term_dists` must hold JSON numbers (not strings or
    booleans) whose rows are distributions (summing to 1, as pyLDAvis.prepare requires) unless
    `normalize` (CLI --normalize), which rescales them and says so in the metadata ("normalized")."""
    where = source or name
    missing = [k for k in KEYS if k not in data]
    if missing:
        result = tealeaves_result(data)
        if result:
            raise InputFileError(f"{where}: {result}")
        raise InputFileError(f"{where}: pyLDAvis data lacks {', '.join(missing)}")
    if alpha is None:
        raise MethodError(f"{where}: pyLDAvis data has no alpha; pass alpha= (a number or one per topic)")
    phi = _numbers(data["topic_term_dists"], where)
    vocab = data["vocab"]
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        bad = next((i for i, w in enumerate(vocab) if not isinstance(w, str)), None) \
            if isinstance(vocab, list) else None
        raise InputFileError(f"{where}: vocab must be a list of words (strings)"
                             + (f"; entry {bad} is {vocab[bad]!r}" if bad is not None else ""))
    meta: dict[str, Any] = {"format": "pyldavis", "source": source}
    if phi.ndim == 2 and phi.size:
        phi, note = check_rows(phi, where, "topic_term_dists", normalize, weights=False)
        if note:
            meta["normalized"] = note
    return build_model(phi, alpha, vocab, None, name, source, meta, normalize=False)


def _numbers(value: Any, where: str) -> np.ndarray:
    """`topic_term_dists` as a float matrix: a NumPy array of numbers, or nested lists of numbers
    (a string, a boolean or null in a cell is named, not converted)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fiu":
            raise InputFileError(f"{where}: topic_term_dists must be numbers, got {value.dtype}")
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, list):
        for t, row in enumerate(value):
            for w, x in enumerate(row if isinstance(row, list) else []):
                if isinstance(x, bool) or not isinstance(x, int | float | np.integer | np.floating):
                    raise InputFileError(f"{where}: topic_term_dists[{t}][{w}] is {_json(x)}, not a "
                                         "number (write numbers unquoted)")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputFileError(f"{where}: topic_term_dists is not a numeric matrix") from None


def _json(x: Any) -> str:
    try:
        return json.dumps(x)[:40]
    except (TypeError, ValueError):
        return type(x).__name__


def load_pyldavis(path: str | os.PathLike, alpha: Any = None, normalize: bool = False) -> TopicModel:
    path = os.fspath(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputFileError(f"{path}: expected a JSON object with topic_term_dists and vocab")
    return from_pyldavis(data, alpha, name=os.path.basename(path), source=path, normalize=normalize)
