"""The LLM judge's parts that need no server: strict answers, distributions from log-probabilities,
Retry-After, the address and consent rules, the cache key, the estimate and the CLI's refusals.
tests/test_judge_server.py drives the real llama.cpp server."""

from __future__ import annotations

import email.utils
import json
import math
import time

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.errors import MethodError
from tealeaves.judge import answers
from tealeaves.judge.cache import Cache, request_key
from tealeaves.judge.endpoint import Endpoint, check_url, is_loopback, retry_after
from tealeaves.judge.prompts import TEXTS, TEXTS_VERSION

NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: nothing is sent in these tests
SOTU20 = "sotu:sotu-20-asym"

# -- answers read strictly ---------------------------------------------------------------------


@pytest.mark.parametrize("text,n,want", [
    ("2", 6, 1), (" 2", 6, 1), ("2.", 6, 1), ("\n6\n", 6, 5), ("1 .", 3, 0),
    ("7", 6, None), ("0", 6, None), ("2 because", 6, None), ("Answer: 2", 6, None), ("two", 6, None),
    ("", 6, None), ("2, 3", 6, None), ("-2", 6, None), ("02", 6, 1), ("٢", 6, None), ("2..", 6, None),
])
def test_choice_is_a_number_alone(text, n, want):
    assert answers.choice(text, n) == want


@pytest.mark.parametrize("text,n,want", [
    ("3, 1, 2", 3, [2, 0, 1]), ("1 2 3", 3, [0, 1, 2]), ("2,1", 2, [1, 0]), (" 3,2,1. ", 3, [2, 1, 0]),
    ("1, 1, 2", 3, None), ("1, 2", 3, None), ("1, 2, 4", 3, None), ("first 1, 2, 3", 3, None),
    ("1; 2; 3", 3, None), ("", 3, None),
])
def test_ranking_is_a_permutation(text, n, want):
    assert answers.ranking(text, n) == want


@pytest.mark.parametrize("text,want", [
    ("Employment law", "Employment law"), ('"Fisheries"', "Fisheries"), ("Tax policy.", "Tax policy"),
    ("  Health care  ", "Health care"), ("", None), ("a\nb", None), (" ".join(["w"] * 13), None),
    ("x" * 201, None),
])
def test_label_is_one_short_line(text, want):
    assert answers.label(text) == want


def test_distribution_from_logprobs_sums_the_forms_of_an_answer():
    # "2" and " 2" are one answer; "7" is no answer of 6 options; "a" is not a number
    alts = [("2", math.log(0.3)), (" 2", math.log(0.1)), ("1", math.log(0.2)), ("a", math.log(0.25)),
            ("7", math.log(0.05)), ("3", math.log(0.1))]
    dist, mass = answers.distribution_from_logprobs(alts, 6)
    assert mass == pytest.approx(0.7)
    assert dist == pytest.approx([0.2 / 0.7, 0.4 / 0.7, 0.1 / 0.7, 0, 0, 0])
    assert answers.distribution_from_logprobs([("a", -0.1), ("0", -1.0), ("02", -2.0)], 6) is None


def test_first_token_alternatives_read_both_apis():
    chat = {"choices": [{"message": {"content": "2"}, "logprobs": {"content": [
        {"token": "2", "logprob": -0.5, "top_logprobs": [{"token": "2", "logprob": -0.5},
                                                          {"token": "1", "logprob": -1.5}]}]}}]}
    assert answers.first_token_alternatives(chat, "chat") == [("2", -0.5), ("1", -1.5)]
    comp = {"choices": [{"text": "2", "logprobs": {"tokens": ["2"], "token_logprobs": [-0.5],
                                                  "top_logprobs": [{"2": -0.5, "1": -1.5}]}}]}
    assert answers.first_token_alternatives(comp, "completions") == [("2", -0.5), ("1", -1.5)]
    for none in ({"choices": [{"message": {"content": "2"}}]}, {"choices": [{"logprobs": None}]},
                 {"choices": []}, {}, {"choices": [{"logprobs": {"content": []}}]}):
        assert answers.first_token_alternatives(none, "chat") is None
    assert answers.reply_text({"choices": [{"message": {"content": None}}]}, "chat") is None


def test_distribution_from_choices_and_expected():
    assert answers.distribution_from_choices([0, 2, 2, None, 1], 3) == [0.25, 0.25, 0.5]
    assert answers.distribution_from_choices([None, None], 3) is None
    assert answers.expected([0.25, 0.25, 0.5], (1, 2, 3)) == pytest.approx(2.25)


# -- the address, consent, the key -------------------------------------------------------------


