"""An automated proxy for word intrusion (in the style of Lau, Newman & Baldwin 2014).

For each word-intrusion item, every option gets its mean association with the other options in a
reference corpus (NPMI by default, or PMI, over sliding windows; `tealeaves.coherence` counts);
the predicted intruder is the option with the lowest mean. Automated model precision of a topic
is 1 when the prediction is the true intruder, else 0.

Words absent from the reference make their pairs undefined; undefined pairs are left out of the
means, and an option with no defined pair at all (absent from the reference) gets -inf, so it is
predicted as the intruder. Such items are counted and listed. Ties go to the first option shown.

With human responses, agreement is reported as the fraction of items where the proxy picks the
humans' most frequent choice, and the Pearson and Spearman correlations between automated
correctness and human model precision over topics.
"""

from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..coherence import count
from ..coherence.measures import pmi_pair
from ..corpus import Corpus
from ..errors import MethodError
from ..model import TopicModel
from ..output.display import Display
from ..output.jsonout import json_safe
from ..topics import Topics
from ..util.limits import check_bootstrap
from .scoring import bootstrap_ci, check_key, read_key, score
from .tasks import Task, word_tasks

MEASURES = ("npmi", "pmi")


@dataclass(repr=False)
class AutoResult(Display):
    items: list[dict[str, Any]]  # per item: options, option scores, predicted, intruder, correct
    model_precision: dict[str, dict[int, float]]  # model -> topic -> 0/1
    summary: dict[str, dict[str, Any]]
    absent_items: list[str]  # items with an option absent from the reference
    agreement: dict[str, Any] | None
    params: dict[str, Any]

    _name = "AutoResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [(f"{m} model precision", s["model_precision"]) for m, s in self.summary.items()] + [
            ("items", len(self.items))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        keys = ("item", "model", "topic", "predicted", "intruder", "correct")
        return "row", {k: [it[k] for it in self.items] for k in keys} | {
            "options": [" ".join(it["options"]) for it in self.items]}

    def to_dict(self) -> dict[str, Any]:
        return json_safe(
            {
                "task": "intrusion-auto",
                "params": self.params,
                "summary": self.summary,
                "model_precision": {
                    m: {str(k): v for k, v in d.items()} for m, d in self.model_precision.items()
                },
                "absent_items": self.absent_items,
                "agreement": self.agreement,
                "items": self.items,
            }
        )


def _as_key(
    tasks: TopicModel | Topics | Sequence[Task] | Sequence[dict[str, Any]] | str | os.PathLike,
    seed: int,
    task_options: dict[str, Any],
) -> list[dict[str, Any]]:
    if isinstance(tasks, TopicModel | Topics):
        return [t.key() for t in word_tasks(tasks, seed=seed, **task_options)]
    if task_options:
        raise MethodError(
            f"task options {sorted(task_options)} apply only when tasks are generated from a model"
        )
    if isinstance(tasks, str | os.PathLike):
        tasks = read_key(tasks)
    rows = [t.key() if isinstance(t, Task) else t for t in tasks]
    return list(check_key(rows).values())  # typed rows: "attention": "false" is false


def auto(
    tasks: TopicModel | Topics | Sequence[Task] | Sequence[dict[str, Any]] | str | os.PathLike,
    reference: Corpus | str | os.PathLike | Iterable[Sequence[str]],
    measure: str = "npmi",
    window: int = 10,
    responses: Iterable[dict[str, Any]] | str | os.PathLike | None = None,
    seed: int = 0,
    bootstrap: int = 2000,
    workers: int = 1,
    encoding: str = "utf-8",
    **task_options: Any,
) -> AutoResult:
    """Predict the intruder of every word-intrusion item from `reference` co-occurrences.

    `tasks`: a model (word tasks are generated with `seed` and `task_options`), a list of tasks or
    key rows, or a key file. `responses` (with a key, not a bare model's fresh tasks) adds the
    agreement with human annotators."""
    if measure not in MEASURES:
        raise MethodError(
            f"unknown measure {measure!r} for the automated proxy (known: {', '.join(MEASURES)})"
        )
    full_key = _as_key(tasks, seed, task_options)
    key = [k for k in full_key if k["kind"] == "word" and not k.get("attention")]
    if not key:
        raise MethodError("no word-intrusion items to predict")
    check_bootstrap(bootstrap, float(len(key)), 2 * 8.0 * len(key) * bootstrap)  # before the counting
    counts = count(reference, sorted({w for k in key for w in k["options"]}), window=window, workers=workers,
                   encoding=encoding)
    if counts.units == 0 or counts.tokens == 0:  # as coherence: blank lines are no corpus
        raise MethodError("the reference corpus is empty")
    idx = counts.index()
    items, absent = [], []
    mp: dict[str, dict[int, float]] = defaultdict(dict)
    for k in key:
        ids = [idx[w] for w in k["options"]]
        scores = []
        for i, a in enumerate(ids):
            vals = [pmi_pair(counts, a, b, measure == "npmi", "epsilon") for j, b in enumerate(ids) if j != i]
            vals = [v for v in vals if not math.isnan(v)]
            scores.append(float(np.mean(vals)) if vals and counts.single[a] > 0 else -math.inf)
        if any(counts.single[a] == 0 for a in ids):
            absent.append(k["item"])
        predicted = int(np.argmin(scores))
        correct = int(predicted == k["intruder"])
        items.append(
            {
                "item": k["item"],
                "model": k["model"],
                "topic": k["topic"],
                "options": k["options"],
                "option_scores": scores,
                "predicted": predicted,
                "intruder": k["intruder"],
                "correct": correct,
                "relaxed": bool(k.get("relaxed", False)),
            }
        )
        mp[k["model"]][int(k["topic"])] = float(correct)
    rng = np.random.default_rng(seed)
    summary = {}
    for m, d in sorted(mp.items()):
        v = np.array(list(d.values()))
        summary[m] = {
            "model_precision": float(v.mean()),
            "model_precision_ci": bootstrap_ci(v, bootstrap, rng),
            "topics": int(v.size),
        }
    agreement = None if responses is None else _agreement(full_key, items, responses)
    params = {"measure": measure, "window": window, "seed": seed, "reference_units": counts.units}
    return AutoResult(items, dict(mp), summary, absent, agreement, params)


def _agreement(
    key: list[dict[str, Any]],
    items: list[dict[str, Any]],
    responses: Iterable[dict[str, Any]] | str | os.PathLike,
) -> dict[str, Any]:
    """How the proxy's picks relate to human choices on the same items."""
    from scipy.stats import pearsonr, spearmanr

    human = score(key, responses)
    same = []
    for it in items:
        c = human.item_choices.get(it["item"])
        if c:
            counts = Counter(c)
            majority = max(counts, key=lambda o: (counts[o], -o))  # ties: the first option shown
            same.append(int(majority == it["predicted"]))
    auto_v, human_v = [], []
    for it in items:
        h = human.model_precision.get(it["model"], {}).get(int(it["topic"]))
        if h is not None:
            auto_v.append(it["correct"])
            human_v.append(h)
    out: dict[str, Any] = {
        "items_with_responses": len(same),
        "majority_agreement": float(np.mean(same)) if same else None,
        "topics": len(auto_v),
        "pearson": None,
        "spearman": None,
    }
    if len(auto_v) >= 3 and np.std(auto_v) > 0 and np.std(human_v) > 0:
        out["pearson"] = float(pearsonr(auto_v, human_v)[0])
        out["spearman"] = float(spearmanr(auto_v, human_v)[0])
    return out
