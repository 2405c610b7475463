"""select knows the limits of its grid (issue 33): a chosen K at either end of the grid is said, with
the decision rule's interval deciding between "still rising" (the best K may lie beyond the grid;
the next Ks suggested by continuing its spacing) and "levelled off"; `extend` adds Ks while the
likelihood still rises, within its bound and max_hours; the result carries the chosen model's
per-topic values; and a metric's known bias is named only when its result leans that way."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from tealeaves.report import recommend, render
from tealeaves.select import METRICS, SelectionResult
from tealeaves.select.rule import decide, edge, leans, next_ks

sel = importlib.import_module("tealeaves.select")  # the package (tl.select is the function)
DOCS, LENGTH = 200, 50


def _eval(k: int, r: int, per_token: float, noise: float = 0.3, seed: int = 0) -> dict:
    """Held-out documents scoring `per_token` nats per token on average, the per-document noise shared
    by every K (paired differences are tight) plus `jitter` of its own per K."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0, noise, size=DOCS) * LENGTH - 7.0 * LENGTH
    return {"model": f"K{k}-r{r}", "topics": k, "restart": r,
            "doc_log_prob": (base + per_token * LENGTH).tolist(), "doc_tokens": [LENGTH] * DOCS,
            "row": {"train_per_token": -6.0 - r * 0.01, "per_token": per_token - 7.0}}


def _jitter(e: dict, sd: float, seed: int) -> dict:
    """Per-document noise of its own (sd nats per token, mean 0): the difference from other Ks is
    then uncertain by about sd / sqrt(DOCS)."""
    j = np.random.default_rng(seed).normal(0, sd, size=DOCS) * LENGTH
    e["doc_log_prob"] = (np.array(e["doc_log_prob"]) + j - j.mean()).tolist()
    return e


@pytest.mark.parametrize(("grid", "upper", "lower"), [
    ([5, 10, 20], [40, 80], [2]),        # doubling continued; K >= 2 below
    ([10, 20, 30], [45, 68], [5, 2]),    # the last step's ratio, 1.5, continued
    ([40, 45], [68, 101], [27, 18]),     # a step under 1.5 is taken as 1.5
    ([2, 3, 4], [6, 9], []),             # nothing below 2 topics
    ([100], [200, 400], [50, 25]),
])
def test_the_next_ks_continue_the_grids_spacing_geometrically(grid, upper, lower):
    assert next_ks(grid, "upper") == upper and next_ks(grid, "lower") == lower


def test_a_chosen_k_still_rising_at_the_top_of_the_grid_is_said_with_the_next_ks():
    evals = [_eval(5, 0, -0.2), _eval(10, 0, -0.1), _eval(20, 0, 0.0)]
    d = decide([5, 10, 20], evals)
    e = edge([5, 10, 20], d)
    assert d["k"] == 20 and e["side"] == "upper" and e["status"] == "rising" and e["separated"] is True
    assert e["neighbour"] == 10 and e["suggest"] == [40, 80]
    assert "still better than K = 10" in e["message"] and "try K = 40, 80" in e["message"]
    res = SelectionResult([5, 10, 20], 1, evals, {}, {}, {}, 0.0, decision=d, edge=e)
    lines = res.decision_lines()
    assert any(line.startswith("  EDGE OF THE GRID: K = 20 is the largest K tried") and "--extend" in line
               for line in lines)
    doc = res.to_dict()
    assert doc["edge"]["suggest"] == [40, 80]
    head, reasons = recommend.select(doc)
    assert "at the edge of the grid" in head and reasons[0].startswith("Edge of the grid: K = 20")
    html = render([doc])
    assert "Edge of the grid: K = 20 is the largest K tried" in html


def test_a_chosen_k_at_the_top_that_its_neighbour_ties_has_levelled_off():
    """Not separated from its neighbour by the decision's interval: a different message, no
    suggestion to go on, and no 'edge' in the recommendation's headline."""
    evals = [_eval(5, 0, -0.2), _jitter(_eval(10, 0, -0.0001), 0.5, 1), _eval(20, 0, 0.0)]
    d = decide([5, 10, 20], evals)
    e = edge([5, 10, 20], d)
    assert d["k"] == 20 and 10 in d["tied"]
    assert e["status"] == "level" and e["separated"] is False
    assert "cannot be separated from K = 10" in e["message"] and "levelled off" in e["message"]
    assert "try K" not in e["message"] and "(K = 40 would tell)" in e["message"]
    head, _ = recommend.select(SelectionResult([5, 10, 20], 1, evals, {}, {}, {}, 0.0, decision=d,
                                               edge=e).to_dict())
    assert "edge" not in head


