"""Topic coherence over a reference corpus, topic diversity, exclusivity/FREX and the group
coherence of the source README. See `counts` for how co-occurrences are counted and `measures`
for the formulas and the policy for words absent from the reference; `gensim_convention` for
gensim's counting and formulas."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..errors import InvalidCorpusError, MethodError
from ..io.topwords import read_top_words
from ..model import TopicModel
from ..output.display import Display
from ..output.jsonout import json_float
from ..topics import Topics, require
from . import gensim_convention, measures, palmetto
from .counts import Counts, count
from .fingerprint import Comparison, comparable, fingerprint_of

MEASURES = ("umass", "uci", "npmi", "c_v")
DEFAULT_TOPN = 10  # under every convention, as OCTIS and papers report (gensim's CoherenceModel: 20)
# the default: gensim's CoherenceModel's numbers, what Python papers, OCTIS and the human ratings the
# junk flags were set on (Hoyle et al. 2021) report (docs/guide/coherence.md, "Which convention")
DEFAULT_CONVENTION = "gensim"
DEFAULT_WINDOWS = {"umass": None, "uci": 10, "npmi": 10, "c_v": 110}
CONVENTIONS = ("tealeaves", "gensim", "palmetto")
CONVENTION_MEASURES = {"tealeaves": MEASURES, "gensim": MEASURES, "palmetto": tuple(palmetto.MEASURES)}
ABSENT = ("skip", "smooth", "fail")

__all__ = ["coherence", "CoherenceResult", "topic_words", "diversity", "exclusivity", "frex", "DEFAULT_TOPN",
           "DEFAULT_CONVENTION",
           "group_coherence", "count", "counting", "Counts", "MEASURES", "CONVENTIONS",
           "CONVENTION_MEASURES", "ABSENT", "comparable", "Comparison"]


@dataclass(repr=False)
class CoherenceResult(Display):
    """Per-topic coherence with, per topic, its coverage (`coverage[k]`: the top words the
    reference lacks, the word pairs, those with an absent word, those that never co-occur, those
    skipped, and why a score is NaN) and the `fingerprint` of how the number was made
    (`comparable`)."""

    measure: str
    topics: list[list[str]]
    per_topic: np.ndarray
    pairs: list[dict[str, Any]]
    missing: list[list[str]]  # per topic: top words absent from the reference
    params: dict[str, Any]
    units: int
    seconds: float = 0.0
    undefined_pairs: list[int] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    fingerprint: dict[str, Any] = field(default_factory=dict)

    @property
    def mean(self) -> float:
        ok = self.per_topic[~np.isnan(self.per_topic)]
        return float(ok.mean()) if ok.size else math.nan

    def comparable(self, other: Any) -> Comparison:
        """Whether this number can be compared with `other`'s, and if not what differs."""
        return comparable(self, other)

    _name = "CoherenceResult"

    def _headline(self) -> list[tuple[str, Any]]:
        ref = self.fingerprint.get("reference", {})
        return [("measure", self.measure), ("convention", self.params.get("convention")),
                ("mean", self.mean), ("topics", len(self.topics)), ("top words", self.params.get("topn")),
                ("window", self.params.get("window")), ("absent", self.params.get("absent")),
                ("reference", ref.get("name")), ("hash", (ref.get("hash") or "none")[:19])]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        cov = self.coverage or [{} for _ in self.topics]
        return "topic", {"score": self.per_topic, "words": [" ".join(t) for t in self.topics],
                         "missing": [" ".join(m) for m in self.missing],
                         "zero_pairs": [c.get("zero_pairs") for c in cov],
                         "reason": [c.get("reason") or "" for c in cov],
                         **({"note": [c.get("note") or "" for c in cov]} if _noted(cov) else {})}

    def to_dict(self) -> dict[str, Any]:
        cov = self.coverage or [{} for _ in self.topics]
        return {"task": "coherence", "measure": self.measure, "params": self.params,
                "fingerprint": self.fingerprint,
                "mean": json_float(self.mean), "units": self.units, "seconds": self.seconds,
                "topics": [{"words": t, "score": json_float(s), "missing": m, "undefined_pairs": u, **c}
                           for t, s, m, u, c in zip(self.topics, self.per_topic, self.missing,
                                                    self.undefined_pairs, cov, strict=True)],
                "pairs": [{**p, "value": json_float(p["value"])} for p in self.pairs],
                **({"noted_topics": sum(bool(c["note"]) for c in cov)} if _noted(cov) else {})}


