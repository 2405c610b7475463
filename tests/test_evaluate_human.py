"""Each metric's agreement with people beside it in `evaluate` (issue 34, point 6): the figures a
bundled study carries over are the experiment's (read here from its JSON, not from the package), a
user's study is matched to the models by name or by its topics' words and measured on those topics
(checked against scipy on the aligned values), the trusted metric and its reasons, the terminal
row and the recommendation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import tealeaves as tl
from tealeaves.coherence import topic_words
from tealeaves.errors import MethodError
from tealeaves.evaluate import EvaluateOptions
from tealeaves.evaluate.human import agreement_row, carried, lines, match_models, measured, people, trusted
from tealeaves.judgments import Scale, Study, TopicSet, from_rows
from tealeaves.report import recommend

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT = ROOT / "experiments" / "results" / "human_agreement.json"


def test_carried_figures_are_the_experiments():
    """NPMI and UMass against Hoyle et al.'s ratings, as experiments/human_agreement.py measured them
    (its JSON read here directly), with the convention said; other columns say why they have none."""
    r = json.loads(EXPERIMENT.read_text())["carry_over"]["rating"]
    want = {x["score"]: x for x in r["rows"] if x["group"] == "all" and x["statistic"] == "spearman"}
    ceiling = next(c for c in r["ceiling"] if c["group"] == "all" and c["statistic"] == "spearman")
    h = carried("hoyle2021", ["coherence.npmi", "coherence.umass", "exclusivity", "diversity"])
    for key, col in (("coherence.npmi", "c_npmi_10_full"), ("coherence.umass", "u_mass_full")):
        m = h["metrics"][key]
        assert (m["estimate"], m["low"], m["high"], m["topics"]) == (
            want[col]["estimate"], want[col]["low"], want[col]["high"], 300)
        assert m["ceiling"] == ceiling["ceiling"]
        # computed by gensim's CoherenceModel: tealeaves' default convention (over the authors' reference)
        assert m["same_convention"] and "default convention" not in m["text"] and "gensim" in m["how"]
    assert h["metrics"]["exclusivity"]["estimate"] is None
    assert "not measured against people in Hoyle et al. 2021" in h["metrics"]["exclusivity"]["why"]
    assert "a number per model" in h["metrics"]["diversity"]["why"]
    pair = next(c for c in h["comparisons"] if {c["a"], c["b"]} == {"coherence.npmi", "coherence.umass"})
    x = next(c for c in r["comparisons"] if c["group"] == "all" and c["statistic"] == "spearman"
             and {c["a"], c["b"]} == {"c_npmi_10_full", "u_mass_full"})
    assert pair["difference"] == x["difference"]
    t = trusted(h)
    assert t["metric"] == "coherence.npmi" and "better than UMass" in t["why"]


def test_proxann_carries_tealeaves_own_measure_first():
    """On the ProxAnn topics tealeaves' own NPMI (its exact counts, not the default convention: the
    line says so) is the headline, the authors' kept beside it."""
    h = carried("proxann2025:bills", ["coherence.npmi"])
    m = h["metrics"]["coherence.npmi"]
    assert not m["same_convention"]
    assert 'tealeaves\' NPMI (its exact counts, convention="tealeaves")' in m["how"]
    assert "not tealeaves' default convention" in m["text"]
    assert m["statistic"] == "kendall" and m["topics"] == 24
    assert any("authors" in o["how"] for o in m["other"])


