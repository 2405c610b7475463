"""Asking the questions: each query becomes one request (log-probabilities) or several (samples),
answered from the cache where it can be, sent `concurrency` at a time otherwise, with the cost
estimated before any work and checked again against the measured speed while it runs.

How a question is answered (`method`):
- "logprobs": one request at temperature 0 for the first token and its `top_logprobs`
  alternatives (`answers.distribution_from_logprobs`). A server that returns none is an error; an
  answer whose alternatives hold no well-formed answer leaves the item unanswered (counted).
- "samples": `samples` requests at `temperature`; the distribution is the share of well-formed
  answers; malformed ones are counted. Sample i of a question is drawn with the seed
  `sample_seed(seed, prompt, i)` (SHA-256 of the three): reproducible, and different for every
  question, so that no two questions share their random numbers.
- "auto": log-probabilities where the server gives them; otherwise, and for an item whose
  alternatives hold no well-formed answer, samples: each such fallback is counted and reported.
Rankings and labels are generated text: one greedy request (temperature 0), or `samples`
requests with "samples" (rankings: the mean position over well-formed rankings; labels: the
first well-formed one).

The time estimate is requests not yet cached x seconds per request / concurrency, where seconds
per request is the median of this model's answers in the cache, or `request_seconds` (default
REQUEST_SECONDS) when there are none; prompt tokens are estimated at CHARS_PER_TOKEN characters
each. Once MEASURE_AFTER requests have been answered, the measured rate replaces the assumption: a
run that would then exceed `max_hours` stops with the answers so far kept in the cache.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from ..errors import MethodError
from . import answers
from .cache import request_key
from .endpoint import EndpointError
from .prompts import SYSTEM

REQUEST_SECONDS = 2.0
CHARS_PER_TOKEN = 4.0
MEASURE_AFTER = 8
SAMPLE_TOKENS = 8  # tokens allowed for a sampled choice ("2", " 2.", or a malformed reply)
LABEL_TOKENS = 40
REPLY_CHARS = 200  # a reply is kept in the result up to this length


@dataclass
class Query:
    """One question: a choice among `n` answers numbered 1..n (options, or the points of a
    scale), a ranking of `n` numbered items, or a label."""

    kind: str  # "choice", "ranking" or "label"
    prompt: str
    n: int = 0
    what: str = ""  # names the item in messages ("topic 3")


@dataclass
class Outcome:
    dist: list[float] | None = None  # choice: over the n answers
    mass: float | None = None  # choice by log-probabilities: the probability well-formed answers had
    order: list[int] | None = None  # ranking: 0-based items, best first
    mean_rank: list[float] | None = None  # ranking: each item's mean position (1 = best)
    label: str | None = None
    source: str = ""  # "logprobs", "samples" or "greedy"
    replies: list[str] = field(default_factory=list)
    malformed: int = 0
    requests: int = 0
    cached: int = 0
    fallback: str | None = None  # why samples replaced log-probabilities
    unanswered: str | None = None  # why there is no answer

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and v != []}


class Runner:
    """Sends a judge's queries: the cache first, then the server."""

    def __init__(self, judge: Any, task: str) -> None:
        """`judge`: a `judge.Judge` (its settings, endpoint and cache)."""
        self.judge = judge
        self.task = task
        self.endpoint = judge.endpoint
        self.cache = judge.open_cache()
        self.logprobs_ok: bool | None = None if judge.method != "samples" else False
        self._lock = threading.Lock()
        self.counts = {"requests": 0, "sent": 0, "cached": 0, "malformed": 0, "unanswered": 0,
                       "fallback_no_logprobs": 0, "fallback_no_answer": 0}
        self.tokens = {"prompt": 0, "completion": 0}
        self.reported: set[str] = set()
        self.fingerprints: set[str] = set()
        self.seconds = 0.0
        self._sent_seconds: list[float] = []
        self._t0 = time.perf_counter()
        self._to_send = 0
        self._checked_at = 0
        self._planned: dict[int, int] = {}
        self.progress: Any = None

    # -- requests --------------------------------------------------------------------------

    def body(self, prompt: str, temperature: float, max_tokens: int, seed: int,
             logprobs: bool) -> tuple[str, dict[str, Any]]:
        j = self.judge
        if j.api == "chat":
            body: dict[str, Any] = {"model": j.llm, "messages": [{"role": "system", "content": SYSTEM},
                                                                  {"role": "user", "content": prompt}]}
        else:
            body = {"model": j.llm, "prompt": f"{SYSTEM}\n\n{prompt}\n\nAnswer:"}
        body |= {"temperature": temperature, "top_p": 1, "max_tokens": max_tokens, "seed": seed,
                 **j.extra_body}
        if logprobs:
            body |= ({"logprobs": True, "top_logprobs": j.top_logprobs} if j.api == "chat"
                     else {"logprobs": j.top_logprobs})
        return ("/chat/completions" if j.api == "chat" else "/completions"), body

    def plan(self, q: Query) -> list[tuple[str, dict[str, Any]]]:
        """The requests a query needs first (a fallback may add samples)."""
        j = self.judge
        if q.kind == "choice" and self.logprobs_ok is not False:
            return [self.body(q.prompt, 0.0, 1, sample_seed(j.seed, q.prompt, 0), True)]
        if j.method != "samples" and q.kind != "choice":
            return [self.body(q.prompt, 0.0, self.max_tokens(q), sample_seed(j.seed, q.prompt, 0), False)]
        return self.samples(q)

    def samples(self, q: Query) -> list[tuple[str, dict[str, Any]]]:
        j = self.judge
        return [self.body(q.prompt, j.temperature, self.max_tokens(q), sample_seed(j.seed, q.prompt, i),
                          False) for i in range(j.samples)]

    @staticmethod
    def max_tokens(q: Query) -> int:
        if q.kind == "choice":
            return SAMPLE_TOKENS
        if q.kind == "ranking":
            return 4 * q.n + 8
        return LABEL_TOKENS

    def ask(self, path: str, body: dict[str, Any], out: Outcome) -> dict[str, Any]:
        """The answer to one request: from the cache, else from the server (then cached); counted
        in `out`."""
        key = request_key(self.endpoint.base_url, path, body)
        hit = self.cache.get(key)
        if hit is not None:
            response, sent = hit["response"], False
        else:
            t = time.perf_counter()
            response = self.endpoint.post(path, body)
            took = time.perf_counter() - t
            self.cache.put(key, self.endpoint.base_url, self.judge.llm, body, response, took)
            sent = True
        with self._lock:
            self.counts["requests"] += 1
            self.counts["sent" if sent else "cached"] += 1
            if isinstance(response.get("model"), str):
                self.reported.add(response["model"])
            if isinstance(response.get("system_fingerprint"), str):
                self.fingerprints.add(response["system_fingerprint"])
            if sent:
                self._sent_seconds.append(took)
                usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
                for k in ("prompt", "completion"):
                    v = usage.get(f"{k}_tokens")
                    if isinstance(v, int) and not isinstance(v, bool):
                        self.tokens[k] += v
        out.requests += 1
        out.cached += not sent
        if self.progress is not None:
            with self._lock:
                self.progress.advance()
        if sent:
            self._check_pace()
        return response

    def _check_pace(self) -> None:
        """Once MEASURE_AFTER requests have been sent, and every 50 after: stop a run the measured
        rate says would exceed max_hours (its answers so far stay in the cache)."""
        with self._lock:
            sent = self.counts["sent"]
            if sent < MEASURE_AFTER or sent - self._checked_at < (50 if self._checked_at else 0):
                return
            self._checked_at = sent
            elapsed = time.perf_counter() - self._t0
            left = max(self._to_send - sent, 0)
        rate = sent / max(elapsed, 1e-9)
        total = elapsed + left / rate
        limit = self.judge.hours_limit() * 3600
        if total > limit:
            raise MethodError(
                f"the judge would take about {_hours(total)} at the measured {rate:.3g} requests per second "
                f"({sent} sent, {left} to go), more than max_hours={limit / 3600:g}; the answers so far "
                "are kept in the cache: run again with a larger max_hours (CLI --max-hours) to resume")

    # -- questions -------------------------------------------------------------------------

    def answer(self, q: Query) -> Outcome:
        out = Outcome()
        first = self.plan(q)
        if q.kind == "choice" and first[0][1].get("logprobs"):
            response = self.ask(*first[0], out)
            alts = answers.first_token_alternatives(response, self.judge.api)
            if alts is None:
                if self.judge.method == "logprobs":
                    raise EndpointError(
                        f"{self.endpoint.base_url} returned no log-probabilities for {self.judge.llm!r}; "
                        "use method='samples' or 'auto' (CLI --method)")
                with self._lock:
                    self.logprobs_ok = False
                    self.counts["fallback_no_logprobs"] += 1
                out.fallback = "the server gave no log-probabilities"
                return self._sampled(q, out)
            with self._lock:
                self.logprobs_ok = True
            got = answers.distribution_from_logprobs(alts, q.n)
            out.replies.append(_short(answers.reply_text(response, self.judge.api) or ""))
            if got is None:
                if self.judge.method == "logprobs":
                    return self._unanswered(out, "no well-formed answer among the first token's "
                                                 f"{len(alts)} most probable alternatives")
                with self._lock:
                    self.counts["fallback_no_answer"] += 1
                out.fallback = f"no well-formed answer among the first token's {len(alts)} alternatives"
                return self._sampled(q, out)
            out.dist, out.mass, out.source = got[0], got[1], "logprobs"
            return out
        if q.kind == "choice" and self.logprobs_ok is False and self.judge.method == "auto":
            with self._lock:
                self.counts["fallback_no_logprobs"] += 1
            out.fallback = "the server gave no log-probabilities"
        return self._sampled(q, out, first, planned=self._planned.get(id(q), 0))

    def _sampled(self, q: Query, out: Outcome, requests: list | None = None, planned: int = 0) -> Outcome:
        """`requests` (default: the question's samples) sent and read; `planned`: how many of them
        the run counted when it started (the rest are added to the progress bar and the pace)."""
        requests = self.samples(q) if requests is None else requests
        with self._lock:
            self._to_send += len(requests) - planned
            if self.progress is not None:
                self.progress.total += len(requests) - planned
        greedy = len(requests) == 1 and requests[0][1]["temperature"] == 0
        parsed = []
        for path, body in requests:
            text = answers.reply_text(self.ask(path, body, out), self.judge.api)
            out.replies.append(_short(text if text is not None else "<no text>"))
            value = None if text is None else (answers.choice(text, q.n) if q.kind == "choice" else
                                               answers.ranking(text, q.n) if q.kind == "ranking" else
                                               answers.label(text))
            parsed.append(value)
        out.malformed = sum(v is None for v in parsed)
        with self._lock:
            self.counts["malformed"] += out.malformed
        out.source = "greedy" if greedy else "samples"
        good = [v for v in parsed if v is not None]
        if not good:
            return self._unanswered(out, f"all {len(parsed)} replies malformed")
        if q.kind == "choice":
            out.dist = answers.distribution_from_choices(good, q.n)
        elif q.kind == "ranking":
            pos = [[r.index(i) + 1 for i in range(q.n)] for r in good]
            out.mean_rank = [sum(p[i] for p in pos) / len(pos) for i in range(q.n)]
            out.order = sorted(range(q.n), key=lambda i: (out.mean_rank[i], i))
        else:
            out.label = good[0]
        return out

    def _unanswered(self, out: Outcome, why: str) -> Outcome:
        out.unanswered = why
        with self._lock:
            self.counts["unanswered"] += 1
        return out

    def run(self, queries: list[Query]) -> list[Outcome]:
        """Every query's outcome, in order. The first is asked alone (it tells whether the server
        gives log-probabilities), the rest `concurrency` at a time; the first error stops the run."""
        from ..util.parallel import Progress

        if not queries:
            return []
        self.endpoint.restart()
        self._planned = {id(q): len(self.plan(q)) for q in queries}
        self._to_send += sum(self._planned.values())
        own = self.progress is None
        if own:
            self.progress = Progress(sum(self._planned.values()), f"judge {self.task}",
                                     enabled=self.judge.progress)
        try:
            out = [self.answer(queries[0])]
            if len(queries) > 1:
                with ThreadPoolExecutor(self.judge.concurrency) as ex:
                    futures = [ex.submit(self.answer, q) for q in queries[1:]]
                    try:
                        wait(futures, return_when=FIRST_EXCEPTION)
                        out += [f.result() for f in futures]
                    except BaseException:
                        for f in futures:
                            f.cancel()
                        self.endpoint.stop()  # the requests in flight end now (Ctrl-C, an error)
                        ex.shutdown(wait=True, cancel_futures=True)
                        raise
            return out
        except EndpointError as exc:
            raise EndpointError(f"{exc}; {self.counts['requests']} answer(s) received so far are kept in the "
                                "cache: run again to resume") from None
        finally:
            self.seconds = time.perf_counter() - self._t0
            if own and self.progress is not None and self.progress.enabled and \
                    self.progress.done < self.progress.total:
                import sys

                sys.stderr.write("\n")
            if own:
                self.progress = None

    def summary(self) -> dict[str, Any]:
        """What was asked and how: requests, cache hits, tokens, seconds, fallbacks."""
        c = dict(self.counts)
        wall = time.perf_counter() - self._t0
        c["cache_hit_rate"] = c["cached"] / c["requests"] if c["requests"] else math.nan
        c["seconds"] = wall
        c["requests_per_second"] = c["sent"] / wall if c["sent"] and wall > 0 else math.nan
        c["tokens"] = dict(self.tokens)
        c["reported_models"] = sorted(self.reported)
        c["system_fingerprints"] = sorted(self.fingerprints)
        return c


