"""Intrusion tasks obey their rules for every task across seeds; scoring against hand values."""

import json
import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.intrusion import fleiss_kappa, score, topic_tasks, word_tasks, write_tasks


@pytest.fixture(scope="module")
def model():
    return tl.synthetic.random_model(12, 400, beta=0.05, seed=3, name="m")


@pytest.mark.parametrize("seed", range(15))
def test_word_tasks_obey_the_intruder_rules(model, seed):
    order = np.argsort(-model.phi, axis=1, kind="stable")
    index = model.word_index()
    for t in word_tasks(model, seed=seed, attention_checks=2):
        assert len(t.options) == 6 and len(set(t.options)) == 6
        intruder = t.options[t.intruder]
        top = {model.vocab[w] for w in order[t.topic, :5]}
        assert set(t.options) - {intruder} == top
        if t.attention:
            assert intruder == "xxxxx"
            continue
        w = index[intruder]
        assert intruder not in top
        rank = int(np.flatnonzero(order[t.topic] == w)[0])
        assert rank >= model.num_words / 2  # low probability in this topic
        assert any(w in order[k, :10] for k in range(model.num_topics) if k != t.topic)


@pytest.mark.parametrize("seed", range(15))
def test_topic_tasks_obey_the_intruder_rules(model, seed):
    theta = np.random.default_rng(seed).dirichlet(np.full(model.num_topics, 0.3), size=8)
    for t in topic_tasks(model, theta, seed=seed):
        th = theta[t.document]
        topics = t.option_topics
        intr = topics[t.intruder]
        assert sorted(set(topics) - {intr}) == sorted(np.argsort(-th, kind="stable")[:3].tolist())
        assert intr in np.argsort(-th, kind="stable")[model.num_topics // 2:]
        assert all(len(o.split()) == 8 for o in t.options)
        np.testing.assert_allclose(t.option_log_theta, np.log(th[topics]))


def test_answer_key_never_in_the_annotator_file(model, tmp_path):
    tasks = word_tasks(model, seed=1) + topic_tasks(model, (np.full((2, 12), 1 / 12) + np.eye(2, 12)) / 2,
                                                      seed=1)
    for ext in ("jsonl", "csv"):
        write_tasks(tasks, tmp_path / f"tasks.{ext}", tmp_path / f"key.{ext}")
        public = (tmp_path / f"tasks.{ext}").read_text()
        assert "intruder" not in public and "attention" not in public and "log_theta" not in public
        assert "intruder" in (tmp_path / f"key.{ext}").read_text()
    rows = [json.loads(line) for line in (tmp_path / "tasks.jsonl").read_text().splitlines()]
    assert [r["options"] for r in rows] == [t.options for t in tasks]


def _key():
    return [
        {"item": "w0", "kind": "word", "model": "A", "topic": 0, "intruder": 2, "options": list("abcdef")},
        {"item": "w1", "kind": "word", "model": "A", "topic": 1, "intruder": 0, "options": list("abcdef")},
        {"item": "att", "kind": "word", "model": "A", "topic": 0, "intruder": 5, "attention": True,
         "options": list("abcdef")},
        {"item": "d0", "kind": "topic", "model": "A", "document": 0, "intruder": 1,
         "options": ["t", "u", "v", "w"], "option_log_theta": [math.log(0.5), math.log(0.05),
                                                             math.log(0.3), math.log(0.15)]},
    ]


def test_model_precision_and_topic_log_odds_by_hand():
    responses = [
        {"annotator": "p", "item": "w0", "choice": 2}, {"annotator": "q", "item": "w0", "choice": 2},
        {"annotator": "r", "item": "w0", "choice": 1}, {"annotator": "p", "item": "w1", "choice": 3},
        {"annotator": "q", "item": "w1", "choice": 0},
        {"annotator": "p", "item": "d0", "choice": 1}, {"annotator": "q", "item": "d0", "choice": 0},
        {"annotator": "p", "item": "att", "choice": 5}, {"annotator": "q", "item": "att", "choice": 5},
        {"annotator": "r", "item": "att", "choice": 5},
    ]
    s = score(_key(), responses, bootstrap=500)
    assert s.model_precision["A"] == {0: pytest.approx(2 / 3), 1: pytest.approx(1 / 2)}
    # d0: p chose the intruder (0), q chose topic t: log .05 - log .5
    assert s.topic_log_odds["A"][0] == pytest.approx((0 + math.log(0.05) - math.log(0.5)) / 2)
    summ = s.summary["A"]
    assert summ["model_precision"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    lo, hi = summ["model_precision_ci"]
    assert lo <= summ["model_precision"] <= hi
    assert s.excluded_annotators == [] and s.responses_used == 7


def test_attention_failures_exclude_annotators_and_bad_responses_are_errors():
    responses = [{"annotator": "p", "item": "w0", "choice": 2}, {"annotator": "z", "item": "w0", "choice": 1},
                 {"annotator": "z", "item": "att", "choice": 0}]
    s = score(_key(), responses)
    assert s.excluded_annotators == ["z"] and s.model_precision["A"][0] == 1.0
    with pytest.raises(tl.MethodError, match="unknown item 'nope'"):
        score(_key(), [{"annotator": "p", "item": "nope", "choice": 0}])
    with pytest.raises(tl.MethodError, match="has no option 9"):
        score(_key(), [{"annotator": "p", "item": "w0", "choice": 9}])
    with pytest.raises(tl.MethodError, match="answered item 'w0' twice"):
        score(_key(), [{"annotator": "p", "item": "w0", "choice": 1}] * 2)


def test_fleiss_kappa_by_hand():
    # two items, three raters, two categories: perfect agreement on both -> kappa 1
    assert fleiss_kappa({"a": [0, 0, 0], "b": [1, 1, 1]}, 2) == pytest.approx(1.0)
    # Fleiss' worked example shape: P_i and P_e by hand
    ch = {"a": [0, 0, 1], "b": [1, 1, 1], "c": [0, 1, 1]}
    P = np.mean([(4 + 1 - 3) / 6, (9 - 3) / 6, (1 + 4 - 3) / 6])
    p = np.array([3, 6]) / 9
    assert fleiss_kappa(ch, 2) == pytest.approx((P - p @ p) / (1 - p @ p))


def test_word_tasks_relax_when_no_word_is_in_the_bottom_half():
    """Two topics ranking the same ten words first and using every word (no floor): no other-topic
    top word lies in a topic's bottom half, which is an error unless relax=True (the least
    probable such word, marked)."""
    base = np.r_[np.linspace(10, 5, 10), np.linspace(0.1, 0.05, 10)]
    phi = np.stack([base, base + np.r_[np.zeros(10), np.linspace(0, 0.1, 10)]])
    vocab = [f"w{i}" for i in range(20)]
    model = tl.TopicModel(phi / phi.sum(axis=1, keepdims=True), [0.5, 0.5], vocab=vocab)
    with pytest.raises(tl.MethodError, match="no word is both in another topic's top 10"):
        tl.intrusion.word_tasks(model)
    tasks = tl.intrusion.word_tasks(model, relax=True)
    for t in tasks:
        intruder = t.options[t.intruder]
        top = [w for i, w in enumerate(t.options) if i != t.intruder]
        assert t.relaxed and set(top) == set(vocab[:5])
        assert intruder == "w9"  # of the other topic's top 10 not shown, the least probable here
