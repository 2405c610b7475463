"""What a trained topic model provides, whatever its kind, and what each metric needs from it.

`TopicModel` is LDA: topic-word distributions and a Dirichlet prior, everything a held-out
likelihood needs. Other models provide less, or something else:

- ranked top words only (a topics-per-line file, OCTIS's topic lists);
- topic-word weights that are not probabilities: `"nonnegative"` (NMF, BERTopic's c-TF-IDF
  scores, HDP's unnormalised counts) or `"signed"` (LSI);
- topic-word distributions without a generative prior (pLSA-like outputs, OCTIS matrices);
- a generative model: distributions (or log-weights) with a prior over proportions —
  `"dirichlet"` (alpha) or `"logistic-normal"` (mean, cov: CTM, ETM, ProdLDA) — and a
  decoder, `"mixture"` p(w | θ) = Σ_k θ_k φ_k(w), or `"product-of-experts"` p(w | θ) =
  softmax(θ B)(w);
- document-topic proportions of the training documents (`doc_topic`), when the library keeps them.

`Topics` holds any of these; `NEEDS` says what each metric needs and `why_not(metric, topics)`
gives the one-line reason a metric does not apply (shown as "—" with that reason), so no metric
is ever computed from the wrong kind of input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidModelError, MethodError, shown
from .model import TopicModel, check_alpha, check_vocab
from .util.limits import check_int

WEIGHTS_KINDS = ("distributions", "nonnegative", "signed")
PRIORS = ("dirichlet", "logistic-normal")
DECODERS = ("mixture", "product-of-experts")
PSD_TOLERANCE = 1e-10  # eigenvalues below -this x the largest make `cov` not a covariance
ARRAYS = ("weights", "doc_topic", "alpha", "mean", "cov", "topic_weights")
DOC_TOPIC_TOLERANCE = 1e-4  # a row of proportions may sum to 1 within this (float32 files round)

# What each metric needs: "top_words", "weights" (non-negative topic-word weights),
# "distributions" (rows are probability distributions), "doc_topic" (proportions of documents),
# "generative" (distributions or log-weights, a prior and a decoder), "lda" (the Dirichlet-mixture
# model the collapsed samplers need).
NEEDS: dict[str, tuple[str, ...]] = {
    "coherence": ("top_words",),
    "diversity": ("top_words",),
    "word intrusion": ("top_words",),
    "auto MP": ("top_words",),
    "exclusivity": ("weights",),
    "topic intrusion": ("doc_topic", "top_words"),
    "proxann": ("doc_topic", "top_words"),
    "bcubed": ("doc_topic",),
    "heldout": ("generative",),
    "perplexity": ("generative",),
    "completion": ("generative",),
    "compare": ("lda",),
    "curve": ("lda",),
    "predictive": ("lda",),
    "csl": ("lda",),
    "diagnostics": ("distributions",),
}


def hdp_prior(alpha: float, gamma: float, truncation: str, convert: str) -> str:
    """What an HDP's prior is and why tealeaves gives it no held-out likelihood (`Topics.prior_note`).

    An HDP (Teh et al. 2006) has a prior over topic proportions: a document's proportions are a
    Dirichlet process DP(alpha, G0) around the corpus-level measure G0 ~ DP(gamma, H). Its held-out
    likelihood integrates over that prior: the uncertainty in G0's weights and the mass it keeps for
    topics not yet created (drawn from H; gamma / (tables + gamma) in a Gibbs sampler's state).
    Truncating to the topics in the file (an LDA with Dirichlet(alpha x the top-level weights), as
    gensim's hdp_to_lda() does) gives that mass to no topic and fixes the weights: the likelihood of
    another model, whose truncation depends on the library (tomotopy's live topics, gensim's T). So
    no likelihood is claimed under the HDP's name; the truncation is an LDA anyone can score as one,
    named as such. `truncation` says what it would be here, `convert` where its alpha comes from."""
    return (f"a hierarchical Dirichlet-process prior over topic proportions (alpha {alpha:g}, gamma "
            f"{gamma:g}), which tealeaves has no held-out estimator for: it integrates over the top-level "
            f"weights and the mass kept for new topics; {truncation} is another model, an LDA (from "
            f"{convert}) that can be saved and scored as one")


PA_PRIOR = ("a pachinko-allocation prior (a Dirichlet over super-topics, each with its own Dirichlet over "
            "the sub-topics), not one Dirichlet over the sub-topics, which tealeaves has no held-out "
            "estimator for")
DMR_PRIOR = ("a Dirichlet prior that depends on each document's metadata: give the metadata value whose "
             "prior scores the held-out documents (metadata=..., CLI --dmr-metadata)")


class NotApplicableError(MethodError):
    """A metric asked of a model that cannot give it (the message says why)."""


@dataclass(frozen=True, eq=False)
class Topics:
    """A trained topic model of any kind: what it provides (fields left None it does not).

    `source` names who made it ("gensim LsiModel", "BERTopic 0.16.4 directory"), `weights_note`
    what its weights are when they are not probabilities ("c-TF-IDF scores"), `prior_note` the prior
    over topic proportions a model has when it is neither of `PRIORS` (an HDP's hierarchical
    Dirichlet process): all appear in the reasons a metric does not apply."""

    name: str
    source: str
    vocab: tuple[str, ...] | None = None
    top_words: tuple[tuple[str, ...], ...] | None = None
    weights: np.ndarray | None = None  # T x V
    weights_kind: str | None = None
    weights_note: str = ""
    doc_topic: np.ndarray | None = None  # D x T, the training documents
    prior: str | None = None
    alpha: np.ndarray | None = None  # dirichlet: length T
    mean: np.ndarray | None = None  # logistic-normal: length T
    cov: np.ndarray | None = None  # logistic-normal: T x T (may be singular)
    decoder: str | None = None
    topic_weights: np.ndarray | None = None  # e.g. HDP's stick weights or topic sizes, length T
    topic_names: tuple[str, ...] | None = None  # labels (LLDA, PLDA, BERTopic's names, HDP's ids), length T
    lda: TopicModel | None = field(default=None, repr=False)  # the LDA it is, when it is one
    metadata: dict[str, Any] = field(default_factory=dict)
    prior_note: str = ""  # with prior None, the prior it has that tealeaves has no likelihood for

    def __post_init__(self) -> None:
        for label in ARRAYS:  # lists become arrays here; anything else not numbers is refused
            value = getattr(self, label)
            if value is not None and label != "lda":
                object.__setattr__(self, label, _numbers(self, label, value))
        check_topics(self)

    @classmethod
    def from_lda(cls, model: TopicModel, source: str = "LDA") -> Topics:
        """An LDA `TopicModel` as `Topics` (sharing its arrays)."""
        names = model.metadata.get("topic_names") if isinstance(model.metadata, dict) else None
        return cls(name=model.name, source=source, vocab=model.vocab, weights=model.phi,
                   weights_kind="distributions", prior="dirichlet", alpha=model.alpha,
                   decoder="mixture", lda=model, metadata=model.metadata,
                   topic_names=tuple(names) if names is not None else None)

    def __repr__(self) -> str:  # the arrays and the vocabulary would fill the screen
        kinds = ", ".join(sorted(self.provides()))
        return f"Topics({self.name!r}, {self.source}, {self.num_topics} topics; provides {kinds})"

    @property
    def num_topics(self) -> int:
        for arr in (self.weights, self.doc_topic, self.alpha, self.mean, self.topic_weights):
            if arr is not None:
                return int(arr.shape[-1] if arr is self.doc_topic else arr.shape[0])
        return len(self.top_words or ())

    @property
    def num_words(self) -> int:
        """V: the columns of the weights, else the vocabulary's length (0 for top words only)."""
        if self.weights is not None:
            return int(self.weights.shape[1])
        return len(self.vocab or ())

    def ranked_words(self, topn: int) -> list[list[str]]:
        """The `topn` top words of every topic: from `top_words`, else from the weights (largest
        first; for signed weights, largest absolute value, as LSI's users read them)."""
        topn = check_int("topn", topn, 1)
        if self.top_words is not None:
            return [list(t[:topn]) for t in self.top_words]
        if self.weights is None or self.vocab is None:
            raise NotApplicableError(f"model {shown(self.name, 120)} ({self.source}) has no top words "
                                     "and no topic-word weights with a vocabulary")
        w = np.abs(self.weights) if self.weights_kind == "signed" else self.weights
        order = np.argsort(-w, axis=1, kind="stable")[:, :topn]
        return [[self.vocab[i] for i in row] for row in order]

    def provides(self) -> set[str]:
        """What this model provides, in the terms of `NEEDS`."""
        out = set()
        if self.top_words is not None or (self.weights is not None and self.vocab is not None):
            out.add("top_words")
        if self.weights is not None and self.weights_kind in ("distributions", "nonnegative"):
            out.add("weights")
        if self.weights_kind == "distributions":
            out.add("distributions")
        if self.doc_topic is not None:
            out.add("doc_topic")
        if self.prior is not None and self.decoder is not None and self.weights is not None and (
                self.decoder == "product-of-experts" or self.weights_kind == "distributions"):
            out.add("generative")  # a mixture mixes distributions; a product of experts takes any log-weights
        if self.lda is not None:
            out.add("lda")
        return out


def why_not(metric: str, model: Topics | TopicModel) -> str | None:
    """None if `metric` applies to `model`; else the one-line reason it does not."""
    if metric not in NEEDS:
        raise MethodError(f"unknown metric {metric!r} (known: {', '.join(NEEDS)})")
    if isinstance(model, TopicModel) or (isinstance(model, Topics) and model.lda is not None):
        return None  # LDA provides everything; documents' proportions are inferred when not kept
    have = model.provides()
    missing = [n for n in NEEDS[metric] if n not in have]
    if not missing:
        return None
    who = f"{shown(model.name, 80)} ({model.source})"
    need = missing[0]
    if need == "generative" or need == "lda":
        if model.weights_kind in ("nonnegative", "signed"):
            what = model.weights_note or f"{model.weights_kind} topic-word weights"
            return f"{who}: its {what} are not probabilities: no likelihood"
        if model.weights is None:
            return f"{who}: top words only: no likelihood"
        if model.prior is None:
            return f"{who}: {model.prior_note or 'no prior over topic proportions'}: no likelihood"
        if model.decoder is None:
            return f"{who}: a {model.prior} prior but no decoder (mixture or product-of-experts): " \
                   "no likelihood"
        return f"{who}: {metric} needs LDA (a Dirichlet prior and a mixture of topics), not a " \
               f"{model.prior} prior with a {model.decoder} decoder"
    if need == "weights":
        if model.weights_kind == "signed":
            return f"{who}: its topic-word weights are signed ({model.weights_note or 'LSI'}): no exclusivity"
        return f"{who}: top words only, no topic-word weights"
    if need == "doc_topic":
        return f"{who}: no document-topic proportions"
    if need == "distributions":
        if model.weights is None:
            return f"{who}: top words only, no topic-word distributions"
        return f"{who}: its {model.weights_note or model.weights_kind + ' topic-word weights'} are not " \
               "probability distributions"
    return f"{who}: no top words (no vocabulary)"


def require(metric: str, model: Topics | TopicModel) -> None:
    """Raise `NotApplicableError` with the reason if `metric` does not apply to `model`."""
    reason = why_not(metric, model)
    if reason is not None:
        raise NotApplicableError(f"{metric} does not apply: {reason}")


def as_lda(metric: str, model: Topics | TopicModel) -> TopicModel:
    """The LDA `TopicModel` a metric that needs one scores (`require` first: a model of another
    kind gets the one-line reason). A generative model that is not LDA (a logistic-normal prior, a
    product of experts) is refused here by the estimators that integrate over a Dirichlet only."""
    if isinstance(model, TopicModel):
        return model
    if not isinstance(model, Topics):
        raise MethodError(f"{metric} needs a topic model (TopicModel or Topics), got {type(model).__name__}")
    require(metric, model)
    if model.lda is None:
        what = (f"a {model.prior} prior with a {model.decoder} decoder" if model.prior else
                model.prior_note or "no prior")
        raise NotApplicableError(f"{metric} does not apply: {shown(model.name, 80)} ({model.source}): it "
                                 "needs LDA (a Dirichlet prior and a mixture of topics); this model has "
                                 f"{what}")
    return model.lda


def word_scores(model: Topics | TopicModel,
                metric: str = "word intrusion") -> tuple[np.ndarray, tuple[str, ...]]:
    """What orders each topic's words (T x V, larger first) and the words: an LDA's phi; other
    weights as they are (signed ones by absolute value, as `ranked_words`); a model with top words
    only gets, over the words of its lists, topn - rank for a listed word and 0 for the others (the
    order is all it has). Used where only the order of words matters (word intrusion)."""
    if isinstance(model, TopicModel):
        return model.phi, model.require_vocab(f"{metric} shows words")
    require(metric, model)
    if model.weights is not None and model.vocab is not None:
        w = np.abs(model.weights) if model.weights_kind == "signed" else model.weights
        return w, model.vocab
    lists = model.top_words or ()
    vocab = tuple(dict.fromkeys(w for t in lists for w in t))
    index = {w: i for i, w in enumerate(vocab)}
    scores = np.zeros((len(lists), len(vocab)))
    for k, t in enumerate(lists):
        for r, w in enumerate(t):
            scores[k, index[w]] = max(scores[k, index[w]], len(t) - r)
    return scores, vocab


def check_topics(t: Topics) -> None:
    """One-line errors for a `Topics` whose parts disagree or are not what their kind says."""
    for label in ("name", "source"):
        if not isinstance(getattr(t, label), str):
            raise MethodError(f"Topics {label} must be a string, not {type(getattr(t, label)).__name__}")
    who = f"model {shown(t.name, 120)} ({t.source})"
    if t.weights_kind is not None and t.weights_kind not in WEIGHTS_KINDS:
        raise MethodError(f"{who}: weights_kind must be one of {', '.join(WEIGHTS_KINDS)}")
    if t.prior is not None and t.prior not in PRIORS:
        raise MethodError(f"{who}: prior must be one of {', '.join(PRIORS)}")
    if t.decoder is not None and t.decoder not in DECODERS:
        raise MethodError(f"{who}: decoder must be one of {', '.join(DECODERS)}")
    if (t.weights is None) != (t.weights_kind is None):
        raise MethodError(f"{who}: weights and weights_kind go together")
    T = t.num_topics
    if t.weights is not None:
        if t.weights.ndim != 2 or not np.isfinite(t.weights).all():
            raise InvalidModelError(f"{who}: topic-word weights must be a finite T x V matrix")
        if t.weights_kind == "nonnegative" and (t.weights < 0).any():
            raise InvalidModelError(f"{who}: weights said to be non-negative have negative values")
        if t.weights_kind == "distributions" and t.lda is None:  # an LDA was checked already
            sums = t.weights.sum(axis=1)
            bad = np.flatnonzero((np.abs(sums - 1.0) > 1e-6) | (t.weights < 0).any(axis=1))
            if bad.size:
                raise InvalidModelError(f"{who}: topic {int(bad[0])} is not a distribution (sums to "
                                        f"{float(sums[bad[0]]):.6g}); its weights are not probabilities")
        if t.vocab is not None and len(t.vocab) != t.weights.shape[1]:
            raise InvalidModelError(f"{who}: {len(t.vocab)} words but {t.weights.shape[1]} weight columns")
        try:
            check_vocab(t.vocab, t.weights.shape[1], phrases=True)
        except InvalidModelError as exc:
            raise InvalidModelError(f"{who}: {exc}") from None
    for label, arr, shape in (("alpha", t.alpha, (T,)), ("mean", t.mean, (T,)), ("cov", t.cov, (T, T)),
                              ("topic_weights", t.topic_weights, (T,))):
        if arr is not None and (arr.shape != shape or not np.isfinite(arr).all()):
            raise InvalidModelError(f"{who}: {label} must be finite with shape {shape}, got {arr.shape}")
    if t.doc_topic is not None:
        check_doc_topic(who, t.doc_topic, T)
    if t.prior == "dirichlet" and t.alpha is None:
        raise InvalidModelError(f"{who}: a Dirichlet prior needs positive alpha")
    if t.prior == "dirichlet" or t.alpha is not None:
        try:
            check_alpha(t.alpha, T)
        except InvalidModelError as exc:
            raise InvalidModelError(f"{who}: {exc}") from None
    if t.prior == "logistic-normal" and (t.mean is None or t.cov is None):
        raise InvalidModelError(f"{who}: a logistic-normal prior needs mean and cov")
    if t.cov is not None:
        check_covariance(t.cov, f"{who}: cov")
    if t.top_words is not None:
        if len(t.top_words) != T or not T:
            raise InvalidModelError(f"{who}: {len(t.top_words)} lists of top words for {T} topics")
        empty = [k for k, words in enumerate(t.top_words) if isinstance(words, str) or not len(words)]
        if empty:
            raise InvalidModelError(f"{who}: topic {empty[0]}'s top words are not a non-empty list of words")
    if t.topic_names is not None and (len(t.topic_names) != T
                                      or not all(isinstance(n, str) for n in t.topic_names)):
        raise InvalidModelError(f"{who}: topic_names must be {T} strings, one per topic")


def topic_labels(model: Topics | TopicModel | Sequence[Sequence[str]]) -> list[str]:
    """How each topic is shown where topics are listed: its index, and its name when the model has
    one ("0 (Democratic)", "2 (id 7)"): `Topics.topic_names`, or an LDA's metadata["topic_names"]
    (tomotopy's LLDA and PLDA read as LDA)."""
    if isinstance(model, Topics):
        n, names = model.num_topics, model.topic_names
    elif isinstance(model, TopicModel):
        n, names = model.num_topics, model.metadata.get("topic_names") if isinstance(model.metadata, dict) \
            else None
    else:
        n, names = len(model), None
    if names is None or len(names) != n:
        return [str(k) for k in range(n)]
    return [f"{k} ({_printable(str(name))})" for k, name in enumerate(names)]


def _printable(name: str, limit: int = 60) -> str:
    """A name from a file as it is when short and printable, else quoted and shortened (`shown`)."""
    return name if name.isprintable() and len(name) <= limit else shown(name, limit)


def check_covariance(cov: np.ndarray, name: str = "cov") -> tuple[np.ndarray, np.ndarray]:
    """`cov`'s eigendecomposition (values, vectors) after one-line errors unless it is a symmetric,
    positive semi-definite matrix (singular allowed; eigenvalues below -PSD_TOLERANCE x the largest
    are not rounding)."""
    scale = max(float(np.abs(cov).max()), 1e-300)
    if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12 * scale):
        i, j = np.unravel_index(np.abs(cov - cov.T).argmax(), cov.shape)
        raise InvalidModelError(f"{name} is not symmetric: cov[{i}, {j}] = {cov[i, j]} "
                                f"but cov[{j}, {i}] = {cov[j, i]}")
    values, vectors = np.linalg.eigh(cov)
    top = max(float(values.max()), 0.0)
    if values.min() < -PSD_TOLERANCE * max(top, 1e-300):
        raise InvalidModelError(f"{name} is not positive semi-definite: eigenvalue {values.min():.3g} "
                                f"(largest {top:.3g})")
    return values, vectors


def _numbers(t: Topics, label: str, value: Any) -> np.ndarray:
    """`value` (an array or nested lists) as an array of real numbers, or a one-line error."""
    who = f"model {shown(t.name, 120)} ({shown(t.source, 80)})"
    if isinstance(value, np.ndarray):
        arr = value
    else:
        try:
            arr = np.array(value, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InvalidModelError(f"{who}: {label} must be an array of real numbers "
                                    f"({shown(e, 80)})") from None
    if arr.dtype.kind not in "iuf":
        raise InvalidModelError(f"{who}: {label} must hold real numbers, not dtype {arr.dtype}")
    return arr


def check_doc_topic(who: str, doc_topic: np.ndarray, T: int) -> None:
    """D x T rows of proportions: finite, non-negative, each summing to 1 (within rounding)."""
    if doc_topic.ndim != 2 or doc_topic.shape[1] != T:
        raise InvalidModelError(f"{who}: document-topic matrix must be D x {T}, got {doc_topic.shape}")
    with np.errstate(invalid="ignore", over="ignore"):
        sums = doc_topic.sum(axis=1)
        bad = ~np.isfinite(doc_topic).all(axis=1) | (doc_topic < 0).any(axis=1)
        bad |= ~(np.abs(sums - 1.0) <= DOC_TOPIC_TOLERANCE)
    if bad.any():
        d = int(np.flatnonzero(bad)[0])
        raise InvalidModelError(f"{who}: document {d}'s topic proportions are not a distribution "
                                f"(non-negative, finite, summing to 1; they sum to {float(sums[d]):.6g})")


def as_topics(model: Topics | TopicModel | Sequence[Sequence[str]], name: str = "topics") -> Topics:
    """`Topics` from a model of any kind, or from lists of top words."""
    if isinstance(model, Topics):
        return model
    if isinstance(model, TopicModel):
        return Topics.from_lda(model)
    if isinstance(model, str | bytes):
        raise MethodError(f"top words must be lists of words, one list a topic, not a string "
                          f"({shown(model, 40)})")
    model = list(model)
    for k, t in enumerate(model):
        if isinstance(t, str | bytes):
            raise MethodError(f"topic {k}'s top words are a string ({shown(t, 40)}), not a list of words")
    words = tuple(tuple(str(w) for w in t) for t in model)
    return Topics(name=name, source="top words", top_words=words)


__all__ = ["Topics", "NEEDS", "NotApplicableError", "why_not", "require", "as_topics", "check_topics",
           "as_lda", "word_scores", "topic_labels", "check_covariance",
           "WEIGHTS_KINDS", "PRIORS", "DECODERS"]
