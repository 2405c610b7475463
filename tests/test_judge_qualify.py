"""Qualifying a judge against the real llama.cpp server (the session's server, tests/conftest.py):
the "noisy" tiny model answers the bundled studies' questions with well-formed digits that vary
from topic to topic and know nothing of topics, so its agreement with people is chance; what is
checked is the pipeline's numbers against an independent computation from the answers kept in the
cache (the distributions read from the raw log-probabilities, people's means, scipy's
correlations), the cost estimate and the cache on a rerun, and a judge that answers nothing."""

from __future__ import annotations

import json
import math
import re
import sqlite3

import numpy as np
import pytest
from clirun import run_cli

pytest.importorskip("llama_cpp")
pytest.importorskip("gguf")
pytest.importorskip("httpx")

import tealeaves as tl  # noqa: E402
from tealeaves.judge.qualify import qualify, saved_qualification  # noqa: E402

HOYLE_TOPICS, BILLS_TOPICS, BOOT = 12, 1, 200


def judge(url, cache, llm="noisy", **kw):
    return tl.Judge(url, llm, cache=cache, method="logprobs", progress=False, **kw)


def kept(cache) -> list[tuple[str, dict]]:
    """(the user's message, the answer) of every request the cache holds."""
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT request, response FROM answers").fetchall()
    return [(json.loads(q)["messages"][-1]["content"], json.loads(a)) for q, a in rows]


def distribution(answer: dict, n: int) -> np.ndarray:
    """P(answer d), d = 1..n, from the first token's top log-probabilities (digits with or without
    a leading space), normalised over the answers."""
    p = np.zeros(n)
    for alt in answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]:
        t = alt["token"].strip()
        if t.isdigit() and 1 <= int(t) <= n:
            p[int(t) - 1] += math.exp(alt["logprob"])
    return p / p.sum()


@pytest.fixture(scope="module")
def hoyle():
    return tl.load_judgments("hoyle2021")


@pytest.fixture(scope="module")
def bills():
    return tl.load_judgments("proxann2025:bills")


@pytest.fixture(scope="module")
def hoyle_run(server, tmp_path_factory):
    cache = tmp_path_factory.mktemp("qualify") / "judge.sqlite"
    j = judge(server.url, cache)
    estimate = qualify(j, "hoyle2021", topics=HOYLE_TOPICS, dry_run=True)
    res = qualify(j, "hoyle2021", topics=HOYLE_TOPICS, bootstrap=BOOT)
    return j, cache, estimate, res


def test_hoyle_numbers_from_the_cached_answers(hoyle_run, hoyle):
    """Expected ratings and P(intruder) recomputed from the raw answers; Spearman with people's
    means; the estimate said how many requests, and that many were sent."""
    from scipy.stats import spearmanr

    j, cache, estimate, res = hoyle_run
    assert estimate["total"]["requests"] == estimate["total"]["to_send"] == 2 * HOYLE_TOPICS
    assert res.accounting["sent"] == res.accounting["requests"] == 2 * HOYLE_TOPICS
    ids = res.studies["hoyle2021"]["topic_ids"]
    assert len(ids) == HOYLE_TOPICS and res.studies["hoyle2021"]["of"] == 300
    answers = kept(cache)
    expected, p_intruder = [], []
    for tid in ids:
        t = hoyle.topics.index(tid)
        words = hoyle.topics.words[t]
        rating = [a for q, a in answers if "fit together" in q and ", ".join(words[:10]) in q]
        assert len(rating) == 1
        expected.append(float(distribution(rating[0], 3) @ np.arange(1, 4)))
        shown = [(q, a) for q, a in answers if "does not belong" in q
                 and set(words[:5]) <= set(re.findall(r"^\d\. (.+)$", q, re.M))]
        assert len(shown) == 1
        options = re.findall(r"^\d\. (.+)$", shown[0][0], re.M)
        intruder = [k for k, w in enumerate(options) if w not in words[:5]]
        assert len(options) == 6 and len(intruder) == 1
        p_intruder.append(float(distribution(shown[0][1], 6)[intruder[0]]))
    assert len(set(np.round(expected, 6))) > 1  # the noisy model's answers vary
    rows = [hoyle.topics.index(t) for t in ids]
    people = {task: [float(np.mean(hoyle[task].value[hoyle[task].topic == t])) for t in rows]
              for task in ("rating", "word-intrusion")}
    tasks = {t["task"]: t for t in res.tasks}
    for task, mine in (("rating", expected), ("word-intrusion", p_intruder)):
        c = tasks[task]["correlation"]["all"]
        assert c["estimate"] == pytest.approx(spearmanr(mine, people[task])[0], abs=1e-9)
        assert c["low"] is not None and c["low"] <= c["high"] and c["topics"] == HOYLE_TOPICS
        assert tasks[task]["scored"] == HOYLE_TOPICS
        # a subsample leaves each of Hoyle et al.'s annotators far below the test's 30 topics
        assert "the test needs 30 each" in tasks[task]["alt_test"]["topic"]["why"]
        assert tasks[task]["verdict"]["trusted"] is None


