"""The annotation app under attack, as its operator would test it: markup and SQL injection, request
limits, sessions, the admin token, security headers, the key, 200 concurrent annotators and kill -9
under load, against the real `tealeaves annotate serve` process on SQLite and PostgreSQL, and
headless Chromium for what a browser does with the pages."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from servers import CHROMIUM, CHROMIUM_ARGS, AppServer

import tealeaves as tl
from tealeaves.annotate import open_store
from tealeaves.annotate.simulate import annotator, run_annotators
from tealeaves.cli import main

MARK = "window.__pwned = (window.__pwned || 0) + 1"
PAYLOADS = [
    f"<script>{MARK}</script>",
    f'<img src=x onerror="{MARK}">',
    '<img src="http://evil.example/beacon.png">',
    f'"><svg onload="{MARK}">',
    "<b>bold</b>&amp;",
]
SQL = [
    "' OR '1'='1",
    "x'; DROP TABLE responses; --",
    '"; DELETE FROM participants; --',
    "1; SELECT pg_sleep(5)",
]
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    """Word and topic tasks whose words, document texts and model name are markup payloads."""
    d = tmp_path_factory.mktemp("attacks")
    model = tl.synthetic.random_model(8, 200, seed=3).with_params(name=PAYLOADS[0])
    theta = tl.synthetic.generate(model, 3, 30, seed=1, return_latents=True)[1]
    tasks = tl.intrusion.word_tasks(model, seed=1)
    tasks += tl.intrusion.topic_tasks(model, theta, texts=[" ".join(PAYLOADS)] * 3, seed=2)
    for i, t in enumerate(tasks):
        if t.kind == "word":
            t.options[(t.intruder + 1 + i) % len(t.options)] = PAYLOADS[i % len(PAYLOADS)]
    tl.intrusion.write_tasks(tasks, d / "tasks.jsonl", d / "key.jsonl")
    return {
        "dir": d,
        "tasks": str(d / "tasks.jsonl"),
        "key": str(d / "key.jsonl"),
        "by_item": {t.item: t.key() for t in tasks},
    }


@pytest.fixture(scope="module")
def server(task_files, backend):
    with AppServer(
        task_files["tasks"], backend("attacks"), "--max-new-per-minute", "400", key=task_files["key"]
    ) as s:
        yield s


def _db(srv: AppServer) -> str:
    return srv.cmd[srv.cmd.index("--db") + 1]


def _answer_all(c: httpx.Client, who: str, choose=lambda t, i: 0) -> dict[str, int]:
    acked = {}
    for step in range(1000):
        data = c.get("/api/next", params={"participant": who}).json()
        if data["done"]:
            return acked
        t = data["task"]
        body = {
            "participant": who,
            "item": t["item"],
            "options": t["options"],
            "choice": choose(t, step),
            "response_ms": 5,
        }
        assert c.post("/api/answer", json=body).status_code == 200
        acked[t["item"]] = body["choice"]
    raise AssertionError("the task set never ended")


def test_injected_markup_is_inert_in_chromium(server, task_files, tmp_path):
    """Payloads in task words, document texts, the model name (admin page, HTML report) and the
    participant id are shown as text: no script runs, no request leaves the server's origin."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    origin = server.url
    requests, dialogs = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(origin) or route.request.url.startswith("file:")
                else route.abort()
            ),
        )
        page.goto(f"{origin}/?participant=mallory")
        shown: list[str] = []
        for _ in range(len(task_files["by_item"])):
            page.wait_for_selector("#options button:not([disabled])")
            shown += page.locator("#options button").evaluate_all(
                "bs => bs.map(b => b.childNodes[1].textContent)"
            )
            shown.append(page.locator("#text").text_content() or "")
            page.locator("#options button").nth(0).click()
            page.wait_for_function(
                "() => !document.querySelector('#options button') || "
                "document.querySelector('#options button:not([disabled])') || "
                "getComputedStyle(document.querySelector('#done')).display !== 'none'"
            )
        page.wait_for_selector("#done", state="visible")
        for payload in PAYLOADS:
            assert any(payload in s for s in shown), f"{payload!r} was not shown as text"
        # a participant id carrying markup is refused, and the refusal is shown as text
        page.goto(f"{origin}/?participant=" + "%3Cimg%20src%3Dx%20onerror%3D%22window.__pwned%3D1%22%3E")
        page.wait_for_function("() => document.querySelector('#status').textContent.length > 0")
        assert page.evaluate("() => window.__pwned") is None

        page.goto(f"{origin}/admin")
        page.wait_for_selector("#login:not(.hidden)")
        page.fill("#token", server.token)
        page.click("#login button")
        page.wait_for_selector("#scores tbody tr")
        cells = page.locator("#scores tbody td").all_text_contents()
        assert PAYLOADS[0] in cells  # the model name, as text
        assert page.evaluate("() => window.__pwned") is None

        # the HTML report of the scores, opened from disk
        rows = open_store(_db(server)).responses()
        responses = tmp_path / "responses.jsonl"
        responses.write_text(
            "".join(
                json.dumps({"annotator": r["annotator"], "item": r["item"], "choice": r["choice"]}) + "\n"
                for r in rows
            )
        )
        scores, report = tmp_path / "scores.json", tmp_path / "report.html"
        assert main(["intrusion", "score", task_files["key"], str(responses), "--json", str(scores)]) == 0
        assert main(["report", str(scores), "-o", str(report), "--title", PAYLOADS[1]]) == 0
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert PAYLOADS[0] in page.locator("body").inner_text()
        assert page.evaluate("() => window.__pwned") is None
        browser.close()
    assert not dialogs
    outside = [u for u in requests if not (u.startswith(origin) or u.startswith("file:"))]
    assert outside == [], outside


