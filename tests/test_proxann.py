"""ProxAnn tasks and scores (issue 34, point 5), without the app: which documents a task shows
(checked against selections computed here from the rules), what the annotator file hides, and the
scores against Kendall's tau-b and Spearman's rho counted here pair by pair and Krippendorff's alpha
from the krippendorff package; bad answers and task sets are one-line errors naming the row."""

from __future__ import annotations

import itertools
import json
import math

import krippendorff
import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.annotate.taskset import check_task_set
from tealeaves.errors import InputFileError, MethodError
from tealeaves.proxann import proxann_tasks, read_key, score_proxann, write_proxann_tasks
from tealeaves.proxann.tasks import INSTRUCTED_RATING, INSTRUCTED_TEXT

SECRET = "s" * 32


def tau_b(x, y):
    """Kendall's tau-b counted over pairs: (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)),
    n1 and n2 the pairs tied in x and in y."""
    c = d = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        a, b = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        tx += a == 0
        ty += b == 0
        c += a * b > 0
        d += a * b < 0
    n0 = len(x) * (len(x) - 1) / 2
    return (c - d) / math.sqrt((n0 - tx) * (n0 - ty))


def average_ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    ranks = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rho(x, y):
    return float(np.corrcoef(average_ranks(x), average_ranks(y))[0, 1])


# ---- tasks -----------------------------------------------------------------------------------

def designed():
    """40 documents over 3 topics; topic 0's proportions chosen so that every selection rule has
    one answer: distinct values, the 3 lowest far below the rest."""
    rng = np.random.default_rng(5)
    t0 = np.concatenate([np.linspace(0.95, 0.30, 20) + rng.uniform(0, 0.004, 20),
                         np.linspace(0.25, 0.06, 17) + rng.uniform(0, 0.003, 17), [0.004, 0.002, 0.003]])
    other = rng.dirichlet([1, 1], size=40)
    theta = np.column_stack([t0, (1 - t0)[:, None] * other])
    theta[37, 1:] = [0.996, 0.0]  # of the 3 lowest, document 37 is most clearly about another topic
    theta[37, 0] = 0.004
    return theta / theta.sum(axis=1, keepdims=True)


def test_documents_are_chosen_by_the_rules():
    """Exemplars: the 7 highest theta_d0. Evaluation documents: for 7 targets evenly spaced from
    the highest to the lowest theta_d0 left, the nearest document. Distractor: of the bottom tenth
    left, the one another topic dominates most. Computed here from the rules, independently."""
    model = tl.synthetic.random_model(3, 60, seed=1)
    theta = designed()
    texts = [f"document {i} about things" for i in range(40)]
    task = proxann_tasks(model, theta, texts=texts, topics=[0], seed=3, secret=SECRET)[0]
    t0 = theta[:, 0]
    exemplars = list(np.argsort(-t0, kind="stable")[:7])
    left = [d for d in range(40) if d not in exemplars]
    hi, lo = t0[left].max(), t0[left].min()
    evals, free = [], list(left)
    for i in range(7):
        target = hi - (hi - lo) * i / 6
        best = min(free, key=lambda d: abs(t0[d] - target))
        evals.append(best)
        free.remove(best)
    bottom = sorted(free, key=lambda d: t0[d])[:3]  # the 10% quantile of 26 falls between the 3rd and 4th
    distractor = max(bottom, key=lambda d: theta[d, 1:].max())
    assert distractor == 37
    assert task.exemplar_documents == exemplars
    assert task.exemplars == [texts[d] for d in exemplars]
    roles = {d["document"]: d["role"] for d in task.documents}
    assert sorted(d for d, r in roles.items() if r == "eval") == sorted(evals)
    assert [d for d, r in roles.items() if r == "distractor"] == [distractor]
    for d in task.documents:
        assert d["theta"] == pytest.approx(t0[d["document"]]) and d["text"] == texts[d["document"]]
    assert [d["id"] for d in task.documents] == [f"d{i}" for i in range(1, 9)]
    assert task.words == [model.vocab[w] for w in np.argsort(-model.phi[0], kind="stable")[:15]]


