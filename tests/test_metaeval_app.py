"""A study collected with the annotation app goes through the meta-evaluation (issue 34): simulated
annotators of known behaviour answer word-intrusion and ProxAnn tasks over HTTP on the real
`tealeaves annotate serve` (SQLite), `tealeaves annotate export` writes their answers, and
`tealeaves metaeval --responses --key` and `tealeaves evaluate --human` read the export.

What the tests know independently of the code under test: each topic's intruder-finding
probability (intrusion) or rating noise (ProxAnn), so the population correlation of a score with
the people's per-topic score is computed here by Monte Carlo with scipy (no tealeaves), and the
reported 95% interval must hold it; the people's per-topic scores recomputed from the export file
and the key with the csv module and scipy, so the reported estimate must equal scipy's on them."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from servers import AppServer

import tealeaves as tl
from tealeaves.annotate.simulate import intruder_finder, run_annotators, run_proxann_annotators, theta_rater
from tealeaves.intrusion import word_tasks, write_tasks
from tealeaves.proxann import proxann_tasks, write_proxann_tasks

TOPICS = 30
WORD_ANNOTATORS = 6  # and one careless annotator the attention checks exclude
PROXANN_ANNOTATORS = 5  # and one careless annotator
N_EVAL = 5
ACCURACY = np.random.default_rng(7).permutation(np.linspace(0.15, 0.95, TOPICS))
NOISE = np.random.default_rng(8).permutation(np.linspace(0.3, 2.5, TOPICS))


def _cli(*argv: str, ok: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "tealeaves", *argv], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def _export(srv: AppServer, out) -> str:
    _cli("annotate", "export", "--db", srv.cmd[srv.cmd.index("--db") + 1], "-o", str(out))
    return str(out)


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# -- the population values, by Monte Carlo (numpy and scipy only) -----------------------------------------

def population_intrusion(n: int = 400_000, seed: int = 1) -> float:
    """Spearman's rho between a topic's intruder-finding probability p (uniform over ACCURACY) and
    the share of WORD_ANNOTATORS annotators who find it."""
    rng = np.random.default_rng(seed)
    p = ACCURACY[rng.integers(0, TOPICS, n)]
    return float(stats.spearmanr(p, rng.binomial(WORD_ANNOTATORS, p) / WORD_ANNOTATORS).statistic)


def tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair, visiting every pair (NaN where a row is constant)."""
    i, j = np.triu_indices(x.shape[1], 1)
    dx, dy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    n0 = len(i)
    tx, ty = (dx == 0).sum(1), (dy == 0).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dx * dy).sum(1) / np.sqrt((n0 - tx) * (n0 - ty))


def population_proxann(n: int = 200_000, seed: int = 2) -> float:
    """Spearman's rho between -sigma (sigma uniform over NOISE) and the topic quality the
    PROXANN_ANNOTATORS annotators' mean fit gives: Kendall's tau-b of the mean fit of N_EVAL
    documents with their theta, each annotator's fit of the document in place r (0 = highest theta)
    round(1 + 4 (N_EVAL - 1 - r) / (N_EVAL - 1) + sigma e), clipped to 1..5 (`theta_rater`)."""
    rng = np.random.default_rng(seed)
    sigma = NOISE[rng.integers(0, TOPICS, n)]
    base = 1 + 4 * (N_EVAL - 1 - np.arange(N_EVAL)) / (N_EVAL - 1)
    noise = sigma[:, None, None] * rng.standard_normal((n, PROXANN_ANNOTATORS, N_EVAL))
    fits = np.clip(np.round(base + noise), 1, 5)
    quality = tau_b(fits.mean(axis=1), np.broadcast_to(-np.arange(N_EVAL, dtype=float), (n, N_EVAL)))
    ok = np.isfinite(quality)  # a topic whose mean fits are all equal has no quality: left out there too
    return float(stats.spearmanr(-sigma[ok], quality[ok]).statistic)