def test_sql_injection_is_data(server, task_files, tmp_path):
    """SQL in every parameter and field gets a 4xx, never a 5xx, and changes nothing; through the
    store's API, where an id can hold any text, it is stored verbatim."""
    store = open_store(_db(server))
    with httpx.Client(base_url=server.url, timeout=30) as c:
        task = c.get("/api/next", params={"participant": "sqlvictim"}).json()["task"]
        before = store.progress()
        good = {
            "participant": "sqlvictim",
            "item": task["item"],
            "options": task["options"],
            "choice": 0,
            "response_ms": 5,
        }
        statuses = []
        for s in SQL:
            for name in ("participant", "PROLIFIC_PID", "workerId"):
                statuses.append(c.get("/api/next", params={name: s}).status_code)
            for field in ("participant", "item", "options", "choice", "response_ms"):
                statuses.append(c.post("/api/answer", json={**good, field: s}).status_code)
            statuses.append(
                c.post("/api/answer", json={**good, "options": [s] * len(task["options"])}).status_code
            )
            statuses.append(c.get("/api/admin/summary", headers={"Authorization": f"Bearer {s}"}).status_code)
            statuses.append(c.post("/api/admin/login", json={"token": s}).status_code)
            statuses.append(c.get(f"/static/{s}").status_code)
        assert all(400 <= code < 500 for code in statuses), statuses
        assert c.post("/api/answer", json=good).status_code == 200
    after = store.progress()
    assert after["responses"] == before["responses"] + 1 and after["participants"] == before["participants"]
    assert len(store.tasks()) == len(task_files["by_item"])

    local = open_store(str(tmp_path / "verbatim.sqlite"))
    local.install(store.tasks())
    for i, s in enumerate(SQL):
        local.add_participant(s, "0" * 64)
        t = local.tasks()[i]
        local.answer(s, t["item"], t["options"], 1, 7)
    assert [r["annotator"] for r in local.responses()] == SQL
    assert local.progress()["participants"] == len(SQL)


