"""The LLM judge against a real server: llama.cpp's OpenAI-compatible server (llama-cpp-python,
installed by the test extra) started by these tests on loopback, serving tiny models the tests
write (tests/tinyllm.py): no download.

The "designed" model's next token has the same known distribution at every position, whatever
the prompt (softmax of `tinyllm.DESIGNED_LOGITS`), so the distributions the judge reads from
log-probabilities and from samples have exact reference values computed here from the logits.
The "random" model (Gaussian weights) writes what a model that ignores instructions writes; the
"letters" model never puts a digit first. Failures are real too: a server killed mid-run, a port
with nothing listening, a TCP server that never answers, and a minimal reverse proxy in front of
the real server for 429, 5xx, answers that are not JSON and answers without log-probabilities."""

from __future__ import annotations

import json
import math
import threading
import time

import numpy as np
import pytest
from clirun import run_cli

pytest.importorskip("llama_cpp")
pytest.importorskip("gguf")
pytest.importorskip("httpx")

import tinyllm  # noqa: E402

import tealeaves as tl  # noqa: E402
from tealeaves.errors import MethodError  # noqa: E402
from tealeaves.judge import TEXTS_VERSION, EndpointError, answers  # noqa: E402
from tealeaves.judge.cache import Cache  # noqa: E402

# llama.cpp's own sampling settings, off: the samples then follow softmax(logits / temperature)
PLAIN = {"repeat_penalty": 1.0, "top_k": 0, "min_p": 0.0}
LETTERS = tinyllm.LETTERS
SAMPLER = tinyllm.SAMPLER


@pytest.fixture(scope="session")
def sotu20():
    return tl.load_model("sotu:sotu-20-asym")


def judge(url, tmp_path, llm="designed", **kw):
    kw.setdefault("cache", tmp_path / "cache.sqlite")
    kw.setdefault("progress", False)
    return tl.Judge(url, llm, **kw)


def reference(n: int, logits=tinyllm.DESIGNED_LOGITS):
    """The designed model's next-token probabilities of the answers 1..n ("d" and " d" together),
    the same normalised over the answers, and P(end of text): from the logits alone."""
    vec = tinyllm.logit_vector(logits)
    p = np.exp(vec - vec.max())
    p /= p.sum()
    vocab = tinyllm.vocabulary()
    ws = tinyllm.WORD_START
    q = np.array([p[vocab.index(str(d))] + p[vocab.index(ws + str(d))] for d in range(1, n + 1)])
    return q, q / q.sum(), p[vocab.index("</s>")]


# -- the server itself --------------------------------------------------------------------------


