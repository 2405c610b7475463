"""MALLET's per-topic diagnostics (`cc.mallet.topics.TopicModelDiagnostics`, commit 2de54cb),
computed as MALLET computes them, from per-document topic counts.

MALLET walks every document's tokens with their sampled topics; per topic k it keeps n_k (tokens),
n_wk (tokens of word w), per document n_dk, whether document d holds word w in topic k, and the
co-document counts D_k[i, j] of the topic's top N words (documents holding both top words i and j
*in topic k*). `Stats` holds exactly those sums. From a MALLET state they are counted (exact); from
a model's topic-word distributions phi and document proportions theta they are expected values
under the token responsibilities r_dwk = theta_dk phi_kw / sum_j theta_dj phi_jw (c_dw tokens of w
in d): n_dk = sum_w c_dw r_dwk, P(d holds w in k) = 1 - (1 - r_dwk)^c_dw, P(d holds k) =
1 - prod_w (1 - r_dwk)^c_dw, a pair's co-document probability the product of its words' (as if
independent), and the rank-1 topic the one with the largest expected count.

The 12 topic scores MALLET writes to `--diagnostics-file` (V the vocabulary's size, N the number
of top words, p_w = n_wk / n_k over the words with n_wk > 0, alpha and beta the model's):

  tokens            n_k
  document_entropy  log n_k - sum_d n_dk log n_dk / n_k
  word-length       sum of the top words' lengths (UTF-16 units, as Java counts) / N
  coherence         sum_{i} sum_{j<i} log((D[i,j] + beta) / (D[j,j] + beta))
  uniform_dist      sum_w p_w log(p_w V)                    (KL from uniform)
  corpus_dist       sum_w p_w log(p_w / (c_w / C))          (KL from the corpus's word frequencies)
  eff_num_words     1 / sum_w p_w^2
  token-doc-diff    Jensen-Shannon divergence of the top words' token shares and document shares
  rank_1_docs       documents where k has the most tokens / documents with k
  allocation_ratio  documents with (alpha_k + n_dk) / (sum alpha + n_d) >= 0.5 / those >= 0.02
  allocation_count  documents with that proportion >= 0.3 / documents with k
  exclusivity       mean over the top N words of phi_kw / sum_t phi_tw, phi smoothed by beta
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..util.limits import check_work

SCORES = ("tokens", "document_entropy", "word-length", "coherence", "uniform_dist", "corpus_dist",
          "eff_num_words", "token-doc-diff", "rank_1_docs", "allocation_ratio", "allocation_count",
          "exclusivity")
PROPORTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)  # MALLET's DEFAULT_DOC_PROPORTIONS
TWO_PERCENT, THIRTY_PERCENT, FIFTY_PERCENT = 1, 5, 6

# one document's part: its distinct words u, n[k, i] (tokens of u[i] in topic k), held[k, i]
# (probability that the document holds u[i] in topic k), has[k] (probability it holds topic k),
# prop[k] (its proportion of topic k)
Doc = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass
class Stats:
    """The sums MALLET's diagnostics are computed from (counts, or their expected values)."""

    topic_word: np.ndarray  # K x V: n_kw
    word_counts: np.ndarray  # V: the corpus's tokens of each word
    doc_freq: np.ndarray  # V: documents holding each word
    sum_clogc: np.ndarray  # K: sum_d n_dk log n_dk
    nonzero: np.ndarray  # K: documents holding topic k
    rank1: np.ndarray  # K: documents where k has the most tokens
    at: np.ndarray  # K x 7: documents holding k with proportion >= PROPORTIONS[i]
    max_doc: np.ndarray  # K: the most tokens of k in one document
    top: np.ndarray  # K x N word ids (MALLET pads a topic with fewer words with word 0)
    top_len: np.ndarray  # K: the real top words of each topic
    codoc: np.ndarray  # K x N x N
    num_docs: int


