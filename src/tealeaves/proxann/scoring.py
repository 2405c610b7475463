"""Scoring ProxAnn answers against the model (Hoyle et al. 2025): does the order people give a
topic's evaluation documents follow the model's theta_dk?

Per response (one annotator, one topic): Kendall's tau-b between the annotator's fit ratings and
theta_dk over the evaluation documents, and between their ranking (1 = most related, reversed) and
theta_dk. Per topic: the same for the mean rating and the mean rank over annotators (`tau_fit`,
`tau_rank`, and Spearman's rho beside them), the mean of the annotators' own taus, and how well
people agree with each other: each annotator's tau-b with the mean rating of the others (the human
baseline: leave one annotator out), averaged. Per model: the mean over topics with a percentile
bootstrap interval over topics, the distractor's mean rating, and Krippendorff's alpha (interval
and ordinal) and Fleiss' kappa on the fit ratings (`intrusion.agreement.rating_agreement`; a unit
is one evaluation document of one topic).

Attention checks: a response fails one when its distractor is rated above `distractor_max` (2:
"mostly does not fit") or an instructed item is not given the rating it asks for; an annotator
with more than `max_attention_failures` failures is left out (and reported). A response without a
complete ranking is counted and left out. A tau is undefined (None, counted) where either side is
constant: one annotator who rated every document 3 says nothing about order.
"""

from __future__ import annotations

import os
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MethodError
from ..intrusion.agreement import rating_agreement
from ..intrusion.scoring import bootstrap_ci
from ..output.display import Display
from ..output.jsonout import json_safe
from ..util.limits import check_bootstrap, check_int
from .responses import grouped, read_responses
from .tasks import SCALE
from .taskset import check_key, read_key

DISTRACTOR_MAX = 2


def kendall(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b (ties in either side counted), None where it is undefined (fewer than 2
    values, or either side constant)."""
    from scipy import stats

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return float(stats.kendalltau(x, y, variant="b").statistic)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (average ranks for ties), None where undefined (as `kendall`)."""
    from scipy import stats

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.spearmanr(x, y).statistic)


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


@dataclass(repr=False)
class ProxAnnScores(Display):
    topics: list[dict[str, Any]]  # one per task: model, topic, item, top words, annotators, taus, labels, ...
    documents: list[dict[str, Any]]  # one per evaluation document of a task: theta, mean rating and rank
    responses: list[dict[str, Any]]  # one per complete response used: annotator, item, its taus
    summary: dict[str, dict[str, Any]]  # model -> means over topics with intervals, agreement
    excluded_annotators: list[str]
    attention_failures: dict[str, int]  # annotator -> failed checks
    incomplete: int  # responses without a complete ranking, left out
    params: dict[str, Any] = field(default_factory=dict)

    _name = "ProxAnnScores"

    def _headline(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for m, s in self.summary.items():
            out += [(f"{m} tau (fit)", s["tau_fit"] if s["tau_fit"] is not None else float("nan")),
                    (f"{m} tau (rank)", s["tau_rank"] if s["tau_rank"] is not None else float("nan"))]
        return out + [("responses used", len(self.responses))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        keys = ("model", "topic", "item", "annotators", "tau_fit", "tau_rank", "spearman_fit",
                "annotator_tau_fit", "human_tau_fit", "distractor_rating", "clarity")
        return "row", {k: [t.get(k) for t in self.topics] for k in keys}

    def rows(self) -> list[dict[str, Any]]:
        """CSV rows: one per model (summary), per topic and per evaluation document."""
        out: list[dict[str, Any]] = []
        for m, s in self.summary.items():
            row = {"row": "model", "model": m, **{k: v for k, v in s.items() if k not in ("agreement",)}}
            for k in ("tau_fit_ci", "tau_rank_ci"):
                lo, hi = row.pop(k)
                row |= {f"{k}_low": lo, f"{k}_high": hi}
            out.append(row | {f"agreement_{k}": v for k, v in s["agreement"].items()})
        out += [{"row": "topic", **{k: v for k, v in t.items() if k != "labels"},
                 "labels": " | ".join(t["labels"])} for t in self.topics]
        out += [{"row": "document", **d} for d in self.documents]
        return out

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": "proxann-score", "summary": self.summary, "topics": self.topics,
                          "documents": self.documents, "responses": self.responses,
                          "excluded_annotators": self.excluded_annotators,
                          "attention_failures": self.attention_failures, "incomplete": self.incomplete,
                          "params": self.params})