def test_the_annotator_file_holds_no_answer_and_the_ids_need_the_secret(tmp_path):
    model = tl.synthetic.random_model(3, 60, seed=1)
    theta, texts = designed(), [f"text {i}" for i in range(40)]
    tasks = proxann_tasks(model, theta, texts=texts, seed=3, secret=SECRET, instructed_check=True)
    write_proxann_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    body = (tmp_path / "t.jsonl").read_text()
    for word in ("theta", "role", "distractor", "eval", "exemplar_documents", "topic", "model", "expected"):
        assert f'"{word}"' not in body
    rows = [json.loads(line) for line in body.splitlines()]
    assert check_task_set(rows) == "proxann"
    key = read_key(tmp_path / "k.jsonl")
    assert [k["item"] for k in key] == [r["item"] for r in rows]
    check = [d for d in key[0]["documents"] if d["role"] == "instructed"]
    assert len(check) == 1 and check[0]["expected"] == INSTRUCTED_RATING and check[0]["rank"] is False
    assert check[0]["text"] == INSTRUCTED_TEXT
    again = proxann_tasks(model, theta, texts=texts, seed=3, secret=SECRET, instructed_check=True)
    assert [t.key() for t in again] == [t.key() for t in tasks]  # reproducible
    other = proxann_tasks(model, theta, texts=texts, seed=3, secret="t" * 32, instructed_check=True)
    assert {t.item for t in other}.isdisjoint({t.item for t in tasks})  # ids keyed by the secret


def test_lookalike_texts_are_passed_over_and_outside_distractors_are_used():
    model = tl.synthetic.random_model(3, 60, seed=1)
    theta = designed()
    texts = [f"document {i}" for i in range(40)]
    texts[1] = "DOCUMENT  0".replace("DOCUMENT", "document")  # looks like document 0 (spacing)
    task = proxann_tasks(model, theta, texts=texts, topics=[0], seed=3, secret=SECRET,
                         distractor_texts=["An outside text about sponges."])[0]
    assert 1 not in task.exemplar_documents and task.exemplar_documents[:2] == [0, 2]
    assert task.passed_over == 1
    d = [x for x in task.documents if x["role"] == "distractor"][0]
    assert d["text"] == "An outside text about sponges." and d["document"] is None and d["theta"] is None


def test_any_model_with_top_words_and_proportions(example):
    """An LDA (theta inferred), and a model of another kind with its own doc_topic."""
    model, docs, _, _ = example
    lda = proxann_tasks(model, docs, n_exemplars=3, n_eval=4, burn_in=10, samples=20, secret=SECRET)
    assert len(lda) == model.num_topics and all(len(t.documents) == 5 for t in lda)
    theta = tl.intrusion.infer_theta(model, docs, burn_in=10, samples=20)
    other = tl.Topics(name="nmf-like", source="test", weights=model.phi * 7, weights_kind="nonnegative",
                      vocab=model.vocab, doc_topic=theta)
    texts = [f"text {i}" for i in range(len(docs))]
    tasks = proxann_tasks(other, other.doc_topic, texts=texts, n_exemplars=3, n_eval=4, secret=SECRET)
    assert [t.words for t in tasks] == [t.words for t in lda]
    with pytest.raises(MethodError, match="needs the documents' topic proportions"):
        proxann_tasks(other, docs, texts=texts, secret=SECRET)


@pytest.mark.parametrize("change, message", [
    ({"n_eval": 30}, "at most 20 documents are rated per task"),
    ({"n_exemplars": 33}, "give at least 41 documents"),
    ({"topics": [5]}, "topic 5 does not exist"),
    ({"low_fraction": 0.0}, "low_fraction must be in (0, 1]"),
    ({"distractor_texts": ["  ", "\u200b"]}, "holds no text to show"),
    ({"texts": ["same"] * 40}, "fewer than 7 documents with different texts"),
])
def test_impossible_task_sets_are_one_line_errors(change, message):
    model = tl.synthetic.random_model(3, 60, seed=1)
    args = {"texts": [f"t{i}" for i in range(40)], "secret": SECRET} | change
    with pytest.raises(MethodError, match=None) as exc:
        proxann_tasks(model, designed(), **args)
    assert message in str(exc.value) and "\n" not in str(exc.value)