def test_the_server_serves_what_the_judge_needs(server, tmp_path):
    """/v1/models lists the aliases; chat and completions answer with top log-probabilities
    (OpenAI's two layouts), honour max_tokens and report the model; check() says so."""
    import httpx

    models = httpx.get(server.url + "/models").json()
    assert sorted(m["id"] for m in models["data"]) == ["designed", "letters", "noisy", "random", "sampler"]
    chat = httpx.post(server.url + "/chat/completions", json={
        "model": "designed", "messages": [{"role": "user", "content": "Say 1"}], "max_tokens": 1,
        "temperature": 0, "seed": 4, "logprobs": True, "top_logprobs": 5}, timeout=60).json()
    top = chat["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    assert [t["token"] for t in top] == ["2", "1", " 2", "a", "3"]  # the designed logits' order
    assert chat["choices"][0]["message"]["content"] == "2"
    comp = httpx.post(server.url + "/completions", json={
        "model": "designed", "prompt": "Say 1", "max_tokens": 1, "temperature": 0, "logprobs": 3},
        timeout=60).json()
    assert list(comp["choices"][0]["logprobs"]["top_logprobs"][0]) == ["2", "1", " 2"]
    info = judge(server.url, tmp_path).check()
    assert info["served"] == ["designed", "random", "letters", "sampler", "noisy"]
    assert info["logprobs"] is True
    assert info["reported_model"] == "designed"


# -- log-probabilities ---------------------------------------------------------------------------


def test_word_intrusion_distribution_from_logprobs_is_exact(server, tmp_path, sotu20):
    res = judge(server.url, tmp_path, method="logprobs").word_intrusion(sotu20)
    mass, dist, _ = reference(6)
    assert len(res.items) == 20 and res.summary["answered"] == 20
    for it in res.items:
        assert it["source"] == "logprobs"
        assert it["dist"] == pytest.approx(dist, abs=1e-6)
        assert it["mass"] == pytest.approx(mass.sum(), rel=1e-5)
        assert it["score"] == pytest.approx(dist[it["intruder"]], abs=1e-6)
        assert it["choice"] == 1  # "2", the most probable answer
    assert res.scores == {it["topic"]: it["score"] for it in res.items}
    assert res.summary["mean"] == pytest.approx(np.mean([dist[it["intruder"]] for it in res.items]))
    acc = res.accounting
    assert (acc["requests"], acc["sent"], acc["cached"]) == (20, 20, 0)
    assert acc["reported_models"] == ["designed"] and acc["malformed"] == 0
    assert res.settings["texts_version"] == TEXTS_VERSION
    assert res.sent_to == {"base_url": server.url, "remote": False, "sent": "topics' top words and intruders"}


def test_ratings_expected_rating_is_exact(server, tmp_path, sotu20):
    res = judge(server.url, tmp_path).ratings(sotu20)
    _, dist, _ = reference(3)
    want = float(np.dot(dist, [1, 2, 3]))
    assert [it["expected"] for it in res.items] == pytest.approx([want] * 20, abs=1e-6)
    assert res.score_name == "expected_rating" and res.summary["mean"] == pytest.approx(want, abs=1e-6)
    # word lists work as well as a model
    res2 = judge(server.url, tmp_path).ratings([["a", "b", "c"], ["d", "e"]])
    assert [it["expected"] for it in res2.items] == pytest.approx([want] * 2, abs=1e-6)


def test_topic_intrusion_from_the_key_people_answer(server, tmp_path, sotu20):
    """The tasks `tealeaves intrusion topics` writes for the app, answered by the judge: P(intruder)
    and the expected topic log odds from the key's log proportions."""
    docs = tl.read_corpus("sotu:heldout")
    tasks = tl.intrusion.topic_tasks(sotu20, docs, documents=range(6), samples=20, burn_in=10, seed=1)
    key = tmp_path / "key.jsonl"
    tl.intrusion.write_tasks(tasks, tmp_path / "tasks.jsonl", key)
    res = judge(server.url, tmp_path).topic_intrusion(str(key))
    _, dist, _ = reference(4)
    for t, it in zip(tasks, res.items, strict=True):
        lt = np.array(t.option_log_theta)
        assert it["score"] == pytest.approx(dist[t.intruder], abs=1e-6)
        want = sum(dist[c] * (lt[t.intruder] - lt[c]) for c in range(4))
        assert it["topic_log_odds"] == pytest.approx(want, abs=1e-5)


def test_completions_api(server, tmp_path, sotu20):
    res = judge(server.url, tmp_path, api="completions").word_intrusion(sotu20, topics=[0, 1])
    _, dist, _ = reference(6)
    assert [it["dist"] for it in res.items] == [pytest.approx(dist, abs=1e-6)] * 2


# -- samples ---------------------------------------------------------------------------------------


def test_samples_follow_the_model(server, tmp_path, sotu20):
    """200 sampled ratings at temperature 1: a well-formed answer d has probability q_d * P(end)
    (the digit, then the end of text), everything else is malformed; each count within 4.5
    binomial standard errors of that (an answer read as its neighbour would be 40 away)."""
    j = judge(server.url, tmp_path, llm="sampler", method="samples", samples=10, extra_body=PLAIN)
    res = j.ratings(sotu20)
    q, _, p_end = reference(3, SAMPLER)
    probs = np.append(q * p_end, 1 - (q * p_end).sum())
    counts = np.zeros(4)
    for it in res.items:
        counts[3] += it["malformed"]
        for r in it["replies"]:
            if (c := answers.choice(r, 3)) is not None:
                counts[c] += 1
        if it.get("dist") is not None:  # the distribution is the share of well-formed replies
            assert it["dist"] == pytest.approx(list(counts_of(it["replies"]) / (10 - it["malformed"])))
    N = counts.sum()
    assert N == 200 and res.accounting["malformed"] == counts[3]
    z = (counts - N * probs) / np.sqrt(N * probs * (1 - probs))
    assert np.all(np.abs(z) < 4.5), (counts, N * probs)
    # the replies come from the seeds: another seed gives other replies
    j1 = judge(server.url, tmp_path, llm="sampler", method="samples", samples=10, seed=1, extra_body=PLAIN)
    other = j1.ratings([res.items[0]["words"]])  # the same question
    assert other.items[0]["replies"] != res.items[0]["replies"]


def counts_of(replies):
    return np.array([sum(answers.choice(r, 3) == c for r in replies) for c in range(3)], dtype=float)


def test_samples_are_reproducible_and_cached(server, tmp_path, sotu20):
    kw = dict(method="samples", samples=4, extra_body=PLAIN)
    three = [0, 1, 2]
    a = judge(server.url, tmp_path, cache=tmp_path / "a.sqlite", **kw).word_intrusion(sotu20, topics=three)
    b = judge(server.url, tmp_path, cache=tmp_path / "b.sqlite", **kw).word_intrusion(sotu20, topics=three)
    assert [it["replies"] for it in a.items] == [it["replies"] for it in b.items]  # the seeds make them
    c = judge(server.url, tmp_path, cache=tmp_path / "a.sqlite", **kw).word_intrusion(sotu20, topics=three)
    assert (c.accounting["sent"], c.accounting["cached"]) == (0, 12)

    def answered(res):  # item ids are keyed by a fresh secret each time: all but those
        return [{k: v for k, v in it.items() if k not in ("item", "cached")} for it in res.items]

    assert c.accounting["cache_hit_rate"] == 1.0 and answered(c) == answered(a)


# -- fallbacks, malformed answers -----------------------------------------------------------------


def test_no_answer_among_logprobs_falls_back_to_samples_counted(server, tmp_path, sotu20):
    j = judge(server.url, tmp_path, llm="letters", samples=3, extra_body=PLAIN)
    res = j.word_intrusion(sotu20, topics=[0, 1])
    assert res.accounting["fallback_no_answer"] == 2 and res.summary["answered"] == 0
    for it in res.items:
        assert it["fallback"].startswith("no well-formed answer")
        assert it["unanswered"] == "all 3 replies malformed"
        assert "score" not in it and it["requests"] == 4
    assert all(math.isnan(v) for v in res.scores.values()) and math.isnan(res.summary["mean"])
    assert any("unanswered items: 2" in line for line in res.lines())
    strict = judge(server.url, tmp_path, llm="letters", method="logprobs").word_intrusion(sotu20, topics=[0])
    assert strict.items[0]["unanswered"].startswith("no well-formed answer among the first token's 20")


def test_random_weights_write_malformed_answers(server, tmp_path, sotu20):
    """A model that ignores the instructions: its replies are counted as malformed, never read as
    an answer."""
    res = judge(server.url, tmp_path, llm="random", method="samples", samples=3).word_intrusion(sotu20)
    for it in res.items:
        good = [r for r in it["replies"] if answers.choice(r, 6) is not None]
        assert it["malformed"] == 3 - len(good)
    assert res.accounting["malformed"] == sum(it["malformed"] for it in res.items) > 0


def test_server_without_logprobs(server, tmp_path, sotu20):
    with tinyllm.fault_proxy(server.url, ["", "no-logprobs"] + ["no-logprobs"] * 100) as (url, seen):
        res = judge(url, tmp_path, samples=2, extra_body=PLAIN).word_intrusion(sotu20, topics=[0, 1, 2])
        # the first item learns it (1 request, then 2 samples); the others sample at once
        assert res.accounting["fallback_no_logprobs"] == 3
        assert res.accounting["requests"] == 1 + 3 * 2 and len(seen) == 1 + 1 + 3 * 2
        assert all(it["fallback"] == "the server gave no log-probabilities" for it in res.items)
    with tinyllm.fault_proxy(server.url, ["", "no-logprobs"]) as (url, seen):
        with pytest.raises(EndpointError, match="returned no log-probabilities.*method"):
            judge(url, tmp_path, method="logprobs", cache=":memory:").word_intrusion(sotu20, topics=[0])


# -- ProxAnn -------------------------------------------------------------------------------------


def proxann_items(n=3):
    rng = np.random.default_rng(0)
    return [{"topic": k, "words": ["tax", "budget", "spending", "deficit"],
             "exemplars": ["The budget cuts taxes.", "Spending rose."],
             "documents": [f"Document {i} about money." for i in range(5)],
             "theta": list(rng.uniform(0, 1, 5))} for k in range(n)]


def test_proxann_steps(server, tmp_path):
    res = judge(server.url, tmp_path).proxann(proxann_items())
    _, dist, _ = reference(5)
    for it in res.items:
        assert it["label"] == "2" * 40  # greedy: the most probable token, up to the label's 40 tokens
        assert it["fit"] == pytest.approx([float(np.dot(dist, [1, 2, 3, 4, 5]))] * 5, abs=1e-6)
        assert math.isnan(it["score"])  # equal fits: no order to compare with theta
        assert it["rank_unanswered"] == "all 1 replies malformed"  # "2222..." is no ranking
    assert res.accounting["requests"] == 3 * (1 + 5 + 1)
    rand = judge(server.url, tmp_path, llm="random").proxann(proxann_items(2))
    for it in rand.items:  # what the random model says is counted, not mistaken for an answer
        assert "label" in it


def test_proxann_tau_against_theta():
    from scipy.stats import kendalltau

    from tealeaves.judge.judge import _tau

    # tau-b by hand: pairs (1,2),(1,3),(2,3) of fits (1,2,3) against theta (0.1, 0.3, 0.2):
    # concordant, concordant, discordant -> (2 - 1) / 3
    assert _tau(kendalltau, [1, 2, 3], [0.1, 0.3, 0.2]) == pytest.approx(1 / 3)
    assert math.isnan(_tau(kendalltau, [2, 2, 2], [0.1, 0.3, 0.2]))


# -- cost and failure ----------------------------------------------------------------------------


def test_estimate_then_max_hours_at_the_measured_speed(server, tmp_path):
    model = tl.load_model("sotu:sotu-50-asym")
    cache = tmp_path / "c.sqlite"
    with pytest.raises(MethodError, match="max_hours"):  # the estimate alone refuses: nothing sent
        judge(server.url, tmp_path, cache=cache, request_seconds=100, max_hours=0.01).ratings(model)
    assert len(Cache(cache)) == 0
    # an estimate that passes, then the measured speed that does not: stopped, answers kept
    j = judge(server.url, tmp_path, cache=cache, method="samples", samples=20, request_seconds=1e-9,
              max_hours=1e-7, concurrency=1, extra_body=PLAIN)
    with pytest.raises(MethodError, match="measured .* requests per second.*resume"):
        j.ratings(model)
    kept = len(Cache(cache))
    assert 8 <= kept < 1000


def test_a_port_with_nothing_listening(tmp_path, sotu20):
    url = f"http://127.0.0.1:{tinyllm.free_port()}/v1"
    t = time.perf_counter()
    with pytest.raises(EndpointError, match=r"cannot connect.*\(1 try\)"):
        judge(url, tmp_path).word_intrusion(sotu20)
    assert time.perf_counter() - t < 30  # said at once, not after the back-off


def test_a_server_that_never_answers(tmp_path, sotu20):
    with tinyllm.silent_server() as url:
        with pytest.raises(EndpointError, match=r"no answer within 0\.5 s \(timeout\) \(2 tries\)"):
            judge(url, tmp_path, timeout=0.5, retries=1).word_intrusion(sotu20)


def test_429_and_5xx_are_retried(server, tmp_path, sotu20, monkeypatch):
    monkeypatch.setattr("tealeaves.judge.endpoint.BACKOFF", 0.01)
    faults = ["", "429", "503", "", "500", ""]
    with tinyllm.fault_proxy(server.url, faults) as (url, seen):
        res = judge(url, tmp_path, concurrency=1).word_intrusion(sotu20, topics=[0, 1])
        assert res.summary["answered"] == 2 and len(seen) == 6
    with tinyllm.fault_proxy(server.url, ["", "503", "503", "503"]) as (url, seen):
        with pytest.raises(EndpointError, match=r"HTTP 503: busy \(3 tries\).*cache: run again to resume"):
            judge(url, tmp_path, retries=2, cache=":memory:").word_intrusion(sotu20, topics=[0])
    with tinyllm.fault_proxy(server.url, ["", "not-json"]) as (url, seen):
        with pytest.raises(EndpointError, match="not JSON"):
            judge(url, tmp_path, cache=":memory:").word_intrusion(sotu20, topics=[0])


def test_a_server_killed_mid_run_resumes_from_the_cache(gguf_models, tmp_path, sotu20):
    """Killed after some answers: a one-line error that says they are kept; the same server
    started again on the same port: the run resumes, paying only for what was missing, and gives
    what an uninterrupted run gives."""
    model = sotu20  # 20 topics x 5 samples: 100 requests
    kw = dict(llm="sampler", method="samples", samples=5, extra_body=PLAIN, retries=1, concurrency=2)
    s = tinyllm.start_server({"sampler": gguf_models["sampler"]})
    port, cache = s.port, tmp_path / "resume.sqlite"
    try:
        j = judge(s.url, tmp_path, cache=cache, **kw)
        err: list[BaseException] = []

        def run():
            try:
                j.ratings(model)
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                err.append(exc)

        t = threading.Thread(target=run)
        t.start()
        probe = Cache(cache)
        deadline = time.monotonic() + 120
        while len(probe) < 30 and time.monotonic() < deadline and t.is_alive():
            time.sleep(0.05)
        tinyllm.stop(s.proc)
        t.join(120)
        assert err and isinstance(err[0], EndpointError), err
        assert "kept in the cache: run again to resume" in str(err[0]) and "\n" not in str(err[0])
        kept = len(probe)
        assert 30 <= kept < 100
    finally:
        tinyllm.stop(s.proc)
    with tinyllm.llama_server({"sampler": gguf_models["sampler"]}, port=port) as s2:
        resumed = judge(s2.url, tmp_path, cache=cache, **kw).ratings(model)
        fresh = judge(s2.url, tmp_path, cache=tmp_path / "fresh.sqlite", **kw).ratings(model)
    a = resumed.accounting
    assert a["requests"] == 100 and a["cached"] == kept and a["sent"] == 100 - kept
    assert a["cache_hit_rate"] == pytest.approx(kept / 100)
    assert [it["replies"] for it in resumed.items] == [it["replies"] for it in fresh.items]


def test_the_key_goes_to_the_server_and_nowhere_else(gguf_models, tmp_path, monkeypatch, sotu20):
    secret = "sk-tealeaves-test-0123456789"
    with tinyllm.llama_server({"designed": gguf_models["designed"]}, api_key=secret) as s:
        monkeypatch.delenv("TEALEAVES_JUDGE_KEY", raising=False)
        with pytest.raises(EndpointError, match="refused the request: HTTP 401") as e:
            judge(s.url, tmp_path, cache=":memory:").word_intrusion(sotu20, topics=[0])
        monkeypatch.setenv("TEALEAVES_JUDGE_KEY", secret)
        out = tmp_path / "out.json"
        code, stdout, stderr = run_cli(["judge", "words", "sotu:sotu-20-asym", "--base-url", s.url,
                                        "--llm", "designed", "--cache", tmp_path / "k.sqlite", "--json", out,
                                        "--quiet"])
        assert code == 0, stderr
    for text in (str(e.value), stdout, stderr, out.read_text(), (tmp_path / "k.sqlite").read_bytes().decode(
            "latin-1")):
        assert secret not in text
    doc = json.loads(out.read_text())
    assert doc["settings"]["key_env"] == "TEALEAVES_JUDGE_KEY" and doc["sent_to"]["remote"] is False


# -- the command line ----------------------------------------------------------------------------


def test_cli_words_from_a_key_json_and_csv(server, tmp_path, sotu20):
    tasks = tl.intrusion.word_tasks(sotu20, attention_checks=2, seed=3)
    tl.intrusion.write_tasks(tasks, tmp_path / "tasks.jsonl", tmp_path / "key.jsonl")
    args = ["judge", "words", tmp_path / "key.jsonl", "--base-url", server.url, "--llm", "designed",
            "--cache", tmp_path / "c.sqlite", "--json", tmp_path / "j.json", "--csv", tmp_path / "j.csv"]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert "model_precision: mean" in out and "over 20 of 20 items" in out
    doc = json.loads((tmp_path / "j.json").read_text())
    assert doc["task"] == "judge-word-intrusion" and len(doc["items"]) == 20  # attention checks left out
    assert doc["settings"]["temperature"] == 1.0 and doc["settings"]["seed"] == 0
    assert doc["accounting"]["reported_models"] == ["designed"]
    assert (tmp_path / "j.csv").read_text().count("\n") == 21
    code, out, _ = run_cli(args)  # again: everything from the cache
    assert code == 0 and "20 from the cache, hit rate 1.000" in out


# -- evaluate, select and the report --------------------------------------------------------------


def test_judge_columns_in_evaluate_and_the_report(server, tmp_path):
    from tealeaves.report import render

    docs = [line.split() for line in ["tax budget spending", "war peace army navy", "school children"]]
    j = judge(server.url, tmp_path)
    res = tl.evaluate(["sotu:sotu-20-asym", "sotu:sotu-20-sym"], heldout=docs, runs=1, particles=2, judge=j)
    _, dist6, _ = reference(6)
    _, dist3, _ = reference(3)
    rating = float(np.dot(dist3, [1, 2, 3]))
    for r, name in zip(res.rows, ["sotu:sotu-20-asym", "sotu:sotu-20-sym"], strict=True):
        tasks = tl.intrusion.word_tasks(tl.load_model(name), seed=0)
        want = np.mean([dist6[t.intruder] for t in tasks])
        assert r["judge_model_precision"] == pytest.approx(want, abs=1e-6)
        assert r["judge_rating"] == pytest.approx(rating, abs=1e-6)
    assert "judge MP" in res.table() and "judge rating" in res.table()
    doc = res.to_dict()
    assert doc["params"]["judge"]["llm"] == "designed" and doc["estimate"]["stages"]["judge"] > 0
    assert doc["topic_judge"][res.names[0]]["ratings"] == pytest.approx([rating] * 20, abs=1e-6)
    # never qualified (`judge qualify`): said beside the columns, in the notes and the report
    assert {a["qualified"] for a in doc["judge_agreement"].values()} == {False}
    assert "judge MP: the judge's agreement with people was never measured" in res.summary()
    html = render([{"command": "evaluate", **doc}], "judged")
    assert "judge MP" in html and "judge P(intruder)" in html and "an LLM judge" in html
    assert "judge rating: the judge&#x27;s agreement with people was never measured" in html


def test_cli_evaluate_with_a_judge_file(server, tmp_path):
    (tmp_path / "docs.txt").write_text("tax budget spending\nwar peace army navy\n")
    conf = tmp_path / "judge.json"
    conf.write_text(json.dumps({"base_url": server.url, "llm": "designed", "method": "logprobs",
                                "cache": str(tmp_path / "c.sqlite")}))
    base = ["evaluate", "sotu:sotu-20-asym", "--heldout", tmp_path / "docs.txt", "--judge", conf]
    code, out, err = run_cli([*base, "--runs", "1", "--particles", "2", "--json", tmp_path / "e.json",
                              "--quiet"])
    assert code == 0, err
    assert "judge MP" in out
    assert json.loads((tmp_path / "e.json").read_text())["rows"][0]["judge_rating"] > 1
    conf.write_text(json.dumps({"base_url": server.url, "llm": "designed", "temprature": 1}))
    code, _, err = run_cli(base)
    assert code == 2 and "'temprature' is not a setting of the judge" in err
    conf.write_text(json.dumps({"base_url": "https://api.example.org/v1", "llm": "x"}))
    code, _, err = run_cli(base)
    assert code == 2 and "allow_remote" in err
