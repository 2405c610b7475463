"""Posterior-mean theta against enumeration, the predictive metrics of section 4.2 against a direct
computation, the automated intrusion proxy against hand-computed NPMI, task/key files, plots and
the intrusion CLI."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import gammaln

import tealeaves as tl
from tealeaves.intrusion import (
    auto,
    check_key,
    infer_theta,
    predictive,
    read_key,
    read_responses,
    read_tasks,
    score,
    word_tasks,
    write_tasks,
)


def exact_posterior_theta(phi, alpha, words):
    """E[theta | w] = sum_z P(z | w) (n_z + alpha) / (N + A), by enumerating z."""
    T, N, A = phi.shape[0], len(words), alpha.sum()
    logp, means = [], []
    for z in itertools.product(range(T), repeat=N):
        n = np.bincount(z, minlength=T)
        logp.append(np.log(phi[list(z), words]).sum() + (gammaln(n + alpha) - gammaln(alpha)).sum())
        means.append((n + alpha) / (N + A))
    w = np.exp(np.array(logp) - max(logp))
    return (w[:, None] * np.array(means)).sum(0) / w.sum()


@pytest.mark.parametrize("seed", range(4))
def test_posterior_theta_matches_enumeration(seed):
    """The average of independent runs is within 4 standard errors of the exact posterior mean,
    per topic, in the model's own topic order (the kernels relabel topics per document)."""
    rng = np.random.default_rng(seed)
    T, V, N = 4, 10, 7
    phi = rng.dirichlet(np.full(V, 0.4), size=T)
    alpha = rng.uniform(0.1, 1.0, T)
    words = rng.integers(0, V, N)
    model = tl.TopicModel(phi, alpha)
    exact = exact_posterior_theta(phi, alpha, words)
    runs = np.array([infer_theta(model, [words], burn_in=20, samples=300, seed=s)[0] for s in range(40)])
    se = runs.std(axis=0, ddof=1) / math.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(0) - exact) < 4 * se + 1e-12), (runs.mean(0), exact, se)
    np.testing.assert_allclose(runs.sum(1), 1.0, atol=1e-12)


def test_posterior_theta_converges_and_empty_documents_get_the_prior():
    rng = np.random.default_rng(9)
    phi = rng.dirichlet(np.full(8, 0.3), size=3)
    alpha = np.array([0.2, 0.5, 1.3])
    words = np.array([0, 3, 3, 5, 7, 1])
    model = tl.TopicModel(phi, alpha)
    exact = exact_posterior_theta(phi, alpha, words)
    err = [np.abs(infer_theta(model, [words], samples=s, seed=1)[0] - exact).max() for s in (10, 100000)]
    assert err[1] < err[0] and err[1] < 0.01
    np.testing.assert_allclose(infer_theta(model, [[]])[0], alpha / alpha.sum())
    with pytest.raises(tl.MethodError, match="samples"):
        infer_theta(model, [words], samples=0)


def test_predictive_metrics_against_direct_computation():
    rng = np.random.default_rng(2)
    T, V = 5, 30
    phi = rng.dirichlet(np.full(V, 0.2), size=T)
    model = tl.TopicModel(phi, np.full(T, 0.3))
    docs = [rng.integers(0, V, n) for n in (12, 1, 0, 30)]
    theta = rng.dirichlet(np.ones(T), size=len(docs))
    res = predictive(model, docs, theta=theta)
    for d, words in enumerate(docs):
        if len(words) == 0:
            assert math.isnan(res.doc_log_lik[d]) and math.isnan(res.doc_rank[d])
            continue
        p = [sum(theta[d, t] * phi[t, w] for t in range(T)) for w in range(V)]
        assert res.doc_log_lik[d] == pytest.approx(sum(math.log(p[w]) for w in words) / len(words), abs=1e-12)
        ranks = [
            1 + sum(q > p[w] for q in p) + (sum(q == p[w] for q in p) - 1) / 2 for w in set(words.tolist())
        ]
        assert res.doc_rank[d] == pytest.approx(np.mean(ranks))
    assert res.empty_documents == 1 and res.tokens == 43
    assert res.log_likelihood == pytest.approx(np.nanmean(res.doc_log_lik))
    assert res.rank == pytest.approx(np.nanmean(res.doc_rank))
    json.dumps(res.to_dict())
    # the true topics predict their own documents better than a wrong point estimate
    model2 = tl.synthetic.random_model(6, 200, seed=5)
    docs2 = tl.synthetic.generate(model2, 10, 80, seed=6)
    good = predictive(model2, docs2, samples=100)
    flat = predictive(model2, docs2, theta=np.full((10, 6), 1 / 6))
    assert good.log_likelihood > flat.log_likelihood and good.rank < flat.rank
    with pytest.raises(tl.MethodError, match="theta must be"):
        predictive(model, docs, theta=theta[:2])
    with pytest.raises(tl.MethodError, match="negative or non-finite"):
        predictive(model, docs, theta=-theta)