def test_population_values_by_hand():
    """The Monte Carlo targets themselves: a perfect rater makes the intrusion correlation
    Spearman(p, p) = 1; the ProxAnn value falls as annotators get noisier."""
    assert 0.6 < population_intrusion(50_000) < 0.95
    assert 0.3 < population_proxann(20_000) < 0.9
    x = np.array([[1.0, 2, 3, 4], [1, 1, 2, 2], [3, 3, 3, 3]])
    y = np.array([[1.0, 2, 3, 4], [4, 3, 2, 1], [1, 2, 3, 4]])
    got = tau_b(x, y)
    assert got[0] == pytest.approx(stats.kendalltau(x[0], y[0]).statistic)
    assert got[1] == pytest.approx(stats.kendalltau(x[1], y[1]).statistic)
    assert np.isnan(got[2])


# -- word intrusion ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def intrusion_study(tmp_path_factory):
    """30 word tasks and 2 attention checks of a synthetic model, answered in the app by 6
    annotators who find topic k's intruder with probability ACCURACY[k] and 1 who fails the
    attention checks; the export, the key, the model and texts for evaluate."""
    d = tmp_path_factory.mktemp("app-intrusion")
    model = tl.synthetic.random_model(TOPICS, 400, beta=0.05, seed=11)
    tl.save_model(model, d / "model.npz")
    docs = tl.synthetic.generate(model, 300, 40, seed=12)
    (d / "docs.txt").write_text("\n".join(" ".join(model.vocab[w] for w in doc) for doc in docs) + "\n")
    tasks = word_tasks(model, seed=3, attention_checks=2)
    write_tasks(tasks, d / "tasks.jsonl", d / "key.jsonl")
    key = [t.key() for t in tasks]
    finder = intruder_finder(key, {f"synthetic/{k}": p for k, p in enumerate(ACCURACY)}, seed=5)

    def chooser_for(who: str):
        if who != "careless0":
            return finder(who)
        return lambda task, step: 0 if next(k for k in key if k["item"] == task["item"])["intruder"] else 1

    with AppServer(str(d / "tasks.jsonl"), str(d / "app.sqlite"), key=str(d / "key.jsonl")) as srv:
        run_annotators(srv.url, WORD_ANNOTATORS, chooser_for=chooser_for, retry_every=5, prefix="sim")
        run_annotators(srv.url, 1, chooser_for=chooser_for, retry_every=0, prefix="careless")
        export = _export(srv, d / "export.csv")
    # the people's accuracy per topic, from the export and the key alone
    by_item = {k["item"]: k for k in key}
    right: dict[int, list[int]] = {}
    for r in _rows(export):
        k = by_item[r["item"]]
        if r["annotator"].startswith("sim") and not k["attention"]:
            right.setdefault(k["topic"], []).append(int(int(r["choice"]) == k["intruder"]))
    accuracy = np.array([np.mean(right[k]) for k in range(TOPICS)])
    scores = d / "scores.csv"
    scores.write_text("topic,true accuracy\n"
                      + "".join(f"synthetic/{k},{p}\n" for k, p in enumerate(ACCURACY)))
    return {"dir": d, "export": export, "key": str(d / "key.jsonl"), "scores": str(scores),
            "accuracy": accuracy, "answers": {k: len(v) for k, v in right.items()}}


def test_intrusion_study_recovers_the_known_agreement(intrusion_study):
    s = intrusion_study
    assert set(s["answers"].values()) == {WORD_ANNOTATORS}  # every topic, every careful annotator
    out = s["dir"] / "agree.json"
    r = _cli("metaeval", "--responses", s["export"], "--key", s["key"], "--scores", s["scores"],
             "--json", str(out))
    doc = json.loads(out.read_text())
    row = next(x for x in doc["rows"] if x["score"] == "true accuracy" and x["statistic"] == "spearman")
    assert row["topics"] == TOPICS and doc["judgment_task"] == "word-intrusion"
    # the estimate is scipy's on the accuracies recomputed from the export
    assert row["estimate"] == pytest.approx(stats.spearmanr(ACCURACY, s["accuracy"]).statistic, abs=1e-12)
    # the two-stage interval holds the population value
    truth = population_intrusion()
    assert row["low"] < truth < row["high"], (row, truth)
    # the careless annotator is left out and said so; the attention items are set aside and counted
    notes = " ".join(doc["study_notes"])
    assert "left out 1 annotator(s)" in notes and "careless0" in notes
    assert "set aside" in notes and "attention items" in notes
    assert "true accuracy" in r.stdout and "ceiling" in r.stdout


