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

Findings (`assess`; the floors `MATCH_FLOOR`, tolerances `TOLERANCE` and margins `MARGIN` per
distance, and the distance `auto` picks, measured by `experiments/stability_restarts.py` on
synthetic and real restarts, docs/stability_restarts.md): a matched pair of topics less similar
than the floor has no counterpart; two restarts agree when at most a tolerance share of their
matched pairs lack one. The group is *stable* (all agree), has restarts *stuck* apart from a
consensus (more than half of the restarts all agree and these do not), or is *unstable* as a whole
(no such majority: the model has several solutions at this K and no restart is singled out). With
a margin and `MARGIN_RESTARTS` or more restarts, a restart farther from every other than any two
others are from each other (by more than margin x K topics) is stuck too, whatever the finding (a
restart stopped early).
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
from ..output.display import Display, words_text
from ..output.jsonout import json_float
from ..topics import NotApplicableError, Topics, as_topics
from ..util.limits import check_cost, check_int
from ..util.numbers import finite_float

__all__ = ["stability", "stability_groups", "restart_kind", "flag_restarts", "assess", "js_distances",
           "average_jaccard", "StabilityResult", "DISTANCES", "DEFAULT_DISTANCE", "MATCH_FLOOR", "TOLERANCE",
           "MARGIN"]

DISTANCES = ("jensen-shannon", "average-jaccard", "rbo")
# what distance="auto" compares by, where it applies (jensen-shannon needs distributions, the others
# top words): the distance that told stuck restarts best in experiments/stability_restarts.py
DEFAULT_DISTANCE = "jensen-shannon"
# similarity (1 - distance) below which a matched pair of topics has no counterpart, per distance:
# measured by experiments/stability_restarts.py (docs/stability_restarts.md)
MATCH_FLOOR = {"jensen-shannon": 0.35, "average-jaccard": 0.8, "rbo": 0.85}
# the share of two restarts' matched topics that may lack a counterpart while they still agree
TOLERANCE = {"jensen-shannon": 0.1, "average-jaccard": 0.3, "rbo": 0.3}
# a restart farther from every other than any two others (by more than this share of K) is stuck
# (`assess`; None: not used)
MARGIN: dict[str, float | None] = {"jensen-shannon": 0.0, "average-jaccard": 0.05, "rbo": 0.0}
# the fewest restarts the margin applies to: it was measured on groups of 4 to 6, and among 3 "any
# two others" is one pair, so a restart was "apart" whenever the other pair happened to be the
# closest (tomotopy K = 20 restarts of the man pages with 4, 5 and 7 topics without a counterpart
# pair by pair: one flagged stuck by a single topic; docs/new_user_run.md)
MARGIN_RESTARTS = 4
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
    finding: str = ""  # "stable", "stuck" (restarts in `flagged` apart from the rest) or "unstable"
    finding_text: str = ""
    reference: str = ""  # the restart most similar to the others: the aligned table's first column
    recurring: list[int] = field(default_factory=list)  # its topics matched in every other restart
    tolerance: float = 0.0

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

    def summary(self) -> str:
        """The score, the distance and the finding (stable, a stuck restart, or unstable), in words."""
        n = len(self.models)
        how = self.distance + (f" over the top {self.topn} words" if self.topn else " between topic-word "
                               "distributions")
        lines = [f"{n} restarts of K = {self.num_topics}: stability {self.score:.3f} (mean similarity of "
                 f"Hungarian-matched topics, 1 - {how}); no counterpart below similarity {self.floor:g}"]
        if self.finding_text:
            lines.append(self.finding_text)
        lines += [f"STUCK {m}: {why}" for m, why in self.flagged.items()]
        return "\n".join(lines)

    def aligned(self) -> list[dict[str, Any]]:
        """The topics matched across restarts: one row per topic of the reference restart (the one
        most similar to the others), most stable first, with its match in every other restart
        (topic and similarity, `matches[name] = [topic, similarity]`)."""
        ref = self.reference or self.models[0]
        match: dict[str, list[tuple[int, float]]] = {}
        for pr in self.pairs:
            sim = pr["similarity"]
            if pr["a"] == ref:
                match[pr["b"]] = [(int(j), sim[k]) for k, j in enumerate(pr["matching"])]
            elif pr["b"] == ref:
                back: list[tuple[int, float]] = [(0, 0.0)] * len(pr["matching"])
                for k, j in enumerate(pr["matching"]):
                    back[j] = (k, sim[k])
                match[pr["a"]] = back
        stab = self.per_topic[ref]
        order = sorted(range(len(stab)), key=lambda k: (-stab[k], k))
        return [{"topic": k, "stability": json_float(float(stab[k])),
                 "matches": {m: [match[m][k][0], match[m][k][1]] for m in self.models if m != ref}}
                for k in order]

    def aligned_table(self, words: int = 5) -> str:
        """`aligned` as text: the reference restart's topic and top words, then each other restart's
        matched topic, its similarity and top words."""
        ref = self.reference or self.models[0]
        others = [m for m in self.models if m != ref]

        def top(model: str, k: int) -> str:
            w = self.words.get(model)
            return words_text(w[k][:words]) if w else ""

        head = [f"{ref} (reference)", *others]
        rows = [[f"{r['topic']:>3} {top(ref, r['topic'])}",
                 *(f"{r['matches'][m][0]:>3} {_sim(r['matches'][m][1])} {top(m, r['matches'][m][0])}"
                   for m in others)] for r in self.aligned()]
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
                         for cells in [head, *rows])

    def rows(self) -> list[dict[str, Any]]:
        """One dict per topic of every restart (the CSV)."""
        return [{"model": m, "topic": k, "stability": json_float(float(s)),
                 "unmatched": k in self.unmatched[m],
                 "words": words_text((self.words.get(m) or [[]] * (k + 1))[k][:WORDS_SHOWN])}
                for m in self.models for k, s in enumerate(self.per_topic[m])]

    def to_dict(self) -> dict[str, Any]:
        return {"task": "stability", "distance": self.distance, "topn": self.topn, "topics": self.num_topics,
                "models": list(self.models),
                "per_topic": {m: [json_float(float(x)) for x in v] for m, v in self.per_topic.items()},
                "per_model": {m: json_float(v) for m, v in self.per_model.items()},
                "score": json_float(self.score), "flagged": dict(self.flagged),
                "unmatched": {m: list(v) for m, v in self.unmatched.items()}, "floor": self.floor,
                "words": {m: [list(w[:WORDS_SHOWN]) for w in v] for m, v in self.words.items() if v},
                "pairs": self.pairs, "params": self.params, "seconds": self.seconds,
                "finding": self.finding, "finding_text": self.finding_text, "tolerance": self.tolerance,
                "reference": self.reference, "recurring": list(self.recurring), "aligned": self.aligned()}