def _npmi(docs, a, b, window):
    """NPMI over sliding windows (max(1, n - w + 1) per document), gensim's epsilon 1e-12, computed
    directly from the windows."""
    units = ca = cb = cab = 0
    for d in docs:
        for s in range(max(1, len(d) - window + 1)):
            win = set(d[s : s + window])
            units += 1
            ca += a in win
            cb += b in win
            cab += a in win and b in win
    pa, pb, pab = ca / units, cb / units, cab / units
    return math.log((pab + 1e-12) / (pa * pb)) / -math.log(pab + 1e-12)


def test_auto_predicts_the_word_that_does_not_co_occur():
    key = [
        {
            "item": "x",
            "kind": "word",
            "model": "M",
            "topic": 0,
            "intruder": 2,
            "options": ["apple", "pear", "bolt", "plum", "fig", "kiwi"],
        },
        {
            "item": "y",
            "kind": "word",
            "model": "M",
            "topic": 1,
            "intruder": 0,
            "options": ["apple", "nut", "bolt", "screw", "washer", "gear"],
        },
    ]
    fruit = "apple pear plum fig kiwi".split()
    tools = "nut bolt screw washer gear".split()
    rng = np.random.default_rng(0)
    reference = [list(rng.choice(fruit, 8)) for _ in range(30)] + [
        list(rng.choice(tools, 8)) for _ in range(30)
    ]
    reference += [["apple", "bolt"]]  # one rare crossing
    res = auto(key, reference, window=5)
    assert [it["predicted"] for it in res.items] == [2, 0]
    assert res.summary["M"]["model_precision"] == 1.0
    for it in res.items:
        for i, w in enumerate(it["options"]):
            others = [_npmi(reference, w, v, 5) for j, v in enumerate(it["options"]) if j != i]
            assert it["option_scores"][i] == pytest.approx(np.mean(others), abs=1e-9)
    # with human responses: majority picks and correlation with human model precision
    responses = [
        {"annotator": "a", "item": "x", "choice": 2},
        {"annotator": "b", "item": "x", "choice": 2},
        {"annotator": "a", "item": "y", "choice": 1},
        {"annotator": "b", "item": "y", "choice": 3},
        {"annotator": "c", "item": "y", "choice": 1},
    ]
    res = auto(key, reference, window=5, responses=responses)
    assert res.agreement["items_with_responses"] == 2
    assert res.agreement["majority_agreement"] == 0.5  # x: both chose 2 = predicted; y: majority 1 != 0
    assert res.agreement["pearson"] is None  # automated correctness is 1 on both topics: no variance


def test_auto_on_generated_tasks_absent_words_and_errors(tmp_path):
    model = tl.synthetic.random_model(6, 100, seed=1)
    docs = tl.synthetic.generate(model, 60, 50, seed=2)
    reference = [[model.vocab[w] for w in docs[d]] for d in range(len(docs))]
    res = auto(model, reference, seed=3)
    assert len(res.items) == 6 and 0 <= res.summary[model.name]["model_precision"] <= 1
    # the documents come from the model, so the proxy beats chance (1/6) on its own topics
    assert res.summary[model.name]["model_precision"] > 1 / 6
    tasks = word_tasks(model, seed=3)
    words_in_ref = {w for d in reference for w in d}
    trimmed = [[w for w in d if w != tasks[0].options[0]] for d in reference]
    res2 = auto(tasks, trimmed)
    assert tasks[0].item in res2.absent_items and res2.items[0]["predicted"] == 0
    assert tasks[0].options[0] in words_in_ref
    json.dumps(res2.to_dict())
    with pytest.raises(tl.MethodError, match="unknown measure"):
        auto(model, reference, measure="cosine")
    with pytest.raises(tl.MethodError, match="apply only when tasks are generated"):
        auto(tasks, reference, n_words=4)


