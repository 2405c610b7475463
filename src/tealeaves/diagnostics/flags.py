"""Junk-topic flags: each a threshold on one per-topic value (measured: experiments/junk_topics.py,
docs/guide/diagnostics.md).

- near-uniform: uniform_dist / log V < 0.2 (KL from the uniform distribution, as a fraction of its
  largest possible value log V: the topic spreads its mass over most of the vocabulary);
- near-corpus: corpus_dist < 1 nat (the topic is the corpus's own word frequencies; a topic of n
  tokens drawn from them still shows about (V - 1) / 2n nats, hence not a smaller threshold);
- one-document: top_doc_share > 0.5 (one document holds more than half of the topic's tokens);
- stop-word-like: top_words_doc_freq > 0.5 (its top words occur, on average, in more than half of
  all documents).

A topic with fewer than one token (`EMPTY_TOKENS`: none assigned in a MALLET state, less than one
expected) is flagged `empty` and nothing else: its other values describe no tokens (from a state,
its word distribution is the smoothing prior, uniform, which read as near-uniform and near-corpus).
"""

from __future__ import annotations

import math

import numpy as np

FLAGS = ("near-uniform", "near-corpus", "one-document", "stop-word-like")  # the junk-topic flags
EMPTY = "empty"
EMPTY_TOKENS = 1.0  # a topic with fewer (expected) tokens than this is empty
THRESHOLDS = {"near-uniform": 0.2, "near-corpus": 1.0, "one-document": 0.5, "stop-word-like": 0.5}


def flag_values(values: dict[str, np.ndarray], num_words: int) -> dict[str, np.ndarray]:
    """The value each flag compares with its threshold, per topic."""
    return {"near-uniform": values["uniform_dist"] / math.log(max(num_words, 2)),
            "near-corpus": values["corpus_dist"],
            "one-document": values["top_doc_share"],
            "stop-word-like": values["top_words_doc_freq"]}


def flag_topics(values: dict[str, np.ndarray], num_words: int,
                thresholds: dict[str, float] | None = None) -> list[list[str]]:
    """The flags each topic raises (NaN raises none; an empty topic only `EMPTY`)."""
    t = {**THRESHOLDS, **(thresholds or {})}
    v = flag_values(values, num_words)
    hit = {"near-uniform": v["near-uniform"] < t["near-uniform"],
           "near-corpus": v["near-corpus"] < t["near-corpus"],
           "one-document": v["one-document"] > t["one-document"],
           "stop-word-like": v["stop-word-like"] > t["stop-word-like"]}
    tokens = np.asarray(values["tokens"], dtype=float)
    return [[EMPTY] if tokens[k] < EMPTY_TOKENS else [f for f in FLAGS if bool(hit[f][k])]
            for k in range(tokens.size)]
