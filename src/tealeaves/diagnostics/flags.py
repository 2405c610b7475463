"""Junk-topic flags: each a threshold on one per-topic value (measured: experiments/junk_topics.py,
docs/guide/diagnostics.md).

- near-uniform: uniform_dist / log V < 0.2 (KL from the uniform distribution, as a fraction of its
  largest possible value log V: the topic spreads its mass over most of the vocabulary);
- near-corpus: corpus_dist < 1 nat (the topic is the corpus's own word frequencies; a topic of n
  tokens drawn from them still shows about (V - 1) / 2n nats, hence not a smaller threshold);
- one-document: top_doc_share > 0.5 (one document holds more than half of the topic's tokens);
- stop-word-like: top_words_doc_freq > 0.5 (its top words occur, on average, in more than half of
  all documents).

From a topic's NPMI over a reference (`coherence(..., measure="npmi")`: top 10 words, 10-token
windows by default; `coherence_flags`):

- incoherent: NPMI < 0.045 (its words co-occur hardly more than chance would have them): the cut
  that best separates the topics people rated junk (mean rating below 2 of 3) from the others
  among half of Hoyle et al.'s 300 rated topics, precision 0.58 and recall 0.44 on the other half
  (experiments/junk_human.py, docs/junk_flags.md);
- never-together: more than half of the pairs of its top words that occur in the reference never
  occur together in it (a rule: the study carries no pair counts to set it on);
- rare-words: at least half of its top words are rarer than one per million tokens of the
  reference, or absent from it: a caution (the coherence rests on few counts), not junk by itself:
  on the rated topics such topics were specialist vocabularies people rated well (1 of 9 junk).

Over a reference of fewer than `MIN_REFERENCE_TOKENS` tokens these three are not computed: NPMI
there is ruled by word pairs that never meet by chance (measured on the bundled corpus).
`JUNK` are the flags that mark a topic as junk; `CAUTION` the others.

A topic with fewer than one token (`EMPTY_TOKENS`: none assigned in a MALLET state, less than one
expected) is flagged `empty` and nothing else: its other values describe no tokens (from a state,
its word distribution is the smoothing prior, uniform, which read as near-uniform and near-corpus).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..util.numbers import finite_float

FLAGS = ("near-uniform", "near-corpus", "one-document", "stop-word-like")  # the junk-topic flags
EMPTY = "empty"
EMPTY_TOKENS = 1.0  # a topic with fewer (expected) tokens than this is empty
COHERENCE_FLAGS = ("incoherent", "never-together", "rare-words")
THRESHOLDS = {"near-uniform": 0.2, "near-corpus": 1.0, "one-document": 0.5, "stop-word-like": 0.5,
              "incoherent": 0.045, "never-together": 0.5, "rare-words": 0.5}
JUNK = (*FLAGS, EMPTY, "incoherent", "never-together")
# the smallest reference the coherence flags are computed over: on the bundled corpus's subsets they
# agree with the whole 580,755-token reference's from this size up (experiments/junk_human.py)
MIN_REFERENCE_TOKENS = 300_000
CAUTION = ("rare-words",)


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


def coherence_values(result: Any) -> dict[str, np.ndarray]:
    """Per topic, from an NPMI `CoherenceResult` (or its `to_dict`): the NPMI, the share of its
    present top words' pairs that never co-occur, and the share of its top words that are rare
    (`coherence.measures.RARE_FREQUENCY`) or absent (NaN where the counts do not say)."""
    d = result if isinstance(result, dict) else result.to_dict()
    if d.get("measure") != "npmi":
        raise ValueError(f"coherence flags need NPMI, not {d.get('measure')!r}")
    npmi, never, rare = [], [], []
    for t in d["topics"]:
        score = finite_float(t.get("score"))
        npmi.append(math.nan if score is None else score)
        pairs = (t.get("word_pairs") or 0) - (t.get("pairs_with_absent") or 0)
        never.append(t["zero_pairs"] / pairs if pairs and isinstance(t.get("zero_pairs"), int) else math.nan)
        n = len(t.get("words") or [])
        words = t.get("rare_words")
        rare.append((len(words) + len(t.get("missing") or [])) / n if n and isinstance(words, list)
                    else math.nan)
    return {"npmi": np.array(npmi, dtype=float), "never_together": np.array(never, dtype=float),
            "rare_share": np.array(rare, dtype=float)}


def reference_tokens(result: Any) -> int | None:
    """The tokens of the reference an NPMI result was counted over (None if not recorded)."""
    d = result if isinstance(result, dict) else result.to_dict()
    ref = (d.get("fingerprint") or {}).get("reference")
    n = ref.get("tokens") if isinstance(ref, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def too_small(result: Any) -> str | None:
    """Why an NPMI result's reference is too small for the coherence flags (None when it is not):
    below `MIN_REFERENCE_TOKENS` NPMI is ruled by pairs that never co-occur by chance alone."""
    n = reference_tokens(result)
    if n is None or n >= MIN_REFERENCE_TOKENS:
        return None
    return (f"no coherence flags: the reference has {n:,} tokens, fewer than the "
            f"{MIN_REFERENCE_TOKENS:,} they need (over fewer, NPMI is ruled by word pairs that never meet "
            "by chance: docs/junk_flags.md)")


def coherence_flags(result: Any, thresholds: dict[str, float] | None = None) -> list[list[str]] | None:
    """The coherence flags each topic of an NPMI result raises (NaN raises none); None when its
    reference is too small for them (`too_small` says why)."""
    v = coherence_values(result)
    if too_small(result):
        return None
    t = {**THRESHOLDS, **(thresholds or {})}
    with np.errstate(invalid="ignore"):
        hit = {"incoherent": v["npmi"] < t["incoherent"],
               "never-together": v["never_together"] > t["never-together"],
               "rare-words": v["rare_share"] >= t["rare-words"]}
    return [[f for f in COHERENCE_FLAGS if bool(hit[f][k])] for k in range(v["npmi"].size)]