def test_responses_by_option_text_checked_options_and_key_checks(tmp_path):
    key = [{"item": "w0", "kind": "word", "model": "A", "topic": 0, "intruder": 2, "options": list("abcdef")}]
    s = score(
        key,
        [
            {"annotator": "p", "item": "w0", "chosen": "c"},
            {"annotator": "q", "item": "w0", "choice": 1, "options": json.dumps(list("abcdef"))},
        ],
    )
    assert s.model_precision["A"][0] == 0.5 and s.item_choices == {"w0": [2, 1]}
    with pytest.raises(tl.MethodError, match="has no option 'z'"):
        score(key, [{"annotator": "p", "item": "w0", "chosen": "z"}])
    with pytest.raises(tl.MethodError, match="was shown with options"):
        score(key, [{"annotator": "p", "item": "w0", "choice": 1, "options": list("fedcba")}])
    with pytest.raises(tl.MethodError, match="missing field"):
        check_key([{"item": "w0", "kind": "word"}])
    with pytest.raises(tl.MethodError, match="intruder 7"):
        check_key([{**key[0], "intruder": 7}])
    with pytest.raises(tl.MethodError, match="does not match the tasks"):
        check_key(key, [{"item": "w0", "options": list("abcdeg")}])
    with pytest.raises(tl.MethodError, match="does not match the tasks"):
        check_key(key, [{"item": "w1", "options": list("abcdef")}])
    bad = tmp_path / "r.csv"
    bad.write_text("annotator,item,choice\np,w0,1\nq,w0\n")
    with pytest.raises(tl.InputFileError, match=r"r.csv:3: the row has a different number of fields"):
        read_responses(bad)
    bad.write_text("who,item,choice\np,w0,1\n")
    with pytest.raises(tl.InputFileError, match="lacks column"):
        read_responses(bad)


def test_topic_tasks_from_documents_and_task_errors():
    model = tl.synthetic.random_model(8, 200, seed=3)
    docs = tl.synthetic.generate(model, 4, 30, seed=1)
    secret = tl.intrusion.new_secret()
    from_docs = tl.intrusion.topic_tasks(model, docs, seed=5, samples=50, secret=secret)
    theta = infer_theta(model, docs, samples=50, seed=5)
    texts = [t.text for t in from_docs]
    from_theta = tl.intrusion.topic_tasks(model, theta, texts=texts, seed=5, secret=secret)
    assert [t.key() for t in from_docs] == [t.key() for t in from_theta]

    assert from_docs[0].text.split()[:3] == [model.vocab[w] for w in docs[0][:3]]
    with pytest.raises(tl.MethodError, match="document 9 does not exist"):
        tl.intrusion.topic_tasks(model, theta, documents=[9])
    with pytest.raises(tl.MethodError, match="2 texts for 4 documents"):
        tl.intrusion.topic_tasks(model, theta, texts=["a", "b"])
    small = tl.synthetic.random_model(3, 200, seed=1)
    with pytest.raises(tl.MethodError, match="needs at least 4 topics"):
        tl.intrusion.topic_tasks(small, np.full((2, 3), 1 / 3))
    with pytest.raises(tl.MethodError, match="the model has 5 words"):
        word_tasks(tl.synthetic.random_model(3, 5, seed=1))
    with pytest.raises(tl.MethodError, match="no vocabulary"):
        word_tasks(tl.TopicModel(model.phi, model.alpha))
    with pytest.raises(tl.MethodError, match="topic 8 does not exist"):
        word_tasks(model, topics=[8])


def test_csv_and_jsonl_task_files_read_back_equal(tmp_path):
    model = tl.synthetic.random_model(8, 200, seed=3)
    theta = np.random.default_rng(0).dirichlet(np.ones(8), size=3)
    tasks = word_tasks(model, seed=2, attention_checks=1) + tl.intrusion.topic_tasks(
        model, theta, texts=["first, document", 'a "quoted" one', "x\ny"], seed=2
    )
    write_tasks(tasks, tmp_path / "t.csv", tmp_path / "k.csv")
    write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl")
    assert read_tasks(tmp_path / "t.csv") == read_tasks(tmp_path / "t.jsonl") == [t.public() for t in tasks]
    assert read_key(tmp_path / "k.csv") == read_key(tmp_path / "k.jsonl") == [t.key() for t in tasks]
    check_key(read_key(tmp_path / "k.csv"), read_tasks(tmp_path / "t.csv"))
    items = [t.public()["item"] for t in tasks]
    assert len(set(items)) == len(items)
    assert not any(model.name in i or "attention" in i for i in items)  # ids tell annotators nothing