@pytest.mark.parametrize("host,loop", [("localhost", True), ("127.0.0.1", True), ("127.8.9.10", True),
                                       ("[::1]", True), ("::1", True), ("api.example.org", False),
                                       ("10.0.0.1", False), ("0.0.0.0", False),
                                       ("localhost.example.org", False)])
def test_loopback(host, loop):
    assert is_loopback(host) is loop


def test_url_rules():
    assert check_url("http://127.0.0.1:8080/v1/") == ("http://127.0.0.1:8080/v1", False)
    assert check_url("https://api.example.org/v1")[1] is True
    for bad, part in (("ftp://x/v1", "http"), ("http://user:pw@127.0.0.1/v1", "credentials"),
                      ("127.0.0.1:8080", "http"), ("", "address"), ("http://127.0.0.1/v1#x", "fragment")):
        with pytest.raises(MethodError, match=part):
            check_url(bad)


def test_remote_needs_consent_before_anything_is_sent(tmp_path):
    model = tl.load_model(SOTU20)
    j = tl.Judge("https://api.example.org/v1", "gpt-x", cache=tmp_path / "c.sqlite")
    with pytest.raises(MethodError, match=r"api\.example\.org.*allow_remote"):
        j.word_intrusion(model)
    with pytest.raises(MethodError, match="allow_remote"):
        j.ratings(model, dry_run=True)
    assert len(j.open_cache()) == 0
    # consent given: the estimate (no request) goes through and says where data would go
    est = tl.Judge("https://api.example.org/v1", "gpt-x", allow_remote=True, cache=tmp_path / "c.sqlite"
                   ).ratings(model, dry_run=True)
    assert est["requests"] == 20 and est["to_send"] == 20


