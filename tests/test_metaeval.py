"""Meta-evaluation statistics (tealeaves.metaeval): correlations against scipy, bootstrap intervals
that cover at their rate on simulated data with a known population correlation, a ceiling equal
to the known reliability of simulated raters, paired comparisons that hold their level, the
alternative-annotator test against hand computation and against ProxAnn's published figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as ss
from published import PROXANN_TABLE3

import tealeaves as tl
from tealeaves.errors import MethodError
from tealeaves.judgments import Judgments, Scale, TopicSet
from tealeaves.metaeval import (
    agreement,
    alt_test,
    benjamini_yekutieli,
    document_agreement,
    judge_scores,
    leave_one_out,
)
from tealeaves.metaeval.stats import correlation_rows

REAL = Scale("real", -100, 100)


def simulated(rng, n=30, k=5, rho=0.5, noise=1.0, scores=1):
    """Topic quality Q ~ N(0, 1); a score with corr(score, Q) = rho; k raters per topic answering
    Q + N(0, noise^2). The population correlation of the score with the k-rater mean is
    rho / sqrt(1 + noise^2 / k)."""
    q = rng.standard_normal(n)
    s = [rho * q + math.sqrt(1 - rho**2) * rng.standard_normal(n) for _ in range(scores)]
    answers = q[:, None] + noise * rng.standard_normal((n, k))
    topics = TopicSet(tuple(f"t{i}" for i in range(n)))
    j = Judgments("rating", REAL, topics, tuple(f"a{i}" for i in range(n * k)), np.repeat(np.arange(n), k),
                  np.arange(n * k), np.full(n * k, -1), answers.reshape(-1))
    return s, j, q, answers


@pytest.mark.parametrize("n", [2, 3, 7, 24, 150, 250])
def test_correlations_match_scipy(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, (40, n)).astype(float)
    y = x + rng.integers(0, 3, (40, n))
    y[::3] = rng.standard_normal(y[::3].shape)  # rows without ties, rows with many
    x[1] = 1.0  # a row without spread
    want = {"kendall": ss.kendalltau, "spearman": ss.spearmanr, "pearson": ss.pearsonr}
    for name, f in want.items():
        got = correlation_rows(name, x, y)
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = np.array([f(a, b)[0] for a, b in zip(x, y, strict=True)])
        assert np.array_equal(np.isnan(got), np.isnan(ref))
        assert np.nanmax(np.abs(got - ref)) < 1e-12


def test_intervals_cover_at_their_rate():
    """95 % two-stage bootstrap intervals of Spearman, Pearson and Kendall with the 5-rater mean,
    30 topics, rho 0.5: coverage within 3 Monte Carlo SE (0.027 at 600 data sets) of 0.95. The
    population values: r = rho / sqrt(1 + 1/5); rho_s = 6/pi asin(r/2); tau = 2/pi asin(r)."""
    rng = np.random.default_rng(11)
    r = 0.5 / math.sqrt(1 + 1 / 5)
    truth = {"pearson": r, "spearman": 6 / math.pi * math.asin(r / 2), "kendall": 2 / math.pi * math.asin(r)}
    runs = 600
    hits = dict.fromkeys(truth, 0)
    for i in range(runs):
        s, j, _, _ = simulated(rng)
        res = agreement({"m": s[0]}, j, bootstrap=250, seed=i, ceiling=False)
        for stat, t in truth.items():
            row = res.get("m", "all", stat)
            hits[stat] += row["low"] <= t <= row["high"]
    se = math.sqrt(0.95 * 0.05 / runs)
    for stat, h in hits.items():
        assert abs(h / runs - 0.95) < 3 * se, (stat, h / runs)


def test_ceiling_equals_the_known_reliability():
    """Raters Q + N(0, 1.5^2), 8 per topic: the reliability of their mean is 1 / (1 + 2.25/8) =
    0.780 and the correlation of the true quality with it sqrt(0.780) = 0.883 (the ceiling). The
    split-half estimate, Spearman-Brown corrected, averaged over 20 simulated studies of 300 topics,
    is within 3 standard errors of it, for Pearson and (through Pearson's scale) Spearman."""
    rng = np.random.default_rng(5)
    rel = 1 / (1 + 1.5**2 / 8)
    got = {"pearson": [], "spearman": []}
    direct = []
    for i in range(20):
        s, j, q, answers = simulated(rng, n=300, k=8, noise=1.5)
        res = agreement({"m": s[0]}, j, bootstrap=0, seed=i, statistics=("pearson", "spearman"))
        for c in res.ceiling:
            got[c["statistic"]].append(c["reliability"])
        direct.append(ss.pearsonr(q, answers.mean(axis=1))[0])
    for stat, values in got.items():
        v = np.asarray(values)
        assert abs(v.mean() - rel) < 3 * v.std(ddof=1) / math.sqrt(len(v)), (stat, v.mean(), rel)
    # the ceiling is the correlation the true quality reaches with the raters' mean
    assert abs(np.mean(direct) - math.sqrt(rel)) < 0.01
    assert res.ceiling[0]["ceiling"] == pytest.approx(math.sqrt(res.ceiling[0]["reliability"]))


def test_ceiling_interval():
    rng = np.random.default_rng(3)
    s, j, _, _ = simulated(rng, n=60, k=6, noise=1.0)
    res = agreement({"m": s[0]}, j, bootstrap=400)
    c = res.ceiling[0]
    assert c["low"] < c["ceiling"] < c["high"] and c["high"] <= 1


def test_paired_comparison_holds_its_level():
    """Two scores with the same population correlation: the paired bootstrap test rejects
    at 5 % in about 5 % of 200 simulated studies (within 3 SE, 0.046); a score equal to the truth
    beats a noisy one every time."""
    rng = np.random.default_rng(8)
    rejected = 0
    runs = 200
    for i in range(runs):
        s, j, _, _ = simulated(rng, n=40, k=5, scores=2)
        res = agreement({"a": s[0], "b": s[1]}, j, bootstrap=300, seed=i, statistics=("spearman",),
                        ceiling=False)
        rejected += res.comparisons[0]["p"] < 0.05
    assert abs(rejected / runs - 0.05) < 3 * math.sqrt(0.05 * 0.95 / runs)
    s, j, q, _ = simulated(rng, n=40, k=5)
    res = agreement({"truth": q, "noisy": s[0]}, j, bootstrap=500, statistics=("spearman",), ceiling=False)
    cmp = res.comparisons[0]
    assert cmp["difference"] > 0 and cmp["low"] > 0 and cmp["p"] < 0.01
    same = agreement({"x": s[0], "y": s[0]}, j, bootstrap=100, statistics=("spearman",), ceiling=False)
    assert same.comparisons[0]["difference"] == 0 and same.comparisons[0]["p"] == 1.0


def test_per_corpus_and_pooled():
    study = tl.load_judgments("hoyle2021")
    res = agreement({"npmi": study.metric("c_npmi_10_full")}, study["rating"], bootstrap=50)
    assert res.groups == ["wikitext", "nytimes", "all"]
    assert [r["topics"] for r in res.rows if r["statistic"] == "spearman"] == [150, 150, 300]
    mean = study["rating"].topic_means()
    want = ss.spearmanr(study.metric("c_npmi_10_full"), mean)[0]
    assert res.get("npmi")["estimate"] == pytest.approx(want, abs=1e-12)


def test_too_few_topics_say_so():
    rng = np.random.default_rng(1)
    s, j, _, _ = simulated(rng, n=7, k=3)
    res = agreement({"m": s[0]}, j, bootstrap=100)
    row = res.get("m")
    assert row["estimate"] is not None and row["low"] is None
    assert "7 topics" in row["why"] and "at least 10" in row["why"]
    assert "at least 10" in res.ceiling[0]["why"]


def test_topics_left_out_are_counted():
    rng = np.random.default_rng(2)
    s, j, _, _ = simulated(rng, n=20, k=3)
    score = s[0].copy()
    score[:3] = np.nan
    res = agreement({"m": score}, j, bootstrap=20)
    assert res.get("m")["topics"] == 17 and "3 topics have no value of m" in res.notes[0]
    # a topic no one answered is left out and counted
    unanswered = j.select(j.topic != 0)
    res = agreement({"m": s[0]}, unanswered, bootstrap=20)
    assert res.get("m")["topics"] == 19 and res.notes[0] == "1 of 20 topics have no answers: left out"
    with pytest.raises(MethodError, match="has 5 values for the judgments' 20 topics"):
        agreement({"m": score[:5]}, j)


# -- ProxAnn ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bills():
    return tl.load_judgments("proxann2025:bills")


def test_topic_quality_is_tau_with_the_model(bills):
    """A topic's quality: Kendall's tau-b of the people's mean fit with the model's 0/1
    assignments, recomputed here with scipy from the answers."""
    j = bills["fit"]
    got = judge_scores(j, "assigned")
    docs = j.documents
    for t in range(j.n_topics):
        rows = docs.of(t, "evaluated")
        mean = [j.value[(j.topic == t) & (j.item == docs.item[r])].mean() for r in rows]
        assert got[t] == pytest.approx(ss.kendalltau(mean, docs.assigned[rows])[0], abs=1e-12)


def test_leave_one_out_baseline_as_published(bills):
    """ProxAnn's Table 4, Bills, human row (100 leave-one-out draws, theta): fit 0.10 +- 0.12,
    rank 0.18 +- 0.10; our 100 draws' mean within 0.05 (3 SE of a difference of two such means)."""
    for task, published in (("fit", 0.10), ("rank", 0.18)):
        res = leave_one_out(bills[task], "theta", repeats=100, seed=0)
        assert abs(res["mean"] - published) < 0.05, (task, res["mean"])


def test_alt_test_reproduces_proxann(bills):
    """The published advantage probabilities within 0.015 (the pseudo-annotators are random: the
    authors' draws cannot be repeated) and the same judges passing the t-test. Ranks compared as
    the authors do: 8 - rank, a document below the distractor counted 1."""
    def flip(v):
        return np.maximum(1, 8 - v)

    for judge, published in PROXANN_TABLE3.items():
        got = []
        for level in ("document", "topic"):
            for task in ("fit", "rank"):
                got.append(alt_test(bills.judges[judge][task], bills[task], epsilon=0.1, level=level,
                                    pseudo="dataset", resamples=10, seed=42,
                                    transform=flip if task == "rank" else None))
        for g, p in zip(got, published, strict=True):
            assert abs(g["advantage_probability"] - float(p.rstrip("*"))) < 0.015, (judge, p, g)
            assert (g["winning_rate"] > 0.5) == p.endswith("*"), (judge, p, g["winning_rate"])


def test_alt_test_by_hand():
    """Three annotators, one judge, four documents of one topic (each annotator a real person):
    the indicators computed here directly from the definitions."""
    values = np.array([[1, 2, 3, 4], [1, 3, 3, 5], [2, 2, 4, 4]], dtype=float)  # annotators x documents
    judge = np.array([1.2, 2.4, 3.1, 4.4])
    topics = TopicSet(("t",))
    n_a, n_d = values.shape
    people = Judgments("fit", REAL, topics, ("x", "y", "z"), np.zeros(n_a * n_d, int),
                       np.repeat(np.arange(n_a), n_d), np.tile(np.arange(n_d), n_a), values.reshape(-1))
    llm = Judgments("fit", REAL, topics, ("run",), np.zeros(n_d, int), np.zeros(n_d, int), np.arange(n_d),
                    judge)
    res = alt_test(llm, people, epsilon=0.2, level="document", min_instances=1, test="ttest")
    for a, row in zip("xyz", res["per_annotator"], strict=True):
        k = "xyz".index(a)
        others = np.delete(values, k, axis=0)
        s_h = -np.sqrt(((values[k] - others) ** 2).mean(axis=0))
        s_f = -np.sqrt(((judge - others) ** 2).mean(axis=0))
        wf, wh = (s_f >= s_h).astype(float), (s_h >= s_f).astype(float)
        assert row["advantage"] == pytest.approx(wf.mean())
        d = wh - wf
        if np.all(d == d[0]):
            p = 0.0 if d[0] < 0.2 else 1.0
        else:
            p = ss.ttest_1samp(d, 0.2, alternative="less").pvalue
        assert row["p"] == pytest.approx(p)
    assert res["annotators"] == 3 and res["why"] is None


def test_benjamini_yekutieli():
    """m = 4, q = 0.05, H_4 = 25/12: thresholds i/4 * 0.05 / H_4 = 0.006, 0.012, 0.018, 0.024;
    m = 2, H_2 = 3/2: 0.01667, 0.03333 (a step-up: the second p under its threshold rejects both)."""
    assert benjamini_yekutieli(np.array([0.5, 0.001, 0.02, 0.01])).tolist() == [False, True, False, True]
    assert benjamini_yekutieli(np.array([0.0167, 0.3])).tolist() == [False, False]
    assert benjamini_yekutieli(np.array([0.0166, 0.3])).tolist() == [True, False]
    assert benjamini_yekutieli(np.array([0.03, 0.033])).tolist() == [True, True]


def test_document_agreement(bills):
    """A judge answering the people's own mean agrees perfectly; the human baseline is below 1."""
    people = bills["fit"]
    oracle = people.select(np.ones(len(people), bool))
    res = document_agreement(oracle, people, bootstrap=50)
    assert res["mean"] == pytest.approx(1.0) and res["human_baseline"] < 0.8
    llm = document_agreement(bills.judges["gpt-4o-2024-08-06"]["fit"], people, bootstrap=50)
    assert 0 < llm["mean"] < 1 and llm["low"] <= llm["mean"] <= llm["high"]


def test_a_judge_of_another_size_is_refused(bills):
    with pytest.raises(MethodError, match="answered"):
        alt_test(bills.judges["Qwen3-8B"]["fit"], tl.load_judgments("hoyle2021")["rating"])


def test_reference_file_is_read():
    ref = json.loads((Path(__file__).parent / "fixtures" / "judgments_reference.json").read_text())
    assert len(ref["hoyle2021"]["correlation_results_head"]) == 104
