"""scikit-learn `LatentDirichletAllocation` (alone with a vocabulary, or inside a Pipeline after a
CountVectorizer/TfidfVectorizer). phi = `components_` with each row normalised (the mean of the
variational posterior over topics), alpha = `doc_topic_prior_` for every topic, beta =
`topic_word_prior_`. The vocabulary comes from the fitted vectorizer (or a word list): one making
n-grams is refused (its features are not words a document holds); an LDA fitted to TF-IDF weights
or 0/1 presence is read, with that caveat in its metadata (the CLI warns).

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
from .common import build_model, words_by_column


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


def _unpack(obj: Any, vocab: Any, test: Any, kind: str,
            where: str) -> tuple[Any, Sequence[str] | None, str | None]:
    """The fitted estimator (alone or in a Pipeline), its words (the given vocabulary, else the
    pipeline's vectorizer), checked against its components, and what the pipeline fed it when that
    was not word counts (`counts_caveat`)."""
    est, caveat = obj, None
    if type(obj).__name__ == "Pipeline":
        steps = [s for _, s in obj.steps]
        est = next(s for s in steps if test(s))
        before = steps[: steps.index(est)]
        vec = next((s for s in reversed(before) if hasattr(s, "get_feature_names_out")), None)
        if vec is not None:
            _single_words(vec, where)
        caveat = counts_caveat(before)
        if vocab is None and vec is not None:
            vocab = vec
    if not hasattr(est, "components_"):
        raise InvalidModelError(f"{where}: the {kind} is not fitted (no components_)")
    columns = getattr(vocab, "vocabulary_", None)
    if isinstance(columns, dict):  # get_feature_names_out would hide two words on one column
        vocab = words_by_column(columns, where, f"the {type(vocab).__name__}'s vocabulary_")
    elif vocab is not None and hasattr(vocab, "get_feature_names_out"):
        try:
            vocab = vocab.get_feature_names_out()
        except Exception as exc:  # NotFittedError and friends
            raise InvalidModelError(
                f"{where}: the vectorizer gives no vocabulary ({type(exc).__name__}: {exc})"
            ) from None
    words: Sequence[str] | None = None if vocab is None else [str(w) for w in vocab]
    V = np.shape(est.components_)[1]
    if words is not None and len(words) != V:
        raise MethodError(f"{where}: the vocabulary has {len(words)} words but the model {V}")
    return est, words, caveat


def _single_words(vec: Any, where: str) -> None:
    """A one-line error for a vectorizer whose features are not single words (word n-grams,
    character n-grams): they cannot be matched to the documents' whitespace-separated tokens."""
    analyzer = getattr(vec, "analyzer", "word")
    ngrams = tuple(getattr(vec, "ngram_range", (1, 1)) or (1, 1))
    if isinstance(analyzer, str) and analyzer != "word":
        what = f"character n-grams (analyzer={analyzer!r})"
    elif analyzer == "word" and ngrams != (1, 1):
        what = f"word n-grams (ngram_range={ngrams})"
    else:
        return
    raise InvalidModelError(f"{where}: the pipeline's {type(vec).__name__} makes {what}, not single words; "
                            "tealeaves scores documents word by word (fit it with ngram_range=(1, 1))")


def counts_caveat(steps: Sequence[Any]) -> str | None:
    """Why the LDA after `steps` was not fitted to word counts (TF-IDF weights, 0/1 presence),
    else None: its likelihood of raw counts is then not comparable with count-trained models."""
    for step in steps:
        kind = type(step).__name__
        if kind in ("TfidfVectorizer", "TfidfTransformer"):
            return (f"fitted to TF-IDF weights ({kind}), not word counts: its held-out likelihood of "
                    "counts is not comparable with count-trained models")
        if getattr(step, "binary", False) is True:
            return (f"fitted to 0/1 word presence ({kind}(binary=True)), not word counts: its held-out "
                    "likelihood of counts is not comparable with count-trained models")
    return None


def sklearn_nmf(obj: Any, vocab: Any = None, name: str = "sklearn", source: str | None = None) -> Any:
    """A fitted scikit-learn NMF as `Topics` (see the module notes)."""
    from ..topics import Topics

    nmf, words, _ = _unpack(obj, vocab, _is_nmf, type(obj).__name__ if _is_nmf(obj) else "NMF",
                            source or name)
    weights = np.array(nmf.components_, dtype=np.float64)
    return Topics(name=name, source=f"scikit-learn {type(nmf).__name__}",
                  vocab=None if words is None else tuple(words), weights=weights,
                  weights_kind="nonnegative", weights_note="NMF components",
                  metadata={"format": "sklearn", "vocab": "given" if words else "none"})


def from_sklearn(obj: Any, vocab: Any = None, name: str = "sklearn", source: str | None = None) -> TopicModel:
    """A fitted LatentDirichletAllocation (alone or in a Pipeline) as a `TopicModel`; one fitted
    to something other than counts carries the reason in metadata["caveat"]."""
    lda, words, caveat = _unpack(obj, vocab, _is_lda, "LatentDirichletAllocation", source or name)
    phi = lda.components_  # copied once, block by block, into the model (it stays the user's)
    meta: dict[str, Any] = {
        "format": "sklearn",
        "vocab": "given" if words else "none: pass the fitted vectorizer or a word list",
    }
    if caveat:
        meta["caveat"] = caveat
    return build_model(
        phi, float(lda.doc_topic_prior_), words, float(lda.topic_word_prior_), name, source, meta
    )
