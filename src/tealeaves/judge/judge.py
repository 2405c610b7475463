"""The judge: a language model on an OpenAI-compatible endpoint answering the tasks people answer.

    j = Judge("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct", cache="judge.sqlite")
    res = j.word_intrusion(model)          # Chang et al. 2009, 3.1: P(intruder) per topic
    res = j.topic_intrusion(model, docs)   # 3.2: P(intruder) and expected topic log odds per document
    res = j.ratings(model)                 # Hoyle et al. 2021's 3-point scale: expected rating per topic
    res = j.proxann(items)                 # ProxAnn: label, fit 1-5 and rank; agreement with theta

Word and topic intrusion use the tasks `intrusion.word_tasks` and `intrusion.topic_tasks` build for
the annotation app, or a key file written for people (`tealeaves intrusion words --key`), so the
judge and the annotators answer the same items.

Scores per topic (documents, for topic intrusion):
- word intrusion: model precision, P(the intruder is chosen), under the judge's distribution;
- topic intrusion: P(the intruder is chosen) and the expected topic log odds
  sum_c p(c) (log theta_d,intruder - log theta_d,c) (Chang et al. 2009, eq. 2);
- ratings: the expected rating sum_r r p(r), r = 1, 2, 3;
- ProxAnn: Kendall's tau-b between the judge's expected fit of the evaluation documents and their
  proportion of the topic (theta), and between the judge's ranking and theta's.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MethodError
from . import prompts
from .cache import Cache
from .endpoint import Endpoint, EndpointError
from .prompts import TEXTS_VERSION
from .result import JudgeResult
from .run import REQUEST_SECONDS, Query, Runner, check_estimate, estimate

METHODS = ("auto", "logprobs", "samples")
APIS = ("chat", "completions")
MAX_CHOICES = 9  # a choice is one digit: one token whose log-probability the server reports
RATING_SCALE = (1, 2, 3)
FIT_SCALE = (1, 2, 3, 4, 5)
DOC_CHARS = 1500  # a document is shown up to this many characters


def default_cache() -> str:
    """Where answers are kept unless told: $XDG_CACHE_HOME (or ~/.cache)/tealeaves/judge.sqlite."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tealeaves", "judge.sqlite")


