"""How well per-topic scores agree with people: correlations with intervals, the human ceiling and
paired comparisons, per corpus and pooled.

For each score (a tealeaves metric, a user's column, an automated judge's per-topic answers) and
each corpus of the topics and all of them together: Spearman's rho, Pearson's r and Kendall's
tau-b with the human per-topic score (`resample.QUALITIES`), each with a percentile interval from
the two-stage bootstrap of `resample` (the same replicates for every score, so differences are
paired).

The ceiling: one random half of each topic's annotators predicting the other half, the
correlation averaged over `splits` splits. Spearman-Brown, 2 r / (1 + r), turns it into the
reliability R of the mean over all the topic's annotators; no score can correlate with that noisy
mean better than sqrt(R) in expectation (a score equal to the true topic quality reaches it), so
sqrt(R) is the ceiling. Rank correlations go through Pearson's scale for the correction (2 sin(pi
rho / 6), sin(pi tau / 2): exact under bivariate normality). On simulated raters the estimate
matches the known reliability (tests/test_metaeval.py).

A paired comparison of two scores: the difference of their statistics, its interval from the
shared replicates, and a two-sided bootstrap p-value, 2 min(P*(d <= 0), P*(d >= 0)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MethodError
from ..judgments import Judgments
from ..output.display import Display
from ..output.jsonout import json_safe
from .resample import human_table, replicates, split_halves, strata
from .stats import STATISTICS, correlation_omit, from_pearson, spearman_brown, to_pearson

MIN_TOPICS = 10  # below this, no bootstrap interval (coverage checked down to 10 topics)
MIN_PAIRS = 3
POOLED = "all"
TOO_FEW_TOPICS = (f"n/a, {{n}} topics: a correlation's bootstrap interval needs at least {MIN_TOPICS} "
                  "(coverage checked from 10)")
TOO_FEW_RATERS = (f"n/a, {{n}} topics with two or more annotators: the split-half ceiling needs at least "
                  f"{MIN_TOPICS}")


@dataclass(eq=False)
class AgreementResult(Display):
    """`rows`: one per score, group and statistic (estimate, low, high, topics, why: the reason
    an entry is missing); `ceiling`: per group and statistic (split_half, reliability, ceiling
    with its interval); `comparisons`: per pair of scores, group and statistic (difference,
    low, high, p); `notes`: every topic left out and why."""

    task: str
    quality: str
    rows: list[dict[str, Any]]
    ceiling: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    notes: list[str]
    params: dict[str, Any]
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    _name = "AgreementResult"

    def _headline(self) -> list[tuple[str, Any]]:
        pooled = [r for r in self.rows if r["group"] == self.groups[-1] and r["statistic"] == "spearman"]
        out: list[tuple[str, Any]] = [("task", self.task), ("topics", pooled[0]["topics"] if pooled else 0)]
        out += [(f"spearman {r['score']}", r["estimate"]) for r in pooled[:4]]
        ceil = [c for c in self.ceiling if c["group"] == self.groups[-1] and c["statistic"] == "spearman"]
        if ceil:
            out.append(("ceiling (spearman)", ceil[0]["ceiling"]))
        return out

    def _columns(self) -> tuple[str, dict[str, Any]]:
        keys = ("score", "group", "statistic", "estimate", "low", "high", "topics")
        return "row", {k: [r[k] for r in self.rows] for k in keys}

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(r["group"] for r in self.rows))

    @property
    def scores(self) -> list[str]:
        return list(dict.fromkeys(r["score"] for r in self.rows))

    def get(self, score: str, group: str = POOLED, statistic: str = "spearman") -> dict[str, Any]:
        for r in self.rows:
            if r["score"] == score and r["group"] == group and r["statistic"] == statistic:
                return r
        raise MethodError(f"no {statistic} of {score!r} for {group!r} (scores: {', '.join(self.scores)}; "
                          f"groups: {', '.join(self.groups)})")

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": "metaeval", "judgment_task": self.task, "quality": self.quality,
                          "rows": self.rows, "ceiling": self.ceiling, "comparisons": self.comparisons,
                          "notes": self.notes, "params": self.params, "seconds": self.seconds, **self.extra})


def _interval(values: np.ndarray, level: float) -> tuple[float | None, float | None]:
    v = values[np.isfinite(values)]
    if v.size < max(10, 0.5 * values.size):
        return None, None
    a = (1 - level) / 2
    lo, hi = np.quantile(v, [a, 1 - a])
    return float(lo), float(hi)


def _num(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def agreement(
    scores: Mapping[str, Any],
    judgments: Judgments,
    quality: str = "mean",
    statistics: tuple[str, ...] = STATISTICS,
    bootstrap: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    splits: int = 200,
    compare: bool = True,
    ceiling: bool = True,
) -> AgreementResult:
    """Agreement of each per-topic score (name -> one value per topic of `judgments`, NaN where
    missing) with the human per-topic score (`quality`: "mean" rating or accuracy; "theta" /
    "assigned": ProxAnn's topic quality from document fits or ranks). See the module notes.
    Topics without answers, without a defined human score, or without a value for some score
    are left out of every statistic and counted in `notes`."""
    import time

    started = time.perf_counter()
    bad = [s for s in statistics if s not in STATISTICS]
    if bad:
        raise MethodError(f"statistic {bad[0]!r} is not one of {', '.join(STATISTICS)}")
    if not 0 < level < 1:
        raise MethodError(f"level {level} must be between 0 and 1")
    if not scores:
        raise MethodError("give at least one score to compare with the judgments")
    n_topics = judgments.n_topics
    values = {}
    for name, v in scores.items():
        arr = np.asarray(v, dtype=float).reshape(-1)
        if arr.size != n_topics:
            raise MethodError(f"score {name!r} has {arr.size} values for the judgments' {n_topics} topics")
        values[str(name)] = arr
    table = human_table(judgments, quality)
    human_all = table.full()
    notes: list[str] = []
    unanswered = n_topics - len(table.topics)
    if unanswered:
        notes.append(f"{unanswered} of {n_topics} topics have no answers: left out")
    ok = np.isfinite(human_all)
    if (~ok).sum():
        notes.append(f"{int((~ok).sum())} topics have no defined human score ({quality}: no spread in their "
                     "answers' means): left out")
    for name, arr in values.items():
        missing = ~np.isfinite(arr[table.topics]) & ok
        if missing.any():
            notes.append(f"{int(missing.sum())} topics have no value of {name}: left out of every statistic")
        ok &= np.isfinite(arr[table.topics])
    rows = np.flatnonzero(ok)  # table rows taking part
    topic_of = table.topics[rows]
    corpora = np.array([c or "topics" for c in judgments.topics.corpus], dtype=object)[topic_of]
    groups = _groups(corpora)
    human = human_all[rows]
    score_rows = {k: v[topic_of] for k, v in values.items()}

    # point estimates
    out_rows = []
    for name, sv in score_rows.items():
        for g, cols in groups:
            for stat in statistics:
                est = correlation_omit(stat, sv[cols], human[cols])[0] if len(cols) >= MIN_PAIRS else np.nan
                why = None if len(cols) >= MIN_TOPICS else TOO_FEW_TOPICS.format(n=len(cols))
                out_rows.append({"score": name, "group": g, "statistic": stat, "estimate": _num(est),
                                 "low": None, "high": None, "topics": int(len(cols)), "why": why})

    # bootstrap: replicates are laid out stratum by stratum, so a group's columns are a block
    block = _blocks(corpora)
    reps: dict[tuple[str, str, str], list[np.ndarray]] = {}
    if bootstrap > 0 and len(rows) >= MIN_PAIRS:
        for drawn, h, _ in replicates(table, rows, corpora, bootstrap, seed, split=False):
            for name, s in score_rows.items():
                sv = s[drawn]
                for g, _cols in groups:
                    for stat in statistics:
                        r = correlation_omit(stat, sv[:, block[g]], h[:, block[g]])
                        reps.setdefault((name, g, stat), []).append(r)
    boot = {k: np.concatenate(v) for k, v in reps.items()}
    for r in out_rows:
        if r["why"] is None and (r["score"], r["group"], r["statistic"]) in boot:
            r["low"], r["high"] = _interval(boot[(r["score"], r["group"], r["statistic"])], level)

    # paired comparisons
    estimate = {(r["score"], r["group"], r["statistic"]): r["estimate"] for r in out_rows}
    comparisons = []
    names_s = list(score_rows)
    pairs = [(a, b) for i, a in enumerate(names_s) for b in names_s[i + 1:]] if compare else []
    for a, b in pairs:
        for g, cols in groups:
            for stat in statistics:
                ea, eb = estimate[(a, g, stat)], estimate[(b, g, stat)]
                row = {"a": a, "b": b, "group": g, "statistic": stat,
                       "difference": None if ea is None or eb is None else ea - eb,
                       "low": None, "high": None, "p": None,
                       "why": None if len(cols) >= MIN_TOPICS else TOO_FEW_TOPICS.format(n=len(cols))}
                if row["why"] is None and (a, g, stat) in boot:
                    d = boot[(a, g, stat)] - boot[(b, g, stat)]
                    d = d[np.isfinite(d)]
                    if d.size:
                        row["low"], row["high"] = _interval(d, level)
                        row["p"] = float(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))
                comparisons.append(row)

    ceilings = _ceiling(table, rows, corpora, statistics, bootstrap, seed, splits, level) if ceiling else []
    params = {"bootstrap": bootstrap, "seed": seed, "level": level, "splits": splits,
              "statistics": list(statistics), "resampling": "two-stage: topics within each corpus, then each "
              "drawn topic's annotators, with replacement; percentile intervals",
              "ceiling": "sqrt(Spearman-Brown(split-half r)), rank correlations via Pearson's scale"}
    return AgreementResult(judgments.task, quality, out_rows, ceilings, comparisons, notes, params,
                           time.perf_counter() - started)


def people_side(study: Any, task: str | None = None, quality: str | None = None) -> tuple[Any, str]:
    """The people's judgments to compare scores with, and their per-topic score: the task asked
    for, else ratings, word intrusion, then document fits; "mean" for answers about topics, "theta"
    (ProxAnn's topic quality) for answers about documents."""
    numeric = [k for k, j in study.tasks.items() if j.scale.kind != "text"]
    pick = task or next((k for k in ("rating", "word-intrusion", "fit") if k in study.tasks),
                        numeric[0] if numeric else None)
    if pick is None:
        raise MethodError(f"{study.name}: no answers with numbers to compare scores with")
    people = study[pick]
    documents = people.documents is not None and bool((people.item >= 0).any())
    return people, quality or ("theta" if documents else "mean")


def _groups(corpora: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(name, columns) of each corpus (when there are several) and of all topics pooled."""
    parts = strata(corpora)
    each = [(str(corpora[p[0]]), p) for p in parts] if len(parts) > 1 else []
    return each + [(POOLED, np.arange(len(corpora)))]


def _blocks(corpora: np.ndarray) -> dict[str, np.ndarray]:
    """Each group's columns in a replicate, which `replicates` lays out stratum by stratum."""
    parts = strata(corpora)
    offsets = np.cumsum([0] + [len(p) for p in parts])
    block = {str(corpora[p[0]]): np.arange(offsets[i], offsets[i + 1]) for i, p in enumerate(parts)}
    block[POOLED] = np.arange(len(corpora))
    return block


def _ceiling(table, rows, corpora, statistics, bootstrap, seed, splits, level) -> list[dict[str, Any]]:
    """Split-half correlation, reliability and ceiling per group and statistic (module notes),
    over the topics with two or more annotators."""
    two = table.counts[rows] >= 2
    sub, sub_corpora = rows[two], corpora[two]
    groups = _groups(corpora)
    halves = split_halves(table, sub, splits, seed + 1) if len(sub) >= MIN_PAIRS else None
    reps: dict[tuple[str, str], list[np.ndarray]] = {}
    if bootstrap > 0 and len(sub) >= MIN_TOPICS:
        block = _blocks(sub_corpora)
        for _, _, hv in replicates(table, sub, sub_corpora, bootstrap, seed + 2, split=True):
            for g, _cols in groups:
                if g in block:
                    for stat in statistics:
                        r = correlation_omit(stat, hv[0][:, block[g]], hv[1][:, block[g]])
                        reps.setdefault((g, stat), []).append(r)
    out = []
    for g, _cols in groups:
        cols = np.arange(len(sub)) if g == POOLED else np.flatnonzero(sub_corpora == g)
        for stat in statistics:
            entry: dict[str, Any] = {
                "group": g, "statistic": stat, "topics": int(len(cols)), "split_half": None,
                "reliability": None, "ceiling": None, "low": None, "high": None,
                "why": None if len(cols) >= MIN_TOPICS else TOO_FEW_RATERS.format(n=len(cols))}
            if halves is not None and len(cols) >= MIN_PAIRS:
                r = float(np.nanmean(correlation_omit(stat, halves[0][:, cols], halves[1][:, cols])))
                rel = float(spearman_brown(to_pearson(stat, r)))
                entry["split_half"], entry["reliability"] = _num(r), _num(rel)
                entry["ceiling"] = _num(from_pearson(stat, math.sqrt(rel))) if rel > 0 else 0.0
            if entry["why"] is None and (g, stat) in reps:
                rel = spearman_brown(to_pearson(stat, np.concatenate(reps[(g, stat)])))
                with np.errstate(invalid="ignore"):
                    ceil = np.where(rel > 0, from_pearson(stat, np.sqrt(np.clip(rel, 0, None))), 0.0)
                ceil[~np.isfinite(rel)] = np.nan
                entry["low"], entry["high"] = _interval(ceil, level)
            out.append(entry)
    return out
