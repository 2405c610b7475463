"""Stability across restarts: do a model's topics recur when it is trained again with another seed?

Two or more restarts with the same number of topics K. The topics of every pair of restarts are
matched one to one by the Hungarian algorithm (`scipy.optimize.linear_sum_assignment`) on a stated
distance between topics, in 0..1:

- `"jensen-shannon"` (the default when every restart has topic-word distributions): the
  Jensen-Shannon distance, base 2, between the two distributions (`scipy.spatial.distance.
  jensenshannon(p, q, base=2)`: the square root of the divergence; 0 identical, 1 disjoint);
- `"average-jaccard"` (the default otherwise: top words only, signed or non-negative weights): 1 -
  the average Jaccard index of Greene, O'Callaghan & Cunningham (2014, "How many topics? Stability
  analysis for topic models", section 3), AJ = (1/t) sum_{d=1..t} |A_d ∩ B_d| / |A_d ∪ B_d| over
  the depth-d prefixes of the two topics' top t = `topn` words;
- `"rbo"`: 1 - rank-biased overlap (Webber et al. 2010, `coherence.rbo.rbo`, persistence `p`).

A topic's stability is the mean similarity (1 - distance) of its matches in the other restarts; a
restart's is the mean over its topics (Greene et al.'s agreement, averaged over every other restart
instead of one reference); the group's score is the mean over restarts. stm's `multiSTM` (Roberts,
Stewart & Tingley 2016) does the same with a reference run: Hungarian matching on inner products,
then the L1 distance and shared top-10 words of each matched pair.

Flags (`flag_restarts`; the floors `MATCH_FLOOR` and the rule `RULE` measured by
`experiments/stability_restarts.py`, docs/stability_restarts.md): a matched pair of topics less
similar than the floor has no counterpart; a topic with no counterpart in more than half of the
other restarts is `unmatched`. Two restarts agree when every matched pair reaches the floor; the
restarts outside any largest set of restarts that all agree with each other disagree with the
rest and are flagged (a restart that merged two topics and split another). When no two restarts
agree, all are flagged; with two restarts that disagree, both (which one is stuck cannot be told).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidModelError, MethodError, shown
from ..model import TopicModel, _check_name
from ..output.display import Display
from ..output.jsonout import json_float
from ..topics import NotApplicableError, Topics, as_topics
from ..util.limits import check_cost, check_int
from ..util.numbers import finite_float

__all__ = ["stability", "stability_groups", "restart_kind", "flag_restarts", "js_distances",
           "average_jaccard", "StabilityResult", "DISTANCES", "MATCH_FLOOR"]

DISTANCES = ("jensen-shannon", "average-jaccard", "rbo")
# similarity (1 - distance) below which a matched pair of topics has no counterpart, per distance:
# measured by experiments/stability_restarts.py (docs/stability_restarts.md)
MATCH_FLOOR = {"jensen-shannon": 0.45, "average-jaccard": 0.45, "rbo": 0.6}
WORDS_SHOWN = 6
RULES = ("consensus", "majority")
RULE = "consensus"
MAX_CONSENSUS = 16  # restarts: beyond, the consensus is approximated (see _consensus)
JS_RATE = 2e8  # (topic pairs x words) per second of the Jensen-Shannon matrix, for the cost check


@dataclass(repr=False)
class StabilityResult(Display):
    """Per-topic and per-restart stability of a group of restarts (see the module notes). `pairs`:
    for every pair of restarts, the matching (`matching[k]`: the topic of `b` matched to topic k of
    `a`) and each matched pair's similarity."""

    distance: str
    topn: int | None
    models: list[str]
    per_topic: dict[str, np.ndarray]
    pairs: list[dict[str, Any]]
    floor: float
    unmatched: dict[str, list[int]]
    flagged: dict[str, str]
    words: dict[str, list[list[str]] | None] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    _name = "StabilityResult"

    @property
    def num_topics(self) -> int:
        return len(next(iter(self.per_topic.values())))

    @property
    def per_model(self) -> dict[str, float]:
        return {m: float(np.mean(v)) for m, v in self.per_topic.items()}

    @property
    def score(self) -> float:
        return float(np.mean(list(self.per_model.values())))

    def _headline(self) -> list[tuple[str, Any]]:
        return [("restarts", len(self.models)), ("topics", self.num_topics), ("distance", self.distance),
                ("score", self.score), ("flagged", len(self.flagged))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        return "topic", {m: list(v) for m, v in self.per_topic.items()}

    def table(self) -> str:
        """One row per restart: its stability, its least stable topic, its topics without a
        counterpart and why it is flagged."""
        head = ["model", "stability", "lowest topic", "unmatched", "flag"]
        rows = []
        for m in self.models:
            v = self.per_topic[m]
            low = int(np.argmin(v))
            rows.append([m, f"{self.per_model[m]:.3f}", f"{low}: {v[low]:.3f}",
                         " ".join(map(str, self.unmatched[m])) or "-",
                         "FLAGGED" if m in self.flagged else "-"])
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        return "\n".join("  ".join(c.ljust(w) if i in (0, 3, 4) else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
                         for cells in [head, *rows])

    def topic_lines(self, model: str) -> list[str]:
        """Each topic of `model`: its stability and top words."""
        words = self.words.get(model)
        return [f"  {k:>3}  {s:.3f}  " + (" ".join(words[k][:WORDS_SHOWN]) if words else "")
                for k, s in enumerate(self.per_topic[model])]

    def summary(self) -> str:
        """The score, the distance and the flags, in words."""
        n = len(self.models)
        how = self.distance + (f" over the top {self.topn} words" if self.topn else " between topic-word "
                               "distributions")
        lines = [f"{n} restarts of K = {self.num_topics}: stability {self.score:.3f} (mean similarity of "
                 f"Hungarian-matched topics, 1 - {how}); no counterpart below similarity {self.floor:g}"]
        lines += [f"FLAGGED {m}: {why}" for m, why in self.flagged.items()]
        if not self.flagged:
            lines.append("no restart disagrees with the rest")
        return "\n".join(lines)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per topic of every restart (the CSV)."""
        return [{"model": m, "topic": k, "stability": json_float(float(s)),
                 "unmatched": k in self.unmatched[m],
                 "words": " ".join((self.words.get(m) or [[]] * (k + 1))[k][:WORDS_SHOWN])}
                for m in self.models for k, s in enumerate(self.per_topic[m])]

    def to_dict(self) -> dict[str, Any]:
        return {"task": "stability", "distance": self.distance, "topn": self.topn, "topics": self.num_topics,
                "models": list(self.models),
                "per_topic": {m: [json_float(float(x)) for x in v] for m, v in self.per_topic.items()},
                "per_model": {m: json_float(v) for m, v in self.per_model.items()},
                "score": json_float(self.score), "flagged": dict(self.flagged),
                "unmatched": {m: list(v) for m, v in self.unmatched.items()}, "floor": self.floor,
                "words": {m: [list(w[:WORDS_SHOWN]) for w in v] for m, v in self.words.items() if v},
                "pairs": self.pairs, "params": self.params, "seconds": self.seconds}


def stability(models: Sequence[TopicModel | Topics | str | os.PathLike], *, distance: str = "auto",
              topn: int | None = None, names: Sequence[str] | None = None, p: float | None = None,
              floor: float | None = None) -> StabilityResult:
    """Stability of two or more restarts of the same K (models of one kind, any kind, or model
    files; `restart_kind`): see the module notes. `distance`: "auto" (Jensen-Shannon when every
    restart has topic-word distributions, else average Jaccard over the top `topn` words), or one
    of `DISTANCES`. `names`
    label the restarts (default: their names; a repeated name gets " #2", " #3", said in
    `params["renamed"]`). `floor`: the similarity below which a match has no counterpart (default
    `MATCH_FLOOR[distance]`). Vocabularies are aligned by word strings; restarts whose words differ
    are an error. `topn` (default 10) applies to the top-word distances only and `p` (default 0.9)
    to rbo only: given with another distance, they are refused."""
    start = time.perf_counter()
    topics, renamed = _inputs(models, names)
    _same_kind(topics)
    K = _same_k(topics)
    _same_words(topics)
    asked, distance = distance, _distance(distance, topics)
    _check_applies(asked, distance, topn, p)
    topn = check_int("topn", 10 if topn is None else topn, 1)
    p = 0.9 if p is None else p
    if floor is None:
        floor = MATCH_FLOOR[distance]
    elif (x := finite_float(floor)) is None or not 0 <= x <= 1:
        raise MethodError(f"floor must be a similarity in 0..1, got {floor!r}", options=("floor",))
    else:
        floor = x
    n = len(topics)
    if distance == "jensen-shannon":
        V = len(_columns(topics))
        check_cost("stability (Jensen-Shannon)", 8.0 * K * V * (n + 3),
                   n * (n - 1) / 2 * K * K * V / JS_RATE, how=f"{n} restarts, {K} topics, {V} words")
        weights = _weights(topics)
        pair_distance = js_distances
    else:
        ranked = [_ranked(t, topn) for t in topics]
        weights = ranked
        pair_distance = _word_distance(distance, p)
    sims: dict[tuple[int, int], np.ndarray] = {}
    pairs = []
    from scipy.optimize import linear_sum_assignment

    for a in range(n):
        for b in range(a + 1, n):
            cost = pair_distance(weights[a], weights[b])
            rows, match = linear_sum_assignment(cost)
            sim = np.clip(1.0 - cost[rows, match], 0.0, 1.0)
            sims[a, b] = sim
            sims[b, a] = np.empty(K)
            sims[b, a][match] = sim
            pairs.append({"a": topics[a].name, "b": topics[b].name,
                          "agreement": json_float(float(sim.mean())), "matching": [int(x) for x in match],
                          "similarity": [json_float(float(x)) for x in sim]})
    names_out = [t.name for t in topics]
    per_topic = {names_out[a]: np.mean([sims[a, b] for b in range(n) if b != a], axis=0) for a in range(n)}
    unmatched, flagged = flag_restarts(names_out, sims, float(floor), RULE)
    words = {t.name: _shown_words(t) for t in topics}
    params = {"p": p} if distance == "rbo" else {}
    if renamed:
        params["renamed"] = renamed
    return StabilityResult(distance, topn if distance != "jensen-shannon" else None, names_out, per_topic,
                           pairs, float(floor), unmatched, flagged, words, params,
                           time.perf_counter() - start)


def flag_restarts(names: Sequence[str], sims: dict[tuple[int, int], np.ndarray], floor: float,
                  rule: str = "consensus") -> tuple[dict[str, list[int]], dict[str, str]]:
    """The topics without a counterpart in more than half of the other restarts, and the restarts
    flagged as disagreeing with the rest, with the reason. `sims[a, b][k]`: the similarity of topic k
    of restart a to its match in restart b. Two restarts agree when every matched pair is at least
    `floor` similar. `rule`: "consensus" flags the restarts outside every largest set of restarts
    that all agree with each other (all of them when no two agree); "majority" flags a restart that
    disagrees with more than half of the others. `RULE` is the one measured best."""
    if rule not in RULES:
        raise MethodError(f"unknown rule {rule!r} (known: {', '.join(RULES)})")
    n = len(names)
    others = n - 1
    low = {(a, b): np.flatnonzero(sims[a, b] < floor) for a in range(n) for b in range(n) if a != b}
    unmatched = {}
    for a, name in enumerate(names):
        counts = np.zeros(len(sims[a, (a + 1) % n]), dtype=int)
        for b in range(n):
            if b != a:
                counts[low[a, b]] += 1
        unmatched[name] = [int(k) for k in np.flatnonzero(counts > others / 2)]
    against = {a: [b for b in range(n) if b != a and low[a, b].size] for a in range(n)}
    if rule == "majority":
        out = [a for a in range(n) if len(against[a]) > others / 2]
    else:
        out = [a for a in range(n) if a not in _consensus(n, against)]
    flagged = {}
    for a in out:
        worst = max((int(low[a, b].size) for b in against[a]), default=0)
        where = ", ".join(map(str, unmatched[names[a]])) or "none in most restarts"
        flagged[names[a]] = (f"disagrees with {len(against[a])} of the {others} other restart(s): up to "
                             f"{worst} topic(s) without a counterpart (similarity < {floor:g}); unmatched "
                             f"topics: {where}"
                             + ("; with 2 restarts which one is stuck cannot be told" if n == 2 else ""))
    return unmatched, flagged


def _consensus(n: int, against: dict[int, list[int]]) -> set[int]:
    """The restarts in every largest set of restarts that all agree with each other (empty when no
    two agree, or when no restart is in all of them). Exhaustive up to MAX_CONSENSUS restarts; beyond,
    the restarts that agree with more than half of the others."""
    if n > MAX_CONSENSUS:
        return {a for a in range(n) if len(against[a]) < (n - 1) / 2}
    best: list[set[int]] = []
    for size in range(n, 1, -1):
        best = [set(c) for c in itertools.combinations(range(n), size)
                if all(b not in against[a] for a, b in itertools.combinations(c, 2))]
        if best:
            break
    return set.intersection(*best) if best else set()


def restart_kind(model: TopicModel | Topics) -> tuple:
    """What two models must share to be restarts of one model: both LDA (whoever trained them),
    or the same library's model (its `source`, version numbers aside) with the same kind of
    topic-word weights, prior and decoder. An LDA and a CTM, or an NMF and an LSI, with the same K
    and words are different models, not restarts."""
    t = as_topics(model)
    if t.lda is not None:
        return ("LDA",)
    return (re.sub(r"\s+v?\d+(\.\d+)+", "", t.source), t.weights_kind, t.prior, t.decoder)


def stability_groups(models: Sequence[TopicModel | Topics], skip_inapplicable: bool = False,
                     **kwargs: Any) -> list[StabilityResult]:
    """`stability` of every group of at least two models of the same kind (`restart_kind`) with
    the same K and the same words (the restarts among `models`: `select`'s models of each K, the
    models `evaluate` was given), in the order their first member appears; `kwargs` go to
    `stability`. With `skip_inapplicable`, a group that stability does not apply to (no words to
    compare) is left out instead of an error."""
    groups: dict[tuple, list[TopicModel | Topics]] = {}
    for m in models:
        t = as_topics(m)
        words = frozenset(t.vocab) if t.vocab is not None else ("columns", t.num_words)
        groups.setdefault((restart_kind(t), t.num_topics, words), []).append(m)
    out = []
    for g in groups.values():
        if len(g) >= 2:
            try:
                out.append(stability(g, **kwargs))
            except NotApplicableError:
                if not skip_inapplicable:
                    raise
    return out


def js_distances(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """The Jensen-Shannon distance (base 2, 0..1) between every row of P and every row of Q:
    sqrt((KL(p || m) + KL(q || m)) / 2), m = (p + q) / 2, logarithms base 2. Each word's share of
    KL(p || m) + KL(q || m) is m f(r), r = (p - q) / (p + q), f(r) = (1 + r) ln(1 + r) + (1 - r) ln(1 - r)
    >= 0: a sum of non-negative terms, each accurate to rounding (`_js_f`). Summing p ln(p/m) and
    q ln(q/m) instead cancels to 1e-16 absolute, the distance of two nearly equal topics then off by
    up to 0.5% (sqrt of that)."""
    out = np.empty((P.shape[0], Q.shape[0]))
    for i, p in enumerate(P):
        s = p + Q
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(s > 0, (p - Q) / np.where(s > 0, s, 1.0), 0.0)
        out[i] = (0.5 * s * _js_f(r)).sum(axis=1) / (2 * math.log(2))
    return np.sqrt(np.clip(out, 0.0, 1.0))


def _js_f(r: np.ndarray) -> np.ndarray:
    """f(r) = (1 + r) ln(1 + r) + (1 - r) ln(1 - r) for r in [-1, 1] (even; f(1) = 2 ln 2), accurate
    to rounding: 2 r atanh(r) + ln(1 - r^2) for |r| <= 1/2 (near 0, f ~ r^2 and the direct form
    cancels), the direct form above (log1p: no cancellation there)."""
    a = np.abs(r)
    out = np.empty_like(a)
    small = a <= 0.5
    x = a[small]
    out[small] = 2 * x * np.arctanh(x) + np.log1p(-x * x)
    y = a[~small]
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = (1 - y) * np.log1p(-y)
    out[~small] = (1 + y) * np.log1p(y) + np.where(y < 1, rest, 0.0)
    return out


def average_jaccard(a: Sequence[str], b: Sequence[str], depth: int | None = None) -> float:
    """Greene et al.'s (2014) average Jaccard index of two ranked lists over depths 1..t (t: `depth`,
    else the shorter list's length)."""
    t = min(len(a), len(b)) if depth is None else depth
    return sum(len(set(a[:d]) & set(b[:d])) / len(set(a[:d]) | set(b[:d])) for d in range(1, t + 1)) / t


def _check_applies(asked: str, distance: str, topn: int | None, p: float | None) -> None:
    """Refuse `p` with a distance other than rbo, and `topn` with Jensen-Shannon: never ignored."""
    here = distance if asked != "auto" else f"{distance}, chosen by auto"
    if p is not None and distance != "rbo":
        raise MethodError(f"p applies only with distance rbo (here {here})", options=("p", "distance"))
    if topn is not None and distance == "jensen-shannon":
        raise MethodError(f"topn applies only with distance average-jaccard or rbo (here {here}: "
                          "it compares whole topic-word distributions)", options=("topn", "distance"))


def _word_distance(distance: str, p: float):
    from ..coherence.rbo import check_p, rbo

    if distance == "rbo":
        p = check_p(p)

    def one(x: list[str], y: list[str]) -> float:
        return 1.0 - (rbo(x, y, p) if distance == "rbo" else average_jaccard(x, y))

    return lambda A, B: np.array([[one(x, y) for y in B] for x in A])


def _inputs(models: Any, names: Sequence[str] | None) -> tuple[list[Topics], dict[str, str]]:
    """Every restart as Topics (files loaded), with unique names; the renamed ones."""
    if isinstance(models, str | os.PathLike | TopicModel | Topics) or not isinstance(models, Sequence):
        raise MethodError("stability needs a list of restarts (two or more models of the same K)")
    if len(models) < 2:
        raise MethodError(f"stability compares restarts: it needs at least 2 models of the same K, got "
                          f"{len(models)}")
    if names is not None and (isinstance(names, str) or len(names) != len(models)):
        raise MethodError(f"{1 if isinstance(names, str) else len(names)} names for {len(models)} models",
                          options=("names",))
    out = []
    for i, m in enumerate(models):
        if isinstance(m, str | os.PathLike):
            from ..io import load_topics

            m = load_topics(os.fspath(m))
            if isinstance(m, list):
                raise MethodError(f"{shown(models[i], 120)} holds {len(m)} models; give each restart as one "
                                  "model")
        if not isinstance(m, TopicModel | Topics):
            raise MethodError(f"model {i}: expected a TopicModel, Topics or a model file, got "
                              f"{type(m).__name__}")
        t = as_topics(m)
        out.append(t)
    seen: dict[str, int] = {}
    renamed = {}
    final = []
    for i, t in enumerate(out):
        base = _check_name(names[i]) if names is not None else t.name  # evaluate's rule for names
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base} #{seen[base]}"
        if name != base:
            renamed[name] = base
        final.append(t if name == t.name else _renamed(t, name))
    return final, renamed


def _renamed(t: Topics, name: str) -> Topics:
    import dataclasses

    return dataclasses.replace(t, name=name)


def _kind_text(t: Topics) -> str:
    if t.lda is not None:
        return "LDA"
    parts = [f"{t.weights_kind or 'top words'}{' weights' if t.weights_kind else ''}",
             *([f"a {t.prior} prior"] if t.prior else []), *([f"a {t.decoder} decoder"] if t.decoder else [])]
    return f"{t.source} ({', '.join(parts)})"


def _same_kind(topics: list[Topics]) -> None:
    """Restarts are models of one kind (`restart_kind`)."""
    first = topics[0]
    for t in topics[1:]:
        if restart_kind(t) != restart_kind(first):
            raise MethodError(f"stability compares restarts of one model: {shown(first.name, 80)} is "
                              f"{_kind_text(first)}, {shown(t.name, 80)} is {_kind_text(t)}; models of "
                              "different kinds are not restarts")


def _same_k(topics: list[Topics]) -> int:
    K = topics[0].num_topics
    for t in topics[1:]:
        if t.num_topics != K:
            raise MethodError(f"stability compares restarts of the same K: {shown(topics[0].name, 80)} has "
                              f"{K} topics, {shown(t.name, 80)} has {t.num_topics}")
    return K


def _same_words(topics: list[Topics]) -> None:
    """Restarts with vocabularies must have the same words (any order)."""
    with_vocab = [t for t in topics if t.vocab is not None]
    if not with_vocab:
        return
    first = with_vocab[0]
    ref = set(first.vocab)
    for t in with_vocab[1:]:
        if set(t.vocab) != ref:
            mine = set(t.vocab)
            only_a = [w for w in first.vocab if w not in mine]
            only_b = [w for w in t.vocab if w not in ref]
            raise InvalidModelError(
                f"restarts {shown(first.name, 80)} and {shown(t.name, 80)} do not share a vocabulary: "
                f"{len(only_a)} words only in the first (e.g. {', '.join(map(shown, only_a[:3])) or '-'}), "
                f"{len(only_b)} only in the second (e.g. {', '.join(map(shown, only_b[:3])) or '-'})")


def _distance(distance: str, topics: list[Topics]) -> str:
    if distance != "auto" and distance not in DISTANCES:
        raise MethodError(f"unknown distance {distance!r} (known: auto, {', '.join(DISTANCES)})",
                          options=("distance",))
    lacking = [t for t in topics if t.weights_kind != "distributions"]
    if distance == "auto":
        return "average-jaccard" if lacking else "jensen-shannon"
    if distance == "jensen-shannon" and lacking:
        t = lacking[0]
        what = "top words only" if t.weights is None else (t.weights_note or f"{t.weights_kind} weights")
        raise NotApplicableError(f"the Jensen-Shannon distance needs topic-word distributions: "
                                 f"{shown(t.name, 80)} ({t.source}) has {what}; use "
                                 "distance='average-jaccard' or 'rbo' (top words)")
    return distance


def _columns(topics: list[Topics]) -> tuple[str, ...] | range:
    """The words (or, without vocabularies, the column indices) every restart's weights are put on."""
    if all(t.vocab is not None for t in topics):
        return topics[0].vocab
    if any(t.vocab is not None for t in topics) or len({t.num_words for t in topics}) > 1:
        sizes = ", ".join(f"{shown(t.name, 40)}: {t.num_words} words"
                          + ("" if t.vocab is not None else " (no vocabulary)") for t in topics)
        raise InvalidModelError(f"restarts without vocabularies can be compared only if none has one and all "
                                f"have the same number of words ({sizes})")
    return range(topics[0].num_words)


def _weights(topics: list[Topics]) -> list[np.ndarray]:
    """Each restart's topic-word distributions, columns in the first restart's word order."""
    order = _columns(topics)
    out = []
    for t in topics:
        w = np.asarray(t.weights, dtype=float)
        if isinstance(order, tuple) and t.vocab != order:
            index = {word: i for i, word in enumerate(t.vocab)}
            w = w[:, [index[word] for word in order]]
        bad = np.flatnonzero(~np.isfinite(w).all(axis=1) | (w < 0).any(axis=1))
        if bad.size:
            raise InvalidModelError(f"model {shown(t.name, 80)}: topic {int(bad[0])}'s weights are not "
                                    "finite non-negative numbers")
        out.append(w)
    return out


def _ranked(t: Topics, topn: int) -> list[list[str]]:
    if t.top_words is None and t.vocab is None:
        raise NotApplicableError(f"stability over top words does not apply: {shown(t.name, 80)} ({t.source}) "
                                 "has no vocabulary to give its top words")
    if t.weights is not None and not np.isfinite(t.weights).all():
        raise InvalidModelError(f"model {shown(t.name, 80)}: its topic-word weights are not finite")
    if t.top_words is None and t.vocab is not None and topn > len(t.vocab):
        raise MethodError(f"topn={topn} is larger than the vocabulary of {shown(t.name, 80)} ({len(t.vocab)} "
                          "words)", options=("topn",))
    return t.ranked_words(topn)


def _shown_words(t: Topics) -> list[list[str]] | None:
    try:
        return t.ranked_words(WORDS_SHOWN)
    except NotApplicableError:
        return None
