"""Reader of ProxAnn's studies (Hoyle, Calvo-Bartolomé, Boyd-Graber & Resnik, ACL 2025, "ProxAnn:
Use-Oriented Evaluations of Topic Models and Document Clustering"), as the authors released them
(repository ahoho/proxann, `data/`):

- the Qualtrics export (`human_annotations/*.csv`): two header rows under the column names, then
  one row per response (a crowd worker judging one topic): the category label they wrote
  (`cluster_label`), how clearly documents and words fit it (`cluster_coherence`, 1-5), the fit
  of each of 7 held-out documents (`{i+1}_loop_fit_a`, 1-5, and `{i+1}_loop_familiarity`: not
  empty when they said they were not familiar enough), their ranking of those documents and a
  distractor (`rank_0`..`rank_6`, `rank_99`: a permutation of 1..8), the topic (`id`), the
  documents' ids (`eval_id_i`), the duration, and the attention checks (`practice_purpose`,
  `practice_rank_0..3`, the instructed item `11_loop_fit_a` / `11_loop_familiarity`);
- `json_out/config_*.json`: what the annotators saw, per model run and topic: the top words, 7
  exemplar documents, 7 evaluated documents with the model's proportion of the topic (`prob`)
  and whether it assigns them to it (`assigned_to_k`), and the distractor document;
- `llm_out/mean/<corpus>/<model>/<run>/llm_results_q{1,2,3}.json`: the same protocol answered by
  an LLM: q1 the category, q2 the fit of each document (an expected score from the answer's
  log-probabilities, 1-5), q3 the ranking (larger = fits better; read here as ranks, 1 = best);
- `cohrs/*.csv`: NPMI and C_V per topic as the authors computed them.

Workers are renumbered in row order ("w001"); each judged one topic. Responses the authors would
exclude are kept with their attention-check answers (`Study.extra["responses"]`); `exclude`
applies a rule and says how many it removed.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputFileError, shown
from ..files.records import numbered_csv, read_json, strict_float, strict_int
from . import TEXT, Documents, Judgments, Scale, Study, TopicSet

N_EVAL = 7
DISTRACTOR_ITEM = N_EVAL  # the distractor's item number (ranked, not rated)
FIT = Scale("ordinal", 1, 5, ("no, it does not fit", "it mostly doesn't fit", "it is partially related",
                              "it mostly fits", "yes, it fits"))
CLARITY = Scale("ordinal", 1, 5, ("not at all clearly", "not clearly", "mixed clarity", "clearly",
                                  "very clearly"))
HUMAN_RANK = Scale("rank", 1, N_EVAL + 1)
LLM_RANK = Scale("rank", 1, N_EVAL)
LLM_FIT = Scale("real", 0, 5)  # an expected score: 1-5 weighted by the answer's probabilities
MODELS = ("mallet", "ctm", "bertopic", "category-45", "tomotopy")
NOT_FAMILIAR = "I am not familiar"
TIME_QUANTILE, MIN_MINUTES = 0.05, 5

TITLE = ("Hoyle, Calvo-Bartolomé, Boyd-Graber & Resnik, \"ProxAnn: Use-Oriented Evaluations of Topic "
         "Models and Document Clustering\", ACL 2025")
CITATION = """@inproceedings{hoyle-etal-2025-proxann,
  title = {{P}rox{A}nn: Use-Oriented Evaluations of Topic Models and Document Clustering},
  author = {Hoyle, Alexander and Calvo-Bartolom{\\'e}, Lorena and Boyd-Graber, Jordan and Resnik, Philip},
  booktitle = {Proceedings of the 63rd Annual Meeting of the Association for Computational Linguistics},
  year = {2025},
  url = {https://arxiv.org/abs/2507.00828}
}"""


def split_key(key: str, where: str) -> tuple[str, str]:
    """(corpus, model) of a model run's path ("data/models/.../bills-labeled/vocab_15k/k-50/mallet/
    alpha.../159"): the corpus is the component ending in "-labeled" (else the one holding a known
    corpus name), the model a known model name or the component after "k-N"."""
    parts = [p for p in key.split("/") if p]
    corpus = next((p[: -len("-labeled")] for p in parts if p.endswith("-labeled")), "")
    model = next((p for p in parts if p in MODELS), "")
    if not model:
        k = next((i for i, p in enumerate(parts) if re.fullmatch(r"k-\d+", p)), None)
        model = parts[k + 1] if k is not None and k + 1 < len(parts) else ""
    if not corpus or not model:
        raise InputFileError(f"{where}: cannot tell the corpus and model of {shown(key, 80)} "
                             "(expected .../<corpus>-labeled/.../<model>/...)")
    return corpus, model


def read_configs(paths: list[str]) -> tuple[TopicSet, Documents, dict[str, int]]:
    """Topics (config order), their documents, and each full topic key's index."""
    ids, words, corpus, model, keys = [], [], [], [], {}
    doc: dict[str, list] = {k: [] for k in ("topic", "item", "role", "id", "text", "theta", "assigned")}

    def add(t: int, item: int, role: str, d: Any, where: str, distractor: bool = False) -> None:
        if not isinstance(d, dict) or not isinstance(d.get("text"), str):
            raise InputFileError(f"{where}: expected a document with its text")
        prob = np.nan if distractor else strict_float(d.get("prob"), where, "prob", low=0, high=1)
        assigned = 0 if distractor else (-1 if "assigned_to_k" not in d else int(bool(d["assigned_to_k"])))
        doc_id = "distractor" if distractor else str(d.get("doc_id", ""))
        for k, v in (("topic", t), ("item", item), ("role", role), ("text", d["text"]), ("theta", prob),
                     ("assigned", assigned), ("id", doc_id)):
            doc[k].append(v)

    for path in paths:
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputFileError(f"{path}: expected an object of model runs")
        for run, topics in data.items():
            c, m = split_key(run, path)
            if not isinstance(topics, dict):
                raise InputFileError(f"{path}: {shown(run, 60)}: expected an object of topics")
            for topic, block in topics.items():
                where = f"{path}: {m}/{topic}"
                tid = f"{c}/{m}/{topic}"
                if tid in ids:
                    raise InputFileError(f"{where}: topic {tid} appears twice in the configuration files")
                fields = ("topic_words", "exemplar_docs", "eval_docs", "distractor_doc")
                if not isinstance(block, dict) or not all(k in block for k in fields):
                    raise InputFileError(f"{where}: expected {', '.join(fields)}")
                t = len(ids)
                ids.append(tid)
                words.append(tuple(str(w) for w in block["topic_words"]))
                corpus.append(c)
                model.append(m)
                keys[f"{run}/{topic}"] = t
                for d in block["exemplar_docs"]:
                    add(t, -1, "exemplar", d, f"{where}: exemplar_docs")
                if len(block["eval_docs"]) != N_EVAL:
                    raise InputFileError(f"{where}: {len(block['eval_docs'])} eval_docs, expected {N_EVAL}")
                for i, d in enumerate(block["eval_docs"]):
                    add(t, i, "evaluated", d, f"{where}: eval_docs[{i}]")
                add(t, DISTRACTOR_ITEM, "distractor", block["distractor_doc"], f"{where}: distractor_doc",
                    True)
    topics_ = TopicSet(tuple(ids), tuple(words), tuple(corpus), tuple(model))
    documents = Documents(np.asarray(doc["topic"], dtype=np.int64), np.asarray(doc["item"], dtype=np.int64),
                          tuple(doc["role"]), tuple(doc["id"]), tuple(doc["text"]),
                          np.asarray(doc["theta"], dtype=np.float64),
                          np.asarray(doc["assigned"], dtype=np.int64))
    return topics_, documents, keys


def _code(cell: str, where: str, field: str, high: int) -> int:
    """The leading number of a Qualtrics answer ("4 - It mostly fits the category")."""
    return strict_int(cell.split("-")[0].strip(), where, field, 1, high)


def read_responses(path: str, topics: TopicSet, documents: Documents, keys: dict[str, int],
                   since: str | None = None
                   ) -> tuple[dict[str, Judgments], list[dict[str, Any]], list[str], Documents]:
    """The human tasks (label, clarity, fit, rank), each response's attention checks, the notes
    on rows left out (previews, unfinished responses, responses before `since`), and the
    documents with the texts the annotators saw (the export's; the configuration files hold
    the full texts, which the export cut near 1,000 characters)."""
    header, rows = numbered_csv(path, ("id", "cluster_label", "cluster_coherence", "rank_99", "Status",
                                       "Duration (in seconds)", "StartDate"))
    need = [f"{i + 1}_loop_fit_a" for i in range(N_EVAL)] + [f"rank_{i}" for i in range(N_EVAL)]
    missing = [c for c in need if c not in header]
    if missing:
        raise InputFileError(f"{path}: the header lacks column(s) {', '.join(missing[:4])}")
    if len(rows) >= 2 and "ImportId" in rows[1][1].get("id", ""):
        rows = rows[2:]  # Qualtrics' question texts and import ids
    answers: dict[str, list] = {"label": [], "clarity": [], "fit": [], "rank": []}
    texts: dict[int, str] = {}  # document row -> the text the annotators saw
    responses: list[dict[str, Any]] = []
    skipped = {"preview": 0, "unfinished": 0, "before": 0}
    eval_rows = {t: documents.of(t, "evaluated") for t in range(len(topics))}
    for where, row in rows:
        if row["Status"] != "IP Address":
            skipped["preview"] += 1
            continue
        if not row["rank_99"].strip():
            skipped["unfinished"] += 1
            continue
        if since is not None and row["StartDate"] < since:
            skipped["before"] += 1
            continue
        if row["id"] not in keys:
            raise InputFileError(f"{where}: topic {shown(row['id'], 80)} is not in the configuration files")
        t = keys[row["id"]]
        a = f"w{len(responses) + 1:03d}"
        for i, r in enumerate(eval_rows[t]):
            got = row.get(f"eval_id_{i}")
            if got is not None and got.strip() and got.strip() != documents.id[r]:
                raise InputFileError(f"{where}: eval_id_{i} is {shown(got)} but the configuration lists "
                                     f"document {documents.id[r]} for topic {topics.ids[t]}")
        answers["label"].append((t, a, -1, np.nan, row["cluster_label"], None))
        answers["clarity"].append((t, a, -1, _code(row["cluster_coherence"], where, "cluster_coherence", 5),
                                   None, None))
        for i in range(N_EVAL):
            fit = _code(row[f"{i + 1}_loop_fit_a"], where, f"{i + 1}_loop_fit_a", 5)
            familiar = not row.get(f"{i + 1}_loop_familiarity", "").startswith(NOT_FAMILIAR)
            answers["fit"].append((t, a, i, fit, None, familiar))
        for i, col in [(i, f"rank_{i}") for i in range(N_EVAL)] + [(DISTRACTOR_ITEM, "rank_99")]:
            rank = strict_int(row[col].strip(), where, col, 1, N_EVAL + 1)
            answers["rank"].append((t, a, i, rank, None, None))
        _shown_texts(row, t, documents, texts, where)
        practice = [row.get(f"practice_rank_{i}", "").strip() for i in range(4)]
        responses.append({
            "annotator": a, "topic": t, "row": where.rsplit(":", 1)[-1],
            "seconds": strict_float(row["Duration (in seconds)"], where, "Duration (in seconds)", low=0),
            "purpose": row.get("practice_purpose", ""),
            "check_fit": row.get("11_loop_fit_a", "")[:1],
            "check_unfamiliar": row.get("11_loop_familiarity", "").startswith(NOT_FAMILIAR),
            "practice_ranks": [strict_int(p, where, f"practice_rank_{i}", 1, 5) if p else 0
                               for i, p in enumerate(practice)],
            "distractor_rank": strict_int(row["rank_99"].strip(), where, "rank_99", 1, N_EVAL + 1),
        })
    annotators = tuple(r["annotator"] for r in responses)
    scales = {"label": TEXT, "clarity": CLARITY, "fit": FIT, "rank": HUMAN_RANK}
    kinds = {"label": "label", "clarity": "rating", "fit": "fit", "rank": "rank"}
    if texts:
        text = tuple(texts.get(r, documents.text[r]) for r in range(len(documents)))
        documents = replace(documents, text=text)
    tasks = {name: _judgments(kinds[name], scales[name], topics, annotators, rows_, documents, path)
             for name, rows_ in answers.items()}
    notes = [f"{path}: left out {n} {what} response(s)" for what, n in
             (("preview (Status not 'IP Address')", skipped["preview"]),
              ("unfinished (no ranking)", skipped["unfinished"]),
              (f"started before {since}", skipped["before"])) if n]
    return tasks, responses, notes, documents


def _shown_texts(row: dict[str, str], t: int, documents: Documents, texts: dict[int, str],
                 where: str) -> None:
    """Record the texts this response showed (the export's embedded fields: `eval_doc_i`, the
    exemplars' `exemplar_html` list items, `distractor_doc`); every response of a topic must
    have shown the same."""
    found: list[tuple[int, str]] = []
    evaluated = documents.of(t, "evaluated")
    for i, r in enumerate(evaluated):
        if row.get(f"eval_doc_{i}", "").strip():
            found.append((int(r), row[f"eval_doc_{i}"]))
    items = [html.unescape(x) for x in re.findall(r"<li[^>]*>(.*?)</li>", row.get("exemplar_html", ""), re.S)]
    exemplars = documents.of(t, "exemplar")
    if items and len(items) == len(exemplars):
        found += [(int(r), x) for r, x in zip(exemplars, items, strict=True)]
    if row.get("distractor_doc", "").strip():
        found += [(int(r), row["distractor_doc"]) for r in documents.of(t, "distractor")]
    for r, text in found:
        if texts.setdefault(r, text) != text:
            raise InputFileError(f"{where}: document {documents.id[r]} of topic {t} shows a different text "
                                 "than in an earlier response")


def _judgments(task: str, scale: Scale, topics: TopicSet, annotators: tuple[str, ...],
               rows: list[tuple], documents: Documents, source: str) -> Judgments:
    position = {a: i for i, a in enumerate(annotators)}
    t = np.asarray([r[0] for r in rows], dtype=np.int64)
    a = np.asarray([position[r[1]] for r in rows], dtype=np.int64)
    item = np.asarray([r[2] for r in rows], dtype=np.int64)
    value = np.asarray([r[3] for r in rows], dtype=np.float64)
    text = tuple(r[4] for r in rows) if scale.kind == "text" else None
    familiar = np.asarray([r[5] for r in rows], dtype=bool) if rows and rows[0][5] is not None else None
    return Judgments(task, scale, topics, annotators, t, a, item, value, text, familiar, None, documents,
                     source).check()


def read_llm_runs(folder: str, topics: TopicSet, documents: Documents) -> dict[str, dict[str, Judgments]]:
    """Each LLM's answers (folder/<model>/<run>/llm_results_q{1,2,3}.json): judge -> task ->
    Judgments whose annotators are the runs ("seed122"), built by `automated.judge_answers` (the
    path a judge answering now takes too). Runs missing a file are an error."""
    from .automated import judge_answers

    position = {}
    for t, tid in enumerate(topics.ids):
        c, m, k = tid.split("/")
        position[f"{c}-labeled/{m}/{k}"] = t
        position[tid] = t
    judges = {}
    for judge in sorted(os.listdir(folder)):
        jdir = os.path.join(folder, judge)
        if not os.path.isdir(jdir):
            continue
        runs: dict[str, dict[str, dict[int, Any]]] = {"label": {}, "fit": {}, "rank": {}}
        for run in sorted(os.listdir(jdir)):
            rdir = os.path.join(jdir, run)
            if not os.path.isdir(rdir):
                continue
            seed = re.search(r"seed(\d+)", run)
            name = f"seed{seed.group(1)}" if seed else run
            if name in runs["label"]:
                raise InputFileError(f"{rdir}: a second run named {name} for {judge}")
            q = {}
            for step in ("q1", "q2", "q3"):
                p = os.path.join(rdir, f"llm_results_{step}.json")
                if not os.path.exists(p):
                    raise InputFileError(f"{rdir}: no llm_results_{step}.json")
                q[step] = read_json(p)
                if not isinstance(q[step], list):
                    raise InputFileError(f"{p}: expected a list of topics")
            labels: dict[int, str] = {}
            for i, x in enumerate(q["q1"]):
                where = f"{os.path.join(rdir, 'llm_results_q1.json')}: entry {i}"
                t = _topic_of(x, position, where)
                cats = x.get("categories")
                if not isinstance(cats, list) or len(cats) != 1 or not isinstance(cats[0], str):
                    raise InputFileError(f"{where}: expected one category")
                if t in labels and labels[t] != cats[0]:
                    raise InputFileError(f"{where}: a second, different category for topic {topics.ids[t]}")
                labels[t] = cats[0]
            runs["label"][name] = labels
            for step, task, key in (("q2", "fit", "fit_data"), ("q3", "rank", "rank_data")):
                answers: dict[int, list[float]] = {}
                for i, x in enumerate(q[step]):
                    where = f"{os.path.join(rdir, f'llm_results_{step}.json')}: entry {i}"
                    t = _topic_of(x, position, where)
                    data = x.get(key)
                    if not isinstance(data, list) or len(data) != 1 or not isinstance(data[0], list) \
                            or len(data[0]) != N_EVAL:
                        raise InputFileError(f"{where}: {key} must hold one list of {N_EVAL} numbers")
                    if t in answers:
                        raise InputFileError(f"{where}: a second {key} for topic {topics.ids[t]}")
                    values = [strict_float(v, where, f"{key}[{d}]") for d, v in enumerate(data[0])]
                    # their ranking: larger = fits better; ours: 1 = fits best
                    answers[t] = [N_EVAL + 1 - v for v in values] if task == "rank" else values
                runs[task][name] = answers
        if runs["label"]:
            scales = {"label": TEXT, "fit": LLM_FIT, "rank": LLM_RANK}
            judges[judge] = {task: judge_answers(task, scales[task], topics, r, documents, jdir)
                             for task, r in runs.items()}
    return judges


def _topic_of(x: Any, position: dict[str, int], where: str) -> int:
    if not isinstance(x, dict) or x.get("id") not in position:
        raise InputFileError(f"{where}: topic {shown(x.get('id') if isinstance(x, dict) else x)} is not in "
                             "the configuration files")
    return position[x["id"]]


def read_coherence(path: str, topics: TopicSet) -> dict[str, np.ndarray]:
    """The authors' per-topic coherences (columns id, then one per measure); NaN for a topic the
    file does not list."""
    header, rows = numbered_csv(path, ("id",))
    out = {h: np.full(len(topics), np.nan) for h in header if h != "id"}
    position = {}
    for t, tid in enumerate(topics.ids):
        c, m, k = tid.split("/")
        position[f"{c}-labeled/{m}/{k}"] = t
    for where, row in rows:
        if row["id"] not in position:
            continue  # another corpus's topics (all_cohrs.csv holds both)
        for h in out:
            out[h][position[row["id"]]] = strict_float(row[h], where, h)
    return out


def read_proxann(annotations: str | os.PathLike, configs: list[str | os.PathLike],
                 llm_folder: str | os.PathLike | None = None,
                 coherence: dict[str, str | os.PathLike] | None = None, name: str = "proxann2025",
                 since: str | None = None) -> Study:
    """The study from the authors' files (see the module notes): the Qualtrics export, the
    configuration files of the topics it covers, optionally the LLM runs' folder (`llm_out/mean/
    <corpus>`) and coherence files (metric-name prefix -> CSV). Every response is kept
    (`exclude` applies the attention-check rule)."""
    topics, documents, keys = read_configs([os.fspath(p) for p in configs])
    tasks, responses, notes, documents = read_responses(os.fspath(annotations), topics, documents, keys,
                                                        since)
    judges = read_llm_runs(os.fspath(llm_folder), topics, documents) if llm_folder is not None else {}
    metrics: dict[str, np.ndarray] = {}
    for prefix, path in (coherence or {}).items():
        for k, v in read_coherence(os.fspath(path), topics).items():
            metrics[f"{prefix}{k}"] = v
    return Study(name, topics, tasks, judges, metrics, documents, TITLE, CITATION, "", tuple(notes),
                 {"responses": responses})


# -- the authors' attention checks ----------------------------------------------------------------

def failures(study: Study) -> list[dict[str, bool]]:
    """Each response's attention-check failures as the authors define them (ProxAnn's
    `process_responses`): the purpose question not answered "single category"; the category
    label found inside the topic's joined top words; the instructed item not answered 2 and not
    marked unfamiliar; the distractor ranked above 7th (weak) / not last (strict); the practice
    ranking's first item not 1 or 2 or its last not 4 (weak) / not 1,2,3,4 (strict); a duration
    under min(the 5% quantile, 5 minutes), the quantile over every response but the file's
    first two (as the authors' code computes it)."""
    responses = study.extra.get("responses", [])
    seconds = np.asarray([r["seconds"] for r in responses], dtype=float)
    cutoff = 0.0
    if len(seconds) > 2:
        cutoff = min(float(np.quantile(seconds[2:], TIME_QUANTILE)), 60.0 * MIN_MINUTES)
    label = study.tasks["label"]
    label_of = {(int(t), int(a)): s for t, a, s in zip(label.topic, label.annotator, label.text or (),
                                                       strict=True)}
    position = {a: i for i, a in enumerate(label.annotators)}
    out = []
    for r in responses:
        words = " ".join(study.topics.words[r["topic"]])
        ranks = r["practice_ranks"]
        out.append({
            "purpose": "single category" not in r["purpose"],
            "category": label_of[(r["topic"], position[r["annotator"]])] in words,
            "fit_check": r["check_fit"] != "2",
            "familiarity_check": not r["check_unfamiliar"],
            "distractor_weak": r["distractor_rank"] not in (7, 8),
            "distractor_strict": r["distractor_rank"] != 8,
            "practice_weak": ranks[0] not in (1, 2) or ranks[3] != 4,
            "practice_strict": ranks != [1, 2, 3, 4],
            "too_quick": r["seconds"] < cutoff,
        })
    return out


RULES = ("authors", "strict", "none")


def excluded(study: Study, rule: str = "authors") -> list[str]:
    """The annotators a rule excludes: "authors" (ProxAnn's "loose" rule, used for the paper:
    2 x distractor (weak) + 2 x instructed item + 2 x category in the top words + too quick +
    purpose + familiarity check + practice ranking (weak) > 1), "strict" (any of purpose,
    category, too quick, instructed item, distractor (weak), practice (weak), or the familiarity
    check failed together with a strict distractor or practice failure), "none"."""
    if rule not in RULES:
        raise InputFileError(f"attention-check rule {rule!r} is not one of {', '.join(RULES)}")
    if rule == "none":
        return []
    out = []
    for r, f in zip(study.extra.get("responses", []), failures(study), strict=True):
        if rule == "authors":
            drop = (2 * f["distractor_weak"] + 2 * f["fit_check"] + 2 * f["category"] + f["too_quick"]
                    + f["purpose"] + f["familiarity_check"] + f["practice_weak"]) > 1
        else:
            drop = (f["purpose"] or f["category"] or f["too_quick"] or f["fit_check"] or f["distractor_weak"]
                    or f["practice_weak"] or (f["familiarity_check"]
                                              and (f["practice_strict"] or f["distractor_strict"])))
        if drop:
            out.append(r["annotator"])
    return out


def exclude(study: Study, rule: str = "authors") -> Study:
    """`study` without the responses `rule` excludes (see `excluded`), with a note of how many."""
    drop = set(excluded(study, rule))
    if not drop:
        return study
    tasks = {}
    for k, j in study.tasks.items():
        keep = np.array([j.annotators[a] not in drop for a in j.annotator], dtype=bool)
        tasks[k] = j.select(keep)
    n = len(study.extra.get("responses", []))
    note = (f"excluded {len(drop)} of {n} responses by the {rule!r} attention-check rule "
            f"(tealeaves.judgments.proxann.excluded)")
    return replace(study, tasks=tasks, notes=study.notes + (note,))
