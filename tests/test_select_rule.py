"""select's decision rule (`tealeaves.select.rule`) on constructed evaluations whose answer is
known: a stuck restart does not make a worse K win, every K is compared with the chosen one, and
hostile evaluations (one K, one restart, no finite values) get an explicit policy or a one-line
error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tealeaves.errors import MethodError
from tealeaves.select import METRICS, SelectionResult, _choose
from tealeaves.select.classic import BIAS
from tealeaves.select.rule import RULES, decide, disagreements, represent

DOCS, LENGTH = 200, 50


def _eval(k: int, r: int, per_token: float, train: float | None, noise: float = 0.3, seed: int = 0) -> dict:
    """An evaluation whose held-out documents score `per_token` nats per token on average, with
    per-document noise shared by every model of the same `seed` (so paired differences are tight)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0, noise, size=DOCS) * LENGTH - 7.0 * LENGTH
    return {"model": f"K{k}-r{r}", "topics": k, "restart": r,
            "doc_log_prob": (base + per_token * LENGTH).tolist(), "doc_tokens": [LENGTH] * DOCS,
            "row": {"train_per_token": train, "per_token": per_token - 7.0}}


def _stuck_case() -> list[dict]:
    """K = 10's restart 1 is stuck (0.08 nats per token worse on held-out documents, and worse on
    its training documents); K = 15 is 0.01 worse than K = 10's good restart."""
    return [_eval(10, 0, 0.0, -6.0), _eval(10, 1, -0.08, -6.3),
            _eval(15, 0, -0.01, -5.95), _eval(15, 1, -0.01, -5.96),
            _eval(25, 0, -0.03, -5.9), _eval(25, 1, -0.03, -5.91)]


def test_a_stuck_restart_does_not_make_a_worse_k_win():
    evals = _stuck_case()
    d = decide([10, 15, 25], evals, "best-train")
    assert d["k"] == 10 and d["restart"] == {"10": 0, "15": 0, "25": 0}
    assert {c["k"]: c["separated"] for c in d["comparisons"]} == {15: True, 25: True}
    assert d["comparisons"][0]["difference"] == pytest.approx(0.01, abs=1e-12)
    # the rule before issue 26 (the mean over restarts) is fooled: K = 15 wins
    assert decide([10, 15, 25], evals, "mean")["k"] == 15


def test_every_k_is_compared_with_the_chosen_one_not_only_its_neighbours():
    """K = 15 is best; K = 5 (not a neighbour) is within noise of it, K = 10 and 25 are far worse."""
    evals = [_eval(5, 0, -0.002, -6.0, seed=1), _eval(10, 0, -0.2, -6.0, seed=1),
             _eval(15, 0, 0.0, -6.0, seed=1), _eval(25, 0, -0.15, -6.0, seed=1)]
    rng = np.random.default_rng(2)  # K = 5 differs from K = 15 document by document, by 0 on average
    jitter = rng.normal(0, 0.05, size=DOCS) * LENGTH
    evals[0]["doc_log_prob"] = (np.array(evals[0]["doc_log_prob"]) + jitter - jitter.mean()).tolist()
    d = decide([5, 10, 15, 25], evals, "best-train")
    assert d["k"] == 15
    assert [c["k"] for c in d["comparisons"]] == [5, 10, 25]
    assert d["tied"] == [5]
    for c in d["comparisons"]:
        lo, hi = c["interval"]
        assert lo <= c["difference"] <= hi
    far = {c["k"]: c for c in d["comparisons"]}
    assert far[10]["difference"] == pytest.approx(0.2, abs=1e-9) and far[10]["interval"][0] > 0.15
    assert "K = 5 cannot be separated" in d["why"]


def test_best_heldout_takes_the_restart_best_on_the_heldout_documents():
    evals = [_eval(5, 0, -0.1, -5.0), _eval(5, 1, 0.0, -6.0), _eval(8, 0, -0.05, -6.0)]
    assert represent(evals[:2], "best-heldout")[1] == 1
    assert represent(evals[:2], "best-train")[1] == 0
    assert decide([5, 8], evals, "best-heldout")["k"] == 5
    assert decide([5, 8], evals, "best-train")["k"] == 8


def test_a_tie_goes_to_the_smaller_k():
    evals = [_eval(5, 0, 0.0, -6.0), _eval(8, 0, 0.0, -6.0)]
    d = decide([5, 8], evals)
    assert d["k"] == 5 and d["tied"] == [8]