def _noted(coverage: list[dict[str, Any]]) -> bool:
    """Whether the topics' coverage carries notes (the Palmetto convention's stand-ins)."""
    return any("note" in c for c in coverage)


def topic_words(topics: TopicModel | Topics | Sequence[Sequence[str]] | str | os.PathLike,
                topn: int = 10, metric: str = "coherence") -> list[list[str]]:
    """Top `topn` words of every topic: from a model (highest phi first; needs a vocabulary), a
    model of any kind (`Topics.ranked_words`), from word lists (their first `topn`), or from a
    text file with one topic per line. `metric` names what needs them in errors."""
    if not isinstance(topn, int | np.integer) or topn < 1:
        raise MethodError(f"topn must be a positive integer, got {topn!r}")
    if isinstance(topics, Topics):
        if topics.lda is not None:
            topics = topics.lda
        else:
            require(metric if metric in ("coherence", "diversity") else "coherence", topics)
            if topics.top_words is None and topics.vocab is not None and topn > len(topics.vocab):
                raise MethodError(f"topn={topn} is larger than the vocabulary ({len(topics.vocab)} words); "
                                  f"{metric} needs each topic's top {topn}", options=("topn",))
            topics = topics.ranked_words(topn)
    if isinstance(topics, TopicModel):
        topics.require_vocab(f"{metric} needs words")
        if topn > topics.num_words:
            raise MethodError(f"topn={topn} is larger than the vocabulary ({topics.num_words} words); "
                              f"{metric} needs each topic's top {topn}", options=("topn",))
        order = np.argsort(-topics.phi, axis=1, kind="stable")[:, :topn]
        return [[topics.vocab[i] for i in row] for row in order]
    path = None
    if isinstance(topics, str | os.PathLike):
        path = os.fspath(topics)
        topics = read_top_words(path)
    out = [list(t)[:topn] for t in topics]
    if not out:
        raise MethodError("no topics given")
    for i, t in enumerate(out):
        if len(t) < 2:
            raise MethodError(f"topic {i} has {len(t)} word(s); {metric} needs at least 2")
        if len(set(t)) != len(t):
            again = next(w for j, w in enumerate(t) if w in t[:j])
            if path is not None:  # a corpus given as a topics file: its lines are documents
                raise MethodError(f"{path}:{i + 1}: topic {i} repeats the word {again!r}; a topics file "
                                  "holds each topic's distinct top words, one topic per line: is it a corpus "
                                  "(documents) rather than topics?")
            raise MethodError(f"topic {i} repeats the word {again!r}: {t}")
    return out


def _check_convention(convention: str, measure: str, options: dict[str, Any]) -> None:
    """One-line errors for an unknown convention or measure, a measure the convention does not
    have, or an option it does not have."""
    if convention not in CONVENTIONS:
        raise MethodError(f"unknown coherence convention {convention!r} (known: {', '.join(CONVENTIONS)})")
    everything = dict.fromkeys(m for ms in CONVENTION_MEASURES.values() for m in ms)
    if measure not in everything:
        raise MethodError(f"unknown coherence measure {measure!r} (known: {', '.join(everything)})")
    if measure not in CONVENTION_MEASURES[convention]:
        has = [c for c in CONVENTIONS if measure in CONVENTION_MEASURES[c]]
        raise MethodError(f"{measure} exists only in the {' and '.join(has)} convention; the {convention} "
                          f"convention has {', '.join(CONVENTION_MEASURES[convention])}")
    if convention != "tealeaves" and options:
        raise MethodError(f"option {sorted(options)[0]!r} belongs to the tealeaves convention; "
                          f"the {convention} convention has no options")