def _failures(resp: dict[str, Any], key: dict[str, Any], distractor_max: int) -> int:
    """Attention checks this response failed: a distractor rated above `distractor_max`, an
    instructed item not rated as it asks."""
    n = 0
    for d in key["documents"]:
        rating = resp["ratings"].get(d["id"])
        if d["role"] == "distractor" and rating is not None and rating > distractor_max:
            n += 1
        elif d["role"] == "instructed" and rating is not None and rating != d["expected"]:
            n += 1
    return n


def _complete(resp: dict[str, Any], key: dict[str, Any], where: str) -> bool:
    """Is the response complete (every document rated, the ranked ones ranked 1..n)? A response
    with some ranks but not a full ranking, or with documents the task lacks, is an error."""
    ids = {d["id"] for d in key["documents"]}
    unknown = sorted((set(resp["ratings"]) | set(resp["ranks"])) - ids)
    if unknown:
        raise MethodError(f"{where}: item {key['item']!r} has no document {unknown[0]!r} "
                          f"(it has {', '.join(sorted(ids))})")
    if not resp["ranks"]:
        return False
    ranked = [d["id"] for d in key["documents"] if d["rank"]]
    if set(resp["ranks"]) != set(ranked) or sorted(resp["ranks"].values()) != list(range(1, len(ranked) + 1)):
        raise MethodError(f"{where}: the ranking of item {key['item']!r} is not a permutation of its "
                          f"{len(ranked)} ranked documents (ranks {sorted(resp['ranks'].values())})")
    missing = sorted(ids - set(resp["ratings"]))
    if missing:
        raise MethodError(f"{where}: item {key['item']!r} is ranked but document {missing[0]!r} is not rated")
    if resp["label"] is None or resp["clarity"] is None:
        raise MethodError(f"{where}: item {key['item']!r} is ranked but has no label or clarity")
    return True


@dataclass
class UsableResponses:
    """ProxAnn answers checked against the key (`usable_responses`): `items` the key (item ->
    row), `used` the complete responses of annotators the attention checks keep ((annotator,
    item) -> response, with its first row's place in `where`), `complete` every complete one,
    `failures` per annotator, `excluded` annotators, `incomplete` responses without a full
    ranking (left out, counted)."""

    items: dict[str, dict[str, Any]]
    used: dict[tuple[str, str], dict[str, Any]]
    complete: dict[tuple[str, str], dict[str, Any]]
    failures: dict[str, int]
    excluded: list[str]
    incomplete: int

    def why_none(self) -> str:
        """Why no response is left (for the one-line error)."""
        if not self.complete:
            return "no response has a complete ranking"
        return (f"every annotator was excluded by the attention checks ({len(self.excluded)}; "
                "max_attention_failures allows more)")