def test_evaluate_measures_agreement_on_the_study_topics(intrusion_study):
    """`evaluate --human EXPORT --human-key KEY`: each coherence measure's agreement with the
    people's intrusion accuracy on the study's topics (the model matched by its topics' words: its
    file name is not the name in the key), equal to scipy's on the JSON's per-topic values."""
    s, d = intrusion_study, intrusion_study["dir"]
    out = d / "eval.json"
    r = _cli("evaluate", str(d / "model.npz"), "--heldout", str(d / "docs.txt"), "--reference",
             str(d / "docs.txt"), "--measure", "npmi,umass", "--runs", "1", "--particles", "5", "--quiet",
             "--human", s["export"], "--human-key", s["key"], "--json", str(out),
             "--report", str(d / "eval.html"))
    doc = json.loads(out.read_text())
    h = doc["human"]
    assert h["kind"] == "measured" and h["judgment"] == "word-intrusion"
    per_topic = doc["topic_coherence"]["model.npz"]
    for measure in ("npmi", "umass"):
        m = h["metrics"][f"coherence.{measure}"]
        want = stats.spearmanr(per_topic[measure], s["accuracy"]).statistic
        assert m["estimate"] == pytest.approx(want, abs=1e-12) and m["topics"] == TOPICS
        assert m["low"] <= m["estimate"] <= m["high"]
    assert any("'synthetic' is the evaluated model 'model.npz'" in n for n in h["notes"])
    assert h["metrics"]["diversity"]["estimate"] is None  # a number per model: no per-topic agreement
    best = max(("coherence.npmi", "coherence.umass", "exclusivity"),
               key=lambda k: h["metrics"][k]["estimate"])
    assert h["trusted"]["metric"] == best
    assert "people (Spearman)" in r.stdout and "trusted for interpretability" in r.stdout
    html = (d / "eval.html").read_text()
    assert "Trusted for interpretability: " + h["metrics"][best]["label"] in html
    assert "Agreement with people" in html


# -- ProxAnn ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def proxann_study(tmp_path_factory):
    """30 ProxAnn tasks (2 exemplars, 5 evaluation documents, a distractor, an instructed check) of
    a synthetic model, answered in the app by 5 annotators whose fits follow theta with noise
    NOISE[k] (`theta_rater`) and 1 who rates the distractor 5 (excluded)."""
    d = tmp_path_factory.mktemp("app-proxann")
    model = tl.synthetic.random_model(TOPICS, 300, beta=0.05, seed=21)
    theta = np.random.default_rng(22).dirichlet(np.full(TOPICS, 0.2), size=400)
    rng = np.random.default_rng(23)
    texts = [f"Document {i}: " + " ".join(model.vocab[w] for w in rng.integers(0, 300, 15))
             for i in range(400)]
    tasks = proxann_tasks(model, theta, texts=texts, n_exemplars=2, n_eval=N_EVAL, instructed_check=True,
                          seed=4)
    write_proxann_tasks(tasks, d / "tasks.jsonl", d / "key.jsonl")
    key = [t.key() for t in tasks]
    rater = theta_rater(key, {f"synthetic/{k}": s for k, s in enumerate(NOISE)}, seed=6)
    distractor = {k["item"]: next(x["id"] for x in k["documents"] if x["role"] == "distractor") for k in key}

    def answer(who, task):
        label, clarity, ratings, ranking = rater(who, task)
        if who.startswith("careless"):
            ratings = {**ratings, distractor[task["item"]]: 5}
        return label, clarity, ratings, ranking

    with AppServer(str(d / "tasks.jsonl"), str(d / "app.sqlite"), key=str(d / "key.jsonl")) as srv:
        run_proxann_annotators(srv.url, PROXANN_ANNOTATORS, answer, prefix="sim")
        run_proxann_annotators(srv.url, 1, answer, prefix="careless")
        export = _export(srv, d / "export.csv")
    # the people's topic quality from the export and the key alone: tau-b of the mean fit with theta
    by_item = {k["item"]: k for k in key}
    fits: dict[tuple[int, str], list[float]] = {}
    for r in _rows(export):
        k = by_item[r["item"]]
        doc = next(x for x in k["documents"] if x["id"] == r["document"])
        if r["annotator"].startswith("sim") and doc["role"] == "eval":
            fits.setdefault((k["topic"], doc["id"]), []).append(float(r["rating"]))
    quality = np.full(TOPICS, np.nan)
    for k in key:
        evals = [x for x in k["documents"] if x["role"] == "eval"]
        means = [np.mean(fits[(k["topic"], x["id"])]) for x in evals]
        quality[k["topic"]] = stats.kendalltau(means, [x["theta"] for x in evals]).statistic
    scores = d / "scores.csv"
    scores.write_text("topic,minus noise\n" + "".join(f"synthetic/{k},{-s}\n" for k, s in enumerate(NOISE)))
    return {"dir": d, "export": export, "key": str(d / "key.jsonl"), "scores": str(scores),
            "quality": quality}


