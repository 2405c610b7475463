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

from typing import Any

import numpy as np

from ..errors import MethodError
from ..judgments import Judgments
from .resample import human_table

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


def _instances(j: Judgments, level: str) -> dict[tuple[int, int], dict[int, Any]]:
    """instance -> {annotator: answer}: an instance is (topic, item) at document level, (topic, -1)
    at topic level (the answer then the vector of the topic's evaluated-document answers, or the
    one answer about the whole topic)."""
    out: dict[tuple[int, int], dict[int, Any]] = {}
    if level == "document":
        for t, a, i, v in zip(j.topic, j.annotator, j.item, j.value, strict=True):
            out.setdefault((int(t), int(i)), {})[int(a)] = float(v)
        return out
    about_documents = j.documents is not None and np.any(j.item >= 0)
    table = human_table(j, "theta" if about_documents else "mean")
    for row, t in enumerate(table.topics):
        for pos in range(table.counts[row]):
            out.setdefault((int(t), -1), {})[int(table.who[row, pos])] = table.values[row, pos]
    return out


def _score(kind: str, pred: Any, others: list[Any]) -> float:
    if kind == "accuracy":
        return float(np.mean([pred == o for o in others]))
    pred = np.asarray(pred, dtype=float)
    rmse = [np.sqrt(np.nanmean((pred - np.asarray(o, dtype=float)) ** 2)) for o in others]
    return -float(np.mean(rmse))


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
    or "topic" (a topic's vector of document answers; also any task about whole topics);
    `pseudo`: None (real annotators), "dataset" or "model" (ProxAnn's pseudo-annotators);
    `min_instances`: an annotator answering fewer is left out (default: every instance of a
    pseudo-annotator, else 30); `transform`: a function applied to every answer first (the
    scale both sides are compared on). Returns winning rate, advantage probability, whether the
    judge passes, per-annotator details and, when the test is not meaningful, why."""
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
    if np.all(judgments.item < 0):
        level = "topic"
    if transform is not None:
        from dataclasses import replace
        judge = replace(judge, value=np.asarray(transform(judge.value), dtype=float))
        judgments = replace(judgments, value=np.asarray(transform(judgments.value), dtype=float))
    humans = _instances(judgments, level)
    runs = _instances(judge, level)
    judged = {i: np.mean(np.stack([np.asarray(v, dtype=float) for v in ans.values()]), axis=0)
              for i, ans in runs.items()}
    instances = {i: a for i, a in humans.items() if i in judged and len(a) >= MIN_HUMANS_PER_INSTANCE}
    dropped = len(humans) - len(instances)
    rng = np.random.default_rng(seed)
    rounds = resamples if pseudo else 1
    results = []
    for _ in range(rounds):
        if pseudo:
            groups = _pseudo(judgments, instances, pseudo, rng)
        else:
            groups = {}
            for i, ans in instances.items():
                for a in ans:
                    groups.setdefault(judgments.annotators[a], {})[i] = a
        results.append(_one_round(groups, instances, judged, epsilon, q, scoring, test, pseudo,
                                  min_instances, judgments))
    tested = [r for r in results if r["annotators"]]
    n_ann = max((r["annotators"] for r in results), default=0)
    out: dict[str, Any] = {
        "epsilon": epsilon, "q": q, "scoring": scoring, "level": level, "pseudo": pseudo, "test": test,
        "resamples": rounds, "instances": len(instances), "instances_dropped": dropped,
        **_summary([r["winning_rate"] for r in tested], "winning_rate"),
        **_summary([r["advantage_probability"] for r in tested], "advantage_probability"),
        "annotators": n_ann, "rounds": results if rounds == 1 else None, "why": None,
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


def _pseudo(j: Judgments, instances: dict, how: str, rng: np.random.Generator) -> dict[str, dict]:
    """ProxAnn's pseudo-annotators: per topic, its annotators in random order; the k-th of each
    topic (within the corpus or within each model) make pseudo-annotator k."""
    by_topic: dict[int, list[int]] = {}
    for (t, _), ans in instances.items():
        by_topic.setdefault(t, [])
        for a in ans:
            if a not in by_topic[t]:
                by_topic[t].append(a)
    groups: dict[str, dict] = {}
    for t in sorted(by_topic):
        who = sorted(by_topic[t])
        order = rng.permutation(len(who))
        scope = j.topics.corpus[t] if how == "dataset" else f"{j.topics.corpus[t]}/{j.topics.model[t]}"
        for k, pos in enumerate(order):
            a = who[pos]
            for i in instances:
                if i[0] == t and a in instances[i]:
                    groups.setdefault(f"{scope}/pseudo{k}", {})[i] = a
    return groups


def _summary(values: list[float], name: str) -> dict[str, float | None]:
    return {name: float(np.mean(values)) if values else None,
            f"{name}_sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}


def _one_round(groups, instances, judged, epsilon, q, scoring, test, pseudo, min_instances,
               j) -> dict[str, Any]:
    if min_instances is None:
        if pseudo:
            # every instance in the pseudo-annotator's scope (ProxAnn's choice)
            scope = {}
            for name in groups:
                scope[name] = sum(1 for i in instances if name.startswith(_scope_of(i, pseudo, j) + "/"))
        else:
            scope = {name: MIN_INSTANCES for name in groups}
    else:
        scope = {name: min_instances for name in groups}
    p_values, advantage, names, details = [], [], [], []
    for name, items in groups.items():
        if len(items) < scope[name]:
            continue
        wf, wh = [], []
        for i, a in items.items():
            others = [v for b, v in instances[i].items() if b != a]
            s_h = _score(scoring, instances[i][a], others)
            s_f = _score(scoring, judged[i], others)
            wf.append(float(s_f >= s_h))
            wh.append(float(s_h >= s_f))
        d = np.asarray(wh) - np.asarray(wf)
        p_values.append(_p_value(d, epsilon, test))
        advantage.append(float(np.mean(wf)))
        names.append(name)
        details.append({"annotator": name, "instances": len(items), "advantage": advantage[-1],
                        "p": p_values[-1]})
    rejected = benjamini_yekutieli(np.asarray(p_values), q)
    for dct, r in zip(details, rejected, strict=True):
        dct["judge_wins"] = bool(r)
    return {"annotators": len(names), "winning_rate": float(rejected.mean()) if names else 0.0,
            "advantage_probability": float(np.mean(advantage)) if names else 0.0, "per_annotator": details}


def _scope_of(instance: tuple[int, int], how: str, j: Judgments) -> str:
    t = instance[0]
    return j.topics.corpus[t] if how == "dataset" else f"{j.topics.corpus[t]}/{j.topics.model[t]}"
