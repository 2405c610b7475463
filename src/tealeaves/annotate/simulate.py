"""Load-testing and study-simulating parts: `AppServer` runs `tealeaves annotate serve` in its own
process on a free port of 127.0.0.1 and waits until it answers; simulated annotators, each in its
own thread with one keep-alive HTTP connection, ask for their next task and answer it until the
task set ends, sending some answers twice (as a retry or a double click would).

Annotators of known behaviour, so a study's expected agreement is known: `intruder_finder` finds
a word-intrusion task's intruder with a probability of the topic's own (else picks another option
at random); `theta_rater` answers ProxAnn tasks with fit ratings that follow theta_dk with noise of
the topic's own (the latent fit of the evaluation document in place r of n by theta, 0 = highest,
is 1 + 4 (n - 1 - r) / (n - 1) plus N(0, sigma_t^2), rounded and clipped to 1..5; the distractor is
rated 1 and ranked last; an instructed item gets the rating it asks for; the ranking orders the
latent fits). Each answer's randomness is seeded by (seed, annotator, item), so a study does not
depend on the threads' timing."""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode, urlsplit

import numpy as np

Chooser = Callable[[dict[str, Any], int], int]
# a ProxAnn task as shown (its documents in the annotator's order) -> label, clarity, ratings, ranking
ProxAnnAnswer = Callable[[str, dict[str, Any]], tuple[str, int, dict[str, int], list[str]]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """`tealeaves annotate serve ...` on a free port of 127.0.0.1."""

    def __init__(
        self,
        tasks: str,
        db: str,
        *extra: str,
        key: str | None = None,
        token: str = "admin-secret-for-tests",
        log: str | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self.cmd = [
            sys.executable,
            "-m",
            "tealeaves",
            "annotate",
            "serve",
            "--tasks",
            tasks,
            "--db",
            db,
            "--port",
            str(self.port),
            "--admin-token",
            token,
            *extra,
        ]
        if key:
            self.cmd += ["--key", key]
        self.log = (
            log or tempfile.NamedTemporaryFile(prefix="tealeaves-serve-", suffix=".log", delete=False).name
        )
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 90.0) -> AppServer:
        with open(self.log, "ab") as fh:
            self.proc = subprocess.Popen(self.cmd, stdout=fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode}: {open(self.log).read()[-2000:]}"
                )
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server did not start in {timeout} s: {open(self.log).read()[-2000:]}")

    def stop(self, kill: bool = False) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _request(
    conn: http.client.HTTPConnection, method: str, path: str, body: dict | None = None,
    cookies: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request on a keep-alive connection, sending `cookies` and keeping those set."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data else {}
    if cookies:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    if cookies is not None:
        for header in resp.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                cookies[name] = morsel.value
    return resp.status, json.loads(resp.read() or b"null")


def annotator(
    url: str, who: str, choose: Chooser, retry_every: int = 0, timeout: float = 60.0,
    acked: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Answer every task as `who`; returns the acknowledged answers {item: choice}, the request
    latencies (s) and the status codes seen. `acked`, if given, is filled as answers are
    acknowledged (so a caller keeps them when the server dies part-way)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    acked = {} if acked is None else acked
    cookies: dict[str, str] = {}  # the session the server issues on the first visit
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    try:
        for step in range(100_000):
            t0 = time.perf_counter()
            path = "/api/next?" + urlencode({"participant": who})
            status, data = _request(conn, "GET", path, cookies=cookies)
            latencies.append(time.perf_counter() - t0)
            statuses[status] = statuses.get(status, 0) + 1
            if status != 200:
                raise RuntimeError(f"{who}: /api/next answered {status}: {data}")
            if data["done"]:
                return {"acked": acked, "latencies": latencies, "statuses": statuses, "code": data["code"]}
            task = data["task"]
            body = {
                "participant": who,
                "item": task["item"],
                "options": task["options"],
                "choice": choose(task, step),
                "response_ms": 1000 + step,
            }
            for _ in range(2 if retry_every and step % retry_every == 0 else 1):
                t0 = time.perf_counter()
                status, _ = _request(conn, "POST", "/api/answer", body, cookies)
                latencies.append(time.perf_counter() - t0)
                statuses[status] = statuses.get(status, 0) + 1
                if status == 200:
                    acked[task["item"]] = body["choice"]
        raise RuntimeError(f"{who}: the task set never ended")
    finally:
        conn.close()


def run_annotators(
    url: str,
    n: int,
    choose: Chooser | None = None,
    retry_every: int = 4,
    prefix: str = "sim",
    timeout: float = 600.0,
    chooser_for: Callable[[str], Chooser] | None = None,
) -> dict[str, Any]:
    """`n` annotators at once; throughput and latency percentiles over all their requests.
    `chooser_for(annotator)`, if given, makes each annotator's own chooser (in place of `choose`)."""

    def default(task: dict[str, Any], step: int) -> int:
        return step % len(task["options"])

    choose = choose or default
    t0 = time.perf_counter()
    with ThreadPoolExecutor(n) as ex:
        futures = [ex.submit(annotator, url, f"{prefix}{i}",
                             chooser_for(f"{prefix}{i}") if chooser_for else choose, retry_every)
                   for i in range(n)]
        results = [f.result(timeout=timeout) for f in futures]
    seconds = time.perf_counter() - t0
    lat = np.concatenate([r["latencies"] for r in results])
    statuses: dict[int, int] = {}
    for r in results:
        for k, v in r["statuses"].items():
            statuses[k] = statuses.get(k, 0) + v
    return {
        "annotators": n,
        "requests": int(lat.size),
        "seconds": seconds,
        "requests_per_second": lat.size / seconds,
        "p50_ms": float(1000 * np.percentile(lat, 50)),
        "p95_ms": float(1000 * np.percentile(lat, 95)),
        "max_ms": float(1000 * lat.max()),
        "statuses": statuses,
        "acked": {(f"{prefix}{i}", item): c for i, r in enumerate(results) for item, c in r["acked"].items()},
    }


def _rng(seed: int, who: str, k: dict[str, Any]) -> np.random.Generator:
    """The randomness of one annotator's answer to one item (`k`: its key row), independent of the
    threads' timing and of the task set's secret: keyed by what the item is (kind, model, topic,
    document), not by its id, which is an HMAC under a fresh random secret (`intrusion.tasks`), so
    that a seeded simulation gives the same answers every time (it did not: tests/test_metaeval_app.py
    drew a new study on every run, and its interval missed the population value in one)."""
    what = "|".join(str(k.get(f)) for f in ("kind", "model", "topic", "document"))
    return np.random.default_rng([seed, zlib.crc32(who.encode()), zlib.crc32(what.encode())])


def intruder_finder(key: list[dict[str, Any]], accuracy: dict[str, float] | Callable[[dict[str, Any]], float],
                    seed: int = 0) -> Callable[[str], Chooser]:
    """Per annotator, a chooser that picks a word-intrusion item's intruder with probability
    `accuracy` (by "model/topic", or a function of the key row; attention items: always), else
    one of the other options at random. `key`: the key's rows."""
    rows = {k["item"]: k for k in key}

    def chooser_for(who: str) -> Chooser:
        def choose(task: dict[str, Any], step: int) -> int:
            k = rows[task["item"]]
            if k.get("attention"):
                return int(k["intruder"])
            p = accuracy(k) if callable(accuracy) else accuracy[f"{k['model']}/{k['topic']}"]
            rng = _rng(seed, who, k)
            if rng.random() < p:
                return int(k["intruder"])
            others = [j for j in range(len(task["options"])) if j != k["intruder"]]
            return int(others[rng.integers(len(others))])
        return choose
    return chooser_for


def theta_rater(key: list[dict[str, Any]], noise: dict[str, float] | float, seed: int = 0) -> ProxAnnAnswer:
    """Answers to ProxAnn tasks whose fit ratings follow theta_dk with noise sigma_t (`noise` by
    "model/topic", or one for all; see the module notes). `key`: the key's rows."""
    rows = {k["item"]: k for k in key}

    def answer(who: str, task: dict[str, Any]) -> tuple[str, int, dict[str, int], list[str]]:
        k = rows[task["item"]]
        sigma = noise if isinstance(noise, int | float) else noise[f"{k['model']}/{k['topic']}"]
        rng = _rng(seed, who, k)
        evals = sorted((d for d in k["documents"] if d["role"] == "eval"), key=lambda d: -d["theta"])
        n = len(evals)
        latent = {d["id"]: 1 + 4 * (n - 1 - r) / (n - 1) + sigma * rng.standard_normal()
                  for r, d in enumerate(evals)}
        ratings = {d: int(np.clip(np.round(v), 1, 5)) for d, v in latent.items()}
        for d in k["documents"]:
            if d["role"] == "distractor":
                ratings[d["id"]], latent[d["id"]] = 1, -np.inf
            elif d["role"] == "instructed":
                ratings[d["id"]] = int(d.get("expected", 2))
        ranked = [d["id"] for d in task["documents"] if d["rank"]]
        ranking = sorted(ranked, key=lambda d: -latent[d])
        return f"{who}'s category", int(np.clip(np.round(5 - sigma), 1, 5)), ratings, ranking
    return answer


def proxann_annotator(url: str, who: str, answer: ProxAnnAnswer, timeout: float = 60.0) -> dict[str, Any]:
    """Answer every ProxAnn task as `who`, step by step (label and clarity, each document's
    rating, the ranking); returns the items answered and the status codes seen."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    cookies: dict[str, str] = {}
    statuses: dict[int, int] = {}
    answered = []

    def post(body: dict[str, Any]) -> None:
        status, data = _request(conn, "POST", "/api/step", body, cookies)
        statuses[status] = statuses.get(status, 0) + 1
        if status != 200:
            raise RuntimeError(f"{who}: /api/step answered {status}: {data}")

    try:
        for _ in range(100_000):
            path = "/api/next?" + urlencode({"participant": who})
            status, data = _request(conn, "GET", path, cookies=cookies)
            statuses[status] = statuses.get(status, 0) + 1
            if status != 200:
                raise RuntimeError(f"{who}: /api/next answered {status}: {data}")
            if data["done"]:
                return {"answered": answered, "statuses": statuses, "code": data["code"]}
            task = data["task"]
            label, clarity, ratings, ranking = answer(who, task)
            base = {"participant": who, "item": task["item"], "response_ms": 1000}
            post({**base, "step": "label", "label": label, "clarity": clarity})
            for d in task["documents"]:
                post({**base, "step": "rate", "document": d["id"], "rating": ratings[d["id"]]})
            post({**base, "step": "rank", "ranking": ranking})
            answered.append(task["item"])
        raise RuntimeError(f"{who}: the task set never ended")
    finally:
        conn.close()


def run_proxann_annotators(url: str, n: int, answer: ProxAnnAnswer, prefix: str = "sim",
                           timeout: float = 600.0) -> dict[str, Any]:
    """`n` ProxAnn annotators at once (`proxann_annotator`); their answered items by annotator."""
    with ThreadPoolExecutor(n) as ex:
        futures = {f"{prefix}{i}": ex.submit(proxann_annotator, url, f"{prefix}{i}", answer)
                   for i in range(n)}
        return {who: f.result(timeout=timeout) for who, f in futures.items()}