def test_request_limits(server, task_files, backend):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        task = c.get("/api/next", params={"participant": "limits"}).json()["task"]
        good = {
            "participant": "limits",
            "item": task["item"],
            "options": task["options"],
            "choice": 0,
            "response_ms": 5,
        }
        deep = "[" * 2000 + "]" * 2000
        assert len(deep) <= 4096
        assert c.post("/api/answer", content=deep, headers=JSON).status_code == 400
        nested = json.dumps({**good, "extra": json.loads("[" * 50 + "]" * 50)})
        assert c.post("/api/answer", content=nested, headers=JSON).status_code == 400
        for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            assert (
                c.post("/api/answer", content=json.dumps(good), headers={"Content-Type": media}).status_code
                == 415
            )
        assert c.post("/api/answer", content=b"\xff\xfe{}", headers=JSON).status_code == 400
        # ids must match entirely: "alice\n" is not "alice"
        assert c.get("/api/next", params={"participant": "limits\n"}).status_code == 400
        assert c.post("/api/answer", json={**good, "participant": "limits\n"}).status_code == 422
        assert c.get("/api/next", params={"participant": "x" * 201}).status_code == 400
        assert c.get("/api/next", params={"participant": "x" * 200}).status_code == 200
        assert c.post("/api/answer", json=good).status_code == 200
    # new participants per minute are capped; those already in go on
    with AppServer(task_files["tasks"], backend("flood"), "--max-new-per-minute", "5") as srv:
        with httpx.Client(base_url=srv.url, timeout=30) as first:
            assert first.get("/api/next", params={"participant": "early"}).status_code == 200
            codes = []
            for i in range(20):
                with httpx.Client(base_url=srv.url, timeout=30) as c:
                    codes.append(c.get("/api/next", params={"participant": f"flood{i}"}).status_code)
            assert codes[:4] == [200] * 4 and set(codes[4:]) == {429}
            assert first.get("/api/next", params={"participant": "early"}).status_code == 200
        assert open_store(_db(srv)).progress()["participants"] == 5


def test_knowing_an_id_is_not_enough(task_files, backend):
    with AppServer(task_files["tasks"], backend("sessions"), "--per-annotator", "3") as srv:
        with (
            httpx.Client(base_url=srv.url, timeout=30) as alice,
            httpx.Client(base_url=srv.url, timeout=30) as eve,
        ):
            task = alice.get("/api/next", params={"participant": "alice"}).json()["task"]
            body = {
                "participant": "alice",
                "item": task["item"],
                "options": task["options"],
                "choice": 1,
                "response_ms": 5,
            }
            assert eve.get("/api/next", params={"participant": "alice"}).status_code == 403
            assert eve.post("/api/answer", json=body).status_code == 403
            cookie = next(iter(alice.cookies.keys()))
            eve.cookies.set(cookie, "forged-token-value")
            assert eve.get("/api/next", params={"participant": "alice"}).status_code == 403
            assert eve.post("/api/answer", json=body).status_code == 403
            assert alice.post("/api/answer", json=body).status_code == 200
            # items outside alice's assignment (3 of them) are refused
            mine = set()
            while True:
                data = alice.get("/api/next", params={"participant": "alice"}).json()
                if data["done"]:
                    break
                t = data["task"]
                mine.add(t["item"])
                ok = {**body, "item": t["item"], "options": t["options"]}
                assert alice.post("/api/answer", json=ok).status_code == 200
            other = next(i for i, k in task_files["by_item"].items() if i not in mine | {task["item"]})
            stray = {**body, "item": other, "options": task_files["by_item"][other]["options"]}
            assert alice.post("/api/answer", json=stray).status_code == 422
            code = data["code"]
            assert eve.get("/api/next", params={"participant": "alice"}).status_code == 403
        rows = open_store(_db(srv)).responses()
    assert len(rows) == 3 and {r["annotator"] for r in rows} == {"alice"} and code