def counting(measure: str, convention: str = DEFAULT_CONVENTION,
             window: int | None = None) -> tuple[int | None, str]:
    """The window (None: whole documents) and counting rule (`counts.RULES`) that `measure` uses
    under `convention`, given the window asked for (None: the convention's default)."""
    default = palmetto.MEASURES[measure][1] if convention == "palmetto" else DEFAULT_WINDOWS[measure]
    rule = {"tealeaves": "exact", "gensim": "gensim"}.get(convention) or palmetto.rule(measure)
    return (default if window is None else window), rule


def coherence(topics, reference: Corpus | str | os.PathLike | Iterable[Sequence[str]],
              measure: str = "npmi", topn: int | None = None, window: int | None = None, workers: int = 1,
              counts: Counts | None = None, encoding: str = "utf-8", convention: str = DEFAULT_CONVENTION,
              absent: str | None = None, **options: Any) -> CoherenceResult:
    """Coherence of each topic's top `topn` words (default 10 under every convention: give 20 for
    the number gensim's CoherenceModel gives with its own default) over `reference` by `measure`
    (umass, uci, npmi, c_v; with the palmetto convention also c_p and c_a). `window` defaults to 10
    (uci, npmi), 110 (c_v), 70 (c_p), 5 (c_a: +-5 tokens around each occurrence); umass counts
    documents.

    `convention` says whose counting and formulas: "gensim" (the default) gives the numbers of
    gensim's `CoherenceModel` (u_mass, c_uci, c_npmi, c_v) with the reference as its texts and
    dictionary: its window count, which undercounts words repeated within a window, and its
    dropping of topic words absent from the reference (`gensim_convention`); "tealeaves" counts a
    word in a window if any copy of it is inside (exact counts; `measures`), with the options umass
    `form="gensim"|"mimno"`, npmi/c_v `zero="epsilon"|"limit"`; "palmetto"
    follows Palmetto's definitions: exact boolean windows, its minimum frequency (10 documents,
    10 x window windows) below which a probability is 0, undefined values counted as 0 in the
    mean, and its C_P (Fitelson, window 70) and C_A (context windows, +-5) (`palmetto`).

    `absent` is the policy for top words the reference lacks (`measures.ABSENT_POLICY`): "skip"
    leaves them (and every pair with them) out, counted; "smooth" keeps them with the
    convention's value; "fail" raises a one-line error naming the topic and the words. None: the
    convention's own behaviour (`measures.default_absent`). Each topic's `coverage` and the
    result's `fingerprint` say what was done."""
    _check_convention(convention, measure, options)
    policy = measures.default_absent(convention, measure) if absent is None else absent
    if policy not in ABSENT:
        raise MethodError(f"absent must be one of {', '.join(ABSENT)}, got {absent!r}")
    allowed = {"umass": {"form"}, "npmi": {"zero"}, "c_v": {"zero"}}.get(measure, set())
    unknown = set(options) - allowed
    if unknown:
        raise MethodError(f"{measure} has no option {sorted(unknown)[0]!r}")
    if options.get("form", "gensim") not in ("gensim", "mimno"):
        raise MethodError("form must be 'gensim' or 'mimno'")
    if options.get("zero", "epsilon") not in ("epsilon", "limit"):
        raise MethodError("zero must be 'epsilon' or 'limit'")
    if measure == "umass" and window is not None:
        raise MethodError("umass counts whole documents; it takes no window")
    topn = DEFAULT_TOPN if topn is None else topn
    lists = convention == "gensim" and not isinstance(topics, TopicModel | Topics)
    # gensim takes word lists whole, drops absent words, then cuts every topic to topn only if the
    # first is longer (CoherenceModel.topics); a model's topics are its top topn words
    words = topic_words(topics, 10**9 if lists else topn)
    win, rule = counting(measure, convention, window)
    t0 = time.perf_counter()
    targets = sorted({w for t in words for w in t})
    if counts is None or counts.window != win or counts.rule != rule or not counts.covers(words):
        counts = count(reference, targets, window=win, workers=workers, encoding=encoding, rule=rule,
                       groups=words)
    if counts.tokens == 0 or (counts.units == 0 and rule != "context"):
        raise InvalidCorpusError("the reference corpus is empty")
    if counts.units <= 0:
        raise InvalidCorpusError(f"the reference has no context windows of +-{win} tokens: Palmetto's "
                                 f"N = tokens - documents x {win - 1} = {counts.units}")
    scores, pairs, missing, undefined, coverage = [], [], [], [], []
    idx = counts.index()
    dropped = [[w for w in t if counts.single[idx[w]] == 0] for t in words] if lists else None
    if lists:
        words = gensim_convention.gensim_topics(words, topn, lambda w: counts.single[idx[w]] > 0,
                                                keep_absent=policy != "skip")
    for k, t in enumerate(words):
        lacking = [w for w in t if counts.single[idx[w]] == 0] or (dropped[k] if dropped else [])
        if lacking and policy == "fail":
            raise MethodError(f"topic {k}: {len(lacking)} of its top {len(t)} words do not occur in the "
                              f"reference: {' '.join(lacking)} (absent='fail'; 'skip' leaves them out, "
                              "'smooth' gives them the convention's value)")
        scored = [w for w in t if w not in lacking] if policy == "skip" else t
        smooth = policy == "smooth"
        if not scored:
            r = {"score": math.nan, "pairs": [], "undefined_pairs": 0}
        elif convention == "gensim":
            r = gensim_convention.score(measure, scored, counts, smooth=smooth)
        elif convention == "palmetto":
            r = palmetto.score(measure, scored, counts)
        elif measure == "umass":
            r = measures.umass(scored, counts, form=options.get("form", "gensim"))
        elif measure == "c_v":
            r = measures.c_v(scored, counts, zero=options.get("zero", "epsilon"), smooth=smooth)
        else:
            r = measures.pmi_measure(scored, counts, normalize=measure == "npmi",
                                     zero=options.get("zero", "epsilon"), smooth=smooth)
        scores.append(r["score"])
        pairs.extend({"topic": k, **p} for p in r["pairs"])
        missing.append(lacking)
        undefined.append(r["undefined_pairs"])
        cover = measures.coverage(t, lacking, counts, policy, r["score"])
        coverage.append({**cover, **r.get("palmetto", {})})  # Palmetto's stand-ins, counted
    params = {"topn": topn, "window": win, "convention": convention, "absent": policy, **options}
    fp = fingerprint_of(measure, convention, win, rule, topn, policy, options, reference, counts,
                        palmetto.definition(measure, win) if convention == "palmetto" else None)
    return CoherenceResult(measure, words, np.array(scores, dtype=np.float64), pairs, missing, params,
                           counts.units, time.perf_counter() - t0, undefined, coverage, fp)


