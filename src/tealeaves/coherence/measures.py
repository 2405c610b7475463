"""Coherence measures from co-occurrence `Counts`. Each returns, per topic, its score and the
table of scored pairs (or segments), with the words missing from the reference reported.

Defaults follow gensim's `CoherenceModel` / Palmetto so numbers are comparable
(EPSILON = 1e-12 added to joint probabilities, arithmetic mean over pairs, mean over topics).

- umass (Mimno et al. 2011; gensim u_mass): pairs (w_i, w_j), j < i in rank order, conditioning
  on the higher-ranked w_j: log((D(w_i, w_j)/D + eps) / (D(w_j)/D)) over documents; mean.
  `form="mimno"`: log((D(w_i, w_j) + 1) / D(w_j)) summed, as the paper and the source README.
- uci (PMI) and npmi over sliding windows (default 10), all ordered pairs i != j (gensim's
  one-one segmentation): PMI = log((P(w_i, w_j) + eps) / (P(w_i) P(w_j))),
  NPMI = PMI / -log(P(w_i, w_j) + eps). `zero="epsilon"` (default) keeps that value for pairs that
  never co-occur; `zero="limit"` uses NPMI's limit -1 (PMI: -inf is not useful, so uci keeps eps).
- c_v (Röder et al. 2015): window 110, one-set segmentation; each word's context vector is its
  NPMI with every topic word, the topic's vector their sum; score = mean cosine. Its author no
  longer recommends C_V (it can rate random word sets highly); it is here for comparability.

Words absent from the reference (count 0) follow an explicit policy, `absent=` (ABSENT_POLICY);
every topic's `coverage` lists them, counts the pairs with them, the pairs of present words that
never co-occur (joint count 0: these keep the convention's epsilon value under every policy) and
the pairs skipped, and gives the reason for a NaN score. The defaults (`default_absent`) are each
convention's behaviour: tealeaves smooths umass (a pair conditioned on an absent word scores
log(eps/eps) = 0, gensim's value; Mimno's sum adds nothing for it) and skips for uci, npmi and
c_v; gensim skips (its dictionary drops the words); Palmetto smooths (its undefined values count
as 0 in the mean).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..util import vectors as vmath
from .counts import Counts

EPSILON = 1e-12
ABSENT_POLICY = {  # one line each, as the command prints them
    "skip": "left out of their topics, with every pair that has one (counted)",
    "smooth": "kept with the convention's value (probability eps: a pair conditioned on one scores "
              "log(eps/eps) = 0; Palmetto: 0)",
    "fail": "an error naming the topic and the words",
}


def default_absent(convention: str, measure: str) -> str:
    """The policy that gives each convention's own numbers (see the module docstring)."""
    if convention == "palmetto" or (convention == "tealeaves" and measure == "umass"):
        return "smooth"
    return "skip"


RARE_FREQUENCY = 1e-6  # a top word rarer than one per million tokens of the reference is "rare"


def rare_words(topic: Sequence[str], lacking: Sequence[str], counts: Counts) -> list[str] | None:
    """The topic's present words rarer than `RARE_FREQUENCY` per token of the reference, estimated
    from sliding-window counts: an occurrence lies in up to w windows of w tokens, so a word in
    `single` of `units` windows has about single / (units w) occurrences per token (more, for
    words in documents shorter than w: the estimate errs towards rare). None for counts of whole
    documents, which say how many documents hold a word, not how often it occurs."""
    if not counts.window or not counts.units:
        return None
    idx = counts.index()
    gone = set(lacking)
    return [w for w in topic if w not in gone
            and counts.single[idx[w]] / (counts.units * counts.window) < RARE_FREQUENCY]


def coverage(topic: Sequence[str], lacking: Sequence[str], counts: Counts, policy: str,
             score: float) -> dict[str, Any]:
    """How much of a topic the reference covers: its unordered word pairs, those with an absent
    word, those of present words that never co-occur in the counted units, those skipped, why the
    score is NaN (None when it is not), and its present words rarer than one per million tokens
    (`rare_words`; sliding windows only)."""
    idx = counts.index()
    present = [idx[w] for w in topic if w not in set(lacking)]
    n, m = len(topic), len(present)
    zero = sum(int(counts.joint[a, b] == 0) for i, a in enumerate(present) for b in present[:i])
    with_absent = n * (n - 1) // 2 - m * (m - 1) // 2
    reason = None
    if math.isnan(score):
        if m == 0:
            reason = f"none of its {n} top words occurs in the reference"
        elif m == 1 and policy == "skip":
            reason = f"only 1 of its {n} top words occurs in the reference: no pair to score"
        else:
            reason = "no pair has a defined value"
    out = {"word_pairs": n * (n - 1) // 2, "pairs_with_absent": with_absent, "zero_pairs": zero,
           "skipped_pairs": with_absent if policy == "skip" else 0, "reason": reason}
    rare = rare_words(topic, lacking, counts)
    if rare is not None:
        out["rare_words"] = rare
    return out