def test_the_key_is_never_kept_or_shown(monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-secret-123456")
    e = Endpoint(NOWHERE, key_env="MY_JUDGE_KEY")
    assert "sk-secret" not in repr(e)
    assert e._headers()["Authorization"] == "Bearer sk-secret-123456"
    assert e.scrub("bad key sk-secret-123456 given") == "bad key *** given"
    j = tl.Judge(NOWHERE, "m", key_env="MY_JUDGE_KEY", cache=":memory:")
    assert "sk-secret" not in repr(j) and "sk-secret" not in json.dumps(j.settings())
    monkeypatch.delenv("MY_JUDGE_KEY")
    assert "Authorization" not in e._headers()


def test_retry_after():
    assert retry_after("3") == 3.0
    assert retry_after("0.5") == 0.5
    assert retry_after("-4") == 0.0
    assert retry_after("soon") is None and retry_after(None) is None and retry_after("nan") is None
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after(when) <= 31
    assert retry_after("86400") == 86400.0  # the endpoint refuses a wait that long (MAX_WAIT)


def test_pacing_under_max_rps(monkeypatch):
    slept = []
    monkeypatch.setattr("tealeaves.judge.endpoint.time.sleep", slept.append)
    clock = iter(np.arange(0, 100, 0.01))  # 10 ms between calls
    monkeypatch.setattr("tealeaves.judge.endpoint.time.monotonic", lambda: float(next(clock)))
    e = Endpoint(NOWHERE, max_rps=2.0)
    for _ in range(4):
        e._pace()
    # slots at 0, 0.5, 1.0, 1.5 s; calls at 0, 0.01, 0.02, 0.03 s
    assert slept == pytest.approx([0.49, 0.98, 1.47])


# -- the cache key, the settings ------------------------------------------------------------------


def test_cache_key_follows_model_prompt_and_sampling(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0.0, "seed": 0}
    k = request_key("http://127.0.0.1:1/v1", "/chat/completions", body)
    assert k == request_key("http://127.0.0.1:1/v1", "/chat/completions", dict(reversed(body.items())))
    for change in ({"model": "m2"}, {"temperature": 1.0}, {"seed": 1},
                   {"messages": [{"role": "user", "content": "q2"}]}):
        assert request_key("http://127.0.0.1:1/v1", "/chat/completions", body | change) != k
    assert request_key("http://127.0.0.1:2/v1", "/chat/completions", body) != k
    c = Cache(tmp_path / "c.sqlite")
    c.put(k, "u", "m", body, {"choices": []}, 0.25)
    c.close()
    c = Cache(tmp_path / "c.sqlite")  # kept on disk
    assert c.get(k) == {"response": {"choices": []}, "seconds": 0.25}
    assert c.seconds_per_request("u", "m") == 0.25 and c.seconds_per_request("u", "other") is None


def test_a_file_that_is_no_cache(tmp_path):
    p = tmp_path / "c.sqlite"
    p.write_text("not a database" * 100)
    with pytest.raises(tl.InputFileError, match="not a judge cache"):
        Cache(p)
    with pytest.raises(tl.InputFileError, match="regular file"):
        Cache(tmp_path)


def test_a_new_cache_opened_by_many_at_once(tmp_path):
    """A run and a second process (a resumed run, or a probe) opening a new cache at the same
    moment: each one opens it (before: the schema row was inserted twice, "UNIQUE constraint
    failed", or SQLite's immediate "locked" while another switched the file to WAL)."""
    import threading

    failures = []
    for i in range(40):
        path, gate = tmp_path / f"c{i}.sqlite", threading.Barrier(6)

        def open_it(path=path, gate=gate):
            gate.wait()
            try:
                Cache(path)
            except tl.InputFileError as exc:  # what the race gave
                failures.append(str(exc))

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


@pytest.mark.parametrize("kw,part", [
    ({"method": "best"}, "method"), ({"api": "responses"}, "api"), ({"samples": 0}, "samples"),
    ({"temperature": -1}, "temperature"), ({"temperature": 0.0, "samples": 3}, "temperature 0"),
    ({"top_logprobs": 21}, "top_logprobs"), ({"concurrency": 0}, "concurrency"),
    ({"max_hours": 0}, "max_hours"),
    ({"extra_body": {"seed": 3}}, "extra_body"), ({"extra_body": {"x": float("nan")}}, "JSON"),
    ({"key_env": ""}, "key_env"),
])
def test_settings_are_checked(kw, part):
    with pytest.raises(MethodError, match=part):
        tl.Judge(NOWHERE, "m", cache=":memory:", **kw)


def test_texts_are_versioned():
    # the version names the texts: a change to any text must come with a new version (update both)
    import hashlib

    digest = hashlib.sha256(json.dumps(TEXTS, sort_keys=True).encode()).hexdigest()[:16]
    assert (TEXTS_VERSION, digest) == ("tealeaves-judge-1", "9efe0d900771730a")


# -- the estimate ----------------------------------------------------------------------------------


def test_estimate_counts_requests_before_any_work(tmp_path):
    model = tl.load_model("sotu:sotu-50-asym")
    base = dict(cache=tmp_path / "c.sqlite", request_seconds=3.0, concurrency=2)
    est = tl.Judge(NOWHERE, "m", **base).word_intrusion(model, dry_run=True)
    assert (est["requests"], est["cached"], est["to_send"]) == (50, 0, 50)
    assert est["fallback_requests_at_most"] == 50 * 5  # auto: samples if log-probabilities fail
    assert est["seconds"] == pytest.approx(50 * 3.0 / 2)
    j = tl.Judge(NOWHERE, "m", method="samples", samples=7, **base)
    est = j.ratings(model, dry_run=True)
    assert est["requests"] == 50 * 7 and est["fallback_requests_at_most"] == 0
    with pytest.raises(MethodError, match=r"max_hours=0\.01"):
        tl.Judge(NOWHERE, "m", max_hours=0.01, **base).ratings(model)  # 75 s > 36 s


# -- the command line ------------------------------------------------------------------------------


def test_cli_estimate_sends_nothing(tmp_path):
    code, out, _ = run_cli(["judge", "ratings", SOTU20, "--base-url", NOWHERE, "--llm", "m", "--estimate",
                            "--cache", tmp_path / "c.sqlite", "--json", tmp_path / "e.json"])
    assert code == 0 and "estimate: 20 requests (0 already cached, 20 to send" in out
    assert json.loads((tmp_path / "e.json").read_text())["estimate"]["to_send"] == 20


def test_cli_one_line_errors(tmp_path):
    base = ["--llm", "m", "--cache", tmp_path / "c.sqlite"]
    one_line_error(["judge", "ratings", SOTU20, "--base-url", "https://api.example.org/v1",
                    *base],
                   "--allow-remote")
    one_line_error(["judge", "ratings", SOTU20, "--base-url", "http://u:p@127.0.0.1/v1", *base],
                   "credentials")
    one_line_error(["judge", "ratings", SOTU20, "--base-url", NOWHERE, *base,
                    "--extra-body", "[1]"], "JSON object")
    one_line_error(["judge", "ratings", SOTU20, "--base-url", NOWHERE, *base,
                    "--extra-body", '{"seed": 1}'], "--extra-body must not set seed")
    (tmp_path / "items.jsonl").write_text('{"words": ["a"], "exemplars": ["x"], "documents": ["d"]}\n')
    one_line_error(["judge", "proxann", tmp_path / "items.jsonl", "--base-url", NOWHERE, *base],
                   "1 documents")
