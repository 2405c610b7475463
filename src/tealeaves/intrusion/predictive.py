"""Point estimates of theta and the predictive metrics of Chang et al. (2009), section 4.2.

`infer_theta`: the posterior mean E[theta_d | w_d, phi, alpha], estimated by collapsed Gibbs
sampling of z_d with our kernels and averaging E[theta | z] = (N_t + alpha_t) / (N + sum alpha)
over samples (Rao-Blackwellised). An empty document gets the prior mean alpha / sum(alpha).

`predictive` (Teh et al.'s approximation p(w_d | D_train) ~ p(w_d | theta_hat_d), as in the paper):
- predictive log likelihood of document d: (1/N_d) sum_n log sum_t phi[t, w_n] theta_hat_{d,t};
- predictive rank of document d: the mean, over the distinct terms of d, of the term's rank among
  all V words ordered by p(w | theta_hat_d) = sum_t phi[t, w] theta_hat_{d,t} (1 = most probable,
  ties share their average rank; lower is better).
The corpus figures are means over non-empty documents (the paper's "average across all documents").
As in the paper, theta_hat_d is estimated from the document it then scores.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..errors import MethodError
from ..files.kept import digest, kept
from ..heldout import as_corpus
from ..model import TopicModel
from ..output.display import Display
from ..output.jsonout import json_safe
from ..sampling import chains, prepare_doc
from ..sampling.rng import new_state
from ..topics import as_lda
from ..util.limits import check_budget, update_seconds
from ..util.parallel import Progress, run_tasks


def _theta_task(shared: tuple, item: tuple) -> np.ndarray:
    phi_wt, alpha, burn_in, samples = shared
    words, seq = item
    if words.size == 0:
        return alpha / alpha.sum()
    doc = prepare_doc(phi_wt, alpha, words)
    est = chains.posterior_theta(doc.rows, doc.cum, doc.alpha, burn_in, samples, new_state(seq))
    out = np.empty_like(est)
    out[doc.order] = est
    return out


def _check_int(name: str, value: Any, low: int) -> int:
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < low:
        raise MethodError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def infer_theta(
    model: TopicModel,
    docs: Corpus | Iterable[Sequence[int]],
    burn_in: int = 100,
    samples: int = 200,
    seed: int = 0,
    workers: int = 1,
    progress: bool | None = None,
    keep: str | os.PathLike | None = None,
) -> np.ndarray:
    """Posterior mean of each document's topic proportions (D x T), by collapsed Gibbs sampling;
    `keep`: a folder keeping each finished document (`files.kept`: a rerun resumes, same numbers)."""
    burn_in = _check_int("burn_in", burn_in, 0)
    samples = _check_int("samples", samples, 1)
    seed = _check_int("seed", seed, 0)
    workers = _check_int("workers", workers, 1)
    corpus = as_corpus(docs, model)
    updates = float(corpus.num_tokens) * (burn_in + samples)
    check_budget(updates, workers, None, f"theta by {burn_in} + {samples} Gibbs sweeps", model.num_topics,
                 kernel="theta")
    seqs = np.random.SeedSequence(seed).spawn(len(corpus))
    items = [(corpus[d], seqs[d]) for d in range(len(corpus))]
    shared = (np.ascontiguousarray(model.phi.T), np.array(model.alpha, dtype=np.float64), burn_in, samples)
    fingerprint = {"model": digest(model.phi_wt, model.alpha, model.vocab),
                   "documents": digest(corpus.words, corpus.offsets), "burn_in": burn_in, "samples": samples,
                   "seed": seed}
    with kept(keep, "theta by Gibbs sampling", fingerprint, len(items),
              valid=lambda v: isinstance(v, np.ndarray) and v.shape == (model.num_topics,)) as k:
        rows = run_tasks(
            _theta_task,
            shared,
            items,
            workers,
            Progress(len(items), "theta", enabled=progress),
            [len(w) for w, _ in items],
            update_seconds(updates, 1, model.num_topics, "theta"),
            "theta",
            done=k.done if k is not None else None,
            on_result=k.add if k is not None else None,
        )
    return np.array(rows).reshape(len(corpus), model.num_topics)


@dataclass(repr=False)
class PredictiveResult(Display):
    doc_log_lik: np.ndarray  # (D,) mean log p(w_n | theta_hat_d) per token; nan for empty documents
    doc_rank: np.ndarray  # (D,) mean rank of the document's distinct terms; nan for empty documents
    tokens: int
    empty_documents: int
    params: dict[str, Any]

    @property
    def log_likelihood(self) -> float:
        ok = self.doc_log_lik[~np.isnan(self.doc_log_lik)]
        return float(ok.mean()) if ok.size else math.nan

    @property
    def rank(self) -> float:
        ok = self.doc_rank[~np.isnan(self.doc_rank)]
        return float(ok.mean()) if ok.size else math.nan

    _name = "PredictiveResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [("log likelihood per word", self.log_likelihood), ("predictive rank", self.rank),
                ("documents", int(self.doc_log_lik.size)), ("tokens", self.tokens)]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        return "document", {"log_likelihood": self.doc_log_lik, "rank": self.doc_rank}

    def to_dict(self) -> dict[str, Any]:
        return json_safe(
            {
                "task": "predictive",
                "params": self.params,
                "log_likelihood": self.log_likelihood,
                "rank": self.rank,
                "tokens": self.tokens,
                "documents": int(self.doc_log_lik.size),
                "empty_documents": self.empty_documents,
                "doc_log_lik": self.doc_log_lik.tolist(),
                "doc_rank": self.doc_rank.tolist(),
            }
        )


def predictive(
    model: TopicModel,
    docs: Corpus | Iterable[Sequence[int]],
    theta: np.ndarray | None = None,
    burn_in: int = 100,
    samples: int = 200,
    seed: int = 0,
    workers: int = 1,
    progress: bool | None = None,
    keep: str | os.PathLike | None = None,
) -> PredictiveResult:
    """Predictive log likelihood and predictive rank of each document (section 4.2), from `theta`
    (D x T) or from `infer_theta` (`keep` as there)."""
    from scipy.stats import rankdata

    model = as_lda("predictive", model)
    corpus = as_corpus(docs, model)
    if corpus.num_tokens == 0:
        raise MethodError("no document has a token the model knows: predictive metrics would be nan")
    T, V = model.phi.shape
    params: dict[str, Any] = {"theta": "given"}
    if theta is None:
        theta = infer_theta(model, corpus, burn_in, samples, seed, workers, progress, keep)
        params = {"theta": "posterior-mean", "burn_in": burn_in, "samples": samples, "seed": seed}
    theta = np.asarray(theta, dtype=np.float64)
    if theta.shape != (len(corpus), T):
        raise MethodError(f"theta must be {len(corpus)} documents x {T} topics, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)) or (theta < 0).any():
        raise MethodError("theta has negative or non-finite entries")
    D = len(corpus)
    ll, rk = np.full(D, math.nan), np.full(D, math.nan)
    for d in range(D):
        words = corpus[d]
        if words.size == 0:
            continue
        p = theta[d] @ model.phi
        with np.errstate(divide="ignore"):
            ll[d] = float(np.log(p[words]).mean())
        ranks = rankdata(-p, method="average")
        rk[d] = float(ranks[np.unique(words)].mean())
    empty = int(np.sum(corpus.lengths == 0))
    return PredictiveResult(ll, rk, corpus.num_tokens, empty, params)