def test_proxann_study_recovers_the_known_agreement(proxann_study):
    s = proxann_study
    out = s["dir"] / "agree.json"
    r = _cli("metaeval", "--responses", s["export"], "--key", s["key"], "--scores", s["scores"],
             "--json", str(out), "--seed", "0")
    doc = json.loads(out.read_text())
    assert doc["judgment_task"] == "fit" and doc["quality"] == "theta"
    row = next(x for x in doc["rows"] if x["score"] == "minus noise" and x["statistic"] == "spearman")
    ok = np.isfinite(s["quality"])
    assert row["topics"] == ok.sum()
    want = stats.spearmanr(-NOISE[ok], s["quality"][ok]).statistic
    assert row["estimate"] == pytest.approx(want, abs=1e-12)
    truth = population_proxann()
    assert row["low"] < truth < row["high"], (row, truth)
    # ProxAnn's own statistics on the study: the human baseline, per topic and per document vs theta
    loo = doc["leave_one_out"]
    assert set(loo) == {"fit", "rank"} and loo["fit"]["topics"] == TOPICS and loo["fit"]["why"] is None
    assert -1 <= loo["fit"]["mean"] <= 1
    score = doc["proxann_score"]
    assert score["excluded_annotators"] == ["careless0"] and len(score["topics"]) == TOPICS
    per_topic = {t["topic"]: t["tau_fit"] for t in score["topics"]}
    for k in np.flatnonzero(ok):
        assert per_topic[int(k)] == pytest.approx(s["quality"][k], abs=1e-12)
    assert len(score["documents"]) == TOPICS * N_EVAL
    assert "left out 1 annotator(s)" in " ".join(doc["study_notes"])
    assert "human baseline of the topic ranking by fit" in r.stdout


def test_proxann_study_in_the_report(proxann_study, tmp_path):
    """The metaeval JSON of an app ProxAnn study, and `proxann score --json`, render: the model's
    figures, one chart and one table row per topic."""
    s = proxann_study
    agree, scored = tmp_path / "agree.json", tmp_path / "score.json"
    _cli("metaeval", "--responses", s["export"], "--key", s["key"], "--bootstrap", "200",
         "--json", str(agree))
    _cli("proxann", "score", s["key"], s["export"], "--bootstrap", "200", "--json", str(scored))
    for path in (agree, scored):
        html_path = tmp_path / (path.stem + ".html")
        _cli("report", str(path), "-o", str(html_path))
        html = html_path.read_text()
        assert "Per model: how well people" in html and html.count("<tr>") >= TOPICS + 2
        assert "Kendall tau of the mean fit with theta, per topic" in html
    assert "The human baseline of the topic ranking" in (tmp_path / "agree.html").read_text()


# -- bad input ----------------------------------------------------------------------------------------------