@dataclass
class Judge:
    """A language model at `base_url` (an OpenAI-compatible API, ".../v1") named `llm`.

    `api`: "chat" (/chat/completions) or "completions" (/completions, for base models). `method`:
    "auto", "logprobs" or "samples" (see `judge.run`); `samples` replies per item at `temperature`
    when sampling; `seed` (each request's own seed is derived from it, `run.sample_seed`);
    `top_logprobs` alternatives asked for.
    `key_env`: the environment variable holding the API key (read at each request, never stored).
    `allow_remote`: consent to send topics and documents to an address that is not this machine.
    `cache`: the SQLite file of answers (default `default_cache()`; ":memory:" keeps nothing).
    `concurrency` requests at a time, at most `max_rps` per second; `timeout` seconds per request,
    `retries` on 429, 5xx, dropped connections and timeouts. `max_hours`: refuse (before any work,
    and again at the measured speed) a run that would take longer; `request_seconds`: the time per
    request assumed by the estimate until the cache has measured this model. `extra_body`: fields
    added to every request (a server's own sampling settings, e.g. llama.cpp's
    {"repeat_penalty": 1, "top_k": 0, "min_p": 0}); they are recorded, and part of the cache key."""

    base_url: str
    llm: str
    api: str = "chat"
    method: str = "auto"
    samples: int = 5
    temperature: float = 1.0
    seed: int = 0
    top_logprobs: int = 20
    key_env: str | None = "TEALEAVES_JUDGE_KEY"
    allow_remote: bool = False
    cache: str | os.PathLike | None = None
    concurrency: int = 4
    max_rps: float | None = None
    timeout: float = 120.0
    retries: int = 4
    max_hours: float | None = None
    request_seconds: float = REQUEST_SECONDS
    extra_body: Mapping[str, Any] | None = None
    progress: bool | None = None
    endpoint: Endpoint = field(init=False, repr=False)
    _cache: Cache | None = field(default=None, init=False, repr=False)
    _served: list[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        from ..util.limits import check_float, check_int

        if not isinstance(self.llm, str) or not self.llm.strip():
            raise MethodError("llm must name the model the server serves", options=("llm",))
        if self.api not in APIS:
            raise MethodError(f"api must be one of {', '.join(APIS)}, got {self.api!r}", options=("api",))
        if self.method not in METHODS:
            raise MethodError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}",
                              options=("method",))
        self.samples = check_int("samples", self.samples, 1, 1000)
        self.temperature = check_float("temperature", self.temperature, 0, 2)
        if self.method != "logprobs" and self.temperature == 0 and self.samples > 1:
            raise MethodError("samples at temperature 0 repeat one answer; give a temperature above 0 or "
                              "samples=1", options=("temperature", "samples"))
        self.seed = check_int("seed", self.seed, 0, 2**31 - 1)
        self.top_logprobs = check_int("top_logprobs", self.top_logprobs, 1, 20)
        self.concurrency = check_int("concurrency", self.concurrency, 1, 256)
        self.request_seconds = check_float("request_seconds", self.request_seconds, 0, low_open=True)
        if self.max_hours is not None:
            self.max_hours = check_float("max_hours", self.max_hours, 0, low_open=True)
        self.extra_body = _extra_body(self.extra_body)
        self.endpoint = Endpoint(self.base_url, allow_remote=bool(self.allow_remote), key_env=self.key_env,
                                 timeout=self.timeout, retries=self.retries, max_rps=self.max_rps)
        self.base_url = self.endpoint.base_url

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (for worker processes): the cache is opened again where it is used."""
        return {k: v for k, v in self.__dict__.items() if k != "_cache"} | {"_cache": None}

    def __repr__(self) -> str:
        return (f"Judge({self.llm!r} at {self.base_url}, method={self.method}, api={self.api}, "
                f"key from {self.key_env or 'nowhere'})")

    # -- plumbing ---------------------------------------------------------------------------

    def hours_limit(self) -> float:
        from ..util.limits import MAX_HOURS

        return MAX_HOURS if self.max_hours is None else self.max_hours

    def open_cache(self) -> Cache:
        if self._cache is None:
            path = default_cache() if self.cache is None else os.fspath(self.cache)
            if path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._cache = Cache(path)
        return self._cache

    def close(self) -> None:
        self.endpoint.close()
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def served(self) -> list[str] | None:
        """The models the server lists (GET /models), checked to include `llm`; None if the
        server has no such list (404)."""
        if self._served is None:
            try:
                data = self.endpoint.get("/models")
            except EndpointError as exc:
                if "HTTP 404" in str(exc):
                    return None
                raise
            rows = data.get("data")
            if not isinstance(rows, list):
                raise EndpointError(f"{self.base_url}/models answered without a list of models")
            self._served = [str(r.get("id")) for r in rows if isinstance(r, dict)]
            if self.llm not in self._served:
                listed = ", ".join(repr(s) for s in self._served[:10]) or "none"
                raise MethodError(f"{self.base_url} does not serve {self.llm!r} (it lists: {listed})",
                                  options=("llm",))
        return self._served

    def check(self) -> dict[str, Any]:
        """What the server says: the models it lists, the model it reports for `llm`, and whether
        it returns log-probabilities (one request for one token, not cached)."""
        self.endpoint.check_consent("a one-word request")
        served = self.served()
        path = "/chat/completions" if self.api == "chat" else "/completions"
        body = Runner(self, "check").body("Reply with the number 1.", 0.0, 1, self.seed, True)[1]
        response = self.endpoint.post(path, body)
        from .answers import first_token_alternatives

        return {"base_url": self.base_url, "remote": self.endpoint.remote, "served": served,
                "llm": self.llm, "reported_model": response.get("model"),
                "logprobs": first_token_alternatives(response, self.api) is not None}

    def settings(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "llm": self.llm, "api": self.api, "method": self.method,
                "samples": self.samples, "temperature": self.temperature,
                "logprob_temperature": 0.0, "seed": self.seed, "top_logprobs": self.top_logprobs,
                "texts_version": TEXTS_VERSION, "key_env": self.key_env, "concurrency": self.concurrency,
                "extra_body": dict(self.extra_body)}

    def _ask(self, task: str, what: str, queries: list[Query], later: list[Query] | None = None,
             dry_run: bool = False) -> tuple[Runner, list | None, dict[str, Any]]:
        """Consent, the estimate and its check, the server's models; then the answers."""
        self.endpoint.check_consent(what)
        runner = Runner(self, task)
        est = estimate(runner, queries, later)
        check_estimate(est, f"the judge's {task} ({len(queries) + len(later or [])} questions)",
                       self.max_hours)
        if dry_run:
            return runner, None, est
        self.served()
        return runner, runner.run(queries), est

    def _result(self, task: str, score_name: str, scores: dict[int, float], items: list[dict[str, Any]],
                runner: Runner | None, est: dict[str, Any], sent: str, bootstrap: int = 2000) -> JudgeResult:
        from ..intrusion.scoring import bootstrap_ci

        values = np.array([v for v in scores.values() if math.isfinite(v)])
        summary: dict[str, Any] = {"answered": sum(it.get("unanswered") is None for it in items),
                                   "scored": int(values.size),
                                   "mean": float(values.mean()) if values.size else math.nan}
        if values.size >= 2 and bootstrap:
            summary["mean_ci"] = bootstrap_ci(values, bootstrap, np.random.default_rng(self.seed))
        accounting = runner.summary() if runner is not None else {}
        return JudgeResult(task, score_name, scores, items, summary, self.settings(), accounting, est,
                           {"base_url": self.base_url, "remote": self.endpoint.remote, "sent": sent})

    # -- tasks ------------------------------------------------------------------------------

    def word_intrusion(self, tasks: Any, dry_run: bool = False, task_seed: int = 0,
                       **task_options: Any) -> JudgeResult | dict[str, Any]:
        """P(intruder) per topic: `tasks` a model (word tasks built with `task_seed` and
        `task_options`, as `intrusion.word_tasks`), task rows or a key file. Attention checks are
        left out. `dry_run`: the estimate only, nothing sent."""
        rows = [r for r in _key_rows(tasks, "word", task_seed, task_options) if not r.get("attention")]
        for r in rows:
            _check_choices(r["options"], f"topic {r['topic']}")
        queries = [Query("choice", prompts.word_intrusion(r["options"]), len(r["options"]),
                         what=f"topic {r['topic']}") for r in rows]
        runner, outcomes, est = self._ask("word-intrusion", f"the top words of {len(rows)} topics", queries,
                                          dry_run=dry_run)
        if outcomes is None:
            return est
        items, scores = [], {}
        for r, o in zip(rows, outcomes, strict=True):
            it = _item(r, o, ("item", "model", "topic", "options", "intruder"))
            if o.dist is not None:
                it["score"] = o.dist[r["intruder"]]
            scores[int(r["topic"])] = it.get("score", math.nan)
            items.append(it)
        return self._result("word-intrusion", "model_precision", scores, items, runner, est,
                            "topics' top words and intruders")

    def topic_intrusion(self, tasks: Any, docs: Any = None, dry_run: bool = False, task_seed: int = 0,
                        **task_options: Any) -> JudgeResult | dict[str, Any]:
        """P(intruder) and the expected topic log odds per document: `tasks` a model (with `docs`,
        the documents or their D x T proportions; tasks built as `intrusion.topic_tasks` with
        `task_seed` and `task_options`, e.g. texts=), task rows or a key file."""
        if docs is not None:
            if not _is_model(tasks):
                raise MethodError("docs go with a model (tasks are built from both); a key already holds "
                                  "them")
            from ..intrusion.tasks import topic_tasks

            rows = [t.key() for t in topic_tasks(tasks, docs, seed=task_seed, **task_options)]
        else:
            if _is_model(tasks):
                raise MethodError("topic intrusion of a model needs docs (the documents or their "
                                  "proportions)")
            rows = _key_rows(tasks, "topic", task_seed, task_options)
        for r in rows:
            _check_choices(r["options"], f"document {r['document']}")
        queries = [Query("choice", prompts.topic_intrusion(_doc(r["text"]), r["options"]), len(r["options"]),
                         what=f"document {r['document']}") for r in rows]
        runner, outcomes, est = self._ask("topic-intrusion", f"{len(rows)} documents and their topics' words",
                                          queries, dry_run=dry_run)
        if outcomes is None:
            return est
        items, scores = [], {}
        for r, o in zip(rows, outcomes, strict=True):
            it = _item(r, o, ("item", "model", "document", "options", "intruder"))
            if o.dist is not None:
                it["score"] = o.dist[r["intruder"]]
                lt = r.get("option_log_theta") or []
                if lt:
                    it["topic_log_odds"] = float(sum(p * (lt[r["intruder"]] - lt[c])
                                                     for c, p in enumerate(o.dist) if p > 0))
            scores[int(r["document"])] = it.get("score", math.nan)
            items.append(it)
        return self._result("topic-intrusion", "p_intruder", scores, items, runner, est,
                            "documents' texts and topics' top words")

    def ratings(self, topics: Any, n_words: int = 10, dry_run: bool = False) -> JudgeResult | dict[str, Any]:
        """The expected 3-point rating of each topic from its top `n_words` words: `topics` a model
        or lists of words (one per topic, most important first)."""
        from ..util.limits import check_int

        n_words = check_int("n_words", n_words, 1, 100)
        words = _top_words(topics, n_words)
        queries = [Query("choice", prompts.rating(w), len(RATING_SCALE), what=f"topic {k}")
                   for k, w in enumerate(words)]
        runner, outcomes, est = self._ask("ratings", f"the top words of {len(words)} topics", queries,
                                          dry_run=dry_run)
        if outcomes is None:
            return est
        items, scores = [], {}
        from .answers import expected

        for k, (w, o) in enumerate(zip(words, outcomes, strict=True)):
            it = {"topic": k, "words": list(w), **_outcome(o)}
            if o.dist is not None:
                it["score"] = it["expected"] = expected(o.dist, RATING_SCALE)
                it["choice"] = RATING_SCALE[int(np.argmax(o.dist))]
            scores[k] = it.get("score", math.nan)
            items.append(it)
        return self._result("ratings", "expected_rating", scores, items, runner, est, "topics' top words")

    def proxann(self, items: Sequence[Mapping[str, Any]], n_words: int = 15,
                dry_run: bool = False) -> JudgeResult | dict[str, Any]:
        """ProxAnn's three steps for each item ({"topic", "words", "exemplars": [texts],
        "documents": [texts], "theta": [the documents' proportions of the topic], optional}): a
        label from the top `n_words` words and the exemplars, the fit of each document to the label
        (1-5, expected), and the documents ranked by fit. Scores: Kendall's tau-b of the expected
        fit with theta (and `rank_tau`, of the ranking with theta)."""
        rows = [_proxann_item(it, i) for i, it in enumerate(items)]
        label_q = [Query("label", _label_prompt(r, n_words), what=f"topic {r['topic']}") for r in rows]
        # the estimate counts the later steps with a label of the longest allowed length
        from .answers import LABEL_CHARS

        placeholder = "x" * LABEL_CHARS
        later = [q for r in rows for q in _proxann_later(r, placeholder)]
        runner, labels, est = self._ask("proxann", f"{len(rows)} topics' words and documents", label_q, later,
                                        dry_run=dry_run)
        if labels is None:
            return est
        asks: list[tuple[int, Query]] = []
        for i, (r, lab) in enumerate(zip(rows, labels, strict=True)):
            if lab.label is not None:
                asks += [(i, q) for q in _proxann_later(r, lab.label)]
        outcomes = runner.run([q for _, q in asks])
        by_item: dict[int, list] = {}
        for (i, q), o in zip(asks, outcomes, strict=True):
            by_item.setdefault(i, []).append((q, o))
        from scipy.stats import kendalltau

        from .answers import expected

        out, scores = [], {}
        for i, (r, lab) in enumerate(zip(rows, labels, strict=True)):
            it: dict[str, Any] = {"topic": r["topic"], "label": lab.label, "label_replies": lab.replies,
                                  "label_requests": lab.requests, "label_cached": lab.cached}
            if lab.unanswered:
                it["unanswered"] = f"label: {lab.unanswered}"
            got = by_item.get(i, [])
            fits = [o for q, o in got if q.kind == "choice"]
            rank = [o for q, o in got if q.kind == "ranking"]
            if fits:
                it["fit"] = [expected(o.dist, FIT_SCALE) if o.dist is not None else None for o in fits]
                it["fit_dist"] = [o.dist for o in fits]
                it["fit_source"] = [o.source for o in fits]
                it["fit_malformed"] = sum(o.malformed for o in fits)
                missing = [j for j, o in enumerate(fits) if o.dist is None]
                if missing:
                    it["unanswered"] = f"fit of document(s) {', '.join(str(j + 1) for j in missing)}"
            if rank:
                it["rank"] = rank[0].order
                it["mean_rank"] = rank[0].mean_rank
                it["rank_replies"] = rank[0].replies
                if rank[0].unanswered:
                    it["rank_unanswered"] = rank[0].unanswered
            theta = r.get("theta")
            if theta is not None and fits and not any(f is None for f in it["fit"]):
                it["score"] = _tau(kendalltau, it["fit"], theta)
            if theta is not None and rank and rank[0].mean_rank is not None:
                it["rank_tau"] = _tau(kendalltau, [-x for x in rank[0].mean_rank], theta)
            scores[int(r["topic"])] = it.get("score", math.nan)
            out.append(it)
        return self._result("proxann", "fit_tau", scores, out, runner, est,
                            "topics' top words, exemplar and evaluation documents")


