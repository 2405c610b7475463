"""ProxAnn-style agreement (Hoyle et al. 2025): people and judges fit and rank a topic's documents;
what they say is compared with what the model says about the same documents.

- A topic's quality by a group of raters (people, or a judge's runs): Kendall's tau-b between the
  documents' mean fit (or mean rank, reversed) and the model's proportions theta ("theta") or
  its 0/1 assignments ("assigned"): `judge_scores`.
- The topic ranking: how a metric's or a judge's per-topic quality orders the topics against
  the people's (`agreement.agreement` with quality "theta"/"assigned" and the judge's
  `judge_scores` as a score).
- The human baseline of that ranking, leave one annotator out: per topic, one random annotator's
  quality against the rest's, correlated over topics, averaged over `repeats` draws
  (`leave_one_out`).
- Document agreement: per topic, Kendall's tau between a judge's document scores and the
  people's mean, averaged over topics; the human baseline is each annotator against the mean of
  the others (`document_agreement`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MethodError
from ..judgments import Judgments
from .resample import _mean, _scores, human_table
from .stats import correlation_omit, kendall_rows

MIN_TOPICS = 10


def judge_scores(judge: Judgments, quality: str = "mean") -> np.ndarray:
    """Per-topic scores from a judge's answers, its runs averaged (an LLM's five seeds): the mean
    answer ("mean"), or ProxAnn's topic quality ("theta" / "assigned"); NaN for a topic it did
    not answer. The same computation people's answers get."""
    table = human_table(judge, quality)
    out = np.full(judge.n_topics, np.nan)
    out[table.topics] = table.full()
    return out


def leave_one_out(judgments: Judgments, quality: str = "theta", statistic: str = "kendall",
                  repeats: int = 100, seed: int = 0) -> dict[str, Any]:
    """The human baseline of a topic ranking: in each of `repeats` draws, one random annotator
    of every topic with two or more is held out; the correlation (`statistic`) over topics of
    the held-out annotator's quality with the rest's. Mean, standard deviation and the draws."""
    table = human_table(judgments, quality)
    rows = np.flatnonzero(table.counts >= 2)
    why = None if len(rows) >= MIN_TOPICS else (f"n/a, {len(rows)} topics with two or more annotators: "
                                                  f"a topic ranking needs at least {MIN_TOPICS}")
    rng = np.random.default_rng(seed)
    k = table.counts[rows]
    kmax = table.values.shape[1]
    live = np.arange(kmax)[None, None, :] < k[None, :, None]
    out = []
    for _ in range(repeats):
        held = np.floor(rng.random(len(rows)) * k).astype(np.int64)
        one = (np.arange(kmax)[None, None, :] == held[None, :, None]) & live
        own = table.values[rows][None]
        ref = None if table.reference is None else table.reference[rows][None]
        a = _scores(table, _mean(table, own, one), ref)
        b = _scores(table, _mean(table, own, live & ~one), ref)
        out.append(correlation_omit(statistic, a, b)[0])
    draws = np.asarray(out)
    return {"statistic": statistic, "quality": quality, "topics": int(len(rows)), "repeats": repeats,
            "mean": float(np.nanmean(draws)) if np.isfinite(draws).any() else None,
            "sd": float(np.nanstd(draws, ddof=1)) if np.isfinite(draws).sum() > 1 else None,
            "draws": draws.tolist(), "why": why}


def _doc_means(j: Judgments) -> tuple[np.ndarray, np.ndarray]:
    """Topics x evaluated-document means of `j`'s answers (its runs or annotators averaged), and
    the topics answered."""
    table = human_table(j, "theta" if j.documents is not None and np.isfinite(j.documents.theta).any()
                        else "assigned")
    with np.errstate(invalid="ignore"):
        means = np.nanmean(table.values, axis=1)
    full = np.full((j.n_topics, means.shape[1]), np.nan)
    full[table.topics] = means
    return full, table.topics


def document_agreement(judge: Judgments, judgments: Judgments, bootstrap: int = 2000,
                       seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """Per topic, Kendall's tau-b between the judge's document scores (runs averaged) and the
    people's mean; their mean over topics with a percentile interval (topics resampled, then each
    topic's annotators); the human baseline: each annotator's tau with the mean of the others,
    averaged per topic, then over topics."""
    if judge.task != judgments.task or judge.n_topics != judgments.n_topics:
        raise MethodError(f"the judge answered {judge.task} for {judge.n_topics} topics, the people "
                          f"{judgments.task} for {judgments.n_topics}")
    jm, _ = _doc_means(judge)
    table = human_table(judgments, "theta" if np.isfinite(judgments.documents.theta).any() else "assigned")
    with np.errstate(invalid="ignore"):
        hm = np.nanmean(table.values, axis=1)
    per_topic = kendall_rows(jm[table.topics], hm)
    ok = np.isfinite(per_topic)
    rows, taus = table.topics[ok], per_topic[ok]
    # human baseline: annotator vs the mean of the others
    base = []
    for r in np.flatnonzero(table.counts >= 2):
        k = table.counts[r]
        vals = table.values[r, :k]
        with np.errstate(invalid="ignore"):
            others = np.stack([np.nanmean(np.delete(vals, a, axis=0), axis=0) for a in range(k)])
        base.append(np.nanmean(kendall_rows(vals, others)))
    base = np.asarray(base)
    out: dict[str, Any] = {"statistic": "kendall", "topics": int(ok.sum()),
                           "mean": float(taus.mean()) if taus.size else None,
                           "per_topic": {judgments.topics.ids[t]: float(v)
                                         for t, v in zip(rows, taus, strict=True)},
                           "human_baseline": float(np.nanmean(base)) if np.isfinite(base).any() else None,
                           "low": None, "high": None,
                           "why": None if ok.sum() >= MIN_TOPICS else
                           f"n/a, {int(ok.sum())} topics: an interval needs at least {MIN_TOPICS}"}
    if out["why"] is None and bootstrap > 0:
        rng = np.random.default_rng(seed)
        live_rows = np.flatnonzero(ok)
        kmax = table.values.shape[1]
        stats = []
        for _ in range(bootstrap):
            pick = live_rows[rng.integers(0, len(live_rows), len(live_rows))]
            k = table.counts[pick]
            draw = np.floor(rng.random((len(pick), kmax)) * k[:, None]).astype(np.int64)
            live = np.arange(kmax)[None, :] < k[:, None]
            vals = table.values[pick[:, None], draw]
            means = _mean(table, vals[None], live[None])[0]
            stats.append(np.nanmean(kendall_rows(jm[table.topics[pick]], means)))
        a = (1 - level) / 2
        lo, hi = np.nanquantile(stats, [a, 1 - a])
        out["low"], out["high"] = float(lo), float(hi)
    return out