def top_words(topic_word: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's N top words as MALLET orders them (count, largest first; ties: the larger word
    id first, as MALLET's IDSorter), among the words with a count; shorter lists padded with word 0,
    as MALLET's arrays are."""
    K, V = topic_word.shape
    top = np.zeros((K, n), dtype=np.int64)
    lengths = np.zeros(K, dtype=np.int64)
    for k in range(K):
        row = topic_word[k]
        order = np.lexsort((-np.arange(V), -row))[:n]
        order = order[row[order] > 0]
        top[k, : order.size] = order
        lengths[k] = order.size
    return top, lengths


CODOC_COPIES = 4  # K x N x N arrays held at once: the counts, a document's product, the scores' terms


def check_size(num_topics: int, num_docs: int, n: int) -> None:
    """Refuse, before any work, co-document counts of `n` top words (K x N x N, added to once per
    document) that need more than half the memory or take too long (`limits.check_work`)."""
    cells = float(num_topics) * n * n
    check_work(f"diagnostics of {num_topics:,} topics' top {n:,} words", cells * max(num_docs, 1),
               nbytes=CODOC_COPIES * 8.0 * cells,
               how=f"{CODOC_COPIES} arrays of {num_topics:,} x {n:,} x {n:,} co-document counts, "
                   f"added to for each of {num_docs:,} documents")


def accumulate(docs: Callable[[], Iterator[Doc]], num_topics: int, num_words: int, n: int,
               num_docs: int) -> Stats:
    """`Stats` from each document's part (`docs()` yields them, `num_docs` of them); the co-document
    counts need the top words, so a second pass over the documents follows the first. Their size is
    checked first (`check_size`)."""
    check_size(num_topics, num_docs, n)
    K = num_topics
    tw = np.zeros((K, num_words))
    wc, df = np.zeros(num_words), np.zeros(num_words)
    sum_clogc, nonzero, rank1, max_doc = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    at = np.zeros((K, len(PROPORTIONS)))
    thresholds = np.array(PROPORTIONS)
    num_docs = 0
    for u, cnt, _held, has, prop in docs():
        num_docs += 1
        tw[:, u] += cnt
        totals = cnt.sum(axis=0)
        wc[u] += totals
        df[u] += totals > 0
        ndk = cnt.sum(axis=1)
        if not ndk.sum() > 0:
            continue
        pos = ndk > 0
        sum_clogc[pos] += ndk[pos] * np.log(ndk[pos])
        nonzero += has
        rank1[int(np.argmax(ndk))] += 1  # the first topic with the most tokens, as MALLET's strict >
        np.maximum(max_doc, ndk, out=max_doc)
        at += has[:, None] * (prop[:, None] >= thresholds[None, :])
    top, top_len = top_words(tw, n)
    codoc = np.zeros((K, n, n))
    index = np.full(num_words, -1, dtype=np.int64)
    for u, _cnt, held, _has, _prop in docs():
        if u.size == 0:  # no scored token (an empty line, or only unknown words): no top word in it
            continue
        index[u] = np.arange(u.size)
        where = index[top]  # K x N: each top word's column in this document, -1 if absent
        p = np.where(where >= 0, np.take_along_axis(held, np.maximum(where, 0), axis=1), 0.0)
        codoc += p[:, :, None] * p[:, None, :]
        diag = np.arange(n)
        codoc[:, diag, diag] += p - p * p  # a word's own count is its probability, not its square
        index[u] = -1
    return Stats(tw, wc, df, sum_clogc, nonzero, rank1, at, max_doc, top, top_len, codoc, num_docs)


def java_length(word: str) -> int:
    """A word's length as Java's String.length() counts it (UTF-16 code units)."""
    return len(word.encode("utf-16-le")) // 2


def scores(stats: Stats, vocab: Sequence[str], beta: float) -> dict[str, np.ndarray]:
    """MALLET's 12 topic scores (module docstring) from `stats`, in MALLET's order."""
    tw = stats.topic_word
    K, V = tw.shape
    n = stats.top.shape[1]
    nk = tw.sum(axis=1)
    C = stats.word_counts.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tw > 0, tw / np.where(nk > 0, nk, 1.0)[:, None], 0.0)  # a topic without tokens: 0s
        out = {"tokens": nk.copy(), "document_entropy": -stats.sum_clogc / nk + np.log(nk)}
        lengths = [sum(java_length(vocab[w]) for w in stats.top[k, : stats.top_len[k]]) for k in range(K)]
        out["word-length"] = np.array(lengths) / n
        out["coherence"] = _coherence(stats.codoc, beta)
        spread = np.log(np.where(tw > 0, tw * V / nk[:, None], 1.0))
        out["uniform_dist"] = np.where(tw > 0, p * spread, 0.0).sum(axis=1)
        ratio = np.log(np.where(tw > 0, (C / nk[:, None]) * tw / np.maximum(stats.word_counts, 1e-300), 1.0))
        out["corpus_dist"] = np.where(tw > 0, p * ratio, 0.0).sum(axis=1)
        out["eff_num_words"] = 1.0 / (p * p).sum(axis=1)
        out["token-doc-diff"] = _token_doc_diff(stats, tw)
        out["rank_1_docs"] = stats.rank1 / stats.nonzero
        out["allocation_ratio"] = stats.at[:, FIFTY_PERCENT] / stats.at[:, TWO_PERCENT]
        out["allocation_count"] = stats.at[:, THIRTY_PERCENT] / stats.nonzero
        out["exclusivity"] = _exclusivity(stats, tw, nk, beta)
    return out