def test_trusted_says_why_or_that_none_is():
    base = {"statistic": "spearman", "where": "a study, 40 of these models' topics", "text": "..."}
    metrics = {"coherence.npmi": {**base, "label": "NPMI", "estimate": 0.5, "low": 0.2, "high": 0.7},
               "coherence.umass": {**base, "label": "UMass", "estimate": 0.3, "low": -0.1, "high": 0.6},
               "diversity": {"label": "diversity", "estimate": None, "why": "per model"}}
    tie = {"a": "coherence.umass", "b": "coherence.npmi", "difference": -0.2, "low": -0.45, "high": 0.05}
    t = trusted({"metrics": metrics, "comparisons": [tie]})
    assert t["metric"] == "coherence.npmi"
    assert "not separated from UMass by it (paired difference 0.20 [-0.05, 0.45])" in t["why"]
    apart = {**tie, "low": -0.45, "high": -0.05}
    assert "better than UMass" in trusted({"metrics": metrics, "comparisons": [apart]})["why"]
    weak = {"coherence.npmi": {**metrics["coherence.npmi"], "low": -0.1}}
    assert "its interval includes no agreement at all" in trusted({"metrics": weak})["why"]
    few = {"coherence.npmi": {**metrics["coherence.npmi"], "low": None, "high": None, "topics": 6}}
    got = trusted({"metrics": few})
    assert got["metric"] is None and "6 topics, too few for an interval (at least 10)" in got["why"]
    assert trusted({"metrics": {"diversity": metrics["diversity"]}}) is None


def _topics(model: str, ks, words_of) -> TopicSet:
    return TopicSet(tuple(f"{model}/{k}" for k in ks), tuple(tuple(words_of[k][:5]) for k in ks))


def test_models_are_matched_by_name_or_by_words():
    words = {"lda": [[f"a{k}{i}" for i in range(60)] for k in range(4)],
             "nmf": [[f"b{k}{i}" for i in range(60)] for k in range(4)]}
    assert match_models(_topics("lda", [0, 2], words["lda"]), words) == ({"lda": "lda"}, [])
    got, notes = match_models(_topics("model.npz", [1, 3], words["nmf"]), words)
    assert got == {"model.npz": "nmf"} and "'model.npz' is the evaluated model 'nmf'" in notes[0]
    with pytest.raises(MethodError, match="the words shown .* are not among the top 50 of model 'lda'"):
        match_models(_topics("lda", [0], words["nmf"]), words)
    with pytest.raises(MethodError, match="model 'lda' has 4 topics"):
        match_models(TopicSet(("lda/7",), (("a70",),)), words)
    with pytest.raises(MethodError, match="is not among the evaluated models .* none of them"):
        match_models(_topics("other", [0], [[f"c{i}" for i in range(9)]]), words)
    with pytest.raises(MethodError, match="is not MODEL/K"):
        match_models(TopicSet(("topic-one",)), words)


def test_measured_equals_scipy_on_the_aligned_topics():
    """A user's ratings of 12 topics of two models: the agreement of a per-topic score is scipy's
    Spearman on the values aligned by hand; a score with too few topics says so."""
    rng = np.random.default_rng(3)
    words = {m: [[f"{m}{k}w{i}" for i in range(60)] for k in range(8)] for m in ("a", "b")}
    ids = [(m, k) for m in ("a", "b") for k in (0, 1, 2, 4, 5, 7)]
    topics = TopicSet(tuple(f"{m}/{k}" for m, k in ids), tuple(tuple(words[m][k][:5]) for m, k in ids))
    rows = [{"topic": f"{m}/{k}", "annotator": f"p{j}", "value": int(rng.integers(1, 4))}
            for m, k in ids for j in range(4)]
    study = Study("mine", topics, {"rating": from_rows(rows, "rating", Scale("ordinal", 1, 3), topics)})
    score = {m: rng.normal(size=8).tolist() for m in ("a", "b")}
    few = {"a": [1.0, 2.0, 3.0] + [None] * 5}  # 3 of the 12 topics: an estimate, no interval
    two = {"b": [1.0, 2.0] + [None] * 6}
    h = measured(study, {"s": score, "few": few, "two": two}, words, bootstrap=200)
    means = study["rating"].topic_means()
    want = stats.spearmanr([score[m][k] for m, k in ids], means).statistic
    s = h["metrics"]["s"]
    assert s["estimate"] == pytest.approx(want, abs=1e-12) and s["topics"] == 12 and s["low"] is not None
    f = h["metrics"]["few"]
    assert f["estimate"] == pytest.approx(stats.spearmanr([1, 2, 3], means[:3]).statistic, abs=1e-12)
    assert f["low"] is None and "needs at least 10" in f["why"] and f["topics"] == 3
    assert h["metrics"]["two"]["estimate"] is None and "too few" in h["metrics"]["two"]["why"]
    assert h["judgment"] == "rating" and h["kind"] == "measured"