# -- helpers ----------------------------------------------------------------------------------


OWN_FIELDS = ("model", "messages", "prompt", "temperature", "top_p", "max_tokens", "seed", "logprobs",
              "top_logprobs", "stream", "n")


def _extra_body(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra request fields, as JSON; those the judge sets itself are refused."""
    import json

    if extra is None:
        return {}
    if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
        raise MethodError("extra_body must be a mapping of field names to JSON values",
                          options=("extra_body",))
    clash = sorted(set(extra) & set(OWN_FIELDS))
    if clash:
        raise MethodError(f"extra_body must not set {', '.join(clash)}: the judge sets them",
                          options=("extra_body",))
    try:
        return json.loads(json.dumps(dict(extra), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise MethodError(f"extra_body must be JSON ({exc})", options=("extra_body",)) from None


def _is_model(x: Any) -> bool:
    from ..model import TopicModel
    from ..topics import Topics

    return isinstance(x, TopicModel | Topics)


def _key_rows(tasks: Any, kind: str, seed: int, task_options: dict[str, Any]) -> list[dict[str, Any]]:
    """Key rows of `kind` from a model (tasks built here), task objects, rows or a key file."""
    from ..intrusion.scoring import check_key, read_key
    from ..intrusion.tasks import Task, word_tasks

    if _is_model(tasks):
        if kind != "word":
            raise AssertionError(kind)
        return [t.key() for t in word_tasks(tasks, seed=seed, **task_options)]
    if task_options:
        raise MethodError(f"task options {sorted(task_options)} apply only when tasks are built from a model")
    if isinstance(tasks, str | os.PathLike):
        rows = read_key(tasks)
    else:
        rows = list(check_key([t.key() if isinstance(t, Task) else t for t in tasks]).values())
    rows = [r for r in rows if r["kind"] == kind]
    if not rows:
        raise MethodError(f"no {kind}-intrusion items among the tasks")
    return rows


def _check_choices(options: Sequence[str], where: str) -> None:
    if len(options) > MAX_CHOICES:
        raise MethodError(f"{where}: {len(options)} options; a judge answers with one digit, so at most "
                          f"{MAX_CHOICES}")


def _doc(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= DOC_CHARS else text[:DOC_CHARS] + " …"


def _outcome(o: Any) -> dict[str, Any]:
    d = o.to_dict()
    return {k: d[k] for k in ("dist", "mass", "source", "malformed", "fallback", "unanswered", "replies",
                              "requests") if k in d} | {"cached": o.cached}


def _item(r: dict[str, Any], o: Any, keys: Sequence[str]) -> dict[str, Any]:
    it = {k: r.get(k) for k in keys} | _outcome(o)
    if o.dist is not None:
        it["choice"] = int(np.argmax(o.dist))
    return it


def _top_words(topics: Any, n_words: int) -> list[list[str]]:
    if _is_model(topics):
        from ..topics import word_scores

        phi, vocab = word_scores(topics, "ratings")
        order = np.argsort(-phi, axis=1, kind="stable")[:, :n_words]
        return [[vocab[int(w)] for w in row] for row in order]
    words = [list(t) for t in topics]
    for k, w in enumerate(words):
        if not w or not all(isinstance(x, str) and x.strip() for x in w):
            raise MethodError(f"topic {k}: expected a list of words (non-empty strings)")
    return [w[:n_words] for w in words]


def _proxann_item(it: Mapping[str, Any], i: int) -> dict[str, Any]:
    where = f"ProxAnn item {i}"
    if not isinstance(it, Mapping):
        raise MethodError(f"{where}: expected a record with topic, words, exemplars and documents")
    missing = [k for k in ("words", "exemplars", "documents") if k not in it]
    if missing:
        raise MethodError(f"{where}: missing {', '.join(missing)}")
    r = {"topic": it.get("topic", i), "words": list(it["words"]), "exemplars": list(it["exemplars"]),
         "documents": list(it["documents"]), "theta": None if it.get("theta") is None else list(it["theta"])}
    if not isinstance(r["topic"], int) or isinstance(r["topic"], bool):
        raise MethodError(f"{where}: topic must be a whole number")
    for k in ("words", "exemplars", "documents"):
        if not r[k] or not all(isinstance(x, str) and x.strip() for x in r[k]):
            raise MethodError(f"{where}: {k} must be a non-empty list of non-empty strings")
    if not 2 <= len(r["documents"]) <= MAX_CHOICES:
        raise MethodError(f"{where}: {len(r['documents'])} documents; ranking them needs 2 to {MAX_CHOICES}")
    if r["theta"] is not None:
        from ..util.numbers import finite_float

        if len(r["theta"]) != len(r["documents"]) or any(finite_float(t) is None for t in r["theta"]):
            raise MethodError(f"{where}: theta must give a finite number for each of its "
                              f"{len(r['documents'])} documents")
    return r


def _label_prompt(r: dict[str, Any], n_words: int) -> str:
    return prompts.proxann_label(r["words"][:n_words], [_doc(t) for t in r["exemplars"]])


def _proxann_later(r: dict[str, Any], label: str) -> list[Query]:
    docs = [_doc(t) for t in r["documents"]]
    return ([Query("choice", prompts.proxann_fit(label, d), len(FIT_SCALE), what=f"topic {r['topic']}")
             for d in docs] + [Query("ranking", prompts.proxann_rank(label, docs), len(docs),
                                     what=f"topic {r['topic']}")])


def _tau(kendalltau: Any, a: Sequence[float], b: Sequence[float]) -> float:
    if len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(kendalltau(a, b).statistic)


__all__ = ["Judge", "METHODS", "APIS", "default_cache"]