def test_a_chosen_k_at_the_bottom_suggests_fewer_topics_and_inside_the_grid_nothing_is_said():
    evals = [_eval(10, 0, 0.0), _eval(20, 0, -0.1), _eval(40, 0, -0.2)]
    e = edge([10, 20, 40], decide([10, 20, 40], evals))
    assert e["side"] == "lower" and e["status"] == "rising" and e["suggest"] == [5, 2]
    assert "fewer topics" in e["message"]
    evals = [_eval(10, 0, -0.1), _eval(20, 0, 0.0), _eval(40, 0, -0.1)]
    assert edge([10, 20, 40], decide([10, 20, 40], evals)) == {}
    one = edge([20], decide([20], [_eval(20, 0, 0.0)]))
    assert one["side"] == "only" and one["suggest"] == [10, 40]


def _fake_task(curve):
    """select's task without training: each K's held-out values from `curve` (K -> per token)."""
    def task(shared, item):
        k, r = item
        return _eval(k, r, curve(k))
    return task


def _corpus():
    rng = np.random.default_rng(0)
    return [[f"w{i}" for i in rng.integers(0, 60, size=30)] for _ in range(60)]


def test_extend_adds_ks_while_the_likelihood_still_rises_and_stops_where_it_levels_off(monkeypatch):
    """Rising up to K = 40, flat beyond: from 5, 10, 20 extend adds 40 (still rising there), then 80,
    which does not beat 40: K = 40 is chosen, inside the grid, and the extension stops saying so."""
    monkeypatch.setattr(sel, "_task", _fake_task(lambda k: -0.1 * math.log2(80 / min(k, 40))))
    asked = []
    real = sel.run_tasks
    monkeypatch.setattr(sel, "run_tasks", lambda fn, sh, plan, *a: asked.append(sorted({k for k, _ in plan}))
                        or real(fn, sh, plan, *a))
    res = sel.select(_corpus(), topics=[5, 10, 20], restarts=1, extend=5, progress=False)
    assert asked == [[5, 10, 20], [40], [80]]
    assert res.topics == [5, 10, 20, 40, 80] and res.decision["k"] == 40
    assert res.grid == {"asked": [5, 10, 20], "extend": 5, "added": [40, 80],
                        "stopped": "K = 40 lies inside the grid"}
    assert res.edge == {} and res.per_k["log-lik/token"]["mean"][3] == pytest.approx(-7.1, abs=1e-9)
    assert any("grid extended (extend 5): K added: 40, 80" in line for line in res.decision_lines())
    # without extend the same run only says so
    plain = sel.select(_corpus(), topics=[5, 10, 20], restarts=1, progress=False)
    assert plain.topics == [5, 10, 20] and plain.edge["status"] == "rising" and plain.grid["added"] == []


def test_extend_stops_at_its_bound_and_at_max_hours(monkeypatch):
    monkeypatch.setattr(sel, "_task", _fake_task(lambda k: 0.01 * k))  # rises forever
    res = sel.select(_corpus(), topics=[5, 10], restarts=1, extend=2, progress=False)
    assert res.grid["added"] == [20, 40]
    assert res.grid["stopped"] == "the 2 extra K(s) allowed (extend) were added"
    assert res.edge["status"] == "rising" and res.edge["suggest"] == [80, 160]
    texts = _corpus()
    train = [texts[i] for i in sel.split(len(texts), 0.2, 0)[0]]
    test = [texts[i] for i in sel.split(len(texts), 0.2, 0)[1]]
    first = sel._plan_seconds(train, test, [5, 10], 1, 500, "tomotopy", {})
    more = sel._plan_seconds(train, test, [20], 1, 500, "tomotopy", {})
    res = sel.select(texts, topics=[5, 10], restarts=1, extend=2, progress=False,
                     max_hours=(first + 0.5 * more) / 3600)
    assert res.grid["added"] == [] and "would take the run's estimate past max_hours" in res.grid["stopped"]
    with pytest.raises(sel.MethodError, match="max_hours"):  # the first plan itself is refused past it
        sel.select(texts, topics=[5, 10], restarts=1, progress=False, max_hours=0.5 * first / 3600)