def estimate(runner: Runner, queries: list[Query], later: list[Query] | None = None) -> dict[str, Any]:
    """Requests, tokens and time before any work: `queries` are known now (their cached answers
    are counted), `later` are asked once these are answered (counted as not cached)."""
    j = runner.judge
    later = later or []
    requests = cached = 0
    prompt_chars = completion_tokens = 0.0
    for i, q in enumerate([*queries, *later]):
        for path, body in runner.plan(q):
            requests += 1
            if i < len(queries) and runner.cache.has(request_key(runner.endpoint.base_url, path, body)):
                cached += 1
                continue
            prompt_chars += len(SYSTEM) + len(q.prompt)
            completion_tokens += body["max_tokens"]
    to_send = requests - cached
    history = runner.cache.seconds_per_request(runner.endpoint.base_url, j.llm)
    per = history if history is not None else j.request_seconds
    seconds = to_send * per / j.concurrency
    fallback = j.samples if j.method == "auto" else 0
    return {"requests": requests, "cached": cached, "to_send": to_send,
            "fallback_requests_at_most": fallback * sum(q.kind == "choice" for q in [*queries, *later]),
            "prompt_tokens": round(prompt_chars / CHARS_PER_TOKEN), "completion_tokens_at_most":
            round(completion_tokens), "seconds": seconds, "seconds_per_request": per,
            "seconds_per_request_from": "this model's cached answers (median)" if history is not None
            else "assumed (request_seconds)", "concurrency": j.concurrency}


def check_estimate(est: dict[str, Any], what: str, max_hours: float | None) -> None:
    from ..util.limits import check_cost

    check_cost(what, seconds=est["seconds"], max_hours=max_hours,
               how=f"{est['to_send']:,} requests not yet cached at about {est['seconds_per_request']:.3g} s "
                   f"each, {est['concurrency']} at a time")


def sample_seed(seed: int, prompt: str, i: int) -> int:
    """The seed of sample `i` of the question `prompt` (31 bits of SHA-256 of the three)."""
    digest = hashlib.sha256(f"{seed}|{i}|{prompt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _short(text: str) -> str:
    return text if len(text) <= REPLY_CHARS else text[:REPLY_CHARS] + "…"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.3g} hours" if seconds >= 3600 else f"{seconds / 60:.3g} minutes"


__all__ = ["Query", "Outcome", "Runner", "estimate", "check_estimate"]