def test_plots_have_the_papers_panels(tmp_path):
    pytest.importorskip("matplotlib")
    key = [
        {"item": f"w{k}", "kind": "word", "model": m, "topic": k, "intruder": 0, "options": list("abcdef")}
        for m in ("A", "B")
        for k in range(4)
    ]
    key = [{**k, "item": k["model"] + k["item"]} for k in key]
    key += [
        {
            "item": f"d{d}",
            "kind": "topic",
            "model": "A",
            "document": d,
            "intruder": 0,
            "options": list("tuvw"),
            "option_log_theta": [-3.0, -1.0, -0.5, -2.0],
        }
        for d in range(3)
    ]
    rng = np.random.default_rng(0)
    responses = [
        {"annotator": f"p{a}", "item": k["item"], "choice": int(rng.integers(0, 3))}
        for a in range(5)
        for k in key
    ]
    s = score(key, responses, bootstrap=100)
    out = tmp_path / "fig.png"
    panels = tl.intrusion.plot_scores(s, out)
    assert len(panels) == 4 and out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _cli(*args, cwd=None):
    r = subprocess.run(
        [sys.executable, "-m", "tealeaves", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )
    return r.returncode, r.stdout, r.stderr


def test_intrusion_cli_round_trip(tmp_path):
    m, d = tmp_path / "m.npz", tmp_path / "d.txt"
    assert _cli("synth", m, d, "--topics", 8, "--words", 200, "--docs", 12, "--length", 40)[0] == 0
    code, out, err = _cli(
        "intrusion",
        "words",
        m,
        "-o",
        tmp_path / "w.jsonl",
        "--key",
        tmp_path / "wk.jsonl",
        "--attention-checks",
        1,
    )
    assert code == 0 and "9 tasks" in out, err
    code, out, err = _cli(
        "intrusion", "topics", m, d, "-o", tmp_path / "t.csv", "--key", tmp_path / "tk.csv", "--samples", 50
    )
    assert code == 0 and "12 tasks" in out, err
    key = read_key(tmp_path / "wk.jsonl")
    rows = [
        {
            "annotator": a,
            "item": k["item"],
            "choice": k["intruder"] if a == "good" or k["attention"] else (k["intruder"] + 1) % 6,
        }
        for a in ("good", "bad")
        for k in key
    ]
    with open(tmp_path / "r.csv", "w") as fh:
        fh.write(
            "annotator,item,choice\n" + "".join(f"{r['annotator']},{r['item']},{r['choice']}\n" for r in rows)
        )
    code, out, err = _cli(
        "intrusion", "score", tmp_path / "wk.jsonl", tmp_path / "r.csv", "--json", tmp_path / "s.json"
    )
    assert code == 0, err
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["summary"]["synthetic"]["model_precision"] == 0.5 and s["responses_used"] == 16
    code, out, err = _cli(
        "intrusion",
        "auto",
        tmp_path / "wk.jsonl",
        d,
        "--responses",
        tmp_path / "r.csv",
        "--json",
        tmp_path / "a.json",
    )
    assert code == 0 and "agreement with annotators" in out, err
    code, out, err = _cli("predictive", m, d, "--samples", 50)
    assert code == 0 and "predictive rank" in out, err
    for args, msg in [
        (("intrusion", "score", tmp_path / "wk.jsonl", d), "not valid JSON"),
        (("intrusion", "auto", m, d, "--responses", tmp_path / "r.csv"), "needs the key file"),
        (
            (
                "intrusion",
                "topics",
                m,
                d,
                "-o",
                tmp_path / "x.jsonl",
                "--key",
                tmp_path / "y.jsonl",
                "--theta",
                m,
            ),
            "cannot read a .npy",
        ),
        (("intrusion", "score", tmp_path / "tk.csv", tmp_path / "r.csv"), "unknown item"),
    ]:
        code, out, err = _cli(*args)
        assert code == 2 and msg in err and err.count("\n") == 1 and "Traceback" not in err, (args, err)