# ---- scores ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Two topics' tasks and hand-made answers: 3 careful annotators, one who rates the distractor
    5 (fails the check), one who stopped before ranking."""
    d = tmp_path_factory.mktemp("proxann")
    model = tl.synthetic.random_model(3, 60, seed=1)
    theta = designed()
    tasks = proxann_tasks(model, theta, texts=[f"t{i}" for i in range(40)], topics=[0, 1], seed=3,
                          secret=SECRET, instructed_check=True)
    write_proxann_tasks(tasks, d / "t.jsonl", d / "k.jsonl")
    rng = np.random.default_rng(11)
    rows, given = [], {}
    for a in ("ann", "bea", "cy", "dee", "eve"):
        for t in tasks:
            ratings, ranked = {}, []
            for doc in t.documents:
                if doc["role"] == "eval":
                    ratings[doc["id"]] = int(rng.integers(1, 6))
                elif doc["role"] == "distractor":
                    ratings[doc["id"]] = 5 if a == "dee" else 1
                else:
                    ratings[doc["id"]] = INSTRUCTED_RATING
            ranked = [x["id"] for x in sorted((x for x in t.documents if x["rank"]),
                                              key=lambda x: (-ratings[x["id"]], rng.random()))]
            given[a, t.item] = (ratings, ranked)
            stop = a == "eve" and t is tasks[1]
            for doc in t.documents:
                rank = None if stop or doc["id"] not in ranked else ranked.index(doc["id"]) + 1
                rows.append({"annotator": a, "item": t.item, "document": doc["id"],
                             "rating": ratings[doc["id"]], "rank": rank, "label": f"{a} label",
                             "clarity": 3})
    return {"dir": d, "tasks": tasks, "rows": rows, "given": given, "key": str(d / "k.jsonl")}


def test_scores_are_kendall_and_spearman_counted_here(study):
    res = score_proxann(study["key"], study["rows"], bootstrap=0)
    assert res.excluded_annotators == ["dee"] and res.attention_failures == {"dee": 2}
    assert res.incomplete == 1 and len(res.responses) == 7  # ann, bea, cy, eve x2, less eve's unranked one
    for t, topic in zip(study["tasks"], res.topics, strict=True):
        people = ["ann", "bea", "cy"] + (["eve"] if t is study["tasks"][0] else [])
        evals = [d for d in t.documents if d["role"] == "eval"]
        theta = [d["theta"] for d in evals]
        ratings = {a: [study["given"][a, t.item][0][d["id"]] for d in evals] for a in people}
        ranks = {a: [-study["given"][a, t.item][1].index(d["id"]) for d in evals] for a in people}
        mean = np.mean([ratings[a] for a in people], axis=0)
        mean_rank = np.mean([ranks[a] for a in people], axis=0)
        assert topic["annotators"] == len(people)
        assert topic["tau_fit"] == pytest.approx(tau_b(mean, theta), abs=1e-12)
        assert topic["tau_rank"] == pytest.approx(tau_b(mean_rank, theta), abs=1e-12)
        assert topic["spearman_fit"] == pytest.approx(rho(list(mean), theta), abs=1e-12)
        own = [tau_b(ratings[a], theta) for a in people]
        assert topic["annotator_tau_fit"] == pytest.approx(np.mean(own))
        loo = [tau_b(ratings[a], np.mean([ratings[b] for b in people if b != a], axis=0)) for a in people]
        assert topic["human_tau_fit"] == pytest.approx(np.mean(loo), abs=1e-12)
        distractor = [d["id"] for d in t.documents if d["role"] == "distractor"][0]
        last = [study["given"][a, t.item][1][-1] == distractor for a in people]
        assert topic["distractor_rating"] == 1.0 and topic["distractor_last"] == pytest.approx(np.mean(last))
    s = res.summary["synthetic"]
    assert s["tau_fit"] == pytest.approx(np.mean([t["tau_fit"] for t in res.topics]))


def test_fit_rating_agreement_is_the_krippendorff_package(study):
    res = score_proxann(study["key"], study["rows"], bootstrap=0)
    units = []
    for t in study["tasks"]:
        people = ["ann", "bea", "cy"] + (["eve"] if t is study["tasks"][0] else [])
        for d in (x for x in t.documents if x["role"] == "eval"):
            given = [study["given"][a, t.item][0][d["id"]] for a in people]
            units.append(given + [np.nan] * (4 - len(people)))
    data = np.array(units, dtype=float).T
    a = res.summary["synthetic"]["agreement"]
    for metric in ("interval", "ordinal"):
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement=metric,
                                 value_domain=[1, 2, 3, 4, 5])
        assert a[f"krippendorff_alpha_{metric}"] == pytest.approx(ref, abs=1e-12)
    assert a["items"] == 14


def test_more_failures_allowed_keeps_the_annotator(study):
    res = score_proxann(study["key"], study["rows"], max_attention_failures=2, bootstrap=0)
    assert res.excluded_annotators == [] and len(res.responses) == 9
    res = score_proxann(study["key"], study["rows"], distractor_max=4, bootstrap=0)
    assert res.excluded_annotators == ["dee"]  # rated 5 > 4


def test_a_constant_annotator_has_no_tau(study):
    t = study["tasks"][0]
    evals = {d["id"] for d in t.documents if d["role"] == "eval"}
    rows = [dict(r, rating=3) if r["item"] == t.item and r["annotator"] == "ann" and r["document"] in evals
            else r for r in study["rows"]]
    res = score_proxann(study["key"], rows, bootstrap=0)
    mine = [r for r in res.responses if r["annotator"] == "ann" and r["item"] == t.item][0]
    assert mine["tau_fit"] is None  # every evaluation document rated 3: no order


def test_cli_score_matches_the_library(study, tmp_path):
    import csv

    path = tmp_path / "answers.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, list(study["rows"][0]))
        w.writeheader()
        w.writerows({k: "" if v is None else v for k, v in r.items()} for r in study["rows"])
    code, out, err = run_cli(["proxann", "score", study["key"], path, "--json", tmp_path / "s.json",
                              "--csv", tmp_path / "s.csv", "--bootstrap", "200"])
    assert code == 0, err
    lib = score_proxann(study["key"], study["rows"], bootstrap=200)
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["summary"]["synthetic"]["tau_fit"] == pytest.approx(lib.summary["synthetic"]["tau_fit"])
    ci = doc["summary"]["synthetic"]["tau_fit_ci"]
    assert ci == pytest.approx(list(lib.summary["synthetic"]["tau_fit_ci"]))
    assert "excluded by attention checks: dee" in out and "1 incomplete" in out
    assert "Kendall tau with theta, mean fit rating: " in out and "(2 of 2 topics)" in out
    assert (tmp_path / "s.csv").read_text().count("\ndocument,") == 14


def _rows(study, **change):
    rows = [dict(r) for r in study["rows"]]
    rows[0].update(change)
    return rows


@pytest.mark.parametrize("change, message", [
    ({"rating": 6}, "row 1: rating 6 is out of range (1..5)"),
    ({"rating": "4"}, "row 1: rating '4' is text"),
    ({"rank": 0}, "row 1: rank 0 is out of range (>= 1)"),
    ({"label": "another label"}, "row 2: label 'ann label' differs from 'another label'"),
    ({"item": "i0000000000000000"}, "unknown item 'i0000000000000000'"),
    ({"document": "d99"}, "has no document 'd99'"),
    ({"annotator": " ann"}, "row 1: annotator ' ann' has white space"),
    ({"rating": None}, "is ranked but not rated"),
])
def test_bad_answers_are_one_line_errors(study, change, message):
    with pytest.raises((InputFileError, MethodError)) as exc:
        score_proxann(study["key"], _rows(study, **change), bootstrap=0)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_ranking_that_is_not_a_permutation_is_refused(study):
    rows = [dict(r) for r in study["rows"]]
    rows[1]["rank"] = rows[0]["rank"] or rows[2]["rank"]  # two documents at one place
    with pytest.raises(MethodError, match="is not a permutation"):
        score_proxann(study["key"], rows, bootstrap=0)
    with pytest.raises(MethodError, match="answered document 'd1'.* twice"):
        again = [dict(r) for r in study["rows"] if r["document"] == "d1"][:1]
        score_proxann(study["key"], study["rows"] + again, bootstrap=0)


def test_nothing_to_score_says_why(study):
    unranked = [dict(r, rank=None) for r in study["rows"]]
    with pytest.raises(MethodError, match="no response has a complete ranking"):
        score_proxann(study["key"], unranked, bootstrap=0)


# ---- the task set the app accepts ----------------------------------------------------------------

def _docs(*docs):
    return [{"id": i, "text": t, "rank": r} for i, t, r in docs]


def _task(**change):
    t = {"item": "p1", "kind": "proxann", "words": ["tax", "bank"], "exemplars": ["an example"],
         "documents": [{"id": "d1", "text": "one", "rank": True}, {"id": "d2", "text": "two", "rank": True}]}
    return t | change


@pytest.mark.parametrize("tasks, message", [
    ([_task(), {"item": "w", "kind": "word", "options": ["a", "b"]}], "a task set holds either"),
    ([_task(kind="picture")], "kind must be word, topic or proxann"),
    ([_task(model="m")], "looks like a key file"),
    ([_task(documents=[{"id": "d1", "text": "one", "rank": True, "theta": 0.5},
                       {"id": "d2", "text": "two", "rank": True}])], "looks like a key file"),
    ([_task(documents=_docs(("d1", "one", True)))], "needs a list of 2 to 20 documents, got 1"),
    ([_task(documents=_docs(("d1", "one", True), ("d1", "two", True)))], "id 'd1' appears twice"),
    ([_task(documents=_docs(("d1", "one", True), ("d2", "one ", True)))], "looks the same as document 0"),
    ([_task(documents=_docs(("d1", "one", True), ("d2", "two", False)))],
     "at least 2 documents must be ranked"),
    ([_task(documents=_docs(("<b>", "one", True), ("d2", "two", True)))], "id must be 1-20 letters"),
    ([_task(words=[])], "words must be a list of at least 1 strings"),
    ([_task(exemplars=["\u200b"])], "exemplars 0 is blank"),
    ([_task(exemplars=["nul \x00 here"])], "holds the control character U+0000"),
    ([_task(colour="red")], "unknown field 'colour'"),
    ([_task(), _task()], "the item appears twice"),
])
def test_unservable_proxann_task_sets_are_refused(tasks, message):
    with pytest.raises((InputFileError, MethodError)) as exc:
        check_task_set(tasks)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_cli_tasks_checks_formats_before_the_work_and_writes_a_servable_set(example, tmp_path):
    _, _, model_path, docs_path = example
    one_line_error(["proxann", "tasks", model_path, docs_path, "-o", tmp_path / "t.csv", "--key",
                    tmp_path / "k.jsonl"], "ProxAnn tasks are written as JSON lines")
    code, out, err = run_cli(["proxann", "tasks", model_path, docs_path, "-o", tmp_path / "t.jsonl", "--key",
                              tmp_path / "k.jsonl", "--exemplars", "3", "--eval-docs", "4", "--burn-in", "5",
                              "--samples", "10", "--quiet", "--instructed-check"])
    assert code == 0, err
    assert "5 ProxAnn tasks" in out and (tmp_path / "k.jsonl.secret").exists()
    from tealeaves.annotate.taskset import read_key as app_key
    from tealeaves.annotate.taskset import read_task_set

    tasks = read_task_set(tmp_path / "t.jsonl")
    assert check_task_set(tasks) == "proxann" and len(app_key(tmp_path / "k.jsonl", tasks)) == 5
    one_line_error(["proxann", "tasks", model_path, docs_path, "-o", tmp_path / "t2.jsonl", "--key",
                    tmp_path / "k2.jsonl", "--eval-docs", "30"],
                   "--eval-docs: must be an integer >= 2 and <= 18")
