"""`tl.evaluate` / `tealeaves evaluate`: every number equals the separate command run with the same
seed (held-out likelihood, coherence, Ratio-AIS for the pair with equal topics when asked), models with
different vocabularies are scored on exactly the same tokens, and the ranking follows the
comparisons."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.corpus import write_text_corpus
from tealeaves.evaluate import rank_groups

SEED = 3


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("eval")
    c = datasets.sotu()
    paths = []
    for name in datasets.SOTU_MODELS:  # 20 (asymmetric), 20 (symmetric) and 50 topics
        tl.save_model(datasets.sotu_model(name), d / f"{name}.npz")
        paths.append(d / f"{name}.npz")
    write_text_corpus(c.heldout.subset(range(30)), d / "heldout.txt")
    write_text_corpus(c.train.subset(range(1500)), d / "ref.txt")
    return d, paths


def _cli(*args):
    r = subprocess.run([sys.executable, "-m", "tealeaves", *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_evaluate_equals_the_individual_commands(saved):
    d, paths = saved
    out = _cli("evaluate", *paths, "--heldout", d / "heldout.txt", "--reference", d / "ref.txt", "--seed",
               SEED, "--particles", 20, "--compare", "ratio-ais", "--json", d / "ev.json", "--csv",
               d / "ev.csv", "--quiet")
    ev = json.loads((d / "ev.json").read_text())
    assert "coherence fingerprint: gensim convention, top 10; npmi 10 one-one absent=skip" in out
    assert f"reference {d / 'ref.txt'} sha256:" in out
    rows = {r["model"]: r for r in ev["rows"]}
    for p in paths:
        _cli("heldout", p, d / "heldout.txt", "--runs", 2, "--seed", SEED, "--particles", 20, "--json",
             d / "h.json", "--quiet")
        h = json.loads((d / "h.json").read_text())["results"][0]
        r = rows[p.name]
        assert r["per_token"] == pytest.approx(h["per_token"], rel=1e-12)
        assert r["perplexity"] == pytest.approx(h["perplexity"], rel=1e-12)
        _cli("coherence", p, d / "ref.txt", "--measure", "npmi,umass", "--json", d / "c.json")
        coh = {x["measure"]: x["mean"] for x in json.loads((d / "c.json").read_text())["results"]}
        for x in json.loads((d / "c.json").read_text())["results"]:  # the same number, told comparable
            assert tl.comparable({"fingerprint": ev["params"]["coherence_fingerprint"][x["measure"]]}, x)
        assert r["coherence"]["npmi"] == pytest.approx(coh["npmi"], rel=1e-12)
        assert r["coherence"]["umass"] == pytest.approx(coh["umass"], rel=1e-12)
        _cli("diversity", p, "--json", d / "dv.json")
        assert r["diversity"] == pytest.approx(json.loads((d / "dv.json").read_text())["diversity"])
    pair = next(c for c in ev["comparisons"] if c["method"] == "ratio-ais")
    assert {pair["a"], pair["b"]} == {"sotu-20-asym.npz", "sotu-20-sym.npz"}
    _cli("compare", paths[0], paths[1], d / "heldout.txt", "--seed", SEED, "--json", d / "cmp.json")
    cmp = json.loads((d / "cmp.json").read_text())["result"]
    assert pair["per_token"] == pytest.approx(cmp["per_token"], rel=1e-12)
    assert pair["per_token_interval"] == pytest.approx(cmp["per_token_interval"], rel=1e-12)
    assert sum(c["method"] == "difference" for c in ev["comparisons"]) == 2  # 20 against 50 topics
    csv_lines = (d / "ev.csv").read_text().splitlines()
    assert len(csv_lines) == 4 and "coherence_npmi" in csv_lines[0]


def test_python_result_converts(saved):
    d, paths = saved
    res = tl.evaluate(paths[:2], heldout=d / "heldout.txt", compare_models="difference", particles=10)
    frame = res.to_frame()
    assert list(frame.index) == res.names and "per_token" in frame.columns
    assert "EvaluationResult(2 models" in repr(res) and "<pre>" in res._repr_html_()
    assert np.isnan(res.rows[0]["auto_model_precision"])  # no reference: no coherence, no proxy
    assert json.loads(json.dumps(res.to_dict()))["task"] == "evaluate"


def test_different_vocabularies_are_scored_on_the_same_tokens():
    full = datasets.sotu_model("sotu-20-asym")
    keep = np.arange(full.num_words) >= 40  # the second model lacks the first 40 words
    phi = full.phi[:, keep] / full.phi[:, keep].sum(axis=1, keepdims=True)
    small = tl.TopicModel(phi, full.alpha, vocab=[w for w, k in zip(full.vocab, keep, strict=True) if k],
                          name="small")
    docs = datasets.sotu().heldout.subset(range(40))
    lost = int(np.isin(docs.words, np.flatnonzero(~keep)).sum())
    assert lost > 0
    res = tl.evaluate([full, small], heldout=docs, particles=10)
    assert res.scoring["oov_tokens"] == lost and res.scoring["tokens"] == docs.num_tokens - lost
    assert res.scoring["words_only_in_model"] == {full.name: 40, "small": 0}
    assert {r["tokens"] for r in res.rows} == {docs.num_tokens - lost}
    # the same tokens scored by the full model alone, with its own word ids
    kept_docs = [d[~np.isin(d, np.flatnonzero(~keep))] for d in docs]
    alone = tl.heldout(full, kept_docs, runs=2, seed=0, particles=10)
    assert res.rows[0]["total"] == pytest.approx(alone.total, rel=1e-12)


def test_rank_groups_follow_the_comparisons():
    worse = {("a", "b"): False, ("a", "c"): True, ("b", "c"): True}
    assert rank_groups(["c", "a", "b"], [-7.3, -7.0, -7.1], worse) == [["a", "b"], ["c"]]
    assert rank_groups(["a", "b"], [-7.0, -7.1], {}) == [["a", "b"]]
