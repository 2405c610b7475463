"""Qualify a judge before trusting it: it answers the bundled human studies' own topics, its answers
become `Judgments` (`judgments.automated.judge_answers`, the path the LLM answers ProxAnn released
take) and `metaeval.qualify` measures its agreement with the people (correlation with interval,
ceiling, the leave-one-annotator-out human baseline, the alternative-annotator test).

What the judge is shown, against what people saw:
- hoyle2021 ratings: each topic's top 10 words, as people saw them (Hoyle et al. 2021);
- hoyle2021 word intrusion: each topic's top 5 words, as people saw them, and an intruder. The
  release does not hold the intruders people saw (only which option each person picked, the
  intruder being option 6), so the judge's intruder is drawn as the authors drew theirs: one of the
  top 5 words of another topic of the same corpus and model, not among this topic's top words
  (the bundle keeps 20; the authors excluded the top 50); seeded;
- proxann2025:bills: the top 15 words, the 7 exemplar documents and the 7 evaluated documents
  people saw (the distractor left out, as the authors' LLMs had it); label, fit and rank.

`topics` takes a random subsample of each study (seeded): the intervals widen about as
sqrt(all / taken), and the alternative-annotator test on Hoyle et al.'s real annotators needs each
of them on 30 topics (alttest.MIN_INSTANCES), which a small subsample does not give. A study with
fewer topics than that is taken whole (and the result says so) when another study has more; when
none has, it is an error.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import MethodError
from ..metaeval.qualify import PROTOCOLS, STUDIES, QualifyResult, judge_agreement

JUDGE_TASKS = ("ratings", "words", "proxann")  # the `tealeaves judge` commands a qualification covers
STUDY_ALIASES = {"proxann2025": "proxann2025:bills", "hoyle": "hoyle2021", "proxann": "proxann2025:bills"}
RATING_WORDS, INTRUSION_WORDS, PROXANN_WORDS = 10, 5, 15
INTRUDER_FROM = 5  # the intruder is one of another topic's top INTRUDER_FROM words
# settings that change no answer (left out of the key a qualification is kept under)
NOT_ANSWERS = ("key_env", "concurrency")
ESTIMATE_SUMS = ("requests", "cached", "to_send", "fallback_requests_at_most", "prompt_tokens",
                 "completion_tokens_at_most", "seconds")
COUNTS = ("requests", "sent", "cached", "malformed", "unanswered", "fallback_no_logprobs",
          "fallback_no_answer")


def judge_key(settings: dict[str, Any]) -> str:
    """The key a judge's qualification is kept under: SHA-256 of its settings that change answers
    (address, model, API, method, samples, temperature, seed, log-probabilities, task texts, extra
    request fields)."""
    kept = {k: v for k, v in settings.items() if k not in NOT_ANSWERS}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def study_names(studies: Sequence[str] | str | None) -> list[str]:
    if studies is None:
        return list(STUDIES)
    names = [studies] if isinstance(studies, str) else list(studies)
    out = []
    for s in names:
        s = STUDY_ALIASES.get(s, s)
        if s not in PROTOCOLS:
            raise MethodError(f"no bundled study {s!r} to qualify a judge on (known: {', '.join(STUDIES)})")
        if s not in out:
            out.append(s)
    return out


def task_names(tasks: Sequence[str] | str | None, studies: list[str]) -> dict[str, list[str]]:
    """Study -> the judge tasks to run on it."""
    wanted = list(JUDGE_TASKS) if tasks is None else [tasks] if isinstance(tasks, str) else list(tasks)
    bad = [t for t in wanted if t not in JUDGE_TASKS]
    if bad:
        raise MethodError(f"judge task {bad[0]!r} is not one of {', '.join(JUDGE_TASKS)}")
    offered = {s: list(dict.fromkeys(p.judge_task for p in PROTOCOLS[s])) for s in studies}
    out = {s: [t for t in offered[s] if t in wanted] for s in studies}
    if not any(out.values()):
        has = "; ".join(f"{s}: {', '.join(offered[s])}" for s in studies)
        raise MethodError(f"none of the tasks {', '.join(wanted)} is in {', '.join(studies)} ({has})")
    return {s: t for s, t in out.items() if t}


def subsample(study: Any, topics: int | None, seed: int) -> tuple[Any, np.ndarray]:
    """The study on a random `topics` of its topics (all when None), and their indices."""
    n = len(study.topics)
    if topics is None:
        return study, np.arange(n)
    if isinstance(topics, bool) or not isinstance(topics, int | np.integer) or topics < 1:
        raise MethodError(f"topics must be a whole number >= 1, got {topics!r}", options=("topics",))
    if topics > n:
        raise MethodError(f"topics={topics}: {study.name} has only {n}; give at most {n} (or qualify on "
                          "another study alone)", options=("topics",))
    if topics == n:
        return study, np.arange(n)
    keep = np.sort(np.random.default_rng(seed).choice(n, int(topics), replace=False))
    return study.take(keep), keep


def intrusion_rows(study: Any, keep: Sequence[int] | np.ndarray | None = None,
                   seed: int = 0) -> list[dict[str, Any]]:
    """Word-intrusion items (key rows, `intrusion.scoring.key_row`) of `study`'s topics at `keep`
    (all by default; an item's "topic" is its place in `keep`): the top INTRUSION_WORDS words and
    an intruder drawn as Hoyle et al. drew theirs from the other topics of the same corpus and model
    (module notes), in a random order. Each topic's draw depends only on `seed` and the topic, so a
    subsample asks what the whole study asks."""
    topics = study.topics
    keep = np.arange(len(topics)) if keep is None else np.asarray(keep)
    groups: dict[tuple[str, str], list[int]] = {}
    for t in range(len(topics)):
        groups.setdefault((topics.corpus[t], topics.model[t]), []).append(t)
    rows = []
    for place, t in enumerate(keep.tolist()):
        rng = np.random.default_rng([seed, t])
        words = list(topics.words[t])
        if len(words) < INTRUSION_WORDS:
            raise MethodError(f"topic {topics.ids[t]}: {len(words)} words, fewer than the {INTRUSION_WORDS} "
                              "shown")
        own = set(words)
        others = [o for o in groups[(topics.corpus[t], topics.model[t])] if o != t]
        intruder = None
        for o in rng.permutation(others):
            pool = [w for w in topics.words[o][:INTRUDER_FROM] if w not in own]
            if pool:
                intruder = pool[int(rng.integers(len(pool)))]
                break
        if intruder is None:
            raise MethodError(f"topic {topics.ids[t]}: no other topic of its model has a top word outside "
                              "its own words to be the intruder")
        options = [*words[:INTRUSION_WORDS], intruder]
        order = rng.permutation(len(options))
        rows.append({"item": topics.ids[t], "kind": "word", "model": f"{topics.corpus[t]}/{topics.model[t]}",
                     "topic": place, "options": [options[i] for i in order],
                     "intruder": int(np.flatnonzero(order == INTRUSION_WORDS)[0])})
    return rows


def proxann_items(study: Any) -> list[dict[str, Any]]:
    """ProxAnn items of `study`'s topics: the words, exemplars and evaluated documents people saw
    (evaluated documents in item order, the numbering of the people's answers) and their theta."""
    docs = study.documents
    if docs is None:
        raise MethodError(f"{study.name} has no documents for ProxAnn's steps")
    items = []
    for t in range(len(study.topics)):
        ev = docs.of(t, "evaluated")
        if not np.array_equal(docs.item[ev], np.arange(len(ev))):
            raise MethodError(f"topic {study.topics.ids[t]}: its evaluated documents are not items "
                              f"0..{len(ev) - 1}")
        items.append({"topic": t, "words": list(study.topics.words[t]),
                      "exemplars": [docs.text[r] for r in docs.of(t, "exemplar")],
                      "documents": [docs.text[r] for r in ev], "theta": [float(docs.theta[r]) for r in ev]})
    return items


def _ask(judge: Any, full: Any, study: Any, keep: np.ndarray, task: str, seed: int, dry_run: bool) -> Any:
    """`task` asked of the judge on `study` (the topics at `keep` of `full`)."""
    if task == "ratings":
        return judge.ratings([list(w) for w in study.topics.words], n_words=RATING_WORDS, dry_run=dry_run)
    if task == "words":
        return judge.word_intrusion(intrusion_rows(full, keep, seed), dry_run=dry_run)
    return judge.proxann(proxann_items(study), n_words=PROXANN_WORDS, dry_run=dry_run)


def to_judgments(study: Any, task: str, result: Any, run: str) -> dict[str, Any]:
    """The judge's answers (a JudgeResult of `task`) as the study's tasks' `Judgments`: one run."""
    from ..judgments import TEXT, Scale
    from ..judgments.automated import judge_answers
    from ..judgments.proxann import LLM_FIT, LLM_RANK
    from .judge import RATING_SCALE

    src = f"{result.settings['llm']} at {result.settings['base_url']}"
    answered = [it for it in result.items if it.get("score") is not None and "choice" in it]
    runs = {run: {int(it["topic"]): it["score"] for it in answered}}
    if task == "ratings":
        picks = {run: {int(it["topic"]): int(it["choice"]) for it in answered}}
        scale = Scale("real", min(RATING_SCALE), max(RATING_SCALE))
        return {"rating": judge_answers("rating", scale, study.topics, runs, source=src, choices=picks)}
    if task == "words":
        picks = {run: {int(it["topic"]): intrusion_code(study, it) for it in answered}}
        return {"word-intrusion": judge_answers("word-intrusion", Scale("real", 0, 1), study.topics, runs,
                                                source=src, choices=picks)}
    fits, ranks, labels = {}, {}, {}
    for it in result.items:
        t = int(it["topic"])
        if it.get("label") is not None:
            labels[t] = it["label"]
        if it.get("fit"):
            fits[t] = it["fit"]
        if it.get("rank") and not it.get("rank_unanswered"):
            order = it["rank"]
            ranks[t] = [order.index(d) + 1 for d in range(len(order))]  # 1 = fits best
    docs = study.documents
    return {"label": judge_answers("label", TEXT, study.topics, {run: labels}, docs, src),
            "fit": judge_answers("fit", LLM_FIT, study.topics, {run: fits}, docs, src),
            "rank": judge_answers("rank", LLM_RANK, study.topics, {run: ranks}, docs, src)}


def intrusion_code(study: Any, item: dict[str, Any]) -> int:
    """The option a word-intrusion item's answer picked, on Hoyle et al.'s coding: the k-th top word
    is k (1..5), the intruder 6."""
    from ..judgments.hoyle import INTRUDER_CODE

    if item["choice"] == item["intruder"]:
        return int(INTRUDER_CODE)
    words = list(study.topics.words[int(item["topic"])][:INTRUSION_WORDS])
    return words.index(item["options"][item["choice"]]) + 1


def _sum_estimates(ests: list[dict[str, Any]], concurrency: int) -> dict[str, Any]:
    out: dict[str, Any] = {k: sum(e.get(k, 0) for e in ests) for k in ESTIMATE_SUMS}
    out["to_send"] = out["requests"] - out["cached"]
    per = [e for e in ests if e.get("seconds_per_request_from")]
    out["seconds_per_request"] = per[0]["seconds_per_request"] if per else None
    out["seconds_per_request_from"] = per[0]["seconds_per_request_from"] if per else None
    out["concurrency"] = concurrency
    return out


def notes_for(plan: dict[str, list[str]], seed: int) -> list[str]:
    """What the judge saw that people did not, per study and task run."""
    out = []
    for name, tasks in plan.items():
        if "words" in tasks:
            out.append(f"{name} word intrusion: the release does not hold the intruders people saw; the "
                       "judge's are drawn as the authors drew theirs (one of the top "
                       f"{INTRUDER_FROM} words of another topic of the same corpus and model, outside this "
                       "topic's 20 words kept; the authors excluded its top 50), seed "
                       f"{seed}: a different word from the one people saw")
        if "proxann" in tasks:
            out.append(f"{name}: the labels the judge wrote are kept (JSON), not scored; fit and rank are "
                       "measured on the 7 evaluated documents people rated (not the distractor)")
    return out


def qualify(judge: Any, studies: Sequence[str] | str | None = None, tasks: Sequence[str] | str | None = None,
            topics: int | None = None, seed: int = 0, dry_run: bool = False, save: bool = True,
            **options: Any) -> QualifyResult | dict[str, Any]:
    """Qualify `judge` (a `Judge`) on the bundled studies (default both: hoyle2021's 300 topics,
    proxann2025:bills's 24) for the judge `tasks` (default all: "ratings", "words", "proxann"):
    see the module notes. The cost of everything is estimated first and checked against the
    judge's max_hours (`dry_run`: the estimate only, nothing sent). `topics`: a random subsample of
    each study (seed `seed`, which also draws the intruders). `options` go to
    `metaeval.qualify.task_agreement` (epsilon, q, bootstrap, level, quality, repeats). With `save`,
    the result is kept in the judge's cache for evaluate and the report."""
    from ..datasets import load_judgments
    from .run import check_estimate

    started = time.perf_counter()
    names = study_names(studies)
    plan = task_names(tasks, names)
    loaded = {}
    whole = []  # studies smaller than `topics`, taken whole when another study is larger
    fulls = {s: load_judgments(s) for s in plan}
    larger = [s for s in plan if topics is None or topics <= len(fulls[s].topics)]
    for s, full in fulls.items():
        take = topics
        if topics is not None and larger and s not in larger:
            take = None
            whole.append(f"{s}: all its {len(full.topics)} topics (fewer than topics={topics})")
        sub, keep = subsample(full, take, seed)
        loaded[s] = (full, sub, keep)
    ests = {f"{s} {t}": _ask(judge, *loaded[s], t, seed, dry_run=True) for s, ts in plan.items() for t in ts}
    total = _sum_estimates(list(ests.values()), judge.concurrency)
    estimate = {"total": total, "tasks": ests}
    n_questions = sum(len(loaded[s][2]) for s in plan)
    check_estimate(total, f"qualifying the judge on {n_questions} topics", judge.max_hours)
    if dry_run:
        return estimate
    run = f"seed{judge.seed}"
    results: dict[str, Any] = {}
    accounting: dict[str, Any] = {k: 0 for k in COUNTS} | {"tokens": {"prompt": 0, "completion": 0}}
    reported: set[str] = set()
    for s, ts in plan.items():
        full, sub, keep = loaded[s]
        answers: dict[str, Any] = {}
        for t in ts:
            res = _ask(judge, full, sub, keep, t, seed, dry_run=False)
            answers.update(to_judgments(sub, t, res, run))
            a = res.accounting
            for k in COUNTS:
                accounting[k] += a.get(k, 0) or 0
            for k in ("prompt", "completion"):
                accounting["tokens"][k] += (a.get("tokens") or {}).get(k, 0)
            reported.update(a.get("reported_models") or [])
        figures = judge_agreement(sub, answers, seed=seed, **options)
        study_notes = []
        if len(keep) < len(full.topics):
            widen = math.sqrt(len(full.topics) / len(keep))
            study_notes.append(f"a random {len(keep)} of {len(full.topics)} topics (seed {seed}): intervals "
                               f"about {widen:.1f} times as wide as on all of them")
        results[s] = {"topics": len(keep), "of": len(full.topics), "topic_ids": list(sub.topics.ids),
                      "tasks": figures, "notes": study_notes,
                      "answers": {k: _answers_dict(v) for k, v in answers.items()}}
    accounting["seconds"] = time.perf_counter() - started
    n = accounting["requests"]
    accounting["cache_hit_rate"] = accounting["cached"] / n if n else None
    accounting["reported_models"] = sorted(reported)
    notes = whole + notes_for(plan, seed)
    settings = judge.settings()
    out = QualifyResult(judge.llm, {**settings, "key": judge_key(settings)}, results, estimate, accounting,
                        notes, time.perf_counter() - started)
    if save:
        judge.open_cache().put_qualification(judge_key(settings), judge.llm, out.to_dict())
    return out


def _answers_dict(j: Any) -> dict[str, Any]:
    """A judge's answers of one task, compact: topic, item, value (text for labels)."""
    out = {"topic": [j.topics.ids[t] for t in j.topic], "item": j.item.tolist()}
    if j.text is not None:
        out["text"] = list(j.text)
    else:
        out["value"] = j.value.tolist()
    return out


def saved_qualification(judge: Any) -> dict[str, Any] | None:
    """The newest qualification kept in the judge's cache for its settings (`judge_key`), per task
    the newest that measured it; None when there is none."""
    rows = judge.open_cache().qualifications(judge_key(judge.settings()))
    if not rows:
        return None
    return merge_qualifications(rows)


def merge_qualifications(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Qualifications (newest first) merged: per study and task the newest figures."""
    studies: dict[str, Any] = {}
    for d in docs:
        for s, v in (d.get("studies") or {}).items():
            have = studies.setdefault(s, {**v, "tasks": []})
            for t in v.get("tasks") or []:
                if all(x["task"] != t["task"] for x in have["tasks"]):
                    have["tasks"].append(t)
    return {**docs[0], "studies": studies}


__all__ = ["JUDGE_TASKS", "qualify", "judge_key", "saved_qualification", "merge_qualifications",
           "intrusion_rows", "proxann_items", "to_judgments"]