def usable_responses(
    key: Sequence[dict[str, Any]] | str | os.PathLike,
    responses: Iterable[dict[str, Any]] | str | os.PathLike,
    max_attention_failures: int = 0,
    distractor_max: int = DISTRACTOR_MAX,
) -> UsableResponses:
    """The key and answers read and checked (each a one-line error naming its place: a rating off
    the scale, a ranking that is not a permutation, a document answered twice, an item the key
    lacks), the attention checks counted and the annotators failing more than
    `max_attention_failures` left out. What `score_proxann` scores and the meta-evaluation's
    study is made of."""
    max_attention_failures = check_int("max_attention_failures", max_attention_failures, 0)
    distractor_max = check_int("distractor_max", distractor_max, 1, SCALE - 1)
    items = (check_key(read_key(key), source=os.fspath(key)) if isinstance(key, str | os.PathLike)
             else check_key(key))
    answers = read_responses(responses) if isinstance(responses, str | os.PathLike) else grouped(responses)
    complete: dict[tuple[str, str], dict[str, Any]] = {}
    failures: dict[str, int] = defaultdict(int)
    incomplete = 0
    for (ann, item), resp in answers.items():
        if item not in items:
            raise MethodError(f"{resp['where']}: unknown item {item!r} (not in the key)")
        if _complete(resp, items[item], resp["where"]):
            complete[ann, item] = resp
            failures[ann] += _failures(resp, items[item], distractor_max)
        else:
            incomplete += 1
    excluded = sorted(a for a, f in failures.items() if f > max_attention_failures)
    used = {k: r for k, r in complete.items() if k[0] not in excluded}
    return UsableResponses(items, used, complete, {a: f for a, f in sorted(failures.items()) if f}, excluded,
                           incomplete)


def score_proxann(
    key: Sequence[dict[str, Any]] | str | os.PathLike,
    responses: Iterable[dict[str, Any]] | str | os.PathLike,
    max_attention_failures: int = 0,
    distractor_max: int = DISTRACTOR_MAX,
    bootstrap: int = 2000,
    seed: int = 0,
) -> ProxAnnScores:
    """Per response, topic and model, the agreement of people's fit ratings and rankings with the
    model's theta_dk (see the module notes). `key` is a key file or its rows; `responses` an
    answers file (`responses.EXPORT_FIELDS`, CSV or JSON lines) or its rows."""
    bootstrap = check_int("bootstrap", bootstrap, 0)
    got = usable_responses(key, responses, max_attention_failures, distractor_max)
    items, used, excluded, failures, incomplete = (got.items, got.used, got.excluded, got.failures,
                                                   got.incomplete)
    check_bootstrap(bootstrap, float(len(items)), 2 * 8.0 * len(items) * bootstrap)
    if not used:
        raise MethodError(f"no ProxAnn response to score: {got.why_none()}")
    per_item: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (ann, item), r in used.items():
        per_item[item][ann] = r
    topics, documents, resp_rows = [], [], []
    units: dict[str, list[int]] = {}
    for item, key in items.items():
        if item not in per_item:
            continue
        people = per_item[item]
        evals = [d for d in key["documents"] if d["role"] == "eval"]
        ids = [d["id"] for d in evals]
        theta = [d["theta"] for d in evals]
        ratings = {a: [r["ratings"][i] for i in ids] for a, r in people.items()}
        ranks = {a: [-r["ranks"][i] for i in ids] for a, r in people.items()}  # larger = more related
        for a in sorted(people):
            resp_rows.append({"annotator": a, "item": item, "model": key["model"], "topic": key["topic"],
                              "label": people[a]["label"], "clarity": people[a]["clarity"],
                              "tau_fit": kendall(ratings[a], theta), "tau_rank": kendall(ranks[a], theta)})
        mean_rating = np.mean([ratings[a] for a in people], axis=0)
        mean_rank = -np.mean([ranks[a] for a in people], axis=0)
        loo = []
        if len(people) >= 2:
            for a in people:
                rest = np.mean([ratings[b] for b in people if b != a], axis=0)
                loo.append(kendall(ratings[a], list(rest)))
        distractor = next(d["id"] for d in key["documents"] if d["role"] == "distractor")
        n_ranked = sum(d["rank"] for d in key["documents"])
        topics.append({
            "model": key["model"], "topic": key["topic"], "item": item, "words": " ".join(key["words"][:10]),
            "annotators": len(people),
            "tau_fit": kendall(list(mean_rating), theta), "tau_rank": kendall(list(-mean_rank), theta),
            "spearman_fit": spearman(list(mean_rating), theta),
            "spearman_rank": spearman(list(-mean_rank), theta),
            "annotator_tau_fit": _mean(kendall(ratings[a], theta) for a in people),
            "annotator_tau_rank": _mean(kendall(ranks[a], theta) for a in people),
            "human_tau_fit": _mean(loo) if loo else None,
            "distractor_rating": float(np.mean([r["ratings"][distractor] for r in people.values()])),
            "distractor_last": float(np.mean([r["ranks"][distractor] == n_ranked for r in people.values()])),
            "clarity": float(np.mean([r["clarity"] for r in people.values()])),
            "labels": [people[a]["label"] for a in sorted(people)],
        })
        for j, d in enumerate(evals):
            documents.append({"model": key["model"], "topic": key["topic"], "item": item, "document": d["id"],
                              "corpus_row": d["document"], "theta": d["theta"],
                              "mean_rating": float(mean_rating[j]), "mean_rank": float(mean_rank[j]),
                              "annotators": len(people)})
            units[f"{item}/{d['id']}"] = [ratings[a][j] for a in people]
    rng = np.random.default_rng(seed)
    summary: dict[str, dict[str, Any]] = {}
    for m in sorted({t["model"] for t in topics}):
        mine = [t for t in topics if t["model"] == m]
        s: dict[str, Any] = {"topics": len(mine), "responses": sum(t["annotators"] for t in mine)}
        for name in ("tau_fit", "tau_rank", "spearman_fit", "annotator_tau_fit", "human_tau_fit"):
            values = np.array([t[name] for t in mine if t[name] is not None])
            s[name] = float(values.mean()) if values.size else None
            s[f"{name}_topics"] = int(values.size)
            if name in ("tau_fit", "tau_rank"):
                s[f"{name}_ci"] = bootstrap_ci(values, bootstrap, rng)
        s["distractor_rating"] = float(np.mean([t["distractor_rating"] for t in mine]))
        s["clarity"] = float(np.mean([t["clarity"] for t in mine]))
        s["agreement"] = rating_agreement({u: v for u, v in units.items()
                                           if u.split("/")[0] in {t["item"] for t in mine}}, SCALE)
        summary[m] = s
    params = {"max_attention_failures": int(max_attention_failures), "distractor_max": int(distractor_max),
              "bootstrap": bootstrap, "seed": seed}
    return ProxAnnScores(topics, documents, resp_rows, summary, excluded, failures, incomplete, params)