def test_any_per_topic_score_gets_its_agreement():
    """The mechanism takes any per-topic score (a judge's column, issue 35) beside the metrics."""
    model = tl.synthetic.random_model(12, 300, beta=0.05, seed=5)
    words = topic_words(model, 5)
    rng = np.random.default_rng(4)
    topics = TopicSet(tuple(f"synthetic/{k}" for k in range(12)), tuple(tuple(w) for w in words))
    rows = [{"topic": f"synthetic/{k}", "annotator": f"p{j}", "value": int(rng.integers(1, 4))}
            for k in range(12) for j in range(3)]
    study = Study("mine", topics, {"rating": from_rows(rows, "rating", Scale("ordinal", 1, 3), topics)})
    judge = rng.normal(size=12)
    extra = {"judge:an-llm": {"synthetic": judge.tolist()}}
    h = people(study, [model], {"synthetic": {"coherence": {}}}, extra, columns=["diversity"], bootstrap=100)
    want = stats.spearmanr(judge, study["rating"].topic_means()).statistic
    assert h["metrics"]["judge:an-llm"]["estimate"] == pytest.approx(want, abs=1e-12)
    assert h["metrics"]["judge:an-llm"]["label"] == "an-llm"
    assert h["metrics"]["exclusivity"]["estimate"] is not None
    assert h["metrics"]["diversity"]["estimate"] is None
    # the LLM judge's columns as evaluate keeps them per topic (evaluate.judged): the same path
    mp = rng.random(12)
    h = people(study, [model], {"synthetic": {"coherence": {}, "judge": {"word-intrusion": mp.tolist()}}},
               bootstrap=100)
    got = h["metrics"]["judge_model_precision"]
    assert got["estimate"] == pytest.approx(stats.spearmanr(mp, study["rating"].topic_means()).statistic,
                                            abs=1e-12)
    assert got["label"] == "the LLM judge's intrusion (judge MP)"
    row = agreement_row({**h, "statistic": "spearman"}, ["model", "judge MP"], [])
    assert row == ["people (Spearman)", f"{got['estimate']:.2f}"]


def test_table_row_lines_and_recommendation():
    h = carried("hoyle2021", ["coherence.npmi", "exclusivity", "diversity"])
    h["trusted"] = trusted(h)
    row = agreement_row(h, ["model", "K", "npmi", "diversity", "exclusivity", "pred. rank"], ["npmi"])
    assert row == ["people (Spearman)", "", "0.43", "n/a", "?", ""]
    text = "\n".join(lines(h))
    assert "carried over from a bundled study (other topics than yours)" in text
    assert "trusted for interpretability: NPMI" in text
    rows = [{"model": "a", "per_token": -7.0, "coherence": {"npmi": 0.10}, "exclusivity": 9.0},
            {"model": "b", "per_token": -7.1, "coherence": {"npmi": 0.12}, "exclusivity": 9.5}]
    doc = {"rows": rows, "groups": [["a"], ["b"]], "human": h}
    _, reasons = recommend.evaluate(doc)
    said = [r for r in reasons if r.startswith("Trusted for interpretability: NPMI")]
    assert said and "By it, b scores best (not the held-out choice" in said[0]
    _, reasons = recommend.evaluate({"rows": rows, "groups": [["a"], ["b"]]})
    assert any("no interpretability metric's agreement with people was measured here" in r for r in reasons)


def test_options_check_human():
    assert EvaluateOptions(human="hoyle2021").to_dict()["human"] == "hoyle2021"
    with pytest.raises(MethodError, match="human must be a bundled study's name"):
        EvaluateOptions(human=3)
    with pytest.raises(MethodError, match="human_key is the key of the annotation app's export"):
        EvaluateOptions(human_key="key.jsonl")
    with pytest.raises(MethodError, match="human_bootstrap"):
        EvaluateOptions(human="hoyle2021", human_bootstrap=-1)