def test_one_k_is_chosen_with_nothing_to_compare():
    d = decide([7], [_eval(7, 0, 0.0, -6.0), _eval(7, 1, -0.1, -6.1)])
    assert d["k"] == 7 and d["comparisons"] == [] and d["tied"] == []
    assert "nothing to compare" in d["why"]


def test_one_restart_every_rule_agrees():
    evals = _stuck_case()[::2]  # restart 0 of each K
    assert {decide([10, 15, 25], evals, rule)["k"] for rule in RULES} == {10}


def test_a_k_without_finite_heldout_values_is_left_out_and_named():
    evals = _stuck_case()
    evals[0]["doc_log_prob"][3] = math.nan
    evals[1]["doc_log_prob"] = [None] * DOCS
    d = decide([10, 15, 25], evals, "best-train")
    assert d["k"] == 15 and "10" not in d["per_token"]
    assert "2 restart(s) without finite held-out values left out" in d["notes"]["10"]


def test_no_finite_heldout_values_at_all_is_no_choice_with_its_reason():
    evals = _stuck_case()
    for e in evals:
        e["doc_log_prob"] = [math.nan] * DOCS
    d = decide([10, 15, 25], evals)
    assert d["k"] is None and "nothing to choose" in d["why"]


def test_no_training_likelihood_takes_the_first_restart_and_says_so():
    evals = [_eval(5, 0, -0.1, None), _eval(5, 1, 0.0, math.nan)]
    vec, which, note = represent(evals, "best-train")
    assert which == 0 and "no training likelihood" in note


@pytest.mark.parametrize(("evals", "rule", "match"), [
    (_stuck_case(), "median", "unknown decision rule 'median'"),
    ([_eval(5, 0, 0.0, -6.0), {**_eval(5, 1, 0.0, -6.0), "doc_log_prob": [0.0] * 3}], "best-train",
     "different numbers of held-out documents"),
])
def test_bad_decision_inputs_are_one_line_errors(evals, rule, match):
    with pytest.raises(MethodError, match=match) as e:
        decide([5, 10, 15, 25], evals, rule)
    assert "\n" not in str(e.value)


def test_an_all_nan_metric_favours_no_k():
    """A metric no model has (Griffiths 2004 without Gibbs samples): no K, no comparison."""
    per_k = {m: {"mean": [math.nan, math.nan], "sd": [math.nan, math.nan]} for m in METRICS}
    choice = _choose([5, 8], [], per_k, {"rule": "best-train", "k": None, "comparisons": []})
    assert set(choice) == set(METRICS)
    assert all(c["k"] is None and c["significant"] is False for c in choice.values())
    assert choice["Griffiths 2004"]["bias"] == "many"


def test_disagreements_name_the_metric_its_k_and_its_known_bias():
    decision = {"k": 10, "metric": "log-lik/token"}
    choice = {"log-lik/token": {"k": 10}, "diversity": {"k": 5}, "pred. rank": {"k": 40},
              "exclusivity": {"k": 5}, "umass": {"k": 10}}
    got = {g["metric"]: g for g in disagreements(decision, choice, BIAS)}
    assert set(got) == {"diversity", "pred. rank", "exclusivity"}
    assert got["diversity"]["side"] == "fewer" and got["diversity"]["expected"] is True
    assert got["pred. rank"]["side"] == "more" and got["pred. rank"]["expected"] is True
    assert got["exclusivity"]["expected"] is False  # known to favour many, here favours fewer


def test_the_result_carries_the_decision_and_a_stability_list_when_given():
    evals = _stuck_case()
    d = decide([10, 15, 25], evals)
    res = SelectionResult([10, 15, 25], 2, evals, {}, {}, {}, 0.0, decision=d)
    doc = res.to_dict()
    assert doc["decision"]["k"] == 10 and "stability" not in doc
    assert any("decision (best-train): K = 10" in line for line in res.decision_lines())
    res.stability = [{"task": "stability", "topics": 10, "score": 0.9}]
    assert res.to_dict()["stability"][0]["topics"] == 10


