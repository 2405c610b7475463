"""Qualifying a judge (`tealeaves judge qualify`), without a server: the scoring path every judge's
answers take (`metaeval.qualify`), run on the LLM answers ProxAnn released, against the published
Table 3 (Hoyle et al. 2025) and the figures experiments/human_agreement.py computed; the answers'
builder (`judgments.automated`), subsamples, the intruders drawn for Hoyle et al.'s topics, and
bad input. The path against a real server: tests/test_judge_server.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from published import PROXANN_TABLE3

import tealeaves as tl
from tealeaves.errors import MethodError
from tealeaves.judgments import Scale
from tealeaves.judgments.automated import judge_answers
from tealeaves.metaeval.qualify import QualifyResult, judge_agreement, qualify_bundled

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT = ROOT / "experiments" / "results" / "human_agreement.json"



@pytest.fixture(scope="module")
def bills():
    return tl.load_judgments("proxann2025:bills")


@pytest.fixture(scope="module")
def experiment():
    return json.loads(EXPERIMENT.read_text(encoding="utf-8"))["proxann2025"]


def _cells(res: QualifyResult) -> list[dict]:
    """Table 3's four cells in its order: document fit, document rank, topic fit, topic rank."""
    by = {t["task"]: t for t in res.tasks}
    return [by[task]["alt_test"][level] for level in ("document", "topic") for task in ("fit", "rank")]


def test_bundled_llms_through_the_path_reproduce_table3(bills, experiment):
    """The seven LLMs' released answers through the qualification path: every published advantage
    probability within 0.01 (the pseudo-annotators are random: the authors' draws cannot be
    repeated), the same judges win, and exactly the values the experiment's own calls give."""
    seen = 0
    for name in bills.judges:
        res = qualify_bundled(bills, name, seed=42, bootstrap=0, repeats=2)
        cells = _cells(res)
        ours = experiment["table3"][name]["ours"]
        assert [c["advantage_probability"] for c in cells] == [o["advantage_probability"] for o in ours]
        assert [c["winning_rate"] for c in cells] == [o["winning_rate"] for o in ours]
        if name not in PROXANN_TABLE3:  # Qwen3-30B-A3B: released, not in the table
            continue
        for c, pub in zip(cells, PROXANN_TABLE3[name], strict=True):
            assert abs(c["advantage_probability"] - float(pub.rstrip("*"))) <= 0.01, (name, pub, c)
            assert (c["winning_rate"] > 0.5) == pub.endswith("*"), (name, pub, c)
            seen += 1
        trusted = {t["task"]: t["verdict"]["trusted"] for t in res.tasks}
        assert trusted == {t: all(pub.endswith("*") for pub in PROXANN_TABLE3[name][k::2]) for k, t in
                           enumerate(("fit", "rank"))}
    assert seen == 24


def test_bundled_llm_agreement_is_the_experiments(bills, experiment):
    """Kendall tau with the people's topic quality (theta), its two-stage interval and the ceiling,
    and the leave-one-out human baseline (Table 4's human row): the values the experiment computed
    with the metaeval functions directly."""
    name = "Qwen3-32B"
    res = qualify_bundled(bills, name, seed=0)
    for t in res.tasks:
        got = t["correlation"]["all"]
        rows = experiment["agreement"][f"{t['task']}|theta"]
        want = next(r for r in rows["rows"] if r["score"] == f"judge:{name}" and r["group"] == "all")
        assert (got["estimate"], got["low"], got["high"]) == (want["estimate"], want["low"], want["high"])
        ceiling = next(c for c in rows["ceiling"] if c["group"] == "all")
        assert t["ceiling"]["all"]["ceiling"] == ceiling["ceiling"]
        human = experiment["table4"]["human"][t["task"]]["authors_procedure"]
        assert [t["human_baseline"]["mean"], t["human_baseline"]["sd"]] == human
    assert "trusted" in "\n".join(res.lines())


def test_answers_builder_and_subsamples(bills):
    """A judge's answers become Judgments (missing answers left out, choices kept); a subsample
    keeps its topics' answers, documents and metrics in the new order."""
    topics = bills.topics
    j = judge_answers("fit", Scale("real", 0, 5), topics, {"r": {0: [1, None, 3, 4, 5, 2, 1], 2: None}},
                      bills.documents)
    assert len(j) == 6 and set(j.item.tolist()) == {0, 2, 3, 4, 5, 6} and j.annotators == ("r",)
    r = judge_answers("rating", Scale("real", 1, 3), topics, {"a": {1: 2.5, 3: float("nan")}},
                      choices={"a": {1: 3, 3: 1}})
    assert r.topic.tolist() == [1] and r.choice.tolist() == [3]
    with pytest.raises(MethodError, match="topic 99 is not among the 24 topics"):
        judge_answers("rating", Scale("real", 1, 3), topics, {"a": {99: 2.0}})
    with pytest.raises(MethodError, match="a choice goes with each answer"):
        judge_answers("rating", Scale("real", 1, 3), topics, {"a": {1: 2.0}}, choices={"a": {}})
    with pytest.raises(Exception, match="off the scale"):
        judge_answers("rating", Scale("real", 1, 3), topics, {"a": {1: 7.0}})
    sub = bills.take([5, 2])
    assert sub.topics.ids == (topics.ids[5], topics.ids[2])
    assert np.array_equal(sub.metrics["npmi"], bills.metrics["npmi"][[5, 2]])
    for task in ("fit", "rank"):
        whole, part = bills[task], sub[task]
        assert len(part) == int(np.isin(whole.topic, [5, 2]).sum())
        assert np.allclose(np.sort(part.value[part.topic == 0]), np.sort(whole.value[whole.topic == 5]))
    rows = sub.documents.of(1, "evaluated")
    assert sub.documents.text[rows[0]] == bills.documents.text[bills.documents.of(2, "evaluated")[0]]
    with pytest.raises(MethodError, match="distinct indices below 24"):
        bills.take([1, 1])


