"""Per-topic diagnostics: which of a model's topics to trust.

- MALLET's 12 topic scores (`TopicModelDiagnostics`; `mallet.py` gives each formula): exact from
  a MALLET state's token assignments, or from any model with topic-word distributions plus a
  corpus, as expected values under the document-topic proportions (the model's own `doc_topic`
  for its training documents, else tealeaves' posterior-mean theta for an LDA);
- OCTIS's three topic significance scores (`significance.py`);
- two shares junk topics show (the most tokens one document gives the topic, the mean document
  frequency of its top words) and the junk-topic flags with their thresholds, and `empty` for a
  topic with no tokens (`flags.py`);
- the NPMI of each topic's top 10 words over the same documents (10-token windows, gensim's
  convention), the share of their pairs that never co-occur there and the share of rare words,
  with the flags they raise (incoherent, never-together, rare-words: `flags.coherence_flags`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..corpus import Corpus, check_same_vocab
from ..errors import InvalidModelError, MethodError, shown
from ..model import TopicModel
from ..output import numbers
from ..output.display import Display, words_text
from ..output.jsonout import json_float
from ..topics import NotApplicableError, Topics, check_doc_topic, require
from . import mallet
from .flags import (
    EMPTY,
    EMPTY_TOKENS,
    FLAGS,
    MIN_REFERENCE_TOKENS,
    THRESHOLDS,
    coherence_flags,
    coherence_values,
    flag_topics,
)
from .significance import significance

__all__ = ["diagnostics", "of_models", "DiagnosticsResult", "SCORES", "SIGNIFICANCE", "EXTRA", "FLAGS",
           "THRESHOLDS", "EMPTY", "EMPTY_TOKENS"]

SCORES = mallet.SCORES
SIGNIFICANCE = ("kl_uniform", "kl_vacuous", "kl_background")
EXTRA = ("top_doc_share", "top_words_doc_freq")
DEFAULT_BETA = 0.01  # MALLET's default, for a model that does not state its own
STOP_TOPN = 10  # the top words whose document frequency `top_words_doc_freq` averages
# the table's columns (name in the result, heading); to_dict and rows carry every value
COHERENCE = ("npmi", "never_together", "rare_share")  # from `coherence` over the same documents
NPMI_TOPN = 10  # the top words whose NPMI the coherence flags read (as their thresholds were set)
SHOWN = (("npmi", "npmi@10"), ("tokens", "tokens"), ("document_entropy", "doc-ent"),
         ("coherence", "mallet-coh@20"), ("uniform_dist", "uniform"), ("corpus_dist", "corpus"),
         ("eff_num_words", "eff-words"), ("rank_1_docs", "rank-1"), ("exclusivity", "exclusive"),
         ("kl_background", "kl-bg"))
WORDS_SHOWN = 6


_cell = numbers.score  # the one rule the report shares


@dataclass(repr=False)
class DiagnosticsResult(Display):
    """One row per topic: its top words, MALLET's scores, OCTIS's significance, the junk shares and
    the flags raised. `counts` is "assignments" (a MALLET state: exact) or "expected" (from
    proportions: see `tealeaves.diagnostics.mallet`)."""

    model: str
    counts: str
    words: list[list[str]]
    scores: dict[str, np.ndarray]
    flags: list[list[str]]
    params: dict[str, Any] = field(default_factory=dict)

    _name = "DiagnosticsResult"

    @property
    def num_topics(self) -> int:
        return len(self.words)

    def flagged(self) -> list[int]:
        """The topics with at least one flag."""
        return [k for k, f in enumerate(self.flags) if f]

    def _headline(self) -> list[tuple[str, Any]]:
        return [("model", self.model), ("counts", self.counts), ("topics", self.num_topics),
                ("flagged", len(self.flagged()))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        cols: dict[str, Any] = {"words": [words_text(w) for w in self.words]}
        cols.update({k: v for k, v in self.scores.items()})
        cols["flags"] = [" ".join(f) for f in self.flags]
        return "topic", cols

    def rows(self) -> list[dict[str, Any]]:
        """One dict per topic (the CSV's rows, JSON's "topics")."""
        return [{"topic": k, "words": words_text(self.words[k]),
                 **{name: json_float(float(v[k])) for name, v in self.scores.items()},
                 "flags": " ".join(self.flags[k])} for k in range(self.num_topics)]

    def order(self) -> list[int]:
        """The topics worst first: those with more junk flags, then those with a caution only (each
        group in topic order), then the rest."""
        from .flags import CAUTION, JUNK

        return sorted(range(self.num_topics), key=lambda k: (-sum(f in JUNK for f in self.flags[k]),
                                                             -sum(f in CAUTION for f in self.flags[k]), k))

    def table(self) -> str:
        """The terminal table: one row per topic, flagged topics first (`order`), the main scores, the
        flags and the top words (every value: `to_dict`, `rows`)."""
        shown = [(n, h) for n, h in SHOWN if n in self.scores]
        head = ["topic", *(h for _, h in shown), "flags", "top words"]
        rows = [[str(k), *(_cell(float(self.scores[n][k])) for n, _ in shown), ",".join(self.flags[k]) or "-",
                 words_text(self.words[k][:WORDS_SHOWN])] for k in self.order()]
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        last = len(head) - 1
        return "\n".join("  ".join(c.ljust(w) if i in (last - 1, last) else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
                         for cells in [head, *rows])

    def to_dict(self) -> dict[str, Any]:
        return {"task": "diagnostics", "model": self.model, "counts": self.counts, "params": self.params,
                "thresholds": dict(THRESHOLDS), "flagged": self.flagged(), "topics": self.rows()}


def diagnostics(
    model: TopicModel | Topics | str | os.PathLike,
    corpus: Corpus | Sequence[Sequence[int]] | None = None,
    *,
    theta: np.ndarray | None = None,
    topn: int = 20,
    beta: float | None = None,
    burn_in: int = 100,
    samples: int = 200,
    seed: int = 0,
    workers: int = 1,
) -> DiagnosticsResult:
    """Per-topic diagnostics of `model`. A MALLET state file (a path) without `corpus`: exact, from
    its token assignments. Otherwise a model with topic-word distributions and `corpus`: expected
    counts under `theta` (D x K), else the model's `doc_topic` (its training documents: give those),
    else, for an LDA, posterior-mean theta (`burn_in`, `samples`, `seed`, `workers`)."""
    if not isinstance(topn, int | np.integer) or isinstance(topn, bool) or topn < 1:
        raise MethodError(f"topn must be a positive integer, got {topn!r}", options=("topn",))
    if isinstance(model, str | os.PathLike):  # a bundled name is read as every command reads one
        from ..datasets import bundled_model, load_topics
        from ..io import sniff_format
        path = os.fspath(model)
        if corpus is None and theta is None and not bundled_model(path) \
                and sniff_format(path) == "mallet-state":
            return _from_state(path, int(topn))
        loaded = load_topics(path)
        if isinstance(loaded, list):
            raise MethodError(f"{shown(path, 120)} holds {len(loaded)} models; diagnose one")
        model = loaded
    if corpus is None:
        raise MethodError("diagnostics of a model need its documents (a corpus); only a MALLET state "
                          "file carries its own", options=("corpus",))
    return _from_model(model, corpus, theta, int(topn), beta, burn_in, samples, seed, workers)


def of_models(models: Sequence[TopicModel | Topics], corpora: Sequence[Corpus], topn: int = 20, seed: int = 0,
              workers: int = 1, not_applicable: dict[str, str] | None = None) -> dict[str, DiagnosticsResult]:
    """Each model's diagnostics on its documents, theta inferred for an LDA (`evaluate(...,
    diagnostics=True)`). With `not_applicable` (a dict), a model they do not apply to (a CTM gives
    no proportions for these documents) is left out and the reason put there under its name."""
    out = {}
    for m, c in zip(models, corpora, strict=True):
        try:
            out[m.name] = diagnostics(m, c, topn=topn, seed=seed, workers=workers)
        except NotApplicableError as exc:
            if not_applicable is None:
                raise
            not_applicable[m.name] = str(exc).removeprefix("diagnostics do not apply: ")
    return out


def _from_state(path: str, topn: int) -> DiagnosticsResult:
    from ..io.mallet import check_matrix, read_state_tokens
    st = read_state_tokens(path)
    K, V = st.alpha.size, len(st.vocab)
    check_matrix(path, K, V, copies=3)  # the counts, phi and a temporary
    stats = mallet.accumulate(lambda: mallet.state_docs(st.docs, st.words, st.topics, K, st.alpha),
                              K, V, topn, int(np.unique(st.docs).size))
    phi = (stats.topic_word + st.beta) / (stats.topic_word.sum(axis=1, keepdims=True) + V * st.beta)
    theta = _state_theta(st.docs, st.topics, K, st.alpha)
    params = {"source": path, "topn": topn, "alpha": st.alpha.tolist(), "beta": st.beta,
              "documents": stats.num_docs, "tokens": int(st.words.size)}
    order = np.argsort(st.docs, kind="stable")  # the tokens of each document, in their order
    cuts = np.flatnonzero(np.diff(st.docs[order])) + 1
    docs = Corpus.from_word_ids(np.split(st.words[order], cuts), list(st.vocab))
    return _result(os.path.basename(path), "assignments", stats, st.vocab, st.beta, phi, theta, params, docs)


def _state_theta(docs: np.ndarray, topics: np.ndarray, K: int, alpha: np.ndarray) -> np.ndarray:
    """(alpha_k + n_dk) / (sum alpha + n_d) of the documents with tokens (MALLET's doc-topics)."""
    _, d = np.unique(docs, return_inverse=True)
    counts = np.zeros((int(d.max()) + 1, K))
    np.add.at(counts, (d, topics), 1.0)
    return (alpha + counts) / (alpha.sum() + counts.sum(axis=1, keepdims=True))


def _from_model(model: TopicModel | Topics, corpus: Any, theta: np.ndarray | None, topn: int,
                beta: float | None, burn_in: int, samples: int, seed: int, workers: int) -> DiagnosticsResult:
    topics = model if isinstance(model, Topics) else Topics.from_lda(model)
    require("diagnostics", topics)
    phi = np.asarray(topics.weights, dtype=float)
    vocab = topics.vocab
    if vocab is None:
        raise NotApplicableError(f"diagnostics do not apply: {shown(topics.name, 80)} has no vocabulary "
                                 "(word lengths and top words need one)")
    docs = corpus if isinstance(corpus, Corpus) else Corpus.from_word_ids(list(corpus), vocab)
    if docs.vocab is not None:
        check_same_vocab(docs.vocab, vocab, docs.source, f"model {shown(topics.name, 80)}")
    if docs.num_tokens and int(docs.words.max()) >= phi.shape[1]:
        raise MethodError(f"{docs.source}: word id {int(docs.words.max())} but the model has "
                          f"{phi.shape[1]} words")
    theta, how = _theta(topics, docs, theta, burn_in, samples, seed, workers)
    alpha = None if topics.alpha is None else np.asarray(topics.alpha, dtype=float)
    if beta is None:
        beta = topics.lda.beta if topics.lda is not None and topics.lda.beta is not None else DEFAULT_BETA
    K, V = phi.shape
    rows = [docs[d] for d in range(len(docs))]
    stats = mallet.accumulate(lambda: mallet.expected_docs(phi, theta, rows, alpha), K, V, topn, len(rows))
    params = {"source": topics.source, "topn": topn, "beta": beta, "theta": how,
              "documents": len(docs), "tokens": int(docs.num_tokens)}
    return _result(topics.name, "expected", stats, vocab, float(beta), phi, theta, params, docs)


def _theta(topics: Topics, docs: Corpus, theta: np.ndarray | None, burn_in: int, samples: int, seed: int,
           workers: int) -> tuple[np.ndarray, str]:
    """The documents' topic proportions and where they came from."""
    K, D = topics.num_topics, len(docs)
    if theta is not None:
        how = "given"
    elif topics.doc_topic is not None and topics.doc_topic.shape[0] == D:
        theta, how = topics.doc_topic, "the model's doc_topic"
    elif topics.lda is not None:
        from ..intrusion.predictive import infer_theta
        theta = infer_theta(topics.lda, docs, burn_in=burn_in, samples=samples, seed=seed, workers=workers)
        how = f"posterior mean ({burn_in} + {samples} Gibbs sweeps, seed {seed})"
    else:
        have = "" if topics.doc_topic is None else f" (its doc_topic has {topics.doc_topic.shape[0]} rows)"
        raise NotApplicableError(f"diagnostics do not apply: {shown(topics.name, 80)} gives no proportions "
                                 f"for these {D} documents{have} and is not an LDA to infer them from")
    return _proportions(theta, D, K), how


def _proportions(theta: Any, D: int, K: int) -> np.ndarray:
    """`theta` as a D x K array whose rows are distributions (as a model's doc_topic must be), or a
    one-line MethodError naming what is wrong and where."""
    try:
        arr = np.array(theta, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MethodError(f"theta must be a {D} x {K} array of numbers (documents x topics): "
                          f"{shown(exc, 80)}", options=("theta",)) from None
    if arr.shape != (D, K):
        raise MethodError(f"theta must be a {D} x {K} array (documents x topics), got shape {arr.shape}",
                          options=("theta",))
    try:
        check_doc_topic("theta", arr, K)
    except InvalidModelError as exc:
        raise MethodError(f"{exc} (give proportions, not counts)", options=("theta",)) from None
    return arr


def _result(name: str, counts: str, stats: mallet.Stats, vocab: Sequence[str], beta: float,
            phi: np.ndarray, theta: np.ndarray, params: dict[str, Any],
            docs: Corpus | None = None) -> DiagnosticsResult:
    values = mallet.scores(stats, vocab, beta)
    values.update(significance(phi, theta))
    nk = stats.topic_word.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values["top_doc_share"] = stats.max_doc / nk
    head = stats.top[:, :STOP_TOPN]
    real = np.arange(head.shape[1])[None, :] < stats.top_len[:, None]
    df = np.where(real, stats.doc_freq[head] / max(stats.num_docs, 1), 0.0)
    values["top_words_doc_freq"] = df.sum(axis=1) / np.maximum(real.sum(axis=1), 1)
    words = [[vocab[w] for w in stats.top[k, : stats.top_len[k]]] for k in range(len(nk))]
    flags = flag_topics(values, len(vocab))
    if docs is not None and docs.num_tokens >= MIN_REFERENCE_TOKENS:
        npmi = _npmi(words, docs)
        if npmi is not None:
            values.update({k: coherence_values(npmi)[k] for k in COHERENCE})
            flags = [f + c for f, c in zip(flags, coherence_flags(npmi) or [[]] * len(flags), strict=True)]
            params["npmi"] = {"topn": NPMI_TOPN, "window": npmi.params["window"],
                              "convention": npmi.params["convention"], "reference": "these documents"}
    elif docs is not None:
        params["npmi"] = (f"not computed: {docs.num_tokens:,} tokens, fewer than the "
                          f"{MIN_REFERENCE_TOKENS:,} the coherence flags need")
    return DiagnosticsResult(name, counts, words, values, flags, params)


def _npmi(words: list[list[str]], docs: Corpus) -> Any:
    """NPMI of each topic's top 10 words over `docs` (None when a topic has fewer than 2 words)."""
    from ..coherence import coherence

    top = [w[:NPMI_TOPN] for w in words]
    if any(len(t) < 2 for t in top):
        return None
    return coherence(top, docs, measure="npmi", topn=NPMI_TOPN)
