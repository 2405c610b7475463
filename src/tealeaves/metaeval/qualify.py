"""May a judge be trusted? Its agreement with people on a study's own topics, through one path for
every judge: a language model answering now (`tealeaves.judge.qualify`) and the LLM answers a study
carries (ProxAnn's seven models, `qualify_bundled`) alike.

For each of the study's tasks (`PROTOCOLS`), from the judge's answers in `Judgments` form (its
runs are its annotators; `judgments.automated.judge_answers`):

- the correlation over topics of the judge's per-topic score (`ranking.judge_scores`: the same
  computation the people's answers get) with the people's, with its two-stage bootstrap interval,
  per corpus and pooled, and the split-half ceiling (`agreement.agreement`); both per-topic
  scores are kept (`per_topic`), to see which topics the judge gets wrong;
- the human baseline: one random annotator of each topic against the rest, correlated over topics
  the same way (`ranking.leave_one_out`), so the judge is compared with a person;
- the alternative-annotator test (Calderon et al. 2025; `alttest.alt_test`): the advantage
  probability (how often the judge represents the other annotators at least as well as the person
  it replaces), the winning rate (the share of annotators whose test rejects, Benjamini-Yekutieli
  at `q`) and whether the judge passes (winning rate >= 0.5) at the margin `epsilon`.

The verdict per task is the test's: the judge may replace a person on that task when it passes at
every level tested; the correlation and the human baseline say how well it orders the topics.

The protocols follow the studies:
- hoyle2021 (Hoyle et al. 2021; 300 topics, real annotators who each judged 33 or more): the
  expected 3-point rating against the people's mean rating, P(intruder) against the people's
  word-intrusion accuracy; Spearman, as the paper. The test compares answers as a person gives
  them: the rating the judge picks (its most probable), whether it picks the intruder (`picked`,
  `found_intruder`: from `Judgments.choice`), each topic an instance scored by negative RMSE
  (the mean absolute difference from the other annotators' answers), each annotator tested on at
  least 30 topics (Calderon et al.'s minimum); an expected rating would lose to any person's
  whole-number answer near the others' median;
- proxann2025:bills (Hoyle et al. 2025; 24 topics, one topic per worker): a topic's quality is
  Kendall's tau of the mean fit (or rank) of its evaluated documents with the model's theta, and
  topics are compared by Kendall's tau (ProxAnn's Table 4 takes the model's 0/1 assignments
  instead of theta for the LLMs; `quality="assigned"` gives that); the test at the document and
  the topic level with pseudo-annotators within the corpus (10 draws), ranks compared reversed,
  max(1, 8 - rank), as ProxAnn's Table 3.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import MethodError
from ..judgments import Judgments, Study
from ..output.display import Display
from ..output.jsonout import json_safe

EPSILON = 0.1  # ProxAnn's margin; Calderon et al.'s default is 0.2
Q = 0.05
REPEATS = 100  # draws of the leave-one-out human baseline


def reversed_rank(v: np.ndarray) -> np.ndarray:
    """ProxAnn's comparison scale for ranks (Table 3): max(1, 8 - rank), larger = fits better; a
    person's eighth place (of 7 documents and the distractor) counts as the seventh."""
    return np.maximum(1, 8 - np.asarray(v, dtype=float))


def picked(j: Judgments) -> np.ndarray:
    """The option the judge picked (a rating), as a person answers."""
    return j.choice.astype(float)


def found_intruder(j: Judgments) -> np.ndarray:
    """1 where the judge picked the intruder (Hoyle et al.'s code 6), as a person's answer is scored."""
    from ..judgments.hoyle import INTRUDER_CODE

    return (j.choice == int(INTRUDER_CODE)).astype(float)


@dataclass(frozen=True)
class Protocol:
    """How a judge's answers to one of a study's tasks are compared with the people's."""

    task: str  # the people's task, and the judge's answers compared with it
    judge_task: str  # the `tealeaves judge` command (and evaluate column) this qualifies
    people: str  # what the people's per-topic score is, in words
    quality: str  # agreement.agreement's quality
    statistic: str
    alt_levels: tuple[str, ...]
    pseudo: str | None
    resamples: int = 1
    transform: Any = None
    min_instances: int | None = None
    answer: Any = None  # the judge's answer a person would give, from its Judgments (default: value)


