"""A study collected with the annotation app as a `judgments.Study`, so the meta-evaluation reads
it as it reads the bundled ones: the app's export (`tealeaves annotate export`) and the task
set's key (`intrusion tasks --key`, `proxann tasks --key`).

- Word intrusion: one answer per (annotator, item), value 1 when the annotator picked the
  intruder (`choice` keeps the option picked); the topic is the key's `model/topic`, its words
  the options less the intruder. A topic answered more than once by one annotator (a task set
  holding several items of it) gets that annotator's mean, on a 0..1 "real" scale (counted).
  Topic-intrusion answers are about documents, not topics: counted and set aside. Attention
  items are not topics: set aside; annotators failing more of them than
  `max_attention_failures` are left out (counted), as `intrusion score` does.
- ProxAnn: per complete response, the category `label`, its `clarity` (a "rating", 1-5), the
  `fit` of each evaluation document (1-5) and the `rank` of the evaluation documents and the
  distractor (1 = fits best); the documents carry the key's theta_dk. The distractor's rating
  and the instructed item are attention checks (as `proxann score` applies them); incomplete
  responses (no full ranking) are counted and left out.

An automated judge answers the same tasks in the same export format (`judges`: name -> file or
rows); its annotators are its runs, nothing is excluded. Every row is checked by the readers
`intrusion score` and `proxann score` use (`intrusion.scoring.clean_responses`,
`proxann.scoring.usable_responses`): a rating off the scale, a ranking that is not a
permutation, a worker answering an item twice, an item the key lacks is a one-line error naming
the file and line; a key that mixes intrusion and ProxAnn items is refused.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import InputFileError, MethodError
from ..files import csvout
from ..files.records import numbered_json_lines
from ..judgments import BINARY, TEXT, WHOLE_TOPIC, Documents, Judgments, Scale, Study, TopicSet, from_rows

FAMILIES = ("intrusion", "proxann")
NO_LIMIT = 10**9  # a judge's runs are never excluded by attention checks
TITLE = "a study collected with tealeaves annotate"


def topic_id(model: str, topic: int) -> str:
    """The id of a model's topic in a study the app collected: "MODEL/K" (K from 0), the id
    `tealeaves evaluate --human` matches against its models' names."""
    return f"{model}/{topic}"


def key_family(key: str | os.PathLike | list[dict[str, Any]]) -> str:
    """"intrusion" or "proxann": the family of every row of a key (a file or its rows); a key
    mixing both is a one-line error naming the first row of the other family."""
    if isinstance(key, str | os.PathLike):
        if csvout.is_csv(key):
            return "intrusion"  # a ProxAnn key is JSON lines only
        rows = numbered_json_lines(key)
    else:
        rows = [(f"the key, row {i}", r) for i, r in enumerate(key, 1)]
    if not rows:
        raise InputFileError(f"{os.fspath(key) if isinstance(key, str | os.PathLike) else 'the key'}: "
                             "no items")
    first = None
    for where, r in rows:
        fam = "proxann" if r.get("kind") == "proxann" else "intrusion"
        if first is None:
            first = (fam, where)
        elif fam != first[0]:
            raise InputFileError(f"{where}: a {fam} item in a key whose first row ({first[1]}) is a "
                                 f"{first[0]} item: a study is one family of tasks")
    assert first is not None
    return first[0]


def app_study(responses: str | os.PathLike | Iterable[dict[str, Any]],
              key: str | os.PathLike | list[dict[str, Any]],
              judges: Mapping[str, str | os.PathLike | Iterable[dict[str, Any]]] | None = None,
              max_attention_failures: int = 0, distractor_max: int = 2, name: str | None = None) -> Study:
    """The study in the app's export `responses` (a file or its rows) keyed by `key` (see the
    module notes); `judges`: automated answers to the same tasks in the same format."""
    family = key_family(key)
    source = os.fspath(responses) if isinstance(responses, str | os.PathLike) else "the responses"
    if name is None:
        name = os.path.basename(source) if isinstance(responses, str | os.PathLike) else "study"
    if family == "intrusion":
        topics, tasks, notes = _intrusion(responses, key, max_attention_failures, source)
        judged = {j: _intrusion(rows, key, NO_LIMIT, _name(rows, j), topics)[1]
                  for j, rows in (judges or {}).items()}
        documents = None
    else:
        topics, documents, tasks, notes = _proxann(responses, key, max_attention_failures, distractor_max,
                                                   source)
        judged = {j: _proxann(rows, key, NO_LIMIT, distractor_max, _name(rows, j), topics, documents)[2]
                  for j, rows in (judges or {}).items()}
    key_name = os.fspath(key) if isinstance(key, str | os.PathLike) else "the key"
    return Study(name, topics, tasks, judged, {}, documents, TITLE, notes=tuple(notes),
                 extra={"family": family, "key": key_name, "responses": source})