def test_the_chosen_model_is_the_rules_restart_with_its_topics(monkeypatch):
    def task(shared, item):
        k, r = item
        e = _eval(k, r, 0.01 * k - 0.001 * r)
        e["topic_words"] = [[f"k{k}r{r}t{t}w{i}" for i in range(10)] for t in range(k)]
        e["topic_coherence"] = {"npmi": [0.1] * k}
        return e
    monkeypatch.setattr(sel, "_task", task)
    res = sel.select(_corpus(), topics=[3, 4], restarts=2, progress=False)
    c = res.chosen
    assert c["model"] == "K4-r0" and c["k"] == 4 and c["restart"] == 0
    assert c["words"][0][0] == "k4r0t0w0" and c["coherence"] == {"npmi": [0.1] * 4}
    assert "no --out folder" in c["diagnostics_note"]
    assert res.topic_lines()[0].startswith("topics of K4-r0 (restart 0 of K = 4")
    html = render([res.to_dict()])
    assert "Topics of the chosen model, K4-r0" in html and "k4r0t3w0" in html


def test_a_known_bias_is_named_only_when_the_result_leans_its_way():
    """'known to favour few topics' beside a metric that favours the LARGER K contradicts the
    result (issue 33: Cao Juan favouring K = 20, the largest of the grid)."""
    assert leans("few", 5, 10) and not leans("few", 20, 10) and not leans("few", 10, 10)
    assert leans("many", 20, 10) and not leans("many", 5, 10) and not leans("neither", 5, 10)
    evals = [_eval(5, 0, 0.0), _eval(10, 0, -0.1), _eval(20, 0, -0.2)]
    d = decide([5, 10, 20], evals)
    choice = {"log-lik/token": {"k": 5, "runner_up": 10, "significant": True, "why": "x"},
              "Cao Juan 2009": {"k": 20, "runner_up": 10, "significant": True, "why": "t", "bias": "few"},
              "diversity": {"k": 20, "runner_up": 10, "significant": False, "why": "t", "bias": "few"},
              "pred. rank": {"k": 20, "runner_up": 10, "significant": False, "why": "t", "bias": "many"}}
    from tealeaves.select.classic import BIAS
    from tealeaves.select.rule import disagreements
    per_k = {m: {"mean": [0.0] * 3, "sd": [math.nan] * 3} for m in METRICS}
    res = SelectionResult([5, 10, 20], 1, evals, per_k, choice, {}, 0.0, decision=d,
                          disagreements=disagreements(d, choice, BIAS))
    text = res.summary()
    cao = next(line for line in text.splitlines() if line.startswith("Cao Juan 2009 favours"))
    assert "known to favour few" not in cao
    pred = next(line for line in text.splitlines() if line.startswith("pred. rank favours"))
    assert "known to favour many topics, and it does here" in pred
    lines = [line for line in res.decision_lines() if "favours K = 20" in line]
    assert any(line.startswith("  Cao Juan 2009 favours K = 20 (more topics)") and line.endswith("topics)")
               for line in lines)
    assert any(line.startswith("  pred. rank favours K = 20 (more topics), as it is known to do")
               for line in lines)
    _, reasons = recommend.select(res.to_dict())
    disagree = next(r for r in reasons if r.startswith("Disagree"))
    assert "Cao Juan 2009 favours K = 20;" in disagree or disagree.endswith("Cao Juan 2009 favours K = 20.")
    assert "pred. rank favours K = 20 (known to favour many topics)" in disagree


def test_evaluates_recommendation_names_a_bias_only_in_its_direction():
    """diversity (known to favour few topics) favouring a 50-topic model over the recommended
    20-topic one: no 'known to favour few topics' beside it; favouring a 10-topic one: named."""
    def row(name, k, per_token, div):
        return {"model": name, "topics": k, "per_token": per_token, "diversity": div, "coherence": {}}
    doc = {"rows": [row("a20", 20, -7.0, 0.5), row("b50", 50, -7.1, 0.9)], "groups": [["a20"], ["b50"]]}
    _, reasons = recommend.evaluate(doc)
    assert "diversity favours b50." in " ".join(reasons) and "known to favour" not in " ".join(reasons)
    doc["rows"][1]["topics"] = 10
    _, reasons = recommend.evaluate(doc)
    assert "diversity favours b50 (known to favour few topics)" in " ".join(reasons)
