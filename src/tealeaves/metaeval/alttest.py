"""The alternative-annotator test (Calderon, Reichart & Dror 2025, "The Alternative Annotator Test
for LLM-as-a-Judge"): may a judge replace a person?

Leave one annotator h out at a time. On each instance i that h answered (with at least two
annotators), score how well the judge's answer f_i and h's answer h_i represent the remaining
annotators: S(x, i) = -RMSE(x, the others' answers) ("neg_rmse"; on a topic's vector of document
answers, the mean over the others of the RMSE between vectors) or the share of the others
agreeing with x ("accuracy"). W^f_i = 1[S(f, i) >= S(h, i)], W^h_i = 1[S(h, i) >= S(f, i)].

- h's test: H0: mean(W^h - W^f) >= epsilon against H1: < epsilon (one-sided t-test, or the
  Wilcoxon signed-rank test); epsilon is what the judge may lose for being cheaper (0.1 in
  ProxAnn, 0.2 Calderon et al.'s default). A constant difference d is decided without a test:
  rejected when d < epsilon.
- The winning rate omega: the share of annotators whose H0 is rejected under the
  Benjamini-Yekutieli procedure at q = 0.05; the judge passes when omega >= 0.5.
- The advantage probability rho: the mean over annotators of mean(W^f), how often the judge is
  at least as good as a random annotator.

When each person judged only one topic (ProxAnn's crowd workers), no one answers enough
instances; as ProxAnn does, annotators are combined into pseudo-annotators: every topic's
annotators in random order, the k-th of each topic forming pseudo-annotator k (within the
corpus, "dataset", or within each model, "model"), the whole test repeated `resamples` times
and averaged.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import MethodError
from ..judgments import Judgments
from .resample import HumanTable, human_table

MIN_HUMANS_PER_INSTANCE = 2
MIN_INSTANCES = 30  # Calderon et al.'s default for real annotators
RECOMMENDED_ANNOTATORS = 3  # Calderon et al.: at least three annotators


def benjamini_yekutieli(p: np.ndarray, q: float = 0.05) -> np.ndarray:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at FDR `q` (valid under
    any dependence): the largest i with p_(i) <= i q / (m H_m), H_m = sum 1/j, and all below it."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    harmonic = np.sum(1.0 / np.arange(1, m + 1))
    ok = p[order] <= np.arange(1, m + 1) / m * q / harmonic
    out = np.zeros(m, dtype=bool)
    if ok.any():
        out[order[: np.flatnonzero(ok).max() + 1]] = True
    return out


def _p_value(d: np.ndarray, epsilon: float, test: str) -> float:
    if np.all(d == d[0]):
        return 0.0 if d[0] < epsilon else 1.0
    if test == "ttest":
        from scipy.stats import ttest_1samp

        return float(ttest_1samp(d, epsilon, alternative="less").pvalue)
    from scipy.stats import wilcoxon

    shifted = d - epsilon
    return float(wilcoxon(shifted, alternative="less", method="exact" if len(d) <= 50 else "auto").pvalue)


def _table(j: Judgments) -> HumanTable:
    """Topics x annotators x items: evaluated documents for a task about documents, else one item."""
    about_documents = j.documents is not None and bool(np.any(j.item >= 0))
    return human_table(j, "theta" if about_documents else "mean")


def _wins(table: HumanTable, judge: np.ndarray, level: str, scoring: str) -> tuple[np.ndarray, np.ndarray]:
    """W^f and W^h of every (topic row, annotator slot, instance): (n, kmax, m) at document level,
    (n, kmax, 1) at topic level; NaN where the annotator has no answer or fewer than
    MIN_HUMANS_PER_INSTANCE annotators answered."""
    v = table.values  # (n, k, m)
    n, kmax, m = v.shape
    live = np.arange(kmax)[None, :, None] < table.counts[:, None, None]
    others = np.maximum(table.counts - 1, 1)[:, None, None]
    diff_h = v[:, :, None, :] - v[:, None, :, :]  # (n, a, b, m)
    diff_f = judge[:, None, :] - v  # (n, b, m)
    not_self = ~np.eye(kmax, dtype=bool)[None, :, :, None]
    pair = live[:, :, None, :] & live[:, None, :, :] & not_self
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # empty slots: NaN, masked below
        if scoring == "accuracy":
            agree_h = np.where(pair, diff_h == 0, 0).sum(axis=2)
            agree_f = np.where(live, diff_f == 0, 0).sum(axis=1)[:, None, :] - np.where(live, diff_f == 0, 0)
            if level == "topic":
                agree_h, agree_f = agree_h.mean(axis=2, keepdims=True), agree_f.mean(axis=2, keepdims=True)
            s_h, s_f = agree_h / others, agree_f / others
        elif level == "document":
            sq_h = np.where(pair, diff_h**2, 0.0).sum(axis=2)
            sq = np.where(live, diff_f**2, 0.0)
            sq_f = sq.sum(axis=1)[:, None, :] - sq
            s_h, s_f = -np.sqrt(sq_h / others), -np.sqrt(sq_f / others)
        else:  # topic: the mean over the others of the RMSE between vectors
            rmse_h = np.sqrt(np.nanmean(diff_h**2, axis=3))  # (n, a, b)
            rmse_h = np.where(pair[..., 0], rmse_h, 0.0).sum(axis=2)
            rmse_f = np.where(live[..., 0], np.sqrt(np.nanmean(diff_f**2, axis=2)), 0.0)  # (n, b)
            rmse_f = rmse_f.sum(axis=1)[:, None] - rmse_f
            s_h, s_f = (-rmse_h / others[..., 0])[..., None], (-rmse_f / others[..., 0])[..., None]
    ok = np.broadcast_to(live[:, :, :1] if level == "topic" else live, s_h.shape) \
        & (table.counts >= MIN_HUMANS_PER_INSTANCE)[:, None, None] & np.isfinite(s_h) & np.isfinite(s_f)
    wf = np.where(ok, (s_f >= s_h).astype(float), np.nan)
    wh = np.where(ok, (s_h >= s_f).astype(float), np.nan)
    return wf, wh


def alt_test(
    judge: Judgments,
    judgments: Judgments,
    epsilon: float = 0.1,
    q: float = 0.05,
    scoring: str = "neg_rmse",
    level: str = "document",
    pseudo: str | None = None,
    test: str = "ttest",
    min_instances: int | None = None,
    resamples: int = 10,
    seed: int = 0,
    transform: Any = None,
) -> dict[str, Any]:
    """The alternative-annotator test of `judge` (its runs averaged) against the people in
    `judgments` (see the module notes). `level`: "document" (an instance is a document's answer)
    or "topic" (a topic's vector of document answers; any task about whole topics has only
    this level); `pseudo`: None (real annotators), "dataset" or "model" (ProxAnn's
    pseudo-annotators); `min_instances`: an annotator answering fewer instances is left out
    (default: a pseudo-annotator must cover every instance in its scope, as in ProxAnn; a real
    one 30, Calderon et al.'s default); `transform`: applied to every answer of both sides first
    (the scale they are compared on). Returns the winning rate, the advantage probability,
    whether the judge passes, per-annotator details, and why when the test is not meaningful."""
    if scoring not in ("neg_rmse", "accuracy"):
        raise MethodError(f"scoring {scoring!r} is not neg_rmse or accuracy")
    if level not in ("document", "topic"):
        raise MethodError(f"level {level!r} is not document or topic")
    if pseudo not in (None, "dataset", "model"):
        raise MethodError(f"pseudo {pseudo!r} is not None, 'dataset' or 'model'")
    if test not in ("ttest", "wilcoxon"):
        raise MethodError(f"test {test!r} is not ttest or wilcoxon")
    if judge.n_topics != judgments.n_topics:
        raise MethodError(f"the judge answered {judge.n_topics} topics, the people {judgments.n_topics}")
    if transform is not None:
        from dataclasses import replace

        judge = replace(judge, value=np.asarray(transform(judge.value), dtype=float))
        judgments = replace(judgments, value=np.asarray(transform(judgments.value), dtype=float))
    table = _table(judgments)
    if table.values.shape[2] == 1:
        level = "topic"
    jt = _table(judge)
    with np.errstate(invalid="ignore"):
        jmean = np.nanmean(jt.values, axis=1)  # runs averaged
    answered = np.full((judgments.n_topics, jmean.shape[1]), np.nan)
    answered[jt.topics] = jmean
    jv = answered[table.topics]
    if jv.shape[1] != table.values.shape[2]:
        raise MethodError(f"the judge answered {jv.shape[1]} items per topic, the people "
                          f"{table.values.shape[2]}")
    wf, wh = _wins(table, jv, level, scoring)
    valid = np.isfinite(wf) & np.isfinite(jv[:, None, :] if level == "document" else jv[:, None, :1])
    wf, wh = np.where(valid, wf, np.nan), np.where(valid, wh, np.nan)
    instances = int(np.isfinite(wf).any(axis=1).sum())
    rng = np.random.default_rng(seed)
    rounds = resamples if pseudo else 1
    results = [_round(table, judgments, wf, wh, pseudo, rng, epsilon, q, test, min_instances)
               for _ in range(rounds)]
    tested = [r for r in results if r["annotators"]]
    n_ann = max((r["annotators"] for r in results), default=0)
    out: dict[str, Any] = {
        "epsilon": epsilon, "q": q, "scoring": scoring, "level": level, "pseudo": pseudo, "test": test,
        "resamples": rounds, "instances": instances,
        **_summary([r["winning_rate"] for r in tested], "winning_rate"),
        **_summary([r["advantage_probability"] for r in tested], "advantage_probability"),
        "annotators": n_ann, "per_annotator": results[0]["per_annotator"] if rounds == 1 else None,
        "why": None,
    }
    out["passes"] = None if out["winning_rate"] is None else bool(out["winning_rate"] >= 0.5)
    if not tested:
        out["why"] = ("n/a, no annotator answered enough instances (each needs at least "
                      f"{min_instances or MIN_INSTANCES}; Calderon et al. recommend 50-100 instances "
                      f"and at least {RECOMMENDED_ANNOTATORS} annotators)")
    elif n_ann < RECOMMENDED_ANNOTATORS:
        out["why"] = (f"{n_ann} annotators tested: Calderon et al. recommend at least "
                      f"{RECOMMENDED_ANNOTATORS}; the winning rate moves in steps of 1/{n_ann}")
    return out


def _summary(values: list[float], name: str) -> dict[str, float | None]:
    return {name: float(np.mean(values)) if values else None,
            f"{name}_sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}


def _round(table: HumanTable, j: Judgments, wf: np.ndarray, wh: np.ndarray, pseudo: str | None,
           rng: np.random.Generator, epsilon: float, q: float, test: str,
           min_instances: int | None) -> dict[str, Any]:
    """One test: group the (topic, annotator) win indicators by annotator (or pseudo-annotator)."""
    n, kmax, _ = wf.shape
    topic_of = table.topics
    if pseudo:
        scope = np.array([j.topics.corpus[t] if pseudo == "dataset" else
                          f"{j.topics.corpus[t]}/{j.topics.model[t]}" for t in topic_of], dtype=object)
        slot = np.full((n, kmax), -1)
        for r in range(n):
            k = table.counts[r]
            slot[r, :k] = rng.permutation(k)
        names = np.where(slot >= 0, scope[:, None] + "/pseudo" + slot.astype(str), "")
    else:
        names = np.where(table.who >= 0, np.asarray(j.annotators, dtype=object)[np.maximum(table.who, 0)], "")
    per_instance = np.isfinite(wf)
    p_values, advantage, labels, details = [], [], [], []
    for name in dict.fromkeys(names[names != ""].tolist()):
        cells = names == name
        f, h = wf[cells][per_instance[cells]], wh[cells][per_instance[cells]]
        if pseudo and min_instances is None:
            in_scope = scope == name.rsplit("/pseudo", 1)[0]  # every instance of its corpus or model
            need = int(per_instance[in_scope].any(axis=1).sum())
        else:
            need = MIN_INSTANCES if min_instances is None else min_instances
        if f.size < need or f.size == 0:
            continue
        d = h - f
        p_values.append(_p_value(d, epsilon, test))
        advantage.append(float(np.mean(f)))
        labels.append(name)
        details.append({"annotator": name, "instances": int(f.size), "advantage": advantage[-1],
                        "p": p_values[-1]})
    rejected = benjamini_yekutieli(np.asarray(p_values), q)
    for dct, r in zip(details, rejected, strict=True):
        dct["judge_wins"] = bool(r)
    return {"annotators": len(labels), "winning_rate": float(rejected.mean()) if labels else 0.0,
            "advantage_probability": float(np.mean(advantage)) if labels else 0.0, "per_annotator": details}
