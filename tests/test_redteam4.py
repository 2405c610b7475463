"""Red team 4 (this session's surface): each finding with a test that failed before its fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.diagnostics.stability import WORDS_SHOWN
from tealeaves.errors import InputFileError
from tealeaves.intrusion.plan import MAX_ANNOTATORS, plan_intrusion
from tealeaves.report.schema import check_result


@pytest.mark.parametrize("kw", [dict(icc=1.0, annotators=[3], max_items=395),
                                dict(annotators=[MAX_ANNOTATORS]), dict(icc=1.0, annotators=[1, 20])])
def test_the_planners_note_agrees_with_its_rows(kw):
    """The note said 'n/a' (or more items than a row) for designs the table itself showed reaching the
    power: it used need x icc, the asymptote, not the rows' power computation."""
    plan = plan_intrusion(0.5, 0.6, **kw)
    if kw.get("max_items"):
        assert all(r["fits"] for r in plan.rows) and not plan.note.startswith("n/a")
    else:
        fewest = int(plan.note.split("at least ")[1].split()[0])
        assert fewest <= min(r["items"] for r in plan.rows)


def _restarts():
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(30)]
    phi = rng.dirichlet(np.full(30, 0.2), size=4)
    return [tl.TopicModel(phi[p], np.full(4, 0.1), vocab=vocab, name=n)
            for p, n in ((np.arange(4), "a"), (np.array([2, 0, 3, 1]), "b"))]


def test_stability_json_carries_each_topics_words_for_the_report():
    """The report's per-topic stability table promised top words but the JSON had none."""
    from tealeaves.report import render

    doc = json.loads(json.dumps(tl.stability(_restarts()).to_dict()))
    assert len(doc["words"]["a"]) == 4 and all(len(w) == WORDS_SHOWN for w in doc["words"]["a"])
    check_result(doc, "s.json")
    page = render([doc])
    assert " ".join(doc["words"]["b"][0][:5]) in page


@pytest.mark.parametrize("forge, field", [
    (lambda d: d.update(floor=7), "floor"),
    (lambda d: d["models"].append("ghost"), "per_topic"),
    (lambda d: d["per_topic"].update(a=d["per_topic"]["a"][:1]), "per_topic"),
    (lambda d: d["words"].update(a=d["words"]["a"][:2]), "per_topic"),
])
def test_a_forged_stability_result_is_one_line(forge, field):
    doc = json.loads(json.dumps(tl.stability(_restarts()).to_dict()))
    forge(doc)
    with pytest.raises(InputFileError, match=field) as e:
        check_result(doc, "s.json")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("call, match", [
    (lambda c: c.cao_juan_2009([[0, 0, 0], [1, 2, 3]]), "topic 0 .* no mass"),
    (lambda c: c.deveaud_2014([[1, 2, 3], [0, 0, 0]]), "topic 1 .* no mass"),
    (lambda c: c.arun_2010([[0, 0, 0], [1, 2, 3]], [[0.5, 0.5]], [3]), "topic 0 .* no mass"),
    (lambda c: c.arun_2010([[1, 2, 3], [3, 2, 1]], [[0.5, 0.5]], [-3]), "non-negative"),
    (lambda c: c.arun_2010([[1, 2, 3], [3, 2, 1]], [[np.nan, 0.5]], [3]), "non-negative, finite"),
    (lambda c: c.arun_2010([[1, 2, 3], [3, 2, 1]], [[0.5, 0.5]], [0]), "at least one document"),
    (lambda c: c.arun_2010([[1, 2, 3]], [[1.0]], [3]), "at least 2 topics"),
    (lambda c: c.log_p_w_given_z(np.array([0, 1]), np.array([0, 3]), 3, 5, 0.01), "topic ids"),
    (lambda c: c.log_p_w_given_z(np.array([0, 5]), np.array([0, 1]), 3, 5, 0.01), "word ids"),
    (lambda c: c.log_p_w_given_z(np.array([0, 1]), np.array([0, -1]), 3, 5, 0.01), "topic ids"),
    (lambda c: c.log_p_w_given_z(np.array([0, 1]), np.array([0, 1]), 3, 5, 0.0), "beta"),
])
def test_classic_metrics_refuse_what_they_cannot_score(call, match):
    """A topic without mass, negative or empty lengths, NaN proportions, Arun at K = 1 (0 for any
    model), ids out of range and beta 0 gave NaN, a bare LinAlgError or ValueError, or a number."""
    from tealeaves.errors import MethodError
    from tealeaves.select import classic

    with pytest.raises(MethodError, match=match) as e:
        call(classic)
    assert "\n" not in str(e.value)


def test_a_metric_with_a_value_at_one_k_favours_nothing():
    """Arun 2010 is not computed at K = 1 (it is 0 there for any model), and a metric with a value at
    only one K favours no K (it 'favoured' the only K it had, against its known bias)."""
    from tealeaves.select import METRICS, _choose, fit_scores

    model = tl.TopicModel(np.array([[0.5, 0.3, 0.2]]), np.array([0.1]), vocab=["a", "b", "c"])
    scores = fit_scores(model, [["a", "b"], ["c", "a"]])
    assert scores["classic"]["arun_2010"] is None
    assert "at least 2 topics" in scores["classic_notes"]["arun_2010"]
    per_k = {m: {"mean": [np.nan, 1.0], "sd": [np.nan, np.nan]} for m in METRICS}
    choice = _choose([1, 2], [], per_k, {"rule": "best-train", "k": None, "comparisons": []})
    assert all(c["k"] is None and "only one K" in c["why"] for m, c in choice.items() if m != "log-lik/token")


@pytest.mark.parametrize("choices", [{"a": [-1, 0], "b": [0, 1]}, {"a": [0.5, 1], "b": [0, 1]},
                                     {"a": ["x", 1], "b": [0, 1]}, {"a": [True, 1], "b": [0, 1]}])
def test_agreement_refuses_a_choice_that_is_not_a_position(choices):
    """A negative choice raised a bare ValueError; 0.5 was truncated to 0 silently."""
    from tealeaves.errors import MethodError
    from tealeaves.intrusion.agreement import fleiss_kappa, krippendorff_alpha

    for f in (krippendorff_alpha, fleiss_kappa):
        with pytest.raises(MethodError, match="item 'a': choice .* is not a position"):
            f(choices)
