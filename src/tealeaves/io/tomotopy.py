"""tomotopy `LDAModel` (and subclasses with the same topic-word interface). phi rows are
`get_topic_word_dist(k)` over `used_vocabs` (the words left after tomotopy's pruning, in that
order, not `vocabs`), renormalised in float64 (tomotopy computes in float32); alpha is the model's
alpha vector (optimised during training unless `optim_interval=0`); beta = eta.

Files are loaded with tomotopy's own `LDAModel.load` (a binary format)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import InputFileError
from ..model import TopicModel
from .common import build_model, require

MAGIC = b"LDA\x00"


def is_tomotopy(obj: Any) -> bool:
    return type(obj).__module__.startswith("tomotopy") and hasattr(obj, "get_topic_word_dist")


def from_tomotopy(mdl: Any, name: str = "tomotopy", source: str | None = None) -> TopicModel:
    phi = np.array([mdl.get_topic_word_dist(k) for k in range(mdl.k)], dtype=np.float64)
    vocab = [str(w) for w in mdl.used_vocabs]
    meta = {
        "format": "tomotopy",
        "source": source,
        "removed_top_words": list(getattr(mdl, "removed_top_words", [])),
    }
    return build_model(phi, mdl.alpha, vocab, float(mdl.eta), name, source, meta)


def load_tomotopy(path: str | os.PathLike) -> TopicModel:
    require("tomotopy", "tomotopy")
    import tomotopy as tp

    path = os.fspath(path)
    try:
        mdl = tp.LDAModel.load(path)
    except Exception as exc:  # tomotopy raises OSError/ValueError/RuntimeError for bad files
        raise InputFileError(
            f"{path}: tomotopy cannot load it as an LDAModel ({type(exc).__name__}: {exc})"
        ) from None
    return from_tomotopy(mdl, name=os.path.basename(path), source=path)