def _name(rows: Any, judge: str) -> str:
    return os.fspath(rows) if isinstance(rows, str | os.PathLike) else f"judge {judge}"


def _intrusion(responses: Any, key: Any, max_failures: int, source: str,
               topics: TopicSet | None = None) -> tuple[TopicSet, dict[str, Judgments], list[str]]:
    from ..intrusion.scoring import clean_responses

    got = clean_responses(key, responses, max_failures)
    items = got.items
    word = {i: k for i, k in items.items() if k["kind"] == "word" and not k["attention"]}
    if topics is None:
        seen: dict[str, dict[str, Any]] = {}
        for k in word.values():
            seen.setdefault(topic_id(k["model"], k["topic"]), k)
        if not seen:
            raise MethodError(f"{source}: the key has no word-intrusion item about a topic (topic intrusion "
                              "is about documents: score it with `tealeaves intrusion score`)")
        shown = tuple(tuple(w for j, w in enumerate(k["options"]) if j != k["intruder"])
                      for k in seen.values())
        topics = TopicSet(tuple(seen), shown, model=tuple(k["model"] for k in seen.values()))
    notes = []
    if got.excluded:
        notes.append(f"{source}: left out {len(got.excluded)} annotator(s) who failed more than "
                     f"{max_failures} attention check(s): {', '.join(got.excluded[:10])}")
    excluded = set(got.excluded)
    kept = [(a, i, c, w) for a, i, c, w in got.answers if a not in excluded]
    attention = sum(items[i]["attention"] for _, i, _, _ in kept)
    about_docs = sum(items[i]["kind"] == "topic" and not items[i]["attention"] for _, i, _, _ in kept)
    if attention:
        notes.append(f"{source}: set aside {attention} answer(s) to attention items (not topics)")
    if about_docs:
        notes.append(f"{source}: set aside {about_docs} topic-intrusion answer(s): they judge documents, not "
                     "topics (`tealeaves intrusion score` scores them)")
    answers: dict[tuple[str, str], list[tuple[int, int, str]]] = defaultdict(list)
    for a, i, c, where in kept:
        if i in word:
            k = word[i]
            answers[topic_id(k["model"], k["topic"]), a].append((int(c == k["intruder"]), c, where))
    repeated = {k: v for k, v in answers.items() if len(v) > 1}
    rows = [{"topic": t, "annotator": a, "value": float(np.mean([x[0] for x in v])),
             "choice": v[0][1] if len(v) == 1 else -1} for (t, a), v in answers.items()]
    places = [v[0][2] for v in answers.values()]
    scale = BINARY
    if repeated:
        scale = Scale("real", 0, 1)
        notes.append(f"{source}: {len(repeated)} (annotator, topic) pair(s) answered more than one item of "
                     "the topic: each pair's answers averaged (a 0..1 scale)")
    if not rows:
        raise MethodError(f"{source}: no word-intrusion answer left to compare with scores "
                          f"({len(got.answers)} answer(s) read)")
    judgments = from_rows(rows, "word-intrusion", scale, topics, None, source, places)
    return topics, {"word-intrusion": judgments}, notes