def test_rerun_is_free_and_the_qualification_is_kept(hoyle_run, tmp_path):
    """Again, through the command: every answer from the cache, the same figures; the
    qualification is kept in the cache under the judge's settings."""
    j, cache, _, res = hoyle_run
    out = tmp_path / "q.json"
    code, stdout, err = run_cli(["judge", "qualify", "--base-url", j.base_url, "--llm", "noisy",
                                 "--method", "logprobs", "--cache", cache, "--study", "hoyle2021", "--topics",
                                 HOYLE_TOPICS, "--bootstrap", BOOT, "--quiet", "--json", out])
    assert code == 0, err
    assert f"estimate: {2 * HOYLE_TOPICS} requests ({2 * HOYLE_TOPICS} already cached, 0 to send)" in stdout
    assert f"requests {2 * HOYLE_TOPICS} ({2 * HOYLE_TOPICS} from the cache, 0 sent)" in stdout
    assert "=> not decided" in stdout and "Spearman with people's mean 3-point ratings: judge" in stdout
    doc = json.loads(out.read_text())
    assert doc["task"] == "judge-qualify" and doc["accounting"]["cache_hit_rate"] == 1.0
    again = doc["studies"]["hoyle2021"]["tasks"]
    assert [t["correlation"] for t in again] == [t["correlation"] for t in res.tasks]
    saved = saved_qualification(judge(j.base_url, cache))
    assert saved is not None and [t["task"] for t in saved["studies"]["hoyle2021"]["tasks"]] == \
        ["rating", "word-intrusion"]
    assert saved_qualification(judge(j.base_url, cache, temperature=0.5)) is None  # other settings
    # evaluate's and select's columns of this judge carry it (evaluate/judged.py)
    from tealeaves.evaluate.judged import agreement

    got = agreement(judge(j.base_url, cache), ("word-intrusion", "ratings"))
    tasks = {t["task"]: t for t in res.tasks}
    assert got["judge rating"]["estimate"] == tasks["rating"]["correlation"]["all"]["estimate"]
    assert got["judge MP"]["estimate"] == tasks["word-intrusion"]["correlation"]["all"]["estimate"]
    assert f"{HOYLE_TOPICS} topics (a random {HOYLE_TOPICS} of 300)" in got["judge MP"]["text"]
    assert "not decided" in got["judge MP"]["text"] and got["judge MP"]["trusted"] is None


