"""gensim `LdaModel` / `LdaMulticore`: phi = `get_topics()` (each topic's normalised lambda),
alpha = the model's alpha vector, beta = eta when it is one value for every word. A model saved
without its dictionary (`id2word`) has no words; tealeaves says so rather than inventing names.

Files are loaded with gensim's own `LdaModel.load` (a pickle: it runs code from the file, so load
only files you trust)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import InputFileError, InvalidModelError
from ..model import CheckedPhi, TopicModel, fill_phi, phi_layout, row_blocks
from .common import build_model, require


def is_gensim_lda(obj: Any) -> bool:
    return type(obj).__module__.startswith("gensim.models.lda") and hasattr(obj, "get_topics")


def topics(lda: Any) -> Any:
    """`lda.get_topics()` (lambda = eta + sstats, each row normalised, in gensim's dtype) checked
    into the model's layout a block of topics at a time when the model uses gensim's own
    `get_topics` and `get_lambda`: the same numbers without gensim's two T x V temporaries."""
    from gensim.models.ldamodel import LdaModel, LdaState

    state = getattr(lda, "state", None)
    if type(lda).get_topics is not LdaModel.get_topics or type(state).get_lambda is not LdaState.get_lambda:
        return lda.get_topics()
    sstats, eta = state.sstats, np.asarray(state.eta)
    T, V = sstats.shape

    def blocks():
        for rows in row_blocks(T, V):
            lam = (eta[rows] if eta.ndim == 2 else eta) + sstats[rows]
            yield lam / lam.sum(axis=1)[:, None]

    return CheckedPhi(fill_phi(phi_layout(T, V), blocks(), normalize=True))


def from_gensim(lda: Any, name: str = "gensim", source: str | None = None) -> TopicModel:
    try:
        phi = topics(lda)
    except InvalidModelError as exc:
        raise InvalidModelError(f"{source or name}: {exc}") from None
    eta = np.asarray(lda.eta, dtype=np.float64)
    same = bool(eta.size) and np.allclose(eta, eta.reshape(-1)[0])
    beta = float(eta.reshape(-1)[0]) if same else None
    id2word = lda.id2word
    vocab = None
    if id2word is not None and type(id2word).__name__ != "FakeDict":
        num_words = (phi.array if isinstance(phi, CheckedPhi) else phi).shape[1]
        vocab = [str(id2word[i]) for i in range(num_words)]
    meta = {
        "format": "gensim",
        "source": source,
        "beta": "eta" if same else (f"none: eta differs by word (eta='auto' learns it; shape {eta.shape}, "
                                    f"mean {float(eta.mean()):.4g}); one beta cannot stand for it"),
        "vocab": "from id2word"
        if vocab
        else "none: the model was saved without its dictionary (id2word); words are unknown",
    }
    return build_model(phi, lda.alpha, vocab, beta, name, source, meta)


def load_gensim(path: str | os.PathLike) -> TopicModel:
    require("gensim", "gensim")
    from gensim.models import LdaModel

    path = os.fspath(path)
    try:
        lda = LdaModel.load(path)
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file (or a gensim file next to it is missing)") from None
    except Exception as exc:  # gensim raises many kinds for a bad file
        raise InputFileError(
            f"{path}: gensim cannot load it as an LdaModel ({type(exc).__name__}: {exc})"
        ) from None
    return from_gensim(lda, name=os.path.basename(path), source=path)