def _small_proxann(d, topics: int = 5, annotators: list[str] | None = None) -> tuple[str, str, list[dict]]:
    """A key of `topics` ProxAnn tasks and an export in the app's format (no server): each
    annotator answers every task (`theta_rater`, noise 1)."""
    from tealeaves.proxann import EXPORT_FIELDS

    model = tl.synthetic.random_model(topics, 200, beta=0.05, seed=31)
    theta = np.random.default_rng(32).dirichlet(np.full(topics, 0.3), size=120)
    texts = [f"Document {i}: " + " ".join(model.vocab[w] for w in range(i % 50, i % 50 + 12))
             for i in range(120)]
    tasks = proxann_tasks(model, theta, texts=texts, n_exemplars=2, n_eval=4, seed=1)
    write_proxann_tasks(tasks, d / "ptasks.jsonl", d / "pkey.jsonl")
    key = [t.key() for t in tasks]
    rater = theta_rater(key, 1.0, seed=2)
    rows = []
    for who in annotators or ["a", "b"]:
        for t in tasks:
            label, clarity, ratings, ranking = rater(who, t.public())
            for doc in t.public()["documents"]:
                rows.append({"annotator": who, "item": t.item, "document": doc["id"],
                             "rating": ratings[doc["id"]], "rank": ranking.index(doc["id"]) + 1,
                             "label": label, "clarity": clarity, "label_ms": 1, "rating_ms": 1, "rank_ms": 1,
                             "received_at": 1})
    with open(d / "pexport.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=EXPORT_FIELDS)
        w.writeheader()
        w.writerows(rows)
    return str(d / "pkey.jsonl"), str(d / "pexport.csv"), rows


def _one_line(r: subprocess.CompletedProcess, *want: str) -> str:
    err = r.stderr.strip()
    assert r.returncode == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    for w in want:
        assert w in err, err
    return err


def test_bad_app_input_is_one_line(tmp_path):
    d = tmp_path
    key, export, rows = _small_proxann(d)
    lines = (d / "pexport.csv").read_text().splitlines()

    def variant(name: str, text: str) -> str:
        (d / name).write_text(text)
        return str(d / name)

    # ragged: a row with a field more than the header
    ragged = variant("ragged.csv", "\n".join(lines[:3] + [lines[3] + ",extra"] + lines[4:]) + "\n")
    _one_line(_cli("metaeval", "--responses", ragged, "--key", key, ok=False),
              "ragged.csv:4: the row has a different number of fields than the header")
    # a rating off the 1-5 scale
    cells = lines[2].split(",")
    cells[3] = "7"
    off = variant("off.csv", "\n".join(lines[:2] + [",".join(cells)] + lines[3:]) + "\n")
    _one_line(_cli("metaeval", "--responses", off, "--key", key, ok=False),
              "off.csv:3: rating 7 is out of range")
    # a ranking that is not a permutation: the first response's first two documents share a place
    cells = lines[2].split(",")
    cells[4] = lines[1].split(",")[4]
    tie = variant("tie.csv", "\n".join(lines[:2] + [",".join(cells)] + lines[3:]) + "\n")
    _one_line(_cli("metaeval", "--responses", tie, "--key", key, ok=False),
              "tie.csv:2", "is not a permutation")
    # a worker answering the same document twice
    twice = variant("twice.csv", "\n".join(lines + [lines[1]]) + "\n")
    _one_line(_cli("metaeval", "--responses", twice, "--key", key, ok=False),
              f"twice.csv:{len(lines) + 1}", "answered document", "twice")
    # a key mixing ProxAnn and intrusion items
    word = word_tasks(tl.synthetic.random_model(3, 60, seed=1), seed=1)
    write_tasks(word, d / "wtasks.jsonl", d / "wkey.jsonl")
    mixed = variant("mixed.jsonl", (d / "pkey.jsonl").read_text() + (d / "wkey.jsonl").read_text())
    _one_line(_cli("metaeval", "--responses", export, "--key", mixed, ok=False),
              "mixed.jsonl:6: a intrusion item in a key whose first row", "a study is one family of tasks")
    # an intrusion export with a ProxAnn key, and the other way round
    wexport = variant("wexport.csv", "annotator,item,choice\nx," + word[0].item + ",0\n")
    _one_line(_cli("metaeval", "--responses", wexport, "--key", key, ok=False),
              "wexport.csv", "lacks column(s) document, rating, rank")
    _one_line(_cli("metaeval", "--responses", export, "--key", str(d / "wkey.jsonl"), ok=False),
              "pexport.csv: the header", "lacks a choice (or chosen) column")
    # half of an app study, or both kinds of study at once
    _one_line(_cli("metaeval", "--responses", export, ok=False),
              "needs both its export (--responses) and its task set's key (--key)")
    _one_line(_cli("metaeval", "hoyle2021", "--responses", export, "--key", key, ok=False), "not both")
    _one_line(_cli("metaeval", ok=False), "give a study")
    # a key of topic-intrusion items only: nothing about topics
    from tealeaves.intrusion import infer_theta, topic_tasks

    m = tl.synthetic.random_model(5, 60, seed=1)
    docs = tl.synthetic.generate(m, 6, 20, seed=2)
    topic_only = topic_tasks(m, infer_theta(m, docs, burn_in=10, samples=20),
                             texts=[" ".join(m.vocab[w] for w in doc) for doc in docs], seed=1)
    write_tasks(topic_only, d / "ttasks.jsonl", d / "tkey.jsonl")
    texport = variant("texport.csv", "annotator,item,choice\nx," + topic_only[0].item + ",0\n")
    _one_line(_cli("metaeval", "--responses", texport, "--key", str(d / "tkey.jsonl"), ok=False),
              "no word-intrusion item about a topic")


def test_too_few_topics_and_annotators_say_so(tmp_path):
    """Five topics, one annotator each: the estimate with "needs at least 10" for its interval, the
    ceiling and the human baseline n/a with the size they need; nothing crashes."""
    key, export, _ = _small_proxann(tmp_path, annotators=["solo"])
    scores = tmp_path / "s.csv"
    scores.write_text("topic,x\n" + "".join(f"synthetic/{k},{k}\n" for k in range(5)))
    out = tmp_path / "a.json"
    r = _cli("metaeval", "--responses", export, "--key", key, "--scores", str(scores), "--bootstrap", "100",
             "--json", str(out))
    doc = json.loads(out.read_text())
    row = next(x for x in doc["rows"] if x["statistic"] == "spearman")
    assert row["low"] is None and "needs at least 10" in row["why"]
    assert "0 topics with two or more annotators: the split-half ceiling needs at least 10" in r.stdout
    assert "a topic ranking needs at least 10" in doc["leave_one_out"]["fit"]["why"]


def test_evaluate_human_refuses_a_study_of_other_models(tmp_path):
    """A study whose model neither shares a name nor holds the topics' words of an evaluated model
    is a one-line error; `--human-key` without `--human` too."""
    key, export, _ = _small_proxann(tmp_path)
    other = tl.synthetic.random_model(4, 200, beta=0.05, seed=99)
    tl.save_model(other, tmp_path / "m.npz")
    docs = tmp_path / "d.txt"
    docs.write_text("w001 w002 w003\nw004 w005 w001\n")
    model_path = str(tmp_path / "m.npz")
    _one_line(_cli("evaluate", model_path, "--heldout", str(docs), "--human", export, "--human-key", key,
                   "--runs", "1", "--particles", "5", "--quiet", ok=False),
              "the study's model 'synthetic' is not among the evaluated models (m.npz) and none of them "
              "holds")
    _one_line(_cli("evaluate", model_path, "--heldout", str(docs), "--human-key", key, "--quiet", ok=False),
              "human_key is the key of the annotation app's export given as human")


def test_a_forged_proxann_score_is_refused_by_the_report(tmp_path):
    key, export, _ = _small_proxann(tmp_path)
    good = tmp_path / "good.json"
    _cli("proxann", "score", key, export, "--bootstrap", "50", "--json", str(good))
    doc = json.loads(good.read_text())
    doc["topics"][3]["tau_fit"] = "high"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    _one_line(_cli("report", str(bad), "-o", str(tmp_path / "r.html"), ok=False),
              "bad.json: not a result the report can read: field topics[3].tau_fit: expected a number or "
              "null")