def summary_lines(res: ProxAnnScores) -> list[str]:
    """What `proxann score` prints: the responses used, then per model its means and agreement."""
    def num(v: Any) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    def mean(s: dict[str, Any], name: str) -> str:
        """The mean over the topics where it is defined, how many, and its interval."""
        lo, hi = s.get(f"{name}_ci", (np.nan, np.nan))
        ci = f" [{lo:.3f}, {hi:.3f}]" if np.isfinite(lo) and np.isfinite(hi) else ""
        n, of = s[f"{name}_topics"], s["topics"]
        return f"{num(s[name])} ({n} of {of} topics{'' if n == of else ' with a defined tau'}){ci}"

    lines = [f"{len(res.responses)} responses used; {res.incomplete} incomplete (no full ranking) left out; "
             f"excluded by attention checks: {', '.join(res.excluded_annotators) or 'none'}"]
    for m, s in res.summary.items():
        a = s["agreement"]
        agree = a["note"] or (f"Krippendorff's alpha {a['krippendorff_alpha_interval']:.3f} (interval), "
                              f"{a['krippendorff_alpha_ordinal']:.3f} (ordinal), Fleiss' kappa "
                              f"{a['fleiss_kappa']:.3f} over {a['items']} documents")
        lines += [f"{m}: {s['topics']} topics, {s['responses']} responses",
                  f"  Kendall tau with theta, mean fit rating: {mean(s, 'tau_fit')}",
                  f"  Kendall tau with theta, mean rank: {mean(s, 'tau_rank')}",
                  f"  one annotator's tau with theta: {mean(s, 'annotator_tau_fit')}",
                  f"  one annotator's tau with the others' mean rating: {mean(s, 'human_tau_fit')}",
                  f"  distractor rated {num(s['distractor_rating'])} on average; clarity {num(s['clarity'])}",
                  f"  agreement on fit ratings: {agree}"]
    return lines