def _topic_index(words: Sequence[str], counts: Counts) -> list[int]:
    idx = counts.index()
    return [idx[w] for w in words]


def umass(topic: Sequence[str], counts: Counts, form: str = "gensim") -> dict[str, Any]:
    ids = _topic_index(topic, counts)
    N = counts.units
    pairs, values, undefined = [], [], 0
    for i in range(1, len(ids)):
        for j in range(i):
            a, b = ids[i], ids[j]
            dj, dij = counts.single[b], counts.joint[a, b]
            if dj == 0:
                undefined += 1
                v = 0.0 if form == "gensim" else math.nan
            elif form == "gensim":
                v = math.log((dij / N + EPSILON) / (dj / N))
            else:
                v = math.log((dij + 1) / dj)
            pairs.append({"w1": topic[i], "w2": topic[j], "joint": int(dij), "count_w2": int(dj), "value": v})
            if not math.isnan(v):
                values.append(v)
    if form == "gensim":
        score = float(np.mean(values)) if values else math.nan
    else:
        score = float(np.sum(values)) if values else math.nan
    return {"score": score, "pairs": pairs, "undefined_pairs": undefined}


def pmi_pair(counts: Counts, a: int, b: int, normalize: bool, zero: str, smooth: bool = False) -> float:
    """PMI or NPMI of one pair; NaN with an absent word unless `smooth` (its probability eps)."""
    N = counts.units
    pa, pb, pab = counts.single[a] / N, counts.single[b] / N, counts.joint[a, b] / N
    if smooth:
        pa, pb = pa or EPSILON, pb or EPSILON
    if pa == 0 or pb == 0:
        return math.nan
    if normalize and pab == 0 and zero == "limit":
        return -1.0
    pmi = math.log((pab + EPSILON) / (pa * pb))
    return pmi / -math.log(pab + EPSILON) if normalize else pmi


def pmi_measure(topic: Sequence[str], counts: Counts, normalize: bool,
                zero: str = "epsilon", smooth: bool = False) -> dict[str, Any]:
    ids = _topic_index(topic, counts)
    pairs, values, undefined = [], [], 0
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            if i == j:
                continue
            v = pmi_pair(counts, a, b, normalize, zero, smooth)
            pairs.append({"w1": topic[i], "w2": topic[j], "joint": int(counts.joint[a, b]), "value": v})
            if math.isnan(v):
                undefined += 1
            else:
                values.append(v)
    return {"score": float(np.mean(values)) if values else math.nan, "pairs": pairs,
            "undefined_pairs": undefined}


def c_v(topic: Sequence[str], counts: Counts, zero: str = "epsilon", smooth: bool = False) -> dict[str, Any]:
    """Indirect cosine measure with NPMI context vectors (gamma = 1) over the topic's present
    words (absent words have no NPMI and are left out, reported as missing), or with `smooth`
    over all its words (an absent word's probability eps)."""
    ids = [k for k in _topic_index(topic, counts) if smooth or counts.single[k] > 0]
    words = [w for w, k in zip(topic, _topic_index(topic, counts), strict=True)
             if smooth or counts.single[k] > 0]
    if not ids:
        return {"score": math.nan, "pairs": [], "undefined_pairs": 0}
    M = np.array([[pmi_pair(counts, a, b, True, zero, smooth) for b in ids] for a in ids])
    units = vmath.unit_rows(np.vstack([M, M.sum(axis=0)]))  # scale-safe; NaN rows: all zeros
    segs = []
    for i, w in enumerate(words):
        value = float(units[i] @ units[-1])
        segs.append({"w1": w, "w2": "<topic>", "value": value})
    vals = [s["value"] for s in segs if not math.isnan(s["value"])]
    return {"score": float(np.mean(vals)) if vals else math.nan, "pairs": segs,
            "undefined_pairs": len(segs) - len(vals)}