def _coherence(codoc: np.ndarray, beta: float) -> np.ndarray:
    n = codoc.shape[1]
    below = np.tril(np.ones((n, n), dtype=bool), -1)  # col < row
    diag = np.diagonal(codoc, axis1=1, axis2=2)  # K x N: D[col, col]
    terms = np.log((codoc + beta) / (diag[:, None, :] + beta))
    return np.where(below[None], terms, 0.0).sum(axis=(1, 2))


def _token_doc_diff(stats: Stats, tw: np.ndarray) -> np.ndarray:
    K, n = stats.top.shape
    real = np.arange(n)[None, :] < stats.top_len[:, None]
    words = np.where(real, np.take_along_axis(tw, stats.top, axis=1), 0.0)
    docs = np.where(real, np.diagonal(stats.codoc, axis1=1, axis2=2), 0.0)
    p = words / words.sum(axis=1, keepdims=True)
    q = docs / docs.sum(axis=1, keepdims=True)
    m = 0.5 * (p + q)
    left = np.where(p > 0, 0.5 * p * np.log(np.where(p > 0, p, 1.0) / np.where(m > 0, m, 1.0)), 0.0)
    right = np.where(q > 0, 0.5 * q * np.log(np.where(q > 0, q, 1.0) / np.where(m > 0, m, 1.0)), 0.0)
    return (left + right).sum(axis=1)


def _exclusivity(stats: Stats, tw: np.ndarray, nk: np.ndarray, beta: float) -> np.ndarray:
    K, V = tw.shape
    n = stats.top.shape[1]
    beta_sum = beta * V
    default = float(np.sum(beta / (beta_sum + nk)))
    out = np.zeros(K)
    for k in range(K):
        words = stats.top[k, : stats.top_len[k]]
        others = default + (tw[:, words] / (beta_sum + nk)[:, None]).sum(axis=0)
        out[k] = (((beta + tw[k, words]) / (beta_sum + nk[k])) / others).sum() / n
    return out


def state_docs(docs: np.ndarray, words: np.ndarray, topics: np.ndarray, num_topics: int,
               alpha: np.ndarray) -> Iterator[Doc]:
    """Each document's part from token assignments (sorted by document): counts, and held / has
    as 0 or 1; proportion (alpha_k + n_dk) / (sum alpha + n_d), alpha summed in MALLET's order."""
    alpha_sum = 0.0
    for a in alpha.tolist():
        alpha_sum += a
    bounds = np.flatnonzero(np.diff(docs)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, docs.size], strict=True):
        w, t = words[lo:hi], topics[lo:hi]
        u, col = np.unique(w, return_inverse=True)
        cnt = np.zeros((num_topics, u.size))
        np.add.at(cnt, (t, col), 1.0)
        ndk = cnt.sum(axis=1)
        prop = (alpha + ndk) / (alpha_sum + (hi - lo))
        yield u, cnt, (cnt > 0).astype(float), (ndk > 0).astype(float), prop


def expected_docs(phi: np.ndarray, theta: np.ndarray, corpus: Sequence[np.ndarray],
                  alpha: np.ndarray | None) -> Iterator[Doc]:
    """Each document's part as expected values under the token responsibilities (module docstring);
    proportion (alpha_k + E n_dk) / (sum alpha + n_d) when alpha is known, else theta_dk."""
    K = phi.shape[0]
    alpha_sum = float(np.sum(alpha)) if alpha is not None else 0.0
    for d, doc in enumerate(corpus):
        u, c = np.unique(np.asarray(doc, dtype=np.int64), return_counts=True)
        th = theta[d]
        r = th[:, None] * phi[:, u]
        z = r.sum(axis=0)
        fallback = th / th.sum() if th.sum() > 0 else np.full(K, 1.0 / K)  # a word no topic here gives
        r = np.where(z > 0, r / np.where(z > 0, z, 1.0), fallback[:, None])
        cnt = r * c
        with np.errstate(divide="ignore"):
            log_miss = c * np.log1p(-np.minimum(r, 1.0))  # log P(no token of w in k)
        held = -np.expm1(log_miss)
        has = -np.expm1(log_miss.sum(axis=1))
        ndk = cnt.sum(axis=1)
        prop = (alpha + ndk) / (alpha_sum + c.sum()) if alpha is not None else th
        yield u, cnt, held, has, prop
