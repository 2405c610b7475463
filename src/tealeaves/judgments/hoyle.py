"""Reader of Hoyle et al. (NeurIPS 2021, "Is Automated Topic Model Evaluation Broken? The
Incoherence of Coherence") human judgments, as the authors released them (repository
ahoho/topics, `data/human/all_data/`):

- `all_data.json`: per corpus (wikitext, nytimes) and model (mallet, dvae, etm), the 50 topics'
  top 20 words and per-topic `metrics`: the automated scores the authors computed
  (`c_npmi_10_full`: NPMI over 10-token windows of the topic's own training corpus, full =
  train + val + test; `_nytimes_full` / `_wikitext_full`: against the other corpus, null where a
  topic word is not in it; `_train`, `_val`, `_test`: splits; `c_v_*`, `c_uci_full`,
  `u_mass_full`) and the sampled human answers (`ratings_scores_raw`, ...: see below);
- `{corpus}_ratings.csv`, `{corpus}_intrusion.csv`: one row per survey response (a crowd
  worker), one column per topic (`nytimes_mallet_42`; `*_fake_*` columns are the ratings
  survey's attention-check items), each answered cell "ANSWER,FAMILIARITY" in Qualtrics codes:
  ratings 1-3 (not very / somewhat / very related), intrusion 1-6 where 6 is the intruder; the
  familiarity code 4 (ratings) or 7 (intrusion) is the first option, read as familiar (the
  authors' `confidences_raw` = 1);
- `all_data.csv`: the long form of all_data.json (one row per topic and sampled answer).

The authors' analyses use a subsample: per topic, 15 ratings drawn with replacement and 26
intrusion answers without, by pandas' `sample(random_state=1)` on each column of the per-task
CSV (`SampleData.py`); `authors_sample` redraws it exactly (numpy's RandomState(1).choice over
the column's answers in row order), which the bundled data's build checks against all_data.json.

Workers are renumbered in row order of each per-task file ("nytimes/rating/w007"): the two
tasks' surveys had different participants as far as the files tell.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from ..errors import InputFileError, shown
from ..files.records import numbered_csv, read_json, strict_int
from . import BINARY, Judgments, Scale, Study, TopicSet, from_rows

CORPORA = ("wikitext", "nytimes")
MODELS = ("mallet", "dvae", "etm")
TASK_FILES = {"rating": "ratings", "word-intrusion": "intrusion"}
RATING = Scale("ordinal", 1, 3, ("not very related", "somewhat related", "very related"))
FAMILIAR_CODE = {"rating": "4", "word-intrusion": "7"}
INTRUDER_CODE = "6"
ANSWER_CODES = {"rating": ("1", "2", "3"), "word-intrusion": ("1", "2", "3", "4", "5", "6")}
FAMILIAR_CODES = {"rating": ("4", "5", "6"), "word-intrusion": ("7", "8", "9")}
SAMPLE_SIZE = {"rating": (15, True), "word-intrusion": (26, False)}  # (answers per topic, with replacement)
COLUMN = re.compile(r"(wikitext|nytimes)_(mallet|dvae|etm|fake)_(\d+)")

TITLE = ("Hoyle, Goel, Hian-Cheong, Peskov, Boyd-Graber & Resnik, \"Is Automated Topic Model Evaluation "
         "Broken? The Incoherence of Coherence\", NeurIPS 2021")
CITATION = """@inproceedings{hoyle-etal-2021-automated,
  title = {Is Automated Topic Model Evaluation Broken? The Incoherence of Coherence},
  author = {Hoyle, Alexander and Goel, Pranav and Hian-Cheong, Andrew and Peskov, Denis and
            Boyd-Graber, Jordan and Resnik, Philip},
  booktitle = {Advances in Neural Information Processing Systems},
  volume = {34},
  year = {2021},
  url = {https://arxiv.org/abs/2107.02173}
}"""


def topic_id(corpus: str, model: str, t: int) -> str:
    return f"{corpus}/{model}/{t}"


def read_metrics_json(path: str | os.PathLike) -> tuple[TopicSet, dict[str, np.ndarray], dict[str, Any]]:
    """Topics, the authors' per-topic automated metrics (NaN where null) and the raw JSON, from
    `all_data.json`."""
    p = os.fspath(path)
    data = read_json(p)
    ids, words, corpus, model = [], [], [], []
    metric_lists: dict[str, list[float]] = {}
    if not isinstance(data, dict):
        raise InputFileError(f"{p}: expected an object of corpora")
    n_before = 0
    for c, per_model in data.items():
        if not isinstance(per_model, dict):
            raise InputFileError(f"{p}: {c}: expected an object of models")
        for m, block in per_model.items():
            where = f"{p}: {c}.{m}"
            if not isinstance(block, dict) or not isinstance(block.get("topics"), list):
                raise InputFileError(f"{where}: expected \"topics\" and \"metrics\"")
            tops = block["topics"]
            for t, w in enumerate(tops):
                if not isinstance(w, list) or not all(isinstance(x, str) for x in w):
                    raise InputFileError(f"{where}.topics[{t}]: expected a list of words")
                ids.append(topic_id(c, m, t))
                words.append(tuple(w))
                corpus.append(c)
                model.append(m)
            for name, values in (block.get("metrics") or {}).items():
                if not isinstance(values, list) or len(values) != len(tops):
                    raise InputFileError(f"{where}.metrics.{name}: expected {len(tops)} values")
                if values and isinstance(values[0], list):
                    continue  # the sampled human answers, not a metric
                column = metric_lists.setdefault(name, [np.nan] * n_before)
                for t, v in enumerate(values):
                    if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                        raise InputFileError(f"{where}.metrics.{name}[{t}]: {shown(v)} is not a number")
                    column.append(np.nan if v is None else float(v))
            n_before += len(tops)
            for column in metric_lists.values():
                column.extend([np.nan] * (n_before - len(column)))
    topics = TopicSet(tuple(ids), tuple(words), tuple(corpus), tuple(model))
    return topics, {k: np.asarray(v) for k, v in metric_lists.items()}, data


def read_task_csv(path: str | os.PathLike, task: str, topics: TopicSet) -> tuple[dict[str, list], list[str]]:
    """The answers of one per-task file as long rows (topic index, worker row, value, familiar,
    choice code) and the notes on what was left out (attention-check columns)."""
    p = os.fspath(path)
    header, rows = numbered_csv(p)
    out: dict[str, list] = {"topic": [], "row": [], "value": [], "familiar": [], "choice": []}
    checks = 0
    position = {t: i for i, t in enumerate(topics.ids)}
    for col in header[1:]:
        m = COLUMN.fullmatch(col)
        if m is None:
            raise InputFileError(f"{p}:1: column {shown(col)} is not CORPUS_MODEL_TOPIC "
                                 "(e.g. nytimes_mallet_42)")
    for r, (where, row) in enumerate(rows):
        for col in header[1:]:
            cell = row[col].strip()
            if not cell:
                continue
            c, m, t = COLUMN.fullmatch(col).groups()  # type: ignore[union-attr]
            if m == "fake":
                checks += 1
                continue
            parts = cell.split(",")
            if len(parts) != 2 or parts[0] not in ANSWER_CODES[task] or parts[1] not in FAMILIAR_CODES[task]:
                raise InputFileError(f"{where}: column {col}: {shown(cell)} is not ANSWER,FAMILIARITY with "
                                     f"answer {'/'.join(ANSWER_CODES[task])} and familiarity "
                                     f"{'/'.join(FAMILIAR_CODES[task])}")
            key = topic_id(c, m, int(t))
            if key not in position:
                raise InputFileError(f"{where}: column {col}: topic {key} is not among the {len(topics)} "
                                     "topics of all_data.json")
            out["topic"].append(position[key])
            out["row"].append(r)
            out["choice"].append(int(parts[0]))
            out["value"].append(float(parts[0]) if task == "rating" else float(parts[0] == INTRUDER_CODE))
            out["familiar"].append(parts[1] == FAMILIAR_CODE[task])
    notes = []
    if checks:
        notes.append(f"{p}: left out {checks} answers to the attention-check items (*_fake_* columns, "
                     "not topics of the study)")
    return out, notes


def _task_judgments(task: str, topics: TopicSet, per_file: list[tuple[str, dict[str, list]]],
                    source: str) -> Judgments:
    topic, annotator, value, familiar, choice, names = [], [], [], [], [], []
    for corpus, cols in per_file:
        base = len(names)
        n_rows = max(cols["row"], default=-1) + 1
        names.extend(f"{corpus}/{task}/w{r + 1:03d}" for r in range(n_rows))
        topic += cols["topic"]
        annotator += [base + r for r in cols["row"]]
        value += cols["value"]
        familiar += cols["familiar"]
        choice += cols["choice"]
    scale = RATING if task == "rating" else BINARY
    n = len(topic)
    j = Judgments(task, scale, topics, tuple(names), np.asarray(topic, dtype=np.int64),
                  np.asarray(annotator, dtype=np.int64), np.full(n, -1, dtype=np.int64),
                  np.asarray(value, dtype=np.float64), None, np.asarray(familiar, dtype=bool),
                  np.asarray(choice, dtype=np.int64), None, source)
    return j.check()


def read_hoyle(folder: str | os.PathLike, name: str = "hoyle2021") -> Study:
    """The study from the authors' release folder: `all_data.json` (topics, metrics) and the four
    per-task CSVs (every answer, with its worker). Without the per-task files, the answers come
    from all_data.json's subsample, each answer its own annotator (the file does not say who
    gave it), and a note says so."""
    folder = os.fspath(folder)
    json_path = os.path.join(folder, "all_data.json")
    if not os.path.exists(json_path):
        raise InputFileError(f"{folder}: no all_data.json (Hoyle et al. 2021's release: "
                             "data/human/all_data/ of ahoho/topics)")
    topics, metrics, data = read_metrics_json(json_path)
    tasks: dict[str, Judgments] = {}
    notes: list[str] = []
    for task, stem in TASK_FILES.items():
        files = [(c, os.path.join(folder, f"{c}_{stem}.csv")) for c in CORPORA]
        present = [(c, f) for c, f in files if os.path.exists(f)]
        if len(present) == len(files):
            per_file = []
            for c, f in present:
                cols, more = read_task_csv(f, task, topics)
                per_file.append((c, cols))
                notes += more
            tasks[task] = _task_judgments(task, topics, per_file, folder)
        else:
            tasks[task] = _sampled_from_json(task, topics, data, json_path)
            notes.append(f"{json_path}: {task}: answers from the authors' subsample; the per-task CSVs "
                         f"({', '.join(os.path.basename(f) for _, f in files)}) are missing, so who gave "
                         "each answer is unknown: each answer counts as its own annotator")
    return Study(name, topics, tasks, {}, metrics, None, TITLE, CITATION, "", tuple(notes))


def _sampled_from_json(task: str, topics: TopicSet, data: dict, where: str) -> Judgments:
    key = "ratings" if task == "rating" else "intrusion"
    topic, value, familiar = [], [], []
    for i, tid in enumerate(topics.ids):
        c, m, t = tid.split("/")
        block = data[c][m]["metrics"]
        scores = block.get(f"{key}_scores_raw")
        conf = block.get(f"{key}_confidences_raw")
        if scores is None or conf is None:
            raise InputFileError(f"{where}: {c}.{m}: no {key}_scores_raw / {key}_confidences_raw")
        for s, f in zip(scores[int(t)], conf[int(t)], strict=True):
            topic.append(i)
            value.append(float(s))
            familiar.append(bool(f))
    n = len(topic)
    names = tuple(f"{task}/a{k + 1:05d}" for k in range(n))
    scale = RATING if task == "rating" else BINARY
    j = Judgments(task, scale, topics, names, np.asarray(topic, dtype=np.int64), np.arange(n, dtype=np.int64),
                  np.full(n, -1, dtype=np.int64), np.asarray(value, dtype=np.float64), None,
                  np.asarray(familiar, dtype=bool), None, None, where)
    return j.check()


def authors_sample(j: Judgments) -> Judgments:
    """The authors' subsample of `j` (all of a topic's answers, in worker order): per topic, 15
    ratings drawn with replacement / 26 intrusion answers without, as pandas `sample(n,
    random_state=1)` draws them (numpy RandomState(1).choice over the answers in row order).
    A drawn answer appears once per draw: the result may hold the same (topic, annotator) twice
    and is not `check`ed. Topics and answers in the order the authors' all_data.json lists them."""
    if j.task not in SAMPLE_SIZE:
        raise InputFileError(f"the authors' subsample is defined for ratings and word intrusion, "
                             f"not {j.task}")
    size, with_replacement = SAMPLE_SIZE[j.task]
    rows = []
    for t in range(j.n_topics):
        mine = np.flatnonzero(j.topic == t)
        mine = mine[np.argsort(j.annotator[mine], kind="stable")]
        if mine.size == 0:
            continue
        if not with_replacement and mine.size < size:
            raise InputFileError(f"topic {j.topics.ids[t]}: {mine.size} answers, fewer than the {size} the "
                                 "authors drew without replacement")
        pos = np.random.RandomState(1).choice(mine.size, size, replace=with_replacement)
        rows.append(mine[pos])
    return j.select(np.concatenate(rows))