def _proxann(responses: Any, key: Any, max_failures: int, distractor_max: int, source: str,
             topics: TopicSet | None = None, documents: Documents | None = None
             ) -> tuple[TopicSet, Documents, dict[str, Judgments], list[str]]:
    from ..proxann.scoring import usable_responses
    from ..proxann.tasks import SCALE

    got = usable_responses(key, responses, max_failures, distractor_max)
    items = got.items
    if topics is None or documents is None:
        topics, documents = _proxann_topics(items)
    notes = []
    if got.incomplete:
        notes.append(f"{source}: left out {got.incomplete} response(s) without a complete ranking")
    if got.excluded:
        notes.append(f"{source}: left out {len(got.excluded)} annotator(s) who failed more than "
                     f"{max_failures} attention check(s) (a distractor rated above {distractor_max}, an "
                     f"instructed item not rated as asked): {', '.join(got.excluded[:10])}")
    if not got.used:
        raise MethodError(f"{source}: no ProxAnn response to compare with scores: {got.why_none()}")
    rows: dict[str, list[dict[str, Any]]] = {"label": [], "clarity": [], "fit": [], "rank": []}
    places: dict[str, list[str]] = {k: [] for k in rows}
    ranked = 0
    for (ann, item), r in got.used.items():
        k = items[item]
        t = topic_id(k["model"], k["topic"])
        evals = [d for d in k["documents"] if d["role"] == "eval"]
        ranked_docs = evals + [d for d in k["documents"] if d["role"] == "distractor"]
        ranked = max(ranked, len(ranked_docs))
        where = r["where"]
        for task, row in (("label", {"text": r["label"]}), ("clarity", {"value": r["clarity"]})):
            rows[task].append({"topic": t, "annotator": ann, **row})
            places[task].append(where)
        for j, d in enumerate(evals):
            rows["fit"].append({"topic": t, "annotator": ann, "item": j, "value": r["ratings"][d["id"]]})
            places["fit"].append(where)
        for j, d in enumerate(ranked_docs):  # ranked: 1..n over these (the instructed item is not)
            rows["rank"].append({"topic": t, "annotator": ann, "item": j, "value": r["ranks"][d["id"]]})
            places["rank"].append(where)
    fit = Scale("ordinal", 1, SCALE)
    scales = {"label": TEXT, "clarity": fit, "fit": fit, "rank": Scale("rank", 1, max(ranked, 2))}
    kinds = {"label": "label", "clarity": "rating", "fit": "fit", "rank": "rank"}  # as the bundled study
    tasks = {name: from_rows(rows[name], kinds[name], scales[name], topics, documents, source, places[name])
             for name in rows}
    return topics, documents, tasks, notes


def _proxann_topics(items: dict[str, dict[str, Any]]) -> tuple[TopicSet, Documents]:
    """The topics of a ProxAnn key and the documents shown: exemplars (item -1), the evaluation
    documents (items 0..n-1, in the key's order) and the distractor (item n), with theta_dk."""
    ids, words, models = [], [], []
    doc: dict[str, list[Any]] = {k: [] for k in ("topic", "item", "role", "id", "text", "theta", "assigned")}

    def add(t: int, item: int, role: str, ident: str, text: str, theta: float | None) -> None:
        for k, v in (("topic", t), ("item", item), ("role", role), ("id", ident), ("text", text),
                     ("theta", np.nan if theta is None else theta), ("assigned", -1)):
            doc[k].append(v)

    for k in items.values():
        tid = topic_id(k["model"], k["topic"])
        if tid in ids:
            raise MethodError(f"the key holds two tasks of topic {tid}: a ProxAnn study asks about each "
                              "topic once")
        t = len(ids)
        ids.append(tid)
        words.append(tuple(k["words"]))
        models.append(k["model"])
        for j, text in enumerate(k["exemplars"]):
            row = k["exemplar_documents"][j] if j < len(k["exemplar_documents"]) else None
            theta = k["exemplar_theta"][j] if j < len(k["exemplar_theta"]) else None
            add(t, WHOLE_TOPIC, "exemplar", f"exemplar{j + 1}" if row is None else str(row), text, theta)
        evals = [d for d in k["documents"] if d["role"] == "eval"]
        for j, d in enumerate(evals):
            add(t, j, "evaluated", str(d["document"]), d["text"], d["theta"])
        for d in k["documents"]:
            if d["role"] == "distractor":
                add(t, len(evals), "distractor", d["id"] if d["document"] is None else str(d["document"]),
                    d["text"], d["theta"])
    ints = {k: np.asarray(doc[k], dtype=np.int64) for k in ("topic", "item", "assigned")}
    documents = Documents(ints["topic"], ints["item"], tuple(doc["role"]), tuple(doc["id"]),
                          tuple(doc["text"]), np.asarray(doc["theta"], dtype=np.float64), ints["assigned"])
    return TopicSet(tuple(ids), tuple(words), model=tuple(models)), documents
