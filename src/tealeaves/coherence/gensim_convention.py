"""The gensim convention: `coherence(..., convention="gensim")` gives the numbers of gensim's
`CoherenceModel(topics=..., texts=reference, dictionary=Dictionary(reference), coherence=...)`
for u_mass, c_uci, c_npmi and c_v, counting included. Read from gensim 4.4.0:
gensim/models/coherencemodel.py and gensim/topic_coherence/{segmentation, probability_estimation,
text_analysis, direct_confirmation_measure, indirect_confirmation_measure, aggregation}.py.

- **Topic words.** `CoherenceModel._ensure_elements_are_ids` maps each topic word to its
  dictionary id and *drops* a word the dictionary lacks; with the dictionary built from the
  reference, a word absent from the reference is dropped from its topic before segmentation. So
  here: the topic is its top-n words with absent ones left out (listed in `missing`). gensim
  refuses a whole call in which some topic has no word in the reference; here that topic scores
  NaN. (gensim truncates to `topn` after dropping; tealeaves takes each topic's top n first, as
  gensim does when handed n-word topics.)
- **Counting.** u_mass: boolean documents (`p_boolean_document`: documents containing the word /
  both words; every document counts, empty ones too). c_uci, c_npmi, c_v: boolean sliding
  windows (`p_boolean_sliding_window`, `utils.iter_windows(..., ignore_below_size=False)`): a
  document of n >= w tokens gives its n - w + 1 windows of w tokens, a shorter one (an empty one
  too) is one window. `WordOccurrenceAccumulator._slide_window` keeps a flag per word: set for
  every word of a document's first window, then at each step the word that left the window is
  unset and the word that entered is set, in that order. A word whose first copy leaves while
  another copy is still inside is therefore absent until a copy enters again: gensim undercounts
  words repeated within a window (`counts._count_gensim` does the same; tealeaves' own count,
  `counts._count`, does not). Windows: c_uci and c_npmi 10, c_v 110 (`SLIDING_WINDOW_SIZES`).
- **Formulas** (N units, eps = 1e-12, `direct_confirmation_measure.EPSILON`):
  u_mass (`s_one_pre`: pairs (w_i, w_j), j < i): log((D(w_i, w_j)/N + eps) / (D(w_j)/N));
  c_uci (`s_one_one`: all ordered pairs i != j): log((P(w_i, w_j) + eps) / (P(w_i) P(w_j)));
  c_npmi: that PMI / -log(P(w_i, w_j) + eps);
  c_v (`s_one_set`, `cosine_similarity` with measure 'nlr', gamma 1): each word's context vector
  v_i[j] = NPMI(w_i, w_j)^gamma over the topic's words (j = i included, whose joint count is
  the word's own count), the topic's vector their sum; the segment score is the cosine of v_i
  and the topic's vector. Each topic's score is the arithmetic mean of its pairs / segments; a
  topic with no pair (one word left) is NaN for u_mass, c_uci and c_npmi, as gensim's mean of
  nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .counts import Counts

EPSILON = 1e-12
GAMMA = 1
NAMES = {"umass": "u_mass", "uci": "c_uci", "npmi": "c_npmi", "c_v": "c_v"}  # ours -> gensim's


def _present(topic: Sequence[str], counts: Counts, smooth: bool = False) -> list[int]:
    """The topic's words as count indices, those absent from the reference dropped (gensim's
    dictionary lookup), or with `smooth` all kept (`_p` gives them probability eps)."""
    idx = counts.index()
    return [idx[w] for w in topic if smooth or counts.single[idx[w]] > 0]


def _p(c: int, n: float) -> float:
    """A word's probability; eps for an absent word (reached only with absent="smooth")."""
    return c / n if c else EPSILON


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def umass(topic: Sequence[str], counts: Counts, smooth: bool = False) -> dict[str, Any]:
    ids = _present(topic, counts, smooth)
    N = float(counts.units)
    pairs = []
    for i in range(1, len(ids)):
        for j in range(i):
            a, b = ids[i], ids[j]
            v = math.log((counts.joint[a, b] / N + EPSILON) / _p(counts.single[b], N))
            pairs.append({"w1": counts.targets[a], "w2": counts.targets[b], "joint": int(counts.joint[a, b]),
                          "count_w2": int(counts.single[b]), "value": v})
    return {"score": _mean([p["value"] for p in pairs]), "pairs": pairs, "undefined_pairs": 0}


def _pmi(counts: Counts, a: int, b: int) -> float:
    N = float(counts.units)
    return math.log((counts.joint[a, b] / N + EPSILON) / (_p(counts.single[a], N) * _p(counts.single[b], N)))


def _npmi(counts: Counts, a: int, b: int) -> float:
    return _pmi(counts, a, b) / -math.log(counts.joint[a, b] / float(counts.units) + EPSILON)


def pmi_measure(topic: Sequence[str], counts: Counts, normalize: bool,
                smooth: bool = False) -> dict[str, Any]:
    ids = _present(topic, counts, smooth)
    f = _npmi if normalize else _pmi
    pairs = [{"w1": counts.targets[a], "w2": counts.targets[b], "joint": int(counts.joint[a, b]),
              "value": f(counts, a, b)} for i, a in enumerate(ids) for j, b in enumerate(ids) if i != j]
    return {"score": _mean([p["value"] for p in pairs]), "pairs": pairs, "undefined_pairs": 0}


def c_v(topic: Sequence[str], counts: Counts, smooth: bool = False) -> dict[str, Any]:
    ids = _present(topic, counts, smooth)
    if not ids:
        return {"score": math.nan, "pairs": [], "undefined_pairs": 0}
    M = np.array([[_npmi(counts, a, b) ** GAMMA for b in ids] for a in ids])
    total = M.sum(axis=0)
    segs = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for i, a in enumerate(ids):
            v = float(M[i] @ total / (np.sqrt(np.sum(M[i] ** 2)) * np.sqrt(np.sum(total**2))))
            segs.append({"w1": counts.targets[a], "w2": "<topic>", "value": v})
    return {"score": _mean([s["value"] for s in segs]), "pairs": segs, "undefined_pairs": 0}


def score(measure: str, topic: Sequence[str], counts: Counts, smooth: bool = False) -> dict[str, Any]:
    """One topic's score, its pairs (segments for c_v) and its undefined pairs (none: absent words
    are dropped, as gensim does, or with `smooth` kept with probability eps)."""
    if measure == "umass":
        return umass(topic, counts, smooth)
    if measure == "c_v":
        return c_v(topic, counts, smooth)
    return pmi_measure(topic, counts, normalize=measure == "npmi", smooth=smooth)


def gensim_topics(topics: Sequence[Sequence[str]], topn: int, present: Any,
                  keep_absent: bool = False) -> list[list[str]]:
    """Word lists as gensim's `CoherenceModel(topics=...)` uses them: words the reference lacks
    dropped (`_ensure_elements_are_ids`; kept when `keep_absent`, for the other absent policies),
    then every topic cut to `topn` only if the first topic is longer than `topn` (its `topics`
    getter)."""
    kept = [list(t) if keep_absent else [w for w in t if present(w)] for t in topics]
    if kept and len(kept[0]) > topn:
        kept = [t[:topn] for t in kept]
    return kept
