"""scikit-learn `LatentDirichletAllocation` (alone with a vocabulary, or inside a Pipeline after a
CountVectorizer/TfidfVectorizer). phi = `components_` with each row normalised (the mean of the
variational posterior over topics), alpha = `doc_topic_prior_` for every topic, beta =
`topic_word_prior_`. The vocabulary comes from the fitted vectorizer (or a word list).

scikit-learn's `NMF` (alone or in a Pipeline) is `Topics` (`sklearn_nmf`): `components_` as
non-negative weights ("NMF components", no prior: no likelihood), with the same vocabulary rules.

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


def _is_nmf(obj: Any) -> bool:
    return type(obj).__name__ in ("NMF", "MiniBatchNMF") and type(obj).__module__.startswith("sklearn")


def _in_pipeline(obj: Any, test: Any) -> bool:
    return type(obj).__name__ == "Pipeline" and any(test(s) for _, s in obj.steps)


def is_sklearn(obj: Any) -> bool:
    return _is_lda(obj) or _in_pipeline(obj, _is_lda)


def is_sklearn_nmf(obj: Any) -> bool:
    return _is_nmf(obj) or _in_pipeline(obj, _is_nmf)


def _unpack(obj: Any, vocab: Any, test: Any, kind: str) -> tuple[Any, Sequence[str] | None]:
    """The fitted estimator (alone or in a Pipeline) and its words (the given vocabulary, else the
    pipeline's vectorizer), checked against its components."""
    est = obj
    if type(obj).__name__ == "Pipeline":
        steps = [s for _, s in obj.steps]
        est = next(s for s in steps if test(s))
        before = steps[: steps.index(est)]
        vec = next((s for s in reversed(before) if hasattr(s, "get_feature_names_out")), None)
        if vocab is None and vec is not None:
            vocab = vec
    if not hasattr(est, "components_"):
        raise InvalidModelError(f"the {kind} is not fitted (no components_)")
    if vocab is not None and hasattr(vocab, "get_feature_names_out"):
        try:
            vocab = vocab.get_feature_names_out()
        except Exception as exc:  # NotFittedError and friends
            raise InvalidModelError(
                f"the vectorizer gives no vocabulary ({type(exc).__name__}: {exc})"
            ) from None
    words: Sequence[str] | None = None if vocab is None else [str(w) for w in vocab]
    V = np.shape(est.components_)[1]
    if words is not None and len(words) != V:
        raise MethodError(f"the vocabulary has {len(words)} words but the model {V}")
    return est, words


def sklearn_nmf(obj: Any, vocab: Any = None, name: str = "sklearn") -> Any:
    """A fitted scikit-learn NMF as `Topics` (see the module notes)."""
    from ..topics import Topics

    nmf, words = _unpack(obj, vocab, _is_nmf, type(obj).__name__ if _is_nmf(obj) else "NMF")
    weights = np.array(nmf.components_, dtype=np.float64)
    return Topics(name=name, source=f"scikit-learn {type(nmf).__name__}",
                  vocab=None if words is None else tuple(words), weights=weights,
                  weights_kind="nonnegative", weights_note="NMF components",
                  metadata={"format": "sklearn", "vocab": "given" if words else "none"})


def from_sklearn(obj: Any, vocab: Any = None, name: str = "sklearn") -> TopicModel:
    lda, words = _unpack(obj, vocab, _is_lda, "LatentDirichletAllocation")
    phi = lda.components_  # copied once, block by block, into the model (it stays the user's)
    meta = {
        "format": "sklearn",
        "vocab": "given" if words else "none: pass the fitted vectorizer or a word list",
    }
    return build_model(
        phi, float(lda.doc_topic_prior_), words, float(lda.topic_word_prior_), name, None, meta
    )