def diversity(topics, topn: int = 25) -> float:
    """Topic diversity (Dieng et al. 2020): unique words among all topics' top `topn`, divided by
    topn x topics."""
    words = topic_words(topics, topn, "diversity")
    allw = [w for t in words for w in t]
    return len(set(allw)) / len(allw)


def _weights(model: TopicModel | Topics, metric: str) -> np.ndarray:
    """phi, or a model's non-negative topic-word weights (`require`: signed weights or top words
    only get the one-line reason)."""
    if isinstance(model, Topics):
        if model.lda is not None:
            return model.lda.phi
        require(metric, model)
        return model.weights
    if not isinstance(model, TopicModel):
        raise MethodError(f"{metric} needs a topic model, got {type(model).__name__}")
    return model.phi


def _frex_matrix(model: TopicModel | Topics, weight: float) -> np.ndarray:
    """FREX as R's stm: 1 / (w / ECDF(exclusivity) + (1 - w) / ECDF(frequency)), the ECDFs
    taken over each topic's words; exclusivity = phi_tw / sum_k phi_kw. A word no topic gives any
    probability (a column of zeros, as in a one-hot phi) is shared equally, 1 / T: the limit of
    equal tiny probabilities (0 / 0 would make every score NaN)."""
    from scipy.stats import rankdata

    if not 0 <= weight <= 1:
        raise MethodError(f"frex weight must be in [0, 1], got {weight}")
    phi = _weights(model, "exclusivity")
    col = phi.sum(axis=0, keepdims=True)
    excl = np.divide(phi, col, out=np.full(phi.shape, 1.0 / phi.shape[0]), where=col > 0)
    V = phi.shape[1]
    ex = np.apply_along_axis(rankdata, 1, excl) / V
    fr = np.apply_along_axis(rankdata, 1, phi) / V
    return 1.0 / (weight / ex + (1 - weight) / fr)


