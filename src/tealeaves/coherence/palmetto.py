"""The Palmetto convention: `coherence(..., convention="palmetto")` follows the definitions of
Palmetto (Röder et al. 2015; github.com/dice-group/Palmetto at 6185dfd), read from
palmetto/src/main/java/org/aksw/palmetto/: Palmetto.java (which measure is which pipeline),
prob/window/BooleanSlidingWindowFrequencyDeterminer.java, ContextWindowFrequencyDeterminer.java,
WindowBasedProbabilityEstimator.java, prob/bd/BooleanDocumentProbabilitySupplier.java,
prob/AbstractProbabilitySupplier.java, subsets/{OnePreceding, OneOne, OneSet, OneOneAndSelf}.java,
calculations/direct/{LogCondProb, LogRatio, NormalizedLogRatio, Fitelson}ConfirmationMeasure.java,
calculations/direct/LogBasedCalculation.java, calculations/indirect/CosinusConfirmationMeasure.java,
vector/DirectConfirmationBasedVectorCreator.java and aggregation/ArithmeticMean.java.

Measures (Palmetto.java), words w_1..w_n in rank order:

| measure | counting (window) | segmentation | confirmation |
|---|---|---|---|
| umass | boolean documents | one-preceding: (w_i, w_j), j < i | log((P(w_i, w_j) + eps) / P(w_j)) |
| uci | boolean sliding window 10 | one-one: all ordered pairs | log((P(w_i, w_j) + eps) / (P(w_i) P(w_j))) |
| npmi | boolean sliding window 10 | one-one | that / -log(P(w_i, w_j) + eps) |
| c_v | boolean sliding window 110 | one-set: (w_i, all words) | cosine of NPMI context vectors, gamma 1 |
| c_p | boolean sliding window 70 | one-preceding | Fitelson: (P(w_i\\|w_j) - P(w_i\\|¬w_j)) / sum |
| c_a | context window +-5 | one-one | cosine of NPMI context vectors, gamma 1 |

- **Counting.** Boolean documents: documents containing the word(s), N = documents. Boolean
  sliding windows: a document of n > w tokens gives its n - w + 1 windows, a shorter one is one
  window, and a window contains a word if any copy of it is inside: tealeaves' exact count
  (`counts._count`). Context windows (C_A, `counts._count_context`): each occurrence of a word
  counts once for that word, each pair of occurrences of two different words at most w tokens
  apart once for the pair; N = tokens - documents (w - 1).
- **Minimum frequency.** A count below the minimum gives probability 0: 10 documents for
  boolean documents, 10 w windows for windows (`DEFAULT_MIN_FREQUENCY * windowSize`). A pair's
  probability is also 0 when its lower-ranked word's count is below the minimum.
- **Undefined values are 0** (`resultIfCalcUndefined`): a log-based value whose word
  probabilities are not both positive, a Fitelson value whose two conditional probabilities are
  both 0, a cosine with a zero vector. They stay in the arithmetic mean. So a topic word absent
  from the reference (or too rare) lowers the score instead of being left out; it is listed in
  `missing` and the undefined pairs are counted.
- **Context vectors** (C_V, C_A): v_i[j] = NPMI(w_i, w_j)^gamma over the topic's words (j = i
  included: P(w_i, w_i) = P(w_i)); C_V compares v_i with the sum of all v_j, C_A v_i with v_j.
  eps = 1e-12, gamma = 1, mean over the segments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .counts import Counts

EPSILON = 1e-12  # LogBasedCalculation.EPSILON
GAMMA = 1.0  # Palmetto.java: DirectConfirmationBasedVectorCreator(..., 1)
MIN_FREQUENCY = 10  # AbstractProbabilitySupplier.DEFAULT_MIN_FREQUENCY (x window for windows)
# measure -> (counting, default window, segmentation, confirmation)
MEASURES = {
    "umass": ("documents", None, "one_pre", "m_lc"),
    "uci": ("sliding", 10, "one_one", "m_lr"),
    "npmi": ("sliding", 10, "one_one", "m_nlr"),
    "c_v": ("sliding", 110, "one_set", "cosine"),
    "c_p": ("sliding", 70, "one_pre", "m_f"),
    "c_a": ("context", 5, "one_one", "cosine"),
}


def rule(measure: str) -> str:
    """The counting rule `counts.count` uses for a measure under this convention."""
    return "context" if MEASURES[measure][0] == "context" else "exact"


def probabilities(counts: Counts, ids: Sequence[int], min_frequency: int) -> np.ndarray:
    """P[i, j] for the topic's words (diagonal: P(w_i)): count / N, or 0 below `min_frequency`
    (for a pair, also when the lower-ranked word's own count is below it)."""
    c = counts.joint[np.ix_(ids, ids)].astype(np.float64)
    ok = c >= min_frequency
    single_ok = np.diag(ok)
    later = np.maximum.outer(np.arange(len(ids)), np.arange(len(ids)))
    ok &= single_ok[later]
    return np.where(ok, c / float(counts.units), 0.0)


def segments(n: int, segmentation: str) -> list[tuple[int, int]]:
    """(segment, condition) word positions; in one-set the condition -1 is the whole topic."""
    if segmentation == "one_pre":
        return [(i, j) for i in range(n) for j in range(i)]
    if segmentation == "one_one":
        return [(i, j) for i in range(n) for j in range(n) if i != j]
    return [(i, -1) for i in range(n)]


def confirm(P: np.ndarray, i: int, j: int, kind: str) -> float | None:
    """A direct confirmation of segment w_i by condition w_j; None where Palmetto's value is
    undefined (then 0)."""
    pi, pj, pij = P[i, i], P[j, j], P[i, j]
    if kind == "m_f":
        cond = pij / pj if pj > 0 else 0.0
        other = (pi - pij) / (1 - pj) if pj < 1 else 0.0
        return (cond - other) / (cond + other) if cond > 0 or other > 0 else None
    if pi <= 0 or pj <= 0:
        return None
    if kind == "m_lc":
        return math.log((pij + EPSILON) / pj)
    if kind == "m_lr":
        return math.log((pij + EPSILON) / (pi * pj))
    return math.log((pij + EPSILON) / (pi * pj)) / -math.log(pij + EPSILON)  # m_nlr


def nlr_vectors(P: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    """Context vectors v_i[j] = NPMI(w_i, w_j)^gamma, 0 where undefined."""
    n = P.shape[0]
    V = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            v = confirm(P, i, j, "m_nlr")
            V[i, j] = 0.0 if v is None else v**gamma
    return V


def cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cosine similarity; None (Palmetto's 0) when a vector has length 0."""
    la, lb = float(np.sum(a * a)), float(np.sum(b * b))
    return float(np.sum(a * b)) / (math.sqrt(la) * math.sqrt(lb)) if la > 0 and lb > 0 else None


def indirect(V: np.ndarray, segmentation: str) -> list[float | None]:
    """Cosine of each segment's vector and its condition's (one-set: the sum of all vectors)."""
    total = V.sum(axis=0)
    return [cosine(V[i], total if j < 0 else V[j]) for i, j in segments(V.shape[0], segmentation)]


def values(P: np.ndarray, measure: str) -> list[float | None]:
    """Every segment's value of a topic with probabilities P (None: undefined, counted as 0)."""
    _, _, segmentation, kind = MEASURES[measure]
    if kind == "cosine":
        return indirect(nlr_vectors(P), segmentation)
    return [confirm(P, i, j, kind) for i, j in segments(P.shape[0], segmentation)]


def min_frequency(window: int | None) -> int:
    return MIN_FREQUENCY if window is None else MIN_FREQUENCY * int(window)


def definition(measure: str, window: int | None) -> dict[str, Any]:
    """What a fingerprint records of a measure under this convention."""
    _, _, segmentation, kind = MEASURES[measure]
    return {"segmentation": segmentation, "epsilon": EPSILON, "gamma": GAMMA if kind == "cosine" else None,
            "min_frequency": min_frequency(window)}


def score(measure: str, topic: Sequence[str], counts: Counts) -> dict[str, Any]:
    """One topic's score (the mean of its segment values, undefined ones as 0), its segments and
    the number of undefined ones."""
    idx = counts.index()
    ids = [idx[w] for w in topic]
    P = probabilities(counts, ids, min_frequency(counts.window))
    vals = values(P, measure)
    _, _, segmentation, _ = MEASURES[measure]
    pairs = [{"w1": topic[i], "w2": "<topic>" if j < 0 else topic[j], "value": 0.0 if v is None else v}
             for (i, j), v in zip(segments(len(ids), segmentation), vals, strict=True)]
    score_ = float(np.mean([p["value"] for p in pairs])) if pairs else math.nan
    out = {"score": score_, "pairs": pairs, "undefined_pairs": sum(v is None for v in vals)}
    out["palmetto"] = standins(measure, topic, counts, P, vals)
    return out


def _unit(window: int | None, measure: str) -> str:
    if window is None:
        return "documents"
    return "context windows" if MEASURES[measure][0] == "context" else f"windows of {window}"


def standins(measure: str, topic: Sequence[str], counts: Counts, P: np.ndarray,
             vals: Sequence[float | None]) -> dict[str, Any]:
    """How much of a topic's score is Palmetto's stand-ins rather than counts: its words below the
    minimum frequency (probability 0), its word pairs with a joint probability of 0, its values that
    rest on ε alone (log-based values of such a pair, direct or inside C_V/C_A's vectors), the
    undefined ones (counted as 0), the words whose estimate exceeds 1 (C_A's N can be smaller than
    a word's count of context windows), and a `note` when the score is mostly stand-ins, has a
    log-based value from ε alone (log ε is about -27.6: one such value moves a mean far), or holds a
    probability above 1 (None otherwise)."""
    n = len(topic)
    minf = min_frequency(counts.window)
    single = counts.single[[counts.index()[w] for w in topic]]
    upper = [(i, j) for i in range(n) for j in range(i)]
    zero_joint = sum(int(P[i, j] == 0) for i, j in upper)
    _, _, segmentation, kind = MEASURES[measure]
    if kind == "m_f":
        eps = 0
    elif kind == "cosine":  # ordered off-diagonal vector entries
        eps = 2 * sum(int(P[i, j] == 0 and P[i, i] > 0 and P[j, j] > 0) for i, j in upper)
    else:
        eps = sum(int(v is not None and P[i, max(j, 0)] == 0)
                  for (i, j), v in zip(segments(n, segmentation), vals, strict=True))
    undefined = sum(v is None for v in vals)
    rare = [w for w, c in zip(topic, single, strict=True) if c < minf]
    over = [{"word": w, "count": int(c)} for w, c in zip(topic, single, strict=True) if c > counts.units]
    notes = []
    entries = n * (n - 1) if kind == "cosine" else len(vals)
    if zero_joint == len(upper) or 2 * undefined > len(vals) or 2 * eps > entries:
        notes.append(f"{len(rare)} of its {n} words and {zero_joint} of its {len(upper)} word pairs are "
                     f"below Palmetto's minimum frequency ({minf:,} {_unit(counts.window, measure)}): the "
                     f"score is mostly Palmetto's stand-ins ({undefined} undefined values counted as 0, "
                     f"{eps} values from ε alone), not a measurement")
    elif eps and (kind != "cosine" or 2 * eps > entries):
        notes.append(f"{eps} of its {entries} {'vector entries' if kind == 'cosine' else 'values'} rest on ε "
                     f"alone (word pairs below Palmetto's minimum frequency, {minf:,} "
                     f"{_unit(counts.window, measure)}), not on counts")
    for o in over:
        notes.append(f"N = {counts.units:,} is smaller than {o['word']}'s {o['count']:,} context windows: "
                     f"{measure}'s estimate P = {o['count'] / counts.units:.3g} is not a probability")
    return {"below_min_frequency": rare, "pairs_below_min_frequency": zero_joint, "epsilon_values": eps,
            "probability_above_one": over, "note": "; ".join(notes) or None}