def test_admin_token(server, task_files, tmp_path, monkeypatch):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.get("/admin", params={"token": server.token})
        assert r.status_code == 400 and "not accepted in a URL" in r.text
        assert c.get("/api/admin/summary", params={"token": server.token}).status_code == 403
        assert (
            c.get("/api/admin/summary", headers={"Authorization": f"Bearer {server.token}x"}).status_code
            == 403
        )
        assert (
            c.get("/api/admin/summary", headers={"Authorization": f"Bearer {server.token}"}).status_code
            == 200
        )
        assert c.post("/api/admin/login", json={"token": "wrong" * 4}).status_code == 403
        assert c.get("/api/admin/summary").status_code == 403
        assert c.post("/api/admin/login", json={"token": server.token}).status_code == 200
        summary = c.get("/api/admin/summary")
        assert summary.status_code == 200 and "responses" in summary.json()
    with open(server.log, encoding="utf-8") as fh:
        assert server.token not in fh.read()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tealeaves",
            "annotate",
            "serve",
            "--tasks",
            task_files["tasks"],
            "--db",
            str(tmp_path / "t.sqlite"),
            "--admin-token",
            "short",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "at least 16 characters" in r.stderr and not (tmp_path / "t.sqlite").exists()

    # constant time: whatever is sent, the comparison is secrets.compare_digest of two SHA-256 digests
    from fastapi.testclient import TestClient

    from tealeaves.annotate import AppConfig, create_app
    from tealeaves.annotate import app as app_module

    store = open_store(str(tmp_path / "ct.sqlite"))
    store.install(tl.intrusion.read_tasks(task_files["tasks"]))
    calls = []
    real = app_module.secrets.compare_digest

    def spy(a, b):
        calls.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(app_module.secrets, "compare_digest", spy)
    client = TestClient(create_app(store, None, AppConfig(admin_token="t" * 20)))
    for header in ("Bearer x", "Bearer " + "t" * 19, "Bearer " + "t" * 2000, "Basic abc"):
        assert client.get("/api/admin/summary", headers={"Authorization": header}).status_code == 403
    assert calls == [(32, 32)] * 4