def exclusivity(model: TopicModel | Topics, topn: int = 10, frex_weight: float = 0.7) -> np.ndarray:
    """Per topic, the sum of FREX over its `topn` most probable words (stm::exclusivity, M=10,
    frexw=0.7). A model of another kind needs non-negative topic-word weights (NMF's, say): FREX
    uses only ranks and each word's share of its weight across topics, both defined for them."""
    phi = _weights(model, "exclusivity")
    f = _frex_matrix(model, frex_weight)
    top = np.argsort(-phi, axis=1, kind="stable")[:, :topn]
    return np.take_along_axis(f, top, axis=1).sum(axis=1)


def frex(model: TopicModel, topn: int = 10, weight: float = 0.5) -> list[list[str]]:
    """Each topic's `topn` words by FREX score (stm's labelTopics default weight 0.5)."""
    model.require_vocab("frex labels show words")
    f = _frex_matrix(model, weight)
    return [[model.vocab[i] for i in row] for row in np.argsort(-f, axis=1, kind="stable")[:, :topn]]


def group_coherence(topics, reference: Corpus | Sequence[Sequence[str]], labels, topn: int = 10,
                    smoothing: float = 1.0) -> dict[str, Any]:
    """The source README's coherence: documents grouped by label (an array, or a doc-topic matrix
    whose argmax is taken); for group z with top words w_1..w_m (of topic z),
    C(z) = sum_{i=2..m} sum_{j<i} log((D_z(w_i, w_j) + smoothing) / D_z(w_j)), D_z counted over
    the documents of group z; the result is the mean over groups. `smoothing=1` is Mimno et al.'s
    form; 0 is the README's literal formula (pairs that never co-occur are then undefined)."""
    words = topic_words(topics, topn)
    lab = np.asarray(labels)
    if lab.ndim == 2:
        lab = lab.argmax(axis=1)
    docs = list(reference) if not isinstance(reference, Corpus) else reference
    if len(lab) != len(docs):
        raise MethodError(f"{len(lab)} labels for {len(docs)} documents")
    per_group, undefined = [], []
    for z, t in enumerate(words):
        members = np.flatnonzero(lab == z)
        if isinstance(docs, Corpus):
            sub = docs.subset(members)
        else:
            sub = [docs[i] for i in members]
        if len(members) == 0:
            per_group.append(math.nan)
            undefined.append(0)
            continue
        c = count(sub, t, window=None)
        total, bad = 0.0, 0
        for i in range(1, len(t)):
            for j in range(i):
                dj, dij = c.single[j], c.joint[i, j]
                if dj == 0 or dij + smoothing == 0:
                    bad += 1
                    continue
                total += math.log((dij + smoothing) / dj)
        per_group.append(total)
        undefined.append(bad)
    arr = np.array(per_group)
    ok = arr[~np.isnan(arr)]
    return {"per_group": arr, "mean": float(ok.mean()) if ok.size else math.nan,
            "undefined_pairs": undefined, "group_sizes": np.bincount(lab, minlength=len(words))}