def test_intruders_are_drawn_as_the_authors_drew_them():
    """Hoyle et al.'s word intrusion: the top 5 words and one of the top 5 words of another topic of
    the same corpus and model that is not among the topic's words; the same draw for a topic in a
    subsample as in the whole study; in the order shown, the intruder's place varies."""
    from tealeaves.judge.qualify import intrusion_rows

    hoyle = tl.load_judgments("hoyle2021")
    t = hoyle.topics
    rows = intrusion_rows(hoyle, seed=3)
    places = set()
    for r in rows:
        k = r["topic"]
        words = t.words[k]
        intruder = r["options"][r["intruder"]]
        assert sorted(o for o in r["options"] if o != intruder) == sorted(words[:5])
        assert intruder not in words
        same = [o for o in range(len(t)) if (t.corpus[o], t.model[o]) == (t.corpus[k], t.model[k])]
        sources = [o for o in same if o != k and intruder in t.words[o][:5]]
        assert sources, r
        places.add(r["intruder"])
    assert places == set(range(6))
    part = intrusion_rows(hoyle, [7, 250], seed=3)
    assert [(r["options"], r["intruder"], r["topic"]) for r in part] == \
        [(rows[7]["options"], rows[7]["intruder"], 0), (rows[250]["options"], rows[250]["intruder"], 1)]
    assert intrusion_rows(hoyle, [7], seed=4)[0]["options"] != rows[7]["options"]


@pytest.fixture(scope="module")
def hoyle_oracle():
    """On Hoyle et al.'s topics a judge answering the median of each topic's ratings and, for word
    intrusion, at random: its answers and their figures."""
    hoyle = tl.load_judgments("hoyle2021")
    r = hoyle["rating"]
    n = len(hoyle.topics)
    med = [float(np.median(r.value[r.topic == t])) for t in range(n)]
    rng = np.random.default_rng(0)
    noise = rng.random(n)
    answers = {
        "rating": judge_answers("rating", Scale("real", 1, 3), hoyle.topics, {"s": dict(enumerate(med))},
                                choices={"s": {t: int(round(m)) for t, m in enumerate(med)}}),
        "word-intrusion": judge_answers("word-intrusion", Scale("real", 0, 1), hoyle.topics,
                                        {"s": dict(enumerate(noise.tolist()))},
                                        choices={"s": {t: int(rng.integers(1, 7)) for t in range(n)}})}
    return hoyle, med, noise, judge_agreement(hoyle, answers, bootstrap=0, repeats=2)


def test_hoyle_protocol_compares_answers_a_person_gives(hoyle_oracle):
    """The median oracle passes the alternative-annotator test on the real annotators; the random
    one does not; the correlations are Spearman's with the people's means."""
    from scipy.stats import spearmanr

    hoyle, med, noise, figures = hoyle_oracle
    r, w = hoyle["rating"], hoyle["word-intrusion"]
    n = len(hoyle.topics)
    acc = [float(np.mean(w.value[w.topic == t])) for t in range(n)]
    tasks = {t["task"]: t for t in figures}
    rating, words = tasks["rating"], tasks["word-intrusion"]
    assert rating["alt_test"]["topic"]["passes"] and rating["verdict"]["trusted"] is True
    assert rating["alt_test"]["topic"]["annotators"] == 155
    assert words["alt_test"]["topic"]["passes"] is False and words["verdict"]["trusted"] is False
    means = [float(np.mean(r.value[r.topic == t])) for t in range(n)]
    assert rating["correlation"]["all"]["estimate"] == pytest.approx(spearmanr(med, means)[0], abs=1e-12)
    assert words["correlation"]["all"]["estimate"] == pytest.approx(spearmanr(noise, acc)[0], abs=1e-12)


