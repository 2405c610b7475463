"""Rank-biased overlap and the diversity measures built on it.

RBO (Webber, Moffat & Zobel 2010) is the extrapolated point estimate RBO_ext of their equation 32
for two rankings of lengths s <= l, where X_d is the number of items the two depth-d prefixes share:

    RBO_ext = (1-p)/p * (sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
              + p^l ((X_l - X_s)/l + X_s/s)

For two lists of the same length k this is (1-p)/p * sum_{d=1..k} A_d p^d + p^k A_k, with the
agreement A_d = X_d / d. IRBO (Bianchi et al. 2021, as OCTIS's `InvertedRBO`, p = 0.9 and the
top 10 words by default) is 1 - the mean RBO over all pairs of topics. The embedding-weighted
versions (Terragni, Fersini & Messina 2021, OCTIS's `WordEmbeddingsInvertedRBO` and
`WordEmbeddingsInvertedRBOCentroid`) replace X_d by a similarity of the two prefixes read from word
vectors: see `embeddings.we_irbo`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import MethodError
from ..util.numbers import finite_float

__all__ = ["rbo", "rbo_ext", "irbo", "pairwise_irbo"]


def check_p(p: float) -> float:
    """The persistence p of RBO: a number in (0, 1)."""
    if (x := finite_float(p)) is None or not 0 < x < 1:
        raise MethodError(f"RBO persistence p must be a number in (0, 1), got {p!r}", options=("p",))
    return x


def rbo_ext(overlaps: Sequence[float], s: int, p: float) -> float:
    """Webber et al.'s eq. 32 from the overlaps X_1..X_l (l = len(overlaps)) of a ranking of length
    `s` <= l with one of length l."""
    x = np.asarray(overlaps, dtype=np.float64)
    n = len(x)
    if not 1 <= s <= n:
        raise MethodError(f"RBO needs 1 <= s <= l, got s={s}, l={n}")
    d = np.arange(1, n + 1, dtype=np.float64)
    pd = p ** (d - 1)  # (1-p)/p * p^d written as (1-p) * p^(d-1): no 1/p to overflow for a tiny p
    tail = d > s
    sum1 = float(np.sum(x / d * pd))
    sum2 = float(np.sum(x[s - 1] * (d[tail] - s) / (s * d[tail]) * pd[tail]))
    return (1 - p) * (sum1 + sum2) + p ** n * ((x[n - 1] - x[s - 1]) / n + x[s - 1] / s)


def rbo(list1: Sequence[str], list2: Sequence[str], p: float = 0.9) -> float:
    """RBO_ext of two rankings without repeated items (any lengths, at least one item each)."""
    p = check_p(p)
    for lst in (list1, list2):
        if len(lst) == 0:
            raise MethodError("RBO needs two non-empty rankings")
        if len(set(lst)) != len(lst):
            raise MethodError(f"RBO needs rankings without repeated items, got {list(lst)}")
    short, long = sorted((list(list1), list(list2)), key=len)
    overlaps = [len(set(short[:d]) & set(long[:d])) for d in range(1, len(long) + 1)]
    return rbo_ext(overlaps, len(short), p)


def pairwise_irbo(words: list[list[str]],
                  similarity: Callable[[int, int], float]) -> tuple[float, np.ndarray]:
    """1 - the mean of `similarity(i, j)` over pairs of topics i < j, and per topic 1 - the mean of
    its similarities with the others."""
    n = len(words)
    if n < 2:
        raise MethodError(f"IRBO compares topics with each other: it needs at least 2 topics, got {n}")
    sims = np.zeros((n, n))
    for i, j in itertools.combinations(range(n), 2):
        sims[i, j] = sims[j, i] = similarity(i, j)
    upper = sims[np.triu_indices(n, 1)]
    return 1.0 - float(upper.mean()), 1.0 - sims.sum(axis=1) / (n - 1)


def equal_lengths(words: list[list[str]], topn: int) -> None:
    """IRBO compares every topic's top `topn`: each topic must have that many words (OCTIS raises
    too when a topic is shorter)."""
    for i, t in enumerate(words):
        if len(t) != topn:
            raise MethodError(f"topic {i} has {len(t)} word(s); IRBO compares every topic's top {topn}",
                              options=("topn",))


def irbo(topics, topn: int = 10, p: float = 0.9) -> float:
    """Inverted rank-biased overlap (Bianchi et al. 2021): 1 - mean RBO_ext (persistence `p`) over
    all pairs of topics' top `topn` words. 1: no topic shares a word with another; 0: all topics
    are the same ranking. `topics`: a model of any kind, word lists or a file (as `topic_words`)."""
    from . import topic_words

    p = check_p(p)
    words = topic_words(topics, topn, "diversity")
    equal_lengths(words, topn)
    return pairwise_irbo(words, lambda i, j: rbo(words[i], words[j], p))[0]
