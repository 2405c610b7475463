"""Agreement between annotators, exact tests and the sample-size planner for intrusion studies
(issue 26, point 5): checked against published worked examples, peer libraries (krippendorff,
statsmodels through a committed fixture, scipy.stats) and brute-force enumeration written here."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from clirun import one_line_error, run_cli
from scipy import stats

import tealeaves as tl
from tealeaves.errors import InputFileError, MethodError
from tealeaves.intrusion import (
    agreement,
    chance_test,
    fleiss_kappa,
    krippendorff_alpha,
    permutation_test,
    plan_intrusion,
    score,
    statistics_lines,
)
from tealeaves.intrusion.agreement import NEEDS_TWO, ONE_VALUE
from tealeaves.intrusion.plan import intra_item_correlation

FIXTURES = Path(__file__).parent / "fixtures"

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers, 12
# units, values 1..5, missing values; nominal alpha = 0.743 as published
KRIPPENDORFF_2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
                     [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]


def _by_item(matrix: list[list[int | None]]) -> dict[str, list[int]]:
    """Observers x units (None missing) as item -> chosen values (0-based)."""
    units = len(matrix[0])
    return {str(u): [row[u] - 1 for row in matrix if row[u] is not None] for u in range(units)}


def _reliability(choices: dict[str, list[int]], raters: int) -> np.ndarray:
    """item -> values as the raters x units matrix the krippendorff package reads (nan missing)."""
    out = np.full((raters, len(choices)), np.nan)
    for u, ch in enumerate(choices.values()):
        out[:len(ch), u] = ch
    return out


# ---- agreement ----------------------------------------------------------------------------------

def test_krippendorff_alpha_is_the_published_worked_example():
    assert round(krippendorff_alpha(_by_item(KRIPPENDORFF_2011)), 3) == 0.743


def test_fleiss_kappa_is_fleiss_1971_and_statsmodels():
    cases = json.loads((FIXTURES / "statsmodels_fleiss_kappa.json").read_text())["cases"]
    assert cases[0]["name"] == "fleiss-1971"
    for case in cases:
        choices = {str(i): [c for c, n in enumerate(row) for _ in range(n)]
                   for i, row in enumerate(case["table"])}
        ours = fleiss_kappa(choices, len(case["table"][0]))
        assert ours == pytest.approx(case["statsmodels_kappa"], abs=1e-12), case["name"]
    assert round(fleiss_kappa({str(i): [c for c, n in enumerate(r) for _ in range(n)]
                               for i, r in enumerate(cases[0]["table"])}, 5), 3) == 0.210  # Fleiss 1971


def test_krippendorff_alpha_matches_the_krippendorff_package_with_missing_and_varying_raters():
    rng = np.random.default_rng(3)
    for trial in range(20):
        items, raters, cats = rng.integers(3, 40), rng.integers(2, 8), rng.integers(2, 7)
        choices = {}
        for u in range(items):
            easy = rng.integers(cats)
            n = rng.integers(1, raters + 1)  # some items have one answer: both leave them out
            choices[str(u)] = [int(easy) if rng.random() < 0.6 else int(rng.integers(cats)) for _ in range(n)]
        if why := agreement(choices)["note"]:
            assert why in (NEEDS_TWO, ONE_VALUE)
            continue
        peer = krippendorff.alpha(reliability_data=_reliability(choices, raters),
                                  level_of_measurement="nominal", value_domain=list(range(cats)))
        assert krippendorff_alpha(choices) == pytest.approx(peer, abs=1e-10), trial


@pytest.mark.parametrize("metric", ["interval", "ordinal"])
def test_rating_alpha_matches_the_krippendorff_package(metric):
    """Ratings 1..5 (ProxAnn's fit ratings): interval and ordinal alpha, missing values and a
    varying number of raters, against the krippendorff package; a scale with unused values (the
    ordinal metric counts only the values seen, the interval one their distance)."""
    from tealeaves.intrusion.agreement import rating_agreement

    rng = np.random.default_rng(7)
    for trial in range(20):
        items, raters = int(rng.integers(3, 30)), int(rng.integers(2, 7))
        ratings = {}
        for u in range(items):
            centre = int(rng.integers(1, 6))
            n = int(rng.integers(1, raters + 1))
            ratings[str(u)] = [int(np.clip(centre + rng.integers(-1, 2), 1, 5)) if rng.random() < 0.7
                               else int(rng.choice([1, 2, 5])) for _ in range(n)]
        out = rating_agreement(ratings, 5)
        if out["note"]:
            continue
        data = _reliability({u: [r for r in rs] for u, rs in ratings.items()}, raters)
        peer = krippendorff.alpha(reliability_data=data, level_of_measurement=metric,
                                  value_domain=[1, 2, 3, 4, 5])
        assert out[f"krippendorff_alpha_{metric}"] == pytest.approx(peer, abs=1e-10), trial


def test_rating_agreement_refuses_ratings_off_the_scale():
    from tealeaves.intrusion.agreement import rating_agreement

    with pytest.raises(MethodError, match="rating 6 is not a whole number in 1..5"):
        rating_agreement({"u": [1, 6]}, 5)
    assert rating_agreement({"u": [3], "v": [4]}, 5)["note"] == NEEDS_TWO


def test_perfect_agreement_on_different_positions_is_one():
    a = agreement({"x": [0, 0, 0], "y": [1, 1], "z": [3, 3, 3, 3]})
    assert a["krippendorff_alpha"] == pytest.approx(1.0) and a["fleiss_kappa"] == pytest.approx(1.0)
    assert a["note"] is None and a["items"] == 3 and a["answers"] == 9


@pytest.mark.parametrize("choices,why", [
    ({"x": [2], "y": [0]}, NEEDS_TWO),  # one rater per item
    ({}, NEEDS_TWO),  # no items
    ({"x": [], "y": [1]}, NEEDS_TWO),  # an empty item
    ({"x": [1, 1, 1], "y": [1, 1]}, ONE_VALUE),  # everyone agrees on one position: expected disagreement 0
])
def test_undefined_agreement_says_why_instead_of_nan(choices, why):
    a = agreement(choices)
    assert a["note"] == why and a["note"].startswith("n/a, ")
    assert a["fleiss_kappa"] is None and a["krippendorff_alpha"] is None


# ---- exact tests --------------------------------------------------------------------------------

@pytest.mark.parametrize("right,answers,options",
                         [(0, 10, 6), (4, 6, 6), (30, 60, 4), (59, 80, 6), (7, 7, 2)])
def test_chance_test_is_scipys_binomial_test(right, answers, options):
    t = chance_test([1] * right + [0] * (answers - right), [options] * answers)
    assert t["p_value"] == pytest.approx(stats.binomtest(right, answers, 1 / options, "greater").pvalue,
                                         rel=1e-12)


def test_chance_test_with_items_of_different_sizes_is_brute_force_enumeration():
    options = [2, 4, 4, 6, 6, 6, 3, 5]
    for right in range(len(options) + 1):
        correct = [1] * right + [0] * (len(options) - right)
        brute = 0.0  # every outcome of guessing, with its probability
        for outcome in itertools.product([0, 1], repeat=len(options)):
            if sum(outcome) >= right:
                brute += math.prod(1 / o if w else 1 - 1 / o for w, o in zip(outcome, options, strict=True))
        assert chance_test(correct, options)["p_value"] == pytest.approx(brute, abs=1e-14), right


def _brute_force(a, b):
    """Two-sided p (twice the smaller one-sided p) over every split of the pooled items."""
    pooled, diffs = np.concatenate([a, b]), []
    for idx in itertools.combinations(range(len(pooled)), len(a)):
        rest = np.delete(pooled, idx)
        diffs.append(pooled[list(idx)].mean() - rest.mean())
    diffs, obs = np.array(diffs), np.mean(a) - np.mean(b)
    less, greater = np.mean(diffs <= obs + 1e-12), np.mean(diffs >= obs - 1e-12)
    return min(1.0, 2 * min(less, greater)), greater


def test_permutation_test_is_brute_force_enumeration_and_scipys_permutation_test():
    rng = np.random.default_rng(5)
    for _ in range(8):
        a, b = rng.normal(0.3, 1, rng.integers(2, 8)), rng.normal(0, 1, rng.integers(2, 8))
        t = permutation_test(a, b)
        assert t["exact"] and t["arrangements"] == math.comb(a.size + b.size, a.size)
        brute, greater = _brute_force(a, b)
        assert t["p_value"] == pytest.approx(brute, abs=1e-12) and t["p_greater"] == pytest.approx(greater)
        peer = stats.permutation_test((a, b), lambda x, y, axis: x.mean(axis) - y.mean(axis),
                                      permutation_type="independent", n_resamples=np.inf, vectorized=True)
        assert t["p_value"] == pytest.approx(peer.pvalue, abs=1e-12)


def test_one_answer_per_item_gives_fishers_exact_test():
    """With 0/1 item scores, the one-sided permutation p-value is Fisher's exact test's."""
    for right_a, n_a, right_b, n_b in [(6, 8, 2, 8), (5, 6, 1, 8), (2, 9, 2, 4)]:
        a, b = [1] * right_a + [0] * (n_a - right_a), [1] * right_b + [0] * (n_b - right_b)
        table = [[right_a, n_a - right_a], [right_b, n_b - right_b]]
        fisher = stats.fisher_exact(table, alternative="greater")
        assert permutation_test(a, b)["p_greater"] == pytest.approx(fisher.pvalue, rel=1e-12)


def test_monte_carlo_permutation_p_is_within_its_stated_error_of_the_exact_one():
    rng = np.random.default_rng(11)
    a, b = rng.normal(0.8, 1, 9), rng.normal(0, 1, 9)  # 48,620 splits
    exact = permutation_test(a, b)
    mc = permutation_test(a, b, permutations=20_000, seed=2, exact_limit=0)
    assert exact["exact"] and not mc["exact"] and mc["permutations"] == 20_000
    smaller = min(exact["p_less"], exact["p_greater"])
    assert mc["monte_carlo_se"] == pytest.approx(2 * math.sqrt(smaller * (1 - smaller) / 20_000), rel=0.1)
    assert abs(mc["p_value"] - exact["p_value"]) <= 4 * mc["monte_carlo_se"]


@pytest.mark.parametrize("call,part", [
    (lambda: permutation_test([], [1.0]), "needs items in both groups"),
    (lambda: permutation_test([1.0, float("nan")], [1.0]), "finite values"),
    (lambda: chance_test([1, 0], [6, 1]), "needs at least 2"),
    (lambda: chance_test([], []), "at least one answer"),
])
def test_exact_tests_refuse_what_they_cannot_test(call, part):
    with pytest.raises(MethodError, match=part):
        call()


# ---- scores: terminal, JSON, CSV, report ---------------------------------------------------------

def _word_key(model: str, topics: int, options: int = 6) -> list[dict]:
    return [{"item": f"{model}-{t}", "kind": "word", "model": model, "topic": t, "document": None,
             "options": [f"w{t}x{j}" for j in range(options)], "intruder": t % options, "attention": False}
            for t in range(topics)]


def _answers(key: list[dict], annotators: int, skill: dict[str, float], seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for a in range(annotators):
        for k in key:
            right = rng.random() < skill[k["model"]]
            choice = k["intruder"] if right else int(rng.integers(len(k["options"])))
            out.append({"annotator": f"a{a}", "item": k["item"], "choice": choice})
    return out


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_scores_carry_agreement_chance_tests_and_comparisons():
    key = _word_key("good", 12) + _word_key("poor", 10)
    res = score(key, _answers(key, 4, {"good": 0.8, "poor": 0.3}), bootstrap=0)
    by_item = {i: ch for i, ch in res.item_choices.items()}
    assert res.agreement["word"]["krippendorff_alpha"] == pytest.approx(krippendorff_alpha(by_item))
    good = res.summary["good"]["model_precision_vs_chance"]
    assert good["answers"] == 48 and good["chance"] == pytest.approx(1 / 6)
    assert good["p_value"] == pytest.approx(stats.binomtest(good["right"], 48, 1 / 6, "greater").pvalue)
    (c,) = res.comparisons
    mp = res.model_precision
    peer = permutation_test(list(mp["good"].values()), list(mp["poor"].values()))
    assert c["models"] == ["good", "poor"] and c["model_precision"]["p_value"] == peer["p_value"]
    assert c["topic_log_odds"] == {"note": "n/a, neither model has topic-intrusion items"}


def test_comparison_of_named_models_and_unknown_names():
    key = _word_key("a", 3) + _word_key("b", 3)
    res = score(key, _answers(key, 2, {"a": 0.9, "b": 0.5}), bootstrap=0)
    assert res.comparison("b", "a")["model_precision"]["difference"] == pytest.approx(
        -res.comparison("a", "b")["model_precision"]["difference"])
    with pytest.raises(MethodError, match=r"unknown model 'c' \(the scores have a, b\)"):
        res.comparison("a", "c")


def test_cli_score_shows_n_a_not_nan_in_terminal_json_and_csv(tmp_path):
    key = _write(tmp_path / "k.jsonl", _word_key("m", 4))
    answers = _write(tmp_path / "r.jsonl", _answers(_word_key("m", 4), 1, {"m": 0.5}))
    code, out, err = run_cli(["intrusion", "score", key, answers, "--json", tmp_path / "s.json",
                              "--csv", tmp_path / "s.csv"])
    assert code == 0, err
    assert "nan" not in out.lower() and f"agreement (word intrusion): {NEEDS_TWO}" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    word = doc["agreement"]["word"]
    assert word["krippendorff_alpha"] is None and word["fleiss_kappa"] is None and word["note"] == NEEDS_TWO
    csv = (tmp_path / "s.csv").read_text()
    assert "nan" not in csv.lower() and NEEDS_TWO in csv


def test_cli_score_prints_every_statistic_and_the_report_shows_them(tmp_path):
    key = _word_key("good", 8) + _word_key("poor", 8)
    kp = _write(tmp_path / "k.jsonl", key)
    rp = _write(tmp_path / "r.jsonl", _answers(key, 3, {"good": .9, "poor": .2}))
    code, out, err = run_cli(["intrusion", "score", kp, rp, "--json", tmp_path / "s.json",
                              "--csv", tmp_path / "s.csv"])
    assert code == 0, err
    lines = statistics_lines(json.loads((tmp_path / "s.json").read_text()))
    assert len(lines) == 4 and all(line in out for line in lines)
    assert "Krippendorff's alpha" in out and "exact over all 12,870 splits" in out
    rows = (tmp_path / "s.csv").read_text().splitlines()
    assert rows[0].startswith("row,model,") and [r.split(",")[0] for r in rows[1:]] == \
        ["model", "model", "agreement", "comparison", "comparison"]
    code, _, err = run_cli(["report", tmp_path / "s.json", "-o", tmp_path / "r.html"])
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "Krippendorff&#x27;s alpha" in html and "permutation test over items" in html


def test_report_refuses_a_forged_comparison_and_reads_an_older_score(tmp_path):
    key = _word_key("good", 4) + _word_key("poor", 4)
    doc = {"command": "intrusion score", **score(key, _answers(key, 2, {"good": .9, "poor": .2})).to_dict()}
    forged = json.loads(json.dumps(doc))
    forged["comparisons"][0]["model_precision"]["p_value"] = "0.01"
    with pytest.raises(InputFileError, match=r"comparisons\[0\].model_precision.p_value: expected a finite"):
        statistics_lines(forged)
    older = {k: v for k, v in doc.items() if k != "comparisons"}
    older["agreement"] = {"word": 0.25}
    older["summary"] = {m: {k: v for k, v in s.items() if "vs_chance" not in k}
                        for m, s in doc["summary"].items()}
    assert statistics_lines(older) == []
    (tmp_path / "old.json").write_text(json.dumps(older))
    code, _, err = run_cli(["report", tmp_path / "old.json", "-o", tmp_path / "r.html"])
    assert code == 0, err


# ---- the planner --------------------------------------------------------------------------------

def _simulated_power(p1, p2, icc, annotators, items, datasets, seed):
    """Beta-binomial answers (item precisions drawn with intra-item correlation icc), each data set
    tested as `intrusion score` tests it; the fraction of data sets with p <= 0.05."""
    rng, hits = np.random.default_rng(seed), 0
    for s in range(datasets):
        groups = []
        for p in (p1, p2):
            precision = rng.beta(p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc, size=items)
            groups.append(rng.binomial(annotators, precision) / annotators)
        hits += permutation_test(*groups, permutations=999, seed=s, exact_limit=0)["p_value"] <= 0.05
    return hits / datasets


@pytest.mark.parametrize("p1,p2,icc,annotators", [(0.55, 0.75, 0.2, 3), (0.3, 0.6, 0.4, 10)])
def test_planned_power_is_the_simulated_power(p1, p2, icc, annotators):
    (row,) = plan_intrusion(p1, p2, power=0.8, icc=icc, annotators=[annotators]).rows
    assert row["power"] >= 0.8
    datasets = 500
    simulated = _simulated_power(p1, p2, icc, annotators, row["items"], datasets, seed=1)
    se = math.sqrt(row["power"] * (1 - row["power"]) / datasets)
    assert abs(simulated - row["power"]) <= 3 * se, (simulated, row)


def test_plan_by_hand():
    """One annotator, no correlation: Fleiss, Levin & Paik's continuity-corrected sample size."""
    z = stats.norm.ppf
    p1, p2 = 0.5, 0.7
    n0 = (z(0.975) * math.sqrt(2 * 0.6 * 0.4) + z(0.8) * math.sqrt(0.25 + 0.21)) ** 2 / 0.2 ** 2
    corrected = n0 / 4 * (1 + math.sqrt(1 + 4 / (n0 * 0.2))) ** 2
    plan = plan_intrusion(p1, p2, icc=0.0, annotators=[1, 4])
    one, four = plan.rows
    assert math.ceil(corrected) <= one["items"] <= math.ceil(corrected) + 2  # + the t quantile's few
    assert four["answers"] == pytest.approx(one["answers"], rel=0.05)  # icc 0: annotators are answers
    full = plan_intrusion(p1, p2, icc=1.0, annotators=[1, 10])
    # icc 1: an item's annotators all answer alike, so ten of them save only the continuity
    # correction's share (which the approximation takes on the answers, 1 / (n m))
    assert 0.9 * full.rows[0]["items"] <= full.rows[1]["items"] <= full.rows[0]["items"]


def test_plan_says_how_many_annotators_a_fixed_number_of_topics_needs():
    plan = plan_intrusion(0.6, 0.75, icc=0.2, max_items=50, annotators=range(1, 30))
    first = next(r for r in plan.rows if r["fits"])
    assert plan.note.endswith(f"the fewest annotators per item that reach the power: {first['annotators']}")
    assert not plan.rows[first["annotators"] - 2]["fits"]  # one annotator fewer needs more items
    assert "no number of annotators" in plan_intrusion(0.6, 0.65, icc=0.5, max_items=20).note


def test_intra_item_correlation_by_hand():
    assert intra_item_correlation([[1, 1], [0, 0]]) == pytest.approx(1.0)  # items always or never solved
    assert intra_item_correlation([[1, 0], [1, 0]]) == pytest.approx(-1.0)  # within items only
    assert intra_item_correlation([[1, 1]]) is None and intra_item_correlation([[1, 1], [1, 1]]) is None


@pytest.mark.parametrize("kwargs,part", [
    ({"p1": 1.2, "p2": 0.5}, "p1 (model precision of the first model)"),
    ({"p1": 0.0, "p2": 0.5}, "p1 (model precision"),
    ({"p1": 0.5, "p2": float("nan")}, "p2"),
    ({"p1": 0.5, "p2": 0.5}, "no number of items tells equal precisions apart"),
    ({"p1": 0.5, "p2": 0.5000001}, "differ by 1e-07: about 3.9e.14 independent answers"),  # hung before
    ({"p1": 0.5, "p2": 0.7, "power": 1.0}, "power"),
    ({"p1": 0.5, "p2": 0.7, "power": 0.01}, "is not above alpha / 2"),
    ({"p1": 0.5, "p2": 0.7, "alpha": 0.0}, "alpha"),
    ({"p1": 0.5, "p2": 0.7, "icc": -0.1}, "icc"),
    ({"p1": 0.5, "p2": 0.7, "annotators": [0]}, "annotators"),
    ({"p1": 0.5, "p2": 0.7, "annotators": []}, "annotators is empty"),
    ({"p1": 0.5, "p2": 0.7, "max_items": 0}, "max_items"),
])
def test_plan_refuses_impossible_plans(kwargs, part):
    with pytest.raises(MethodError, match=part.replace("(", r"\(").replace(")", r"\)")):
        plan_intrusion(**kwargs)


def test_cli_plan(tmp_path):
    code, out, err = run_cli(["intrusion", "plan", "0.6", "0.75", "--icc", "0.2", "--max-items", "50",
                              "--json", tmp_path / "p.json"])
    assert code == 0, err
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["task"] == "intrusion-plan" and doc["note"] in out
    assert "(more than the 50 items available)" in out
    one_line_error(["intrusion", "plan", "1.5", "0.5"], "p1 (model precision of the first model)")
    one_line_error(["intrusion", "plan", "0.5", "0.7", "--power", "1"], "power")


def test_public_names():
    assert tl.plan_intrusion is plan_intrusion and tl.krippendorff_alpha is krippendorff_alpha
    assert {"plan_intrusion", "IntrusionPlan", "krippendorff_alpha"} <= set(tl.__all__)


def test_cli_score_without_resamples_or_permutations(tmp_path):
    """--bootstrap 0 was an IndexError traceback; it is now "no interval" and says why."""
    key = _word_key("good", 3) + _word_key("poor", 3)
    kp = _write(tmp_path / "k.jsonl", key)
    rp = _write(tmp_path / "r.jsonl", _answers(key, 2, {"good": .9, "poor": .2}))
    code, out, err = run_cli(["intrusion", "score", kp, rp, "--bootstrap", "0"])
    assert code == 0 and "n/a (--bootstrap 0)" in out and "nan" not in out.lower(), err
    one_line_error(["intrusion", "score", kp, rp, "--permutations", "0"], "--permutations")
    with pytest.raises(MethodError, match="permutations"):
        score(key, _answers(key, 2, {"good": .9, "poor": .2}), permutations=0)


def test_krippendorff_alpha_by_hand():
    """Items [0, 0, 1] and [2, 2] (a third answered once is left out): coincidences o00 = o01 = o10
    = 1, o22 = 2; n = 5, n_c = (2, 1, 2); alpha = 1 - (5 - 1) * 2 / (25 - 9) = 0.5."""
    assert krippendorff_alpha({"item1": [0, 0, 1], "item2": [2, 2], "item3": [1]}) == pytest.approx(0.5)


def test_a_permutation_test_beyond_the_time_budget_is_refused_before_the_work():
    with pytest.raises(MethodError, match=r"would take about .*10,000,000 splits x 2,000,000 items"):
        permutation_test(np.zeros(1_000_000), np.ones(1_000_000), permutations=10_000_000)
    with pytest.raises(MethodError, match="permutations"):
        permutation_test([1.0], [2.0], permutations=0)


def test_topic_log_odds_of_minus_infinity_make_the_comparison_n_a():
    """An intruder topic of proportion 0 (-inf in the key) chosen against: the document's topic log
    odds is -inf, and the permutation test, which needs finite values, says so instead of failing."""
    def topic_item(model: str, d: int, log_theta: list[float]) -> dict:
        return {"item": f"{model}-d{d}", "kind": "topic", "model": model, "document": d, "topic": None,
                "options": ["a", "b", "c", "d"], "intruder": 3, "attention": False,
                "option_topics": [0, 1, 2, 3], "option_log_theta": log_theta}
    key = [topic_item("m1", d, [-1.0, -1.5, -2.0, -float("inf")]) for d in range(3)]
    key += [topic_item("m2", d, [-1.0, -1.5, -2.0, -5.0]) for d in range(3)]
    answers = [{"annotator": "a", "item": k["item"], "choice": 0} for k in key]
    res = score(key, answers, bootstrap=0)
    assert res.comparisons[0]["topic_log_odds"] == {
        "note": "n/a, m1's topic log odds include -inf (a proportion of 0 in the key)"}
    assert any("topic log odds n/a, m1's" in line for line in statistics_lines(res.to_dict()))


def test_model_precision_bars_are_labelled_with_the_topics_words():
    """The report labels each topic's model-precision bar with the words the annotators saw (the
    options less the intruder), not "topic k"."""
    from tealeaves.report import charts

    key = _word_key("m", 3)
    res = score(key, _answers(key, 3, {"m": 0.8}), bootstrap=0)
    doc = res.to_dict()
    assert doc["topic_words"]["m"]["1"] == ["w1x0", "w1x2", "w1x3", "w1x4", "w1x5"]  # intruder 1 left out
    bars = next(c for c in charts([doc]) if c.name == "model-precision-m")
    assert bars.labels == [f"{t}: " + " ".join(f"w{t}x{j}" for j in range(6) if j != t) for t in range(3)]