def _sim(v: Any) -> str:
    x = finite_float(v)
    return "   -" if x is None else f"{x:.2f}"


def stability(models: Sequence[TopicModel | Topics | str | os.PathLike], *, distance: str = "auto",
              topn: int | None = None, names: Sequence[str] | None = None, p: float | None = None,
              floor: float | None = None, tolerance: float | None = None) -> StabilityResult:
    """Stability of two or more restarts of the same K (models of one kind, any kind, or model
    files; `restart_kind`): see the module notes. `distance`: "auto" (Jensen-Shannon when every
    restart has topic-word distributions, else average Jaccard over the top `topn` words), or one
    of `DISTANCES`. `names`
    label the restarts (default: their names; a repeated name gets " #2", " #3", said in
    `params["renamed"]`). `floor`: the similarity below which a match has no counterpart (default
    `MATCH_FLOOR[distance]`); `tolerance`: the share of two restarts' matched topics that may fall
    below it while they still agree (default `TOLERANCE[distance]`). Vocabularies are aligned by
    word strings; restarts whose words differ are an error. `topn` (default 10) applies to the
    top-word distances only and `p` (default 0.9) to rbo only: given with another distance, they
    are refused."""
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
    if tolerance is None:
        tolerance = TOLERANCE[distance]
    elif (x := finite_float(tolerance)) is None or not 0 <= x < 1:
        raise MethodError(f"tolerance must be a share in [0, 1), got {tolerance!r}", options=("tolerance",))
    else:
        tolerance = x
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
    found = assess(names_out, sims, float(floor), tolerance, MARGIN[distance])
    words = {t.name: _shown_words(t) for t in topics}
    params = {"p": p} if distance == "rbo" else {}
    if renamed:
        params["renamed"] = renamed
    return StabilityResult(distance, topn if distance != "jensen-shannon" else None, names_out, per_topic,
                           pairs, float(floor), found["unmatched"], found["stuck"], words, params,
                           time.perf_counter() - start, finding=found["finding"],
                           finding_text=finding_text(found, K, n, float(floor), tolerance),
                           reference=found["reference"], recurring=found["recurring"], tolerance=tolerance)


