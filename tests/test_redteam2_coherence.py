"""Red team 2's findings on coherence, the report and what a model provides (findings 11, 12, 23,
24, 33, 34, 37, 39), each reproduced: the expected values are worked out by hand in the tests."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.errors import InputFileError, InvalidModelError
from tealeaves.heldout.logistic_normal import prior_factor
from tealeaves.report import load_results, render
from tealeaves.topics import Topics, why_not

TWO = np.array([[0.5, 0.5], [0.5, 0.5]])


def _generative(weights, kind, decoder, **prior):
    prior = prior or {"prior": "dirichlet", "alpha": np.ones(len(weights))}
    return Topics("m", "test", vocab=("a", "b"), weights=np.asarray(weights, dtype=float), weights_kind=kind,
                  decoder=decoder, **prior)


def test_mixture_needs_distributions_product_of_experts_any_log_weights():
    """Finding 12: a mixture of signed or unnormalised weights is no likelihood; a product of
    experts takes any finite log-weights."""
    for kind, w in (("signed", [[-1.0, 2.0]]), ("nonnegative", [[2.0, 3.0]])):
        reason = why_not("heldout", _generative(w, kind, "mixture"))
        assert reason is not None and "not probabilities" in reason
        assert why_not("heldout", _generative(w, kind, "product-of-experts")) is None
    assert why_not("heldout", _generative([[0.25, 0.75]], "distributions", "mixture")) is None


@pytest.mark.parametrize("cov, says", [(-np.eye(2), "not positive semi-definite"),
                                       (np.array([[1.0, 5.0], [0.0, 1.0]]), "not symmetric")])
def test_logistic_normal_prior_needs_a_covariance(cov, says):
    """Finding 12: a cov that is not symmetric PSD is refused by Topics and by the estimator's
    prior_factor alike (one check)."""
    with pytest.raises(InvalidModelError, match=says):
        _generative(TWO, "distributions", "mixture", prior="logistic-normal", mean=np.zeros(2), cov=cov)
    with pytest.raises(InvalidModelError, match=says):
        prior_factor(np.zeros(2), cov)
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])  # PSD, rank 1: allowed
    t = _generative(TWO, "distributions", "mixture", prior="logistic-normal", mean=np.zeros(2), cov=singular)
    assert why_not("heldout", t) is None


def test_coherence_and_diversity_take_topics():
    """Findings 11: a Topics of weights (not LDA) goes to coherence and diversity as its ranked words."""
    w = np.array([[0.6, 0.3, 0.1, 0.0], [0.0, 0.1, 0.3, 0.6]])
    t = Topics("m", "test", vocab=("a", "b", "c", "d"), weights=w, weights_kind="nonnegative")
    ref = [["a", "b"], ["a", "b"], ["c", "d"], ["a", "c", "d"]]
    res = tl.coherence(t, ref, measure="umass", topn=2)
    assert res.topics == [["a", "b"], ["d", "c"]]
    # umass (gensim form, eps 1e-12): log((D(w2, w1) + eps) / D(w1)): a/b 2 of 3, d/c 2 of 2
    assert res.per_topic == pytest.approx([math.log(2 / 3), math.log(1.0)], abs=1e-9)
    assert tl.diversity(t, topn=2) == 1.0  # 4 distinct words among 2 x 2
    assert tl.diversity(t, topn=3) == pytest.approx(4 / 6)  # a b c, d c b


def test_heldout_of_a_logistic_normal_topics():
    """Finding 39: tl.heldout takes a CTM-like Topics (its estimator is AIS over eta)."""
    t = _generative(TWO, "distributions", "mixture", prior="logistic-normal", mean=np.zeros(2), cov=np.eye(2))
    r = tl.heldout(t, [[0, 1]], runs=2, seed=1, temperatures=5)
    # every topic gives each word 1/2, whatever theta: P = 1/4 exactly
    assert r.run_log_prob == pytest.approx(np.full((2, 1), math.log(0.25)), abs=1e-9)


def _tiny(tmp_path):
    ref = tmp_path / "tiny.txt"
    ref.write_text("a b c d\na b e\nc d e f\n")
    topics = tmp_path / "t.txt"
    topics.write_text("a b c\nd e f\n")
    return str(topics), str(ref)


def test_palmetto_stand_ins_are_said_in_terminal_and_json(tmp_path, capsys):
    """Finding 23: on 3 short documents every count is below Palmetto's minimum (100 windows of
    10): the 0.0000 scores come with a note per topic and a warning, in the terminal and JSON."""
    topics, ref = _tiny(tmp_path)
    out = tmp_path / "c.json"
    assert main(["coherence", topics, ref, "--convention", "palmetto", "--measure", "uci,c_v",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "! topic 0 uci: 3 of its 3 words and 3 of its 3 word pairs are below Palmetto's minimum" in text
    assert "warning: every score is mostly stand-ins" in text
    assert "uci (palmetto): 6 of 6 top words and 6 of 6 word pairs below its minimum frequency" in text
    doc = json.loads(out.read_text())
    for r in doc["results"]:
        assert r["noted_topics"] == 2
        assert [t["below_min_frequency"] for t in r["topics"]] == [["a", "b", "c"], ["d", "e", "f"]]
        assert all("not a measurement" in t["note"] for t in r["topics"])


def test_palmetto_epsilon_values_counted():
    """Finding 23: a pair below the minimum frequency scores log(eps / P) (about -27): counted and
    noted; a pair above it is a measurement, not noted. 10 documents 'a x', 10 'b y': umass counts
    documents, minimum 10."""
    ref = [["a", "x"]] * 10 + [["b", "y"]] * 10
    r = tl.coherence([["a", "b"], ["a", "x"]], ref, measure="umass", convention="palmetto")
    assert r.per_topic[0] == pytest.approx(math.log(1e-12 / 0.5))
    assert r.per_topic[1] == pytest.approx(math.log((0.5 + 1e-12) / 0.5))
    first, second = r.coverage
    assert first["epsilon_values"] == 1 and first["pairs_below_min_frequency"] == 1
    assert "not a measurement" in first["note"]
    assert second["epsilon_values"] == 0 and second["note"] is None
    assert r.to_dict()["noted_topics"] == 1


def test_c_a_probability_above_one_is_noted():
    """Finding 37: one document of 60 tokens (w0..w5 ten times) and 12 one-token documents 'w0':
    C_A's N = 72 tokens - 13 documents x 4 = 20, w0 occurs 22 times: P(w0) = 1.1."""
    ref = [[f"w{i % 6}" for i in range(60)]] + [["w0"]] * 12
    r = tl.coherence([["w0", "w1", "w2"], ["w3", "w4", "w5"]], ref, measure="c_a", convention="palmetto")
    assert r.units == 20
    assert r.coverage[0]["probability_above_one"] == [{"word": "w0", "count": 22}]
    assert "N = 20 is smaller than w0's 22 context windows" in r.coverage[0]["note"]
    assert "P = 1.1 is not a probability" in r.coverage[0]["note"]
    assert r.coverage[1]["probability_above_one"] == []