def test_security_headers(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for path in (
            "/",
            "/static/annotate.js",
            "/admin",
            "/api/next?participant=headers",
            "/healthz",
            "/no/such/page",
        ):
            h = c.get(path).headers
            csp = h["content-security-policy"]
            assert (
                "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
            )
            assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"
            assert h["referrer-policy"] == "no-referrer"
        cookie = c.get("/api/next", params={"participant": "cookie-check"}).headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie


class _Untouchable(list):
    """A key that fails the test if anything reads it."""

    def _touched(self, *a, **k):
        raise AssertionError("an annotator route read the key")

    __iter__ = __getitem__ = __len__ = __contains__ = _touched


def test_key_never_reaches_annotators(task_files, tmp_path):
    """Annotator routes never read the key (so neither a body nor a timing can depend on it), and no
    body they serve, including errors, carries an answer field."""
    from fastapi.testclient import TestClient

    from tealeaves.annotate import AppConfig, create_app

    store = open_store(str(tmp_path / "k.sqlite"))
    store.install(tl.intrusion.read_tasks(task_files["tasks"]))
    client = TestClient(create_app(store, _Untouchable(), AppConfig(completion_code="OK-1")))
    bodies = [
        client.get(p).text for p in ("/", "/static/annotate.js")
    ]
    key = task_files["by_item"]
    right = wrong = None
    while True:
        r = client.get("/api/next", params={"participant": "k1"})
        bodies.append(r.text)
        data = r.json()
        if data["done"]:
            break
        t = data["task"]
        body = {"participant": "k1", "item": t["item"], "options": t["options"], "response_ms": 3}
        for bad in ({"choice": 99}, {"choice": "x"}, {"item": "nope", "choice": 0}):
            bodies.append(client.post("/api/answer", json={**body, **bad}).text)
        choice = (
            key[t["item"]]["intruder"]
            if right is None
            else (key[t["item"]]["intruder"] + 1) % len(t["options"])
        )
        r = client.post("/api/answer", json={**body, "choice": choice})
        bodies.append(r.text)
        if right is None:
            right = r.content
        elif wrong is None:
            wrong = r.content
        bodies.append(
            client.post("/api/answer", json={**body, "choice": (choice + 1) % len(t["options"])}).text
        )
    assert right == wrong  # a right and a wrong answer get the same bytes
    for b in bodies:
        for word in (
            "intruder",
            "option_log_theta",
            "option_topics",
            "attention",
            "relaxed",
            '"topic":',
            '"model":',
        ):
            assert word not in b, (word, b[:200])


def test_two_hundred_annotators(server, task_files):
    """200 annotators at once, every 4th answer sent twice: every acknowledged answer is stored
    exactly once with the choice sent, and no request gets a 5xx."""
    n = 200
    stats = run_annotators(
        server.url,
        n,
        lambda t, step: (step * 7 + len(t["item"])) % len(t["options"]),
        retry_every=4,
        prefix="crowd",
    )
    acked = stats["acked"]
    stored = [
        (r["annotator"], r["item"], r["choice"])
        for r in open_store(_db(server)).responses()
        if r["annotator"].startswith("crowd")
    ]
    print(
        f"\n{n} annotators: {stats['requests']} requests in {stats['seconds']:.1f} s, "
        f"p95 {stats['p95_ms']:.0f} ms"
    )
    assert len(acked) == n * len(task_files["by_item"])
    assert len(stored) == len({(a, i) for a, i, _ in stored}) == len(acked)
    assert {(a, i): c for a, i, c in stored} == acked
    assert set(stats["statuses"]) == {200}


def test_kill_under_load_loses_nothing(task_files, backend):
    """kill -9 while 40 annotators are answering; after a restart every acknowledged answer is
    there, nothing was stored that was not sent, and the annotators go on where they stopped."""
    db = backend("kill9")
    srv = AppServer(task_files["tasks"], db).start()
    acked: dict[str, dict[str, int]] = {f"k{i}": {} for i in range(40)}

    def choose(t, step):
        return (step + len(t["item"])) % len(t["options"])

    def work(who):
        try:
            annotator(srv.url, who, choose, retry_every=3, timeout=10, acked=acked[who])
        except (OSError, RuntimeError, ValueError):
            pass  # the server died under this annotator

    threads = [threading.Thread(target=work, args=(w,)) for w in acked]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while sum(map(len, acked.values())) < 100 and time.monotonic() < deadline:
        time.sleep(0.05)
    srv.stop(kill=True)
    for t in threads:
        t.join(60)
    total = sum(map(len, acked.values()))
    assert 100 <= total < 40 * len(task_files["by_item"])
    with AppServer(task_files["tasks"], db) as srv2:
        stored = open_store(db).responses()
        by = {(r["annotator"], r["item"]): r["choice"] for r in stored}
        for who, answers in acked.items():
            for item, choice in answers.items():
                assert by[(who, item)] == choice
        assert len(by) == len(stored)  # once each
        assert all(r["annotator"] in acked for r in stored)
        # sessions outlive the process: without its cookie an id that answered is still refused
        who = next(w for w, a in acked.items() if a)
        with httpx.Client(base_url=srv2.url, timeout=30) as c:
            assert c.get("/api/next", params={"participant": who}).status_code == 403
    print(f"\nkill -9 after {total} acknowledged answers: all {total} stored, {len(stored)} rows in all")


def test_busy_port_fails_before_announcing(task_files, tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "tealeaves",
                "annotate",
                "serve",
                "--tasks",
                task_files["tasks"],
                "--db",
                str(tmp_path / "b.sqlite"),
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert r.returncode == 2 and "serving on" not in r.stdout, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot listen on 127.0.0.1:" in lines[0] and "Traceback" not in r.stderr
