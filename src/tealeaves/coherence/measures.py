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

Pairs with a word that never occurs in the reference are undefined: they are listed in
`missing` and `undefined_pairs` and left out of the mean (umass: gensim's value 0.0 is used and
reported as such); a topic with no defined pair scores NaN and is reported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .counts import Counts

EPSILON = 1e-12


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


def pmi_pair(counts: Counts, a: int, b: int, normalize: bool, zero: str) -> float:
    N = counts.units
    pa, pb, pab = counts.single[a] / N, counts.single[b] / N, counts.joint[a, b] / N
    if pa == 0 or pb == 0:
        return math.nan
    if normalize and pab == 0 and zero == "limit":
        return -1.0
    pmi = math.log((pab + EPSILON) / (pa * pb))
    return pmi / -math.log(pab + EPSILON) if normalize else pmi


def pmi_measure(topic: Sequence[str], counts: Counts, normalize: bool,
                zero: str = "epsilon") -> dict[str, Any]:
    ids = _topic_index(topic, counts)
    pairs, values, undefined = [], [], 0
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            if i == j:
                continue
            v = pmi_pair(counts, a, b, normalize, zero)
            pairs.append({"w1": topic[i], "w2": topic[j], "joint": int(counts.joint[a, b]), "value": v})
            if math.isnan(v):
                undefined += 1
            else:
                values.append(v)
    return {"score": float(np.mean(values)) if values else math.nan, "pairs": pairs,
            "undefined_pairs": undefined}


def c_v(topic: Sequence[str], counts: Counts, zero: str = "epsilon") -> dict[str, Any]:
    """Indirect cosine measure with NPMI context vectors (gamma = 1) over the topic's present
    words (absent words have no NPMI and are left out, reported as missing)."""
    ids = [k for k in _topic_index(topic, counts) if counts.single[k] > 0]
    words = [w for w, k in zip(topic, _topic_index(topic, counts), strict=True) if counts.single[k] > 0]
    if not ids:
        return {"score": math.nan, "pairs": [], "undefined_pairs": 0}
    M = np.array([[pmi_pair(counts, a, b, True, zero) for b in ids] for a in ids])
    total = M.sum(axis=0)
    segs = []
    for i, w in enumerate(words):
        denom = np.linalg.norm(M[i]) * np.linalg.norm(total)
        segs.append({"w1": w, "w2": "<topic>", "value": float(M[i] @ total / denom) if denom else math.nan})
    vals = [s["value"] for s in segs if not math.isnan(s["value"])]
    return {"score": float(np.mean(vals)) if vals else math.nan, "pairs": segs,
            "undefined_pairs": len(segs) - len(vals)}
