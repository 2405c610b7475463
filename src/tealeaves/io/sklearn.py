"""scikit-learn `LatentDirichletAllocation` (alone with a vocabulary, or inside a Pipeline after a
CountVectorizer/TfidfVectorizer). phi = `components_` with each row normalised (the mean of the
variational posterior over topics), alpha = `doc_topic_prior_` for every topic, beta =
`topic_word_prior_`. The vocabulary comes from the fitted vectorizer (or a word list).

scikit-learn has no loader of its own (models are pickled), so tealeaves takes only the fitted
objects: unpickle a file yourself, and only if you trust it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidModelError, MethodError
from ..model import TopicModel
from .common import build_model


def _is_lda(obj: Any) -> bool:
    return type(obj).__name__ == "LatentDirichletAllocation" and type(obj).__module__.startswith("sklearn")


def is_sklearn(obj: Any) -> bool:
    return _is_lda(obj) or (type(obj).__name__ == "Pipeline" and any(_is_lda(s) for _, s in obj.steps))


def from_sklearn(obj: Any, vocab: Any = None, name: str = "sklearn") -> TopicModel:
    lda = obj
    if type(obj).__name__ == "Pipeline":
        steps = [s for _, s in obj.steps]
        lda = next(s for s in steps if _is_lda(s))
        before = steps[: steps.index(lda)]
        vec = next((s for s in reversed(before) if hasattr(s, "get_feature_names_out")), None)
        if vocab is None and vec is not None:
            vocab = vec
    if not hasattr(lda, "components_"):
        raise InvalidModelError("the LatentDirichletAllocation is not fitted (no components_)")
    if vocab is not None and hasattr(vocab, "get_feature_names_out"):
        try:
            vocab = vocab.get_feature_names_out()
        except Exception as exc:  # NotFittedError and friends
            raise InvalidModelError(
                f"the vectorizer gives no vocabulary ({type(exc).__name__}: {exc})"
            ) from None
    words: Sequence[str] | None = None if vocab is None else [str(w) for w in vocab]
    phi = lda.components_  # copied once, block by block, into the model (it stays the user's)
    if words is not None and len(words) != np.shape(phi)[1]:
        raise MethodError(f"the vocabulary has {len(words)} words but the model {phi.shape[1]}")
    meta = {
        "format": "sklearn",
        "vocab": "given" if words else "none: pass the fitted vectorizer or a word list",
    }
    return build_model(
        phi, float(lda.doc_topic_prior_), words, float(lda.topic_word_prior_), name, None, meta
    )
