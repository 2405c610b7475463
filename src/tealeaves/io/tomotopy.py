"""tomotopy `LDAModel` (and subclasses with the same topic-word interface). phi rows are
`get_topic_word_dist(k)` over `used_vocabs` (the words left after tomotopy's pruning, in that
order, not `vocabs`), renormalised in float64 (tomotopy computes in float32); alpha is the model's
alpha vector (optimised during training unless `optim_interval=0`); beta = eta. The term weighting
(`tw`) is kept in the metadata; a model trained with IDF or PMI weighting carries a caveat (its
distributions are over weighted counts), which the CLI prints as a warning.

Files are loaded with tomotopy's own `LDAModel._load` in a child process with a time limit
(`native`): its loader aborts the process or loops on bad files. (`LDAModel.load` would also
unpickle the constructor's arguments the file carries; `_load` leaves them alone.) A file of
another tomotopy model (HDP, CTM, ...) is named as such: `tomotopy_zoo` reads those."""

from __future__ import annotations

import os
from typing import Any

from ..errors import InvalidModelError
from ..model import TopicModel, phi_layout
from .common import build_model, require
from .native import load_isolated
from .tomotopy_zoo import NAMES as ZOO_FORMATS
from .tomotopy_zoo import check_complete, term_weighting, weighting_metadata
from .tomotopy_zoo import sniff as sniff_zoo

MAGIC = b"LDA\x00"
TERM_WEIGHTING = {0: "one", 1: "idf", 2: "pmi"}


def is_tomotopy(obj: Any) -> bool:
    return type(obj).__module__.startswith("tomotopy") and hasattr(obj, "get_topic_word_dist")


def from_tomotopy(mdl: Any, name: str = "tomotopy", source: str | None = None) -> TopicModel:
    vocab = [str(w) for w in mdl.used_vocabs]
    phi = phi_layout(int(mdl.k), len(vocab))
    for k in range(mdl.k):  # one topic at a time: no list of all rows
        phi[k] = mdl.get_topic_word_dist(k)
    removed = [str(w) for w in getattr(mdl, "removed_top_words", [])]
    tw = getattr(mdl, "tw", None)  # tomotopy.TermWeight: ONE = 0, IDF = 1, PMI = 2
    tw = TERM_WEIGHTING.get(int(tw), str(tw)) if tw is not None else None
    return _build(phi, mdl.alpha, vocab, float(mdl.eta), removed, name, source, tw)


def _build(phi: Any, alpha: Any, vocab: list[str], eta: float, removed: list[str], name: str,
           source: str | None, tw: str | None) -> TopicModel:
    meta = {"format": "tomotopy", "source": source, "removed_top_words": removed, **weighting_metadata(tw)}
    return build_model(phi, alpha, vocab, eta, name, source, meta, copy=False)


def load_tomotopy(path: str | os.PathLike, timeout: float | None = None) -> TopicModel:
    require("tomotopy", "tomotopy")
    path = os.fspath(path)
    _not_zoo(path)
    check_complete(path)
    a = load_isolated("tomotopy", path, "tomotopy", timeout)
    return _build(a["phi"], a["alpha"], [str(w) for w in a["vocab"]], float(a["eta"]),
                  [str(w) for w in a["removed_top_words"]], os.path.basename(path), path,
                  term_weighting(path))


def _not_zoo(path: str) -> None:
    """Refuse, in one line, a file of another tomotopy model (its loader would crash on it)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return  # the loader names the problem
    fmt = sniff_zoo(path, head)
    if fmt is not None:
        raise InvalidModelError(
            f"{path}: a tomotopy {ZOO_FORMATS[fmt]} file, not LDA: read it with tealeaves.load_topics "
            f"(CLI: --model-format {fmt}); metrics that need LDA say whether they apply")