PROTOCOLS: dict[str, tuple[Protocol, ...]] = {
    "hoyle2021": (
        Protocol("rating", "ratings", "people's mean 3-point ratings", "mean", "spearman", ("topic",), None,
                 answer=picked),
        Protocol("word-intrusion", "words", "people's word-intrusion accuracy", "mean", "spearman",
                 ("topic",), None, answer=found_intruder)),
    "proxann2025:bills": (
        Protocol("fit", "proxann", "the topic quality people's document fits give (their tau with theta)",
                 "theta", "kendall", ("document", "topic"), "dataset", 10),
        Protocol("rank", "proxann", "the topic quality people's rankings give (their tau with theta)",
                 "theta", "kendall", ("document", "topic"), "dataset", 10, reversed_rank)),
}
STUDIES = tuple(PROTOCOLS)
STATISTIC_NAMES = {"spearman": "Spearman", "pearson": "Pearson", "kendall": "Kendall tau"}


def protocols(study: Study | str) -> tuple[Protocol, ...]:
    name = study if isinstance(study, str) else study.name
    if name not in PROTOCOLS:
        raise MethodError(f"no qualification protocol for study {name!r} (known: {', '.join(STUDIES)})")
    return PROTOCOLS[name]


def _num(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def task_agreement(study: Study, p: Protocol, judge: Judgments, *, quality: str | None = None,
                   epsilon: float = EPSILON, q: float = Q, bootstrap: int = 2000, level: float = 0.95,
                   seed: int = 0, repeats: int = REPEATS) -> dict[str, Any]:
    """One task's figures (see the module notes) for a judge's answers `judge`."""
    from .agreement import agreement
    from .alttest import MIN_INSTANCES, alt_test
    from .ranking import judge_scores, leave_one_out

    people = study[p.task]
    quality = quality or p.quality
    score = judge_scores(judge, quality) if len(judge) else np.full(len(study.topics), np.nan)
    answered = int(np.isfinite(score).sum())
    out: dict[str, Any] = {"task": p.task, "judge_task": p.judge_task, "people": p.people, "quality": quality,
                           "statistic": p.statistic, "topics": len(study.topics), "scored": answered,
                           "answers": len(judge), "epsilon": epsilon, "q": q,
                           "per_topic": {"ids": list(study.topics.ids), "judge": score.tolist(),
                                         "people": judge_scores(people, quality).tolist()}}
    if answered >= 3:
        res = agreement({"judge": score}, people, quality=quality, statistics=(p.statistic,),
                        bootstrap=bootstrap, seed=seed, level=level, compare=False)
        out["correlation"] = {r["group"]: {k: r[k] for k in ("estimate", "low", "high", "topics", "why")}
                              for r in res.rows}
        out["ceiling"] = {c["group"]: {k: c[k] for k in ("ceiling", "low", "high", "topics", "why")}
                          for c in res.ceiling}
        out["notes"] = list(res.notes)
        out["params"] = res.params
    else:
        out["correlation"], out["ceiling"] = {}, {}
        out["notes"] = [f"the judge scored {answered} of {len(study.topics)} topics: too few for a "
                        "correlation (at least 3; an interval needs 10)"]
    loo = leave_one_out(people, quality, p.statistic, repeats=repeats, seed=seed)
    out["human_baseline"] = {k: loo[k] for k in ("mean", "sd", "topics", "repeats", "why")}
    tests = {}
    alt_judge = judge
    if p.answer is not None and len(judge):
        if judge.choice is None:
            out["notes"].append("the judge's picked options are unknown: the alternative-annotator test "
                                "compares its scores with the people's answers")
        else:
            alt_judge = replace(judge, value=p.answer(judge), scale=people.scale)
    for lv in p.alt_levels:
        if not len(judge):
            tests[lv] = {"epsilon": epsilon, "q": q, "level": lv, "winning_rate": None, "passes": None,
                         "advantage_probability": None, "annotators": 0,
                         "why": "n/a: the judge gave no answer to compare"}
            continue
        t = alt_test(alt_judge, people, epsilon=epsilon, q=q, level=lv, pseudo=p.pseudo,
                     resamples=p.resamples, seed=seed, transform=p.transform, min_instances=p.min_instances)
        if t["winning_rate"] is None and p.pseudo is None:
            most = int(np.bincount(people.annotator).max(initial=0))
            need = p.min_instances or MIN_INSTANCES
            t["why"] = (f"n/a: each annotator judged at most {most} of these {len(study.topics)} topics; the "
                        f"test needs {need} each (Calderon et al.)"
                        + (": qualify on all of the study's topics" if most < need else ""))
        tests[lv] = {k: v for k, v in t.items() if k != "per_annotator"}
    out["alt_test"] = tests
    out["verdict"] = verdict(out)
    return json_safe(out)


def verdict(t: Mapping[str, Any]) -> dict[str, Any]:
    """Whether the judge may replace a person on this task (the alternative-annotator test at every
    level) and the plain sentence saying so."""
    if not t["answers"]:
        return {"trusted": False, "text": f"NOT trusted: it answered none of the {t['topics']} topics"}
    tests = t["alt_test"]
    undecided = {lv: x["why"] for lv, x in tests.items() if x.get("passes") is None}
    if undecided:
        lv = next(iter(undecided))
        return {"trusted": None,
                "text": f"not decided: the alternative-annotator test ({lv} level) could not be run (above)"}
    failed = [lv for lv, x in tests.items() if not x["passes"]]
    rates = ", ".join(f"{lv} {x['winning_rate']:.2f}" for lv, x in tests.items())
    if failed:
        return {"trusted": False,
                "text": f"NOT trusted: it does not pass the alternative-annotator test at the "
                        f"{' and '.join(failed)} level (winning rate {rates}; needs 0.5 at epsilon "
                        f"{t['epsilon']:g})"}
    return {"trusted": True, "text": f"trusted: it passes the alternative-annotator test (winning rate "
                                     f"{rates} >= 0.5 at epsilon {t['epsilon']:g})"}


def judge_agreement(study: Study, answers: Mapping[str, Judgments], **options: Any) -> list[dict[str, Any]]:
    """Every protocol task of `study` the judge answered (`answers`: task -> Judgments), in order;
    `options` go to `task_agreement`."""
    out = []
    for p in protocols(study):
        if p.task in answers:
            out.append(task_agreement(study, p, answers[p.task], **options))
    if not out:
        raise MethodError(f"the judge answered none of {study.name}'s tasks "
                          f"({', '.join(p.task for p in protocols(study))})")
    return out


@dataclass(eq=False, repr=False)
class QualifyResult(Display):
    """A judge's qualification: per study, per task, its agreement with people (`task_agreement`);
    with what it cost when it was run now (`estimate`, `accounting`: requests, cache hits, tokens,
    seconds), the judge's settings and every note (what the judge saw that people did not)."""

    judge: str
    settings: dict[str, Any]
    studies: dict[str, dict[str, Any]]  # study name -> {"topics", "of", "tasks": [task figures], "notes"}
    estimate: dict[str, Any] = field(default_factory=dict)
    accounting: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    _name = "QualifyResult"

    @property
    def tasks(self) -> list[dict[str, Any]]:
        return [dict(t, study=s) for s, d in self.studies.items() for t in d["tasks"]]

    def _headline(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [("judge", self.judge)]
        for t in self.tasks:
            c = (t["correlation"] or {}).get("all") or {}
            out.append((f"{t['study']} {t['task']} {t['statistic']}", c.get("estimate")))
            out.append((f"{t['study']} {t['task']} trusted", t["verdict"]["trusted"]))
        return out

    def _columns(self) -> tuple[str, dict[str, Any]]:
        rows = self.tasks
        pooled = [(t["correlation"] or {}).get("all") or {} for t in rows]
        return "task", {"study": [t["study"] for t in rows], "task": [t["task"] for t in rows],
                        "statistic": [t["statistic"] for t in rows],
                        "estimate": [c.get("estimate") for c in pooled],
                        "low": [c.get("low") for c in pooled], "high": [c.get("high") for c in pooled],
                        "human_baseline": [t["human_baseline"]["mean"] for t in rows],
                        "trusted": [t["verdict"]["trusted"] for t in rows]}

    def trusted(self, task: str) -> bool | None:
        """Whether the judge passed for people's `task` ("rating", "word-intrusion", "fit", "rank");
        None when it was not qualified for it or the test could not decide."""
        got = [t["verdict"]["trusted"] for t in self.tasks if t["task"] == task]
        return got[0] if got else None

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": "judge-qualify", "judge": self.judge, "settings": self.settings,
                          "studies": self.studies, "estimate": self.estimate, "accounting": self.accounting,
                          "notes": self.notes, "seconds": self.seconds})

    def lines(self) -> list[str]:
        """One screen: per study and task, the correlation with its interval beside the human
        baseline and the ceiling, the alternative-annotator test, and the verdict in words."""
        from ..output.numbers import fixed

        def iv(c: Mapping[str, Any] | None, key: str = "estimate") -> str:
            if not c or c.get(key) is None:
                return "n/a"
            if c.get("low") is None:
                return f"{fixed(c[key], 2)} (no interval)"
            return f"{fixed(c[key], 2)} [{fixed(c['low'], 2)}, {fixed(c['high'], 2)}]"

        out = [f"qualification of the judge {self.judge}: agreement with people on the studies' own topics"]
        for s, d in self.studies.items():
            sub = "" if d["topics"] == d["of"] else f" (a random {d['topics']} of {d['of']}: intervals wider)"
            out.append(f"{s}: {d['topics']} topics{sub}")
            for t in d["tasks"]:
                stat = STATISTIC_NAMES.get(t["statistic"], t["statistic"])
                base = t["human_baseline"]
                ceiling = (t["ceiling"] or {}).get("all")
                person = fixed(base["mean"], 2) if base["mean"] is not None else "n/a"
                out.append(f"  {t['task']} (for `tealeaves judge {t['judge_task']}`): {stat} with "
                           f"{t['people']}: judge {iv((t['correlation'] or {}).get('all'))}; one person vs "
                           f"the rest {person}; ceiling {iv(ceiling, 'ceiling')}; {t['scored']} of "
                           f"{t['topics']} topics scored")
                for lv, a in t["alt_test"].items():
                    if a["winning_rate"] is None:
                        out.append(f"    alternative-annotator test, {lv} level: {a['why']}")
                        continue
                    out.append(f"    alternative-annotator test, {lv} level (epsilon {a['epsilon']:g}): "
                               f"advantage probability {fixed(a['advantage_probability'], 2)}, winning rate "
                               f"{fixed(a['winning_rate'], 2)} over {a['annotators']} annotators: "
                               f"{'passes' if a['passes'] else 'does not pass'}")
                out.append(f"    => {t['verdict']['text']}")
        if self.accounting:
            a = self.accounting
            out.append(f"requests {a.get('requests', 0):,} ({a.get('cached', 0):,} from the cache, "
                       f"{a.get('sent', 0):,} sent) in {a.get('seconds', 0.0):.1f} s"
                       + (f"; {a['unanswered']} items unanswered" if a.get("unanswered") else "")
                       + (f", {a['malformed']} malformed replies" if a.get("malformed") else ""))
        out += [f"note: {n}" for n in self.notes]
        return out


def qualify_bundled(study: Study, judge: str, **options: Any) -> QualifyResult:
    """The qualification of an automated judge whose answers `study` carries (ProxAnn's LLMs):
    the path a judge answering now takes."""
    if judge not in study.judges:
        raise MethodError(f"no judge {judge!r} in {study.name} (judges: {', '.join(study.judges) or 'none'})")
    tasks = judge_agreement(study, study.judges[judge], **options)
    return QualifyResult(judge, {"source": f"the answers {study.name} carries"},
                         {study.name: {"topics": len(study.topics), "of": len(study.topics), "tasks": tasks,
                                       "notes": []}})


__all__ = ["PROTOCOLS", "STUDIES", "Protocol", "QualifyResult", "judge_agreement", "protocols",
           "qualify_bundled", "reversed_rank", "task_agreement", "verdict"]