def test_select_shows_the_kept_agreement_beside_the_judge_columns(hoyle_run):
    """select with the qualified judge (the same settings): its columns, and beside them the
    agreement the qualification measured, in the summary, the JSON and the report."""
    from tealeaves import datasets
    from tealeaves.report import render

    j, cache, _, res = hoyle_run
    c = datasets.sotu().train.subset(range(40))
    texts = [[c.vocab[i] for i in d] for d in c]
    sel = tl.select(texts, topics=[2], restarts=1, holdout=0.3, iterations=5, particles=5,
                    coherence=("umass",), progress=False, judge=judge(j.base_url, cache))
    assert "judge MP" in sel.per_k and "judge rating" in sel.per_k
    tasks = {t["task"]: t for t in res.tasks}
    got = sel.params["judge_agreement"]
    assert got["judge rating"]["estimate"] == tasks["rating"]["correlation"]["all"]["estimate"]
    assert got["judge MP"]["text"] in sel.summary() and got["judge rating"]["text"] in sel.summary()
    html = render([sel.to_dict()], "select")
    assert "judge rating: agreement with people on hoyle2021 rating" in html


def test_proxann_numbers_from_the_cached_answers(server, tmp_path, bills):
    """ProxAnn's steps on one Bills topic (its prompts are long: seven documents each): the
    expected fits recomputed from the raw answers, their tau with theta (the topic's quality by the
    judge) and the people's; the alternative-annotator test sees the 7 documents; the tiny model
    never writes a ranking, so rank is unanswered and said so."""
    from scipy.stats import kendalltau

    cache = tmp_path / "judge.sqlite"
    res = qualify(judge(server.url, cache), "proxann2025:bills", topics=BILLS_TOPICS, bootstrap=BOOT)
    assert res.accounting["requests"] == 9 * BILLS_TOPICS  # a label, 7 fits, a ranking per topic
    answers = kept(cache)
    docs, f = bills.documents, bills["fit"]
    tasks = {t["task"]: t for t in res.tasks}
    fit = tasks["fit"]
    assert fit["per_topic"]["ids"] == res.studies["proxann2025:bills"]["topic_ids"]
    for tid, judge_q, people_q in zip(*fit["per_topic"].values(), strict=True):
        t = bills.topics.index(tid)
        ev = docs.of(t, "evaluated")
        fits = []
        for r in ev:
            text = " ".join(docs.text[r].split())
            got = [a for q, a in answers if q.startswith("Category:") and f"Document:\n{text}\n" in q]
            assert len(got) == 1
            fits.append(float(distribution(got[0], 5) @ np.arange(1, 6)))
        assert len(set(np.round(fits, 6))) > 1
        assert judge_q == pytest.approx(kendalltau(fits, docs.theta[ev]).statistic, abs=1e-12)
        means = [np.mean(f.value[(f.topic == t) & (f.item == docs.item[r])]) for r in ev]
        assert people_q == pytest.approx(kendalltau(means, docs.theta[ev]).statistic, abs=1e-12)
    assert fit["scored"] == BILLS_TOPICS and "too few for a correlation" in fit["notes"][0]
    assert fit["alt_test"]["document"]["instances"] == 7 * BILLS_TOPICS
    assert tasks["rank"]["scored"] == 0 and tasks["rank"]["verdict"]["trusted"] is False
    assert res.accounting["unanswered"] == BILLS_TOPICS  # the rankings
    labels = res.studies["proxann2025:bills"]["answers"]["label"]
    assert len(labels["text"]) == BILLS_TOPICS


def test_a_judge_that_answers_nothing(server, tmp_path):
    """The "letters" model never puts a digit first: every question unanswered, counted, and the
    judge is not trusted, said in words."""
    res = qualify(judge(server.url, tmp_path / "c.sqlite", llm="letters"), "hoyle2021", tasks="ratings",
                  topics=3, bootstrap=0, save=False)
    t = res.tasks[0]
    assert t["scored"] == 0 and t["answers"] == 0 and res.accounting["unanswered"] == 3
    assert t["verdict"] == {"trusted": False, "text": "NOT trusted: it answered none of the 3 topics"}
    assert "3 items unanswered" in "\n".join(res.lines())
    assert saved_qualification(judge(server.url, tmp_path / "c.sqlite", llm="letters")) is None