def test_report_shows_each_convention_and_fingerprint(tmp_path):
    """Finding 33: two NPMI results under two conventions are told apart in the report; an
    unknown convention or measure is refused."""
    topics, ref = _tiny(tmp_path)
    docs = []
    for conv in ("tealeaves", "gensim", "palmetto"):
        res = tl.coherence(topics, ref, measure="npmi", convention=conv)
        docs.append({"command": "coherence", "model": "t", "results": [res.to_dict()]})
    for i, d in enumerate(docs):
        (tmp_path / f"{i}.json").write_text(json.dumps(d))
    html = render(load_results([str(tmp_path / f"{i}.json") for i in range(3)]))
    for conv in ("tealeaves", "gensim", "palmetto"):
        assert f"NPMI ({conv} convention)" in html
        assert f"fingerprint: {conv} convention" in html
    assert "not a measurement" in html  # the Palmetto notes in the topic table
    bad = json.loads(json.dumps(docs[0]))
    bad["results"][0]["params"]["convention"] = "bogus"
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(InputFileError, match="unknown convention 'bogus'"):
        render(load_results([str(tmp_path / "bad.json")]))
    bad = json.loads(json.dumps(docs[0]))
    bad["results"][0]["measure"] = "c_zz"
    (tmp_path / "bad2.json").write_text(json.dumps(bad))
    with pytest.raises(InputFileError, match="'c_zz' is not a measure of the tealeaves convention"):
        render(load_results([str(tmp_path / "bad2.json")]))


def test_measure_twice_refused_and_help_names_every_measure(tmp_path, capsys):
    """Finding 34."""
    topics, ref = _tiny(tmp_path)
    assert main(["coherence", topics, ref, "--measure", "umass,umass"]) == 2
    assert "--measure names 'umass' twice" in capsys.readouterr().err
    assert main(["coherence", "--help"]) == 0
    assert "C_P, C_A" in " ".join(capsys.readouterr().out.split())


def test_gensim_mean_says_it_leaves_out_nan_topics(tmp_path, capsys):
    """Finding 24: the terminal says the mean is over the topics with a score."""
    ref = tmp_path / "tiny.txt"
    ref.write_text("a b c d\na b e\nc d e f\n")
    topics = tmp_path / "t.txt"
    topics.write_text("a zz\nc d e\n")
    assert main(["coherence", str(topics), str(ref), "--measure", "npmi", "--convention", "gensim"]) == 0
    assert "mean npmi: over the 1 of 2 topics with a score" in capsys.readouterr().out