def read_all_data_csv(path: str | os.PathLike, topics: TopicSet | None = None) -> dict[str, Judgments]:
    """The long-form `all_data.csv` (columns dataset, model, topic_idx, human_idx, metrics...,
    scores_raw, confidences_raw, task = ratings | intrusions): the authors' subsample per task,
    each row its own annotator (`human_idx` is a position in the sample, not a person)."""
    p = os.fspath(path)
    need = ("dataset", "model", "topic_idx", "human_idx", "scores_raw", "confidences_raw", "task")
    _, rows = numbered_csv(p, need)
    if topics is None:
        ids = tuple(dict.fromkeys(topic_id(r["dataset"], r["model"], int(r["topic_idx"])) for _, r in rows
                                  if r["topic_idx"].isdigit()))
        topics = TopicSet(ids, (), tuple(i.split("/")[0] for i in ids), tuple(i.split("/")[1] for i in ids))
    out = {}
    for task, code in (("rating", "ratings"), ("word-intrusion", "intrusions")):
        mine = [(w, r) for w, r in rows if r["task"] == code]
        others = {r["task"] for _, r in rows} - {"ratings", "intrusions"}
        if others:
            w = next(w for w, r in rows if r["task"] in others)
            raise InputFileError(f"{w}: task {shown(next(iter(others)))} is not ratings or intrusions")
        answers = [{"topic": topic_id(r["dataset"], r["model"],
                                      strict_int(r["topic_idx"], w, "topic_idx", 0)),
                    "annotator": f"{task}/{k + 1:05d}", "value": r["scores_raw"],
                    "familiar": r["confidences_raw"]} for k, (w, r) in enumerate(mine)]
        out[task] = from_rows(answers, task, RATING if task == "rating" else BINARY, topics, None, p,
                              [w for w, _ in mine])
    return out