def test_the_report_reads_the_decision_and_refuses_a_mistyped_one(tmp_path):
    from tealeaves.errors import InputFileError
    from tealeaves.report.schema import check_result

    evals = _stuck_case()
    d = decide([10, 15, 25], evals)
    per_k = {"log-lik/token": {"mean": [0.0, 0.0, 0.0], "sd": [None, None, None]}}
    doc = SelectionResult([10, 15, 25], 2, evals, per_k, {}, {}, 0.0, decision=d).to_dict()
    check_result(doc, "sel.json")
    doc["decision"]["comparisons"][0]["interval"] = "wide"
    with pytest.raises(InputFileError, match=r"decision\.comparisons\[0\]\.interval") as e:
        check_result(doc, "sel.json")
    assert "\n" not in str(e.value)


def test_the_summary_names_which_metrics_are_known_to_favour_few_or_many_topics():
    per_k = {m: {"mean": [1.0], "sd": [math.nan]} for m in METRICS}
    lines = SelectionResult([5], 1, [], per_k, {}, {}, 0.0).summary().splitlines()
    assert lines[-2] == "known to favour few topics: umass, diversity, Arun 2010, Cao Juan 2009, Deveaud 2014"
    assert lines[-1] == "known to favour many topics: log-lik/token, exclusivity, pred. rank, Griffiths 2004"


def test_each_ks_restarts_get_their_stability_from_their_top_words():
    """select keeps each restart's top words; a K with two restarts that hold the same topics in
    another order is perfectly stable, a K whose restarts share no topic is unstable, and a K with one
    restart (or restarts saved without top words) has no stability. Two restarts that disagree are
    unstable as a whole (which one is stuck cannot be told): no restart is flagged."""
    from tealeaves.select import restart_stability

    a = [[f"w{t}_{i}" for i in range(10)] for t in range(4)]
    other = [[f"v{t}_{i}" for i in range(10)] for t in range(4)]
    evals = [{"model": "K4-r0", "topics": 4, "topic_words": a},
             {"model": "K4-r1", "topics": 4, "topic_words": a[::-1]},
             {"model": "K6-r0", "topics": 6, "topic_words": a + other[:2]},
             {"model": "K6-r1", "topics": 6, "topic_words": other + a[:2]},
             {"model": "K8-r0", "topics": 8, "topic_words": a + other},
             {"model": "K8-r1", "topics": 8}]
    got = {s["topics"]: s for s in restart_stability(evals)}
    assert set(got) == {4, 6}
    assert got[4]["score"] == 1.0 and got[4]["flagged"] == {}
    # K = 6: 4 of the 6 topics recur exactly (a[0], a[1], other[0], other[1]); 2 share no word
    assert got[6]["score"] == pytest.approx(4 / 6)
    assert got[6]["flagged"] == {} and got[6]["finding"] == "unstable"
    assert got[4]["finding"] == "stable"


def test_the_report_recommends_the_decision_rules_k():
    """The report's recommendation follows select's stated rule, not the mean over restarts."""
    from tealeaves.report import recommend

    doc = {"choice": {"log-lik/token": {"k": 15, "runner_up": 10, "significant": True, "why": "mean"}},
           "decision": {"rule": "best-train", "k": 10, "why": "K = 10 is best",
                        "comparisons": [{"k": 15, "difference": 0.0004, "interval": [-0.002, 0.0028],
                                         "separated": False}]}}
    head, reasons = recommend.select(doc)
    assert head == "Recommended: K = 10, by the best-train rule"
    assert ("K = 15: not separated, -0.00040 nats per token against K = 10, 95% interval "
            "[-0.00280, +0.00200].") in reasons


def test_the_heldout_choice_is_the_decision_rules():
    """The held-out metric's 'favours K' line (terminal, JSON `choice`, report) says what the decision
    rule chose (K = 10: the mean over restarts would say 15), its runner-up the closest K."""
    evals = _stuck_case()
    d = decide([10, 15, 25], evals, "best-train")
    per_k = {m: {"mean": [math.nan] * 3, "sd": [math.nan] * 3} for m in METRICS}
    c = _choose([10, 15, 25], evals, per_k, d)["log-lik/token"]
    assert c["k"] == 10 and c["runner_up"] == 15 and c["significant"] is True


def test_terminal_and_report_show_every_metric_with_the_same_decimals():
    """The terminal finds a metric's decimals by its row key, the report by its name: both agree."""
    from tealeaves.output import numbers

    assert {m: numbers.digits(m) for m in METRICS} == {m: numbers.digits(k) for m, (k, _) in METRICS.items()}