def test_agreement_beside_the_judge_columns(hoyle_oracle, tmp_path):
    """evaluate's and select's judge columns carry the judge's kept qualification (the same
    settings' only): per column its figures and verdict in a line, and the report shows the
    lines; a judge never qualified is said to be, with the command that qualifies it."""
    from tealeaves.evaluate.judged import agreement
    from tealeaves.judge.qualify import judge_key
    from tealeaves.report import _judge_agreement

    figures = hoyle_oracle[3]
    judge = tl.Judge("http://127.0.0.1:9/v1", "m", cache=tmp_path / "c.sqlite")
    doc = QualifyResult("m", judge.settings(), {"hoyle2021": {"topics": 300, "of": 300, "tasks": figures}})
    judge.open_cache().put_qualification(judge_key(judge.settings()), "m", doc.to_dict())
    got = agreement(judge, ("word-intrusion", "ratings"))
    tasks = {t["task"]: t for t in figures}
    for head, task in (("judge MP", "word-intrusion"), ("judge rating", "rating")):
        a, t = got[head], tasks[task]
        assert a["qualified"] and a["study"] == "hoyle2021" and a["task"] == task
        assert a["estimate"] == t["correlation"]["all"]["estimate"]
        assert a["human_baseline"] == t["human_baseline"]["mean"]
        assert a["trusted"] is t["verdict"]["trusted"] and t["verdict"]["text"] in a["text"]
        assert f"Spearman {t['correlation']['all']['estimate']:.2f}" in a["text"]
    assert got["judge rating"]["text"].startswith("judge rating: agreement with people on hoyle2021 rating, "
                                                  "300 topics: Spearman")
    other = tl.Judge("http://127.0.0.1:9/v1", "m", cache=tmp_path / "c.sqlite", temperature=0.5)
    never = agreement(other, ("word-intrusion",))["judge MP"]
    assert never["qualified"] is False and "`tealeaves judge qualify --task words`" in never["text"]
    html = "".join(_judge_agreement(got))
    assert "tealeaves judge qualify" in html and "agreement with people on hoyle2021 word-intrusion" in html
    assert _judge_agreement({}) == []


def test_bad_input():
    from tealeaves.judge.qualify import qualify

    judge = tl.Judge("http://127.0.0.1:9/v1", "m", cache=":memory:")
    with pytest.raises(MethodError, match="no bundled study 'hoyle2099'"):
        qualify(judge, "hoyle2099", dry_run=True)
    with pytest.raises(MethodError, match="judge task 'topics' is not one of ratings, words, proxann"):
        qualify(judge, tasks="topics", dry_run=True)
    with pytest.raises(MethodError, match=r"tasks proxann is in hoyle2021 \(hoyle2021: ratings, words\)"):
        qualify(judge, "hoyle2021", tasks="proxann", dry_run=True)
    with pytest.raises(MethodError, match="topics=25: proxann2025:bills has only 24"):
        qualify(judge, "proxann2025:bills", topics=25, dry_run=True)
    with pytest.raises(MethodError, match="topics=301: hoyle2021 has only 300"):
        qualify(judge, topics=301, dry_run=True)
    with pytest.raises(MethodError, match="topics must be a whole number >= 1"):
        qualify(judge, topics=0, dry_run=True)
    with pytest.raises(MethodError, match="no judge 'gpt-5'"):
        qualify_bundled(tl.load_judgments("proxann2025:bills"), "gpt-5")
    # more topics than the smaller study, fewer than the larger: the smaller is taken whole, said
    est = qualify(judge, tasks=["ratings", "proxann"], topics=30, dry_run=True)
    assert est["tasks"]["hoyle2021 ratings"]["requests"] == 30
    assert est["tasks"]["proxann2025:bills proxann"]["requests"] == 24 * 9


def test_report_section(bills, tmp_path):
    """A qualification's JSON is a report section: the verdicts in words, the table, the notes; a
    forged one is a one-line error naming the field."""
    from tealeaves.output.jsonout import write_json
    from tealeaves.report import all_tables, render
    from tealeaves.report.schema import check_result

    doc = {"command": "judge qualify", **qualify_bundled(bills, "gpt-4o-2024-08-06", bootstrap=100,
                                                          repeats=5).to_dict()}
    check_result(doc, "q.json")
    html = render([doc])
    assert "Qualification of the judge gpt-4o-2024-08-06" in html and "trusted: it passes" in html
    table = all_tables([doc])[0]
    assert [r[0] for r in table.rows] == ["fit", "rank"] and "one person vs the rest" in table.head
    write_json(tmp_path / "q.json", doc)
    from clirun import run_cli

    code, _, err = run_cli(["report", tmp_path / "q.json", "--out", tmp_path / "r.html"])
    assert code == 0, err
    assert "Qualification of the judge" in (tmp_path / "r.html").read_text()
    bad = json.loads((tmp_path / "q.json").read_text())
    bad["studies"]["proxann2025:bills"]["tasks"][0]["verdict"] = "yes"
    with pytest.raises(Exception, match=r"studies.proxann2025:bills.tasks\[0\].verdict: expected an object"):
        check_result(bad, "bad.json")