def flag_restarts(names: Sequence[str], sims: dict[tuple[int, int], np.ndarray], floor: float,
                  rule: str = "consensus", tolerance: float = 0.0
                  ) -> tuple[dict[str, list[int]], dict[str, str]]:
    """The topics without a counterpart in more than half of the other restarts, and the restarts
    flagged as stuck apart from the rest, with the reason. `sims[a, b][k]`: the similarity of topic
    k of restart a to its match in restart b. Two restarts agree when at most a `tolerance` share of
    their matched pairs is less similar than `floor`. `rule`: "consensus" (`assess`): the restarts
    outside every largest set of restarts that all agree, when that set holds more than half of
    them (when none does, the restarts are unstable as a whole and none is flagged); "majority":
    a restart that disagrees with more than half of the others. `RULE` is the one measured best."""
    if rule not in RULES:
        raise MethodError(f"unknown rule {rule!r} (known: {', '.join(RULES)})")
    found = assess(names, sims, floor, tolerance)
    if rule == "consensus":
        return found["unmatched"], found["stuck"]
    n, against = len(names), found["against"]
    return found["unmatched"], {names[a]: _why(names, a, found, floor) for a in range(n)
                                if len(against[a]) > (n - 1) / 2}


def assess(names: Sequence[str], sims: dict[tuple[int, int], np.ndarray], floor: float,
           tolerance: float = 0.0, margin: float | None = None) -> dict[str, Any]:
    """What a group of restarts says (see the module notes): per restart its topics without a
    counterpart in more than half of the others (`unmatched`), the restarts each disagrees with
    (`against`: more than a `tolerance` share of their matched topics below `floor`), the `finding`
    ("stable": all agree; "stuck": more than half of them all agree, and the others, `stuck`, are
    apart from them; "unstable": no set of more than half of them all agrees, so no restart can be
    told stuck by agreement: the model is unstable at this K as a whole), and `recurring`: the
    topics of the `reference` restart (the one most similar to the others) with a counterpart at
    least `floor` similar in every other restart. With `margin` (a share of K; `MARGIN_RESTARTS` or
    more restarts), a restart is also stuck, whatever the finding, when it has more topics without a
    counterpart against every other restart than any two others have between them, by more than
    `margin` x K (`apart`: a restart far from all the others, such as one stopped early)."""
    n = len(names)
    K = len(sims[0, 1])
    low = {(a, b): np.flatnonzero(sims[a, b] < floor) for a in range(n) for b in range(n) if a != b}
    unmatched = {}
    for a, name in enumerate(names):
        counts = np.zeros(K, dtype=int)
        for b in range(n):
            if b != a:
                counts[low[a, b]] += 1
        unmatched[name] = [int(k) for k in np.flatnonzero(counts > (n - 1) / 2)]
    allowed = math.floor(tolerance * K + 1e-9)
    against = {a: [b for b in range(n) if b != a and low[a, b].size > allowed] for a in range(n)}
    largest, core = _consensus(n, against)
    mean = [float(np.mean([sims[a, b].mean() for b in range(n) if b != a])) for a in range(n)]
    ref = int(np.argmax(mean))
    out: dict[str, Any] = {
        "unmatched": unmatched, "against": against, "largest": largest, "reference": names[ref],
        "recurring": [k for k in range(K) if all(sims[ref, b][k] >= floor for b in range(n) if b != ref)],
        "worst": {a: max((int(low[a, b].size) for b in against[a]), default=0) for a in range(n)},
        "stuck": {}}
    apart = []
    if margin is not None and n >= MARGIN_RESTARTS:
        for a in range(n):
            rest = max(low[b, c].size for b in range(n) for c in range(n) if a not in (b, c) and b != c)
            if min(low[a, b].size for b in range(n) if b != a) > rest + margin * K:
                apart.append(a)
    out["apart"] = [names[a] for a in apart]
    if largest == n:
        out["finding"] = "stable"
    elif largest > n / 2:
        out["finding"] = "stuck"
        out["stuck"] = {names[a]: _why(names, a, out, floor) for a in range(n) if a not in core}
    else:
        out["finding"] = "unstable"
    for a in apart:
        out["stuck"].setdefault(names[a], _why(names, a, out, floor) + "; farther from every other restart "
                                "than any two others are from each other")
    if apart and out["finding"] == "stable":
        out["finding"] = "stuck"
    return out


def _why(names: Sequence[str], a: int, found: dict[str, Any], floor: float) -> str:
    where = ", ".join(map(str, found["unmatched"][names[a]])) or "none in most restarts"
    return (f"apart from the others: disagrees with {len(found['against'][a])} of the {len(names) - 1} "
            f"other restart(s), up to {found['worst'][a]} topic(s) without a counterpart (similarity < "
            f"{floor:g}); unmatched topics: {where}")


def finding_text(found: dict[str, Any], K: int, n: int, floor: float, tolerance: float) -> str:
    """The group's finding in one sentence (said once for the group, not per restart)."""
    agree = ("two restarts agree when " + (f"at least {1 - tolerance:.0%} of their matched topics are"
                                           if tolerance > 0 else "every matched topic is")
             + f" at least {floor:g} similar")
    share = f"{len(found['recurring'])} of {K} topics of {found['reference']} recur in every other restart"
    if found["finding"] == "stable":
        return f"stable at K = {K}: the {n} restarts all agree ({agree}); {share}"
    if found["finding"] == "stuck":
        apart = found.get("apart") or []
        by_agreement = [m for m in found["stuck"] if m not in apart]
        parts = ([f"{', '.join(by_agreement)} apart from the {found['largest']} of the {n} restarts that "
                  f"agree ({agree})"] if by_agreement else [])
        parts += ([f"{', '.join(apart)} farther from every other restart than any two others are from each "
                   "other"] if apart else [])
        return f"stuck restart(s) at K = {K}: {'; '.join(parts)}; {share}"
    told = "with 2 restarts that disagree, which one is stuck cannot be told; " if n == 2 else ""
    most = (f"no two of the {n} restarts agree" if found["largest"] < 2 else
            f"at most {found['largest']} of the {n} restarts agree with each other")
    apart = found.get("apart") or []
    single = (f"so none is singled out by agreement; {', '.join(apart)} is stuck apart, farther from every "
              "other restart than any two others are from each other" if apart else
              "so none is singled out as stuck")
    return (f"unstable at K = {K}: {most} ({agree}), {single}; {told}{share}; its topics are one of several "
            "solutions: train more restarts, or read only the topics that recur")


def _consensus(n: int, against: dict[int, list[int]]) -> tuple[int, set[int]]:
    """The size of the largest sets of restarts that all agree with each other, and the restarts
    in every such set (1 and none when no two agree). Exhaustive up to MAX_CONSENSUS restarts;
    beyond, the restarts that agree with more than half of the others, and their number."""
    if n > MAX_CONSENSUS:
        core = {a for a in range(n) if len(against[a]) < (n - 1) / 2}
        return len(core), core
    for size in range(n, 1, -1):
        best = [set(c) for c in itertools.combinations(range(n), size)
                if all(b not in against[a] for a, b in itertools.combinations(c, 2))]
        if best:
            return size, set.intersection(*best)
    return 1, set()


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
    if distance == "auto":  # the measured default where it applies
        if DEFAULT_DISTANCE == "jensen-shannon":
            return "average-jaccard" if lacking else "jensen-shannon"
        worded = all(t.top_words is not None or t.vocab is not None for t in topics)
        return DEFAULT_DISTANCE if worded or lacking else "jensen-shannon"
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
