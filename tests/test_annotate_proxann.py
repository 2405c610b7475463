"""ProxAnn studies in the annotation app (issue 34, point 5), against real parts: the `tealeaves
annotate serve` process on SQLite and on a throwaway PostgreSQL server, headless Chromium driven
by Playwright, the CLI's export and score. An annotator names the category, rates each document
(by click and by key), leaves half-way and comes back to the step they left, ranks with the Up
and Down buttons; the server is killed mid-task and nothing acknowledged is lost; every step's
order, value and repeat is checked; attention checks exclude; markup and SQL stay data; the pages
fit 1400 and 420 pixels."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import numpy as np
import pytest
from servers import CHROMIUM, CHROMIUM_ARGS, AppServer
from test_proxann import tau_b

import tealeaves as tl
from tealeaves.annotate import open_store
from tealeaves.proxann import proxann_tasks, write_proxann_tasks
from tealeaves.proxann.tasks import INSTRUCTED_RATING

MARK = "window.__pwned = (window.__pwned || 0) + 1"
PAYLOADS = [f"<script>{MARK}</script>", f'<img src=x onerror="{MARK}">', '<img src="http://evil.example/b.png">',
            f'"><svg onload="{MARK}">']
KEY_WORDS = ('"theta"', '"role"', '"distractor"', '"expected"', '"exemplar_documents"', '"topic"')


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two ProxAnn tasks (3 exemplars, 4 evaluation documents, a distractor and an instructed
    check) of a synthetic model, with markup payloads among the words and texts."""
    d = tmp_path_factory.mktemp("proxann-app")
    model = tl.synthetic.random_model(4, 80, seed=2)
    docs, theta, _ = tl.synthetic.generate(model, 40, 30, seed=5, return_latents=True)
    texts = [f"Document {i}: " + " ".join(model.vocab[w] for w in docs[i][:25]) for i in range(40)]
    for i in range(0, 40, 5):
        texts[i] += " " + PAYLOADS[(i // 5) % len(PAYLOADS)]
    tasks = proxann_tasks(model, np.asarray(theta), texts=texts, topics=[0, 1], n_exemplars=3, n_eval=4,
                          instructed_check=True, seed=4)
    tasks[0].words[1] = PAYLOADS[0]
    write_proxann_tasks(tasks, d / "tasks.jsonl", d / "key.jsonl")
    return {"dir": d, "tasks": str(d / "tasks.jsonl"), "key": str(d / "key.jsonl"),
            "by_item": {t.item: t.key() for t in tasks}}


@pytest.fixture(scope="module")
def server(files, backend):
    with AppServer(files["tasks"], backend("proxann"), "--completion-code", "PX-DONE", key=files["key"]) as s:
        yield s


def _db(srv: AppServer) -> str:
    return srv.cmd[srv.cmd.index("--db") + 1]


def _rating(doc: dict, docs: list[dict]) -> int:
    """A careful annotator: fit by theta, the distractor 1, the instruction as asked."""
    if doc["role"] == "distractor":
        return 1
    if doc["role"] == "instructed":
        return INSTRUCTED_RATING
    top = max(d["theta"] for d in docs if d["role"] == "eval")
    return int(round(1 + 4 * doc["theta"] / top))


def _cli(*argv: str) -> str:
    r = subprocess.run([sys.executable, "-m", "tealeaves", *argv], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _answer_all(c: httpx.Client, who: str, key: dict, rating=_rating) -> dict:
    """Every task through the API: label, ratings, ranking by rating (ties by id)."""
    given = {}
    for _ in range(20):
        data = c.get("/api/next", params={"participant": who}).json()
        if data["done"]:
            return given
        t = data["task"]
        k = key[t["item"]]
        base = {"participant": who, "item": t["item"], "response_ms": 7}
        assert c.post("/api/step", json={**base, "step": "label", "label": f"{who}'s category",
                                         "clarity": 4}).status_code == 200
        ratings = {d["id"]: rating(d, k["documents"]) for d in k["documents"]}
        for doc, r in ratings.items():
            body = {**base, "step": "rate", "document": doc, "rating": r}
            assert c.post("/api/step", json=body).status_code == 200
        ranking = sorted((d["id"] for d in k["documents"] if d["rank"]), key=lambda i: (-ratings[i], i))
        assert c.post("/api/step", json={**base, "step": "rank", "ranking": ranking}).status_code == 200
        given[t["item"]] = (ratings, ranking)
    raise AssertionError("the task set never ended")


def _rate_in_browser(page, key: dict, by_key: bool) -> tuple[str, int]:
    """Rate the document on the page as `_rating` would; by the keys 1-5 and Enter, or by clicks."""
    doc_id = page.locator("#px-doc").get_attribute("data-id")
    item = page.evaluate("() => window.__item")
    k = key[item]
    r = _rating(next(d for d in k["documents"] if d["id"] == doc_id), k["documents"])
    if by_key:
        page.keyboard.press(str(r))
        page.keyboard.press("Enter")
    else:
        page.locator(f"#px-rating input[value='{r}']").click()
        page.locator("#px-rate-step button[type=submit]").click()
    return doc_id, r


ITEM_SPY = """() => { const f = window.fetch; window.fetch = async (...a) => { const r = await f(...a);
  if (String(a[0]).startsWith('api/next')) {
    const d = await r.clone().json(); if (d.task) window.__item = d.task.item; }
  return r; }; }"""


def test_browser_annotator_completes_resumes_and_is_scored(server, files, tmp_path):
    """Label, ratings (clicks and keys), a closed tab and a return to the rating step, the ranking
    by Up and Down; the export holds what was clicked, and `proxann score` gives the Kendall tau
    counted here from it. No annotator response carries the key."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    key = files["by_item"]
    bodies: list[str] = []
    clicked: dict[str, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context()
        context.add_init_script(f"({ITEM_SPY})()")
        page = context.new_page()
        page.on("response", lambda resp: bodies.append(resp.text()) if resp.ok else None)
        page.goto(f"{server.url}/?PROLIFIC_PID=alice")
        for n in range(len(key)):
            page.wait_for_selector("#px-label-step:not([hidden])")
            assert page.inner_text("#progress-text") == f"Task {n + 1} of {len(key)}"
            assert page.locator("#px-context").get_attribute("open") is not None  # words and exemplars shown
            item = page.evaluate("() => window.__item")
            assert page.inner_text("#px-words") == ", ".join(key[item]["words"])
            page.fill("#px-label", f"  category {n} <b>x</b> ")
            page.locator("#px-clarity input[value='4']").click()
            page.locator("#px-label-step button[type=submit]").click()
            ratings = {}
            for j in range(len(key[item]["documents"])):
                page.wait_for_selector("#px-rate-step:not([hidden])")
                n_docs = len(key[item]["documents"])
                assert page.inner_text("#px-rate-progress") == f"Document {j + 1} of {n_docs}"
                assert f"category {n} <b>x</b>" in page.inner_text("#px-rating legend")
                doc, r = _rate_in_browser(page, key, by_key=j % 2 == 0)
                ratings[doc] = r
                if n == 0 and j == 2:  # the tab is closed; the same browser comes back
                    page.wait_for_function("() => document.querySelector('#px-rate-progress').textContent"
                                           ".startsWith('Document 4')")
                    page.close()
                    page = context.new_page()
                    page.on("response", lambda resp: bodies.append(resp.text()) if resp.ok else None)
                    page.goto(f"{server.url}/?PROLIFIC_PID=alice")
                    page.wait_for_selector("#px-rate-step:not([hidden])")
                    assert page.inner_text("#px-rate-progress") == f"Document 4 of {n_docs}"
                elif j < len(key[item]["documents"]) - 1:
                    page.wait_for_function("s => document.querySelector('#px-rate-progress').textContent"
                                           ".startsWith('Document ' + s)", arg=str(j + 2))
            page.wait_for_selector("#px-rank-step:not([hidden])")
            order = page.locator("#px-rank li").evaluate_all("ls => ls.map(l => l.dataset.id)")
            assert sorted(order) == sorted(d["id"] for d in key[item]["documents"] if d["rank"])
            page.locator("#px-rank li").nth(0).get_by_role("button", name="Move document 1 down").click()
            page.locator("#px-rank li").nth(3).get_by_role("button", name="Move document 4 up").click()
            order[0], order[1] = order[1], order[0]
            order[2], order[3] = order[3], order[2]
            assert page.locator("#px-rank li").evaluate_all("ls => ls.map(l => l.dataset.id)") == order
            page.locator("#px-rank-submit").click()
            clicked[item] = {"ratings": ratings, "ranking": order, "label": f"category {n} <b>x</b>"}
            if n < len(key) - 1:
                page.wait_for_function("s => document.querySelector('#progress-text').textContent"
                                       ".startsWith('Task ' + s)", arg=str(n + 2))
        page.wait_for_selector("#done", state="visible")
        assert page.inner_text("#code") == "PX-DONE"
        assert page.evaluate("() => window.__pwned") is None
        bodies.append(page.content())
        browser.close()
    for body in bodies:
        for word in KEY_WORDS:
            assert word not in body, f"{word} served to an annotator"
    out = tmp_path / "answers.csv"
    _cli("annotate", "export", "--db", _db(server), "-o", str(out))
    rows = [r for r in tl.proxann.read_responses(out).items() if r[0][0] == "alice"]
    assert {item for (_, item), _ in rows} == set(key)
    for (_, item), r in rows:
        assert r["ratings"] == clicked[item]["ratings"] and r["label"] == clicked[item]["label"]
        assert r["ranks"] == {d: i for i, d in enumerate(clicked[item]["ranking"], 1)} and r["clarity"] == 4
    scores = tmp_path / "scores.json"
    _cli("proxann", "score", files["key"], str(out), "--json", str(scores), "--bootstrap", "0")
    doc = json.loads(scores.read_text())
    mine = {r["item"]: r for r in doc["responses"] if r["annotator"] == "alice"}
    for item, k in key.items():
        evals = [d for d in k["documents"] if d["role"] == "eval"]
        theta = [d["theta"] for d in evals]
        fit = [clicked[item]["ratings"][d["id"]] for d in evals]
        rank = [-clicked[item]["ranking"].index(d["id"]) for d in evals]
        assert mine[item]["tau_fit"] == pytest.approx(tau_b(fit, theta), abs=1e-12)
        assert mine[item]["tau_rank"] == pytest.approx(tau_b(rank, theta), abs=1e-12)


def test_a_killed_server_loses_no_acknowledged_step(files, backend):
    """The label and two ratings acknowledged, the server killed (SIGKILL) and restarted: the
    annotator's next visit resumes at the third rating, and the answer finishes."""
    db = backend("proxann-kill")
    srv = AppServer(files["tasks"], db, key=files["key"]).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            t = c.get("/api/next", params={"participant": "bob"}).json()["task"]
            session = c.cookies
            base = {"participant": "bob", "item": t["item"], "response_ms": 5}
            label = {**base, "step": "label", "label": "laws", "clarity": 3}
            assert c.post("/api/step", json=label).status_code == 200
            for doc in t["documents"][:2]:
                r = c.post("/api/step", json={**base, "step": "rate", "document": doc["id"], "rating": 4})
                assert r.status_code == 200
    finally:
        srv.stop(kill=True)
    with AppServer(files["tasks"], db, key=files["key"]) as srv2, \
            httpx.Client(base_url=srv2.url, timeout=30, cookies=session) as c:
        data = c.get("/api/next", params={"participant": "bob"}).json()
        assert data["task"]["item"] == t["item"] and data["progress"]["answered"] == 0
        assert data["state"] == {"label": "laws", "clarity": 3,
                                 "ratings": {d["id"]: 4 for d in t["documents"][:2]}}
        assert [d["id"] for d in data["task"]["documents"]] == [d["id"] for d in t["documents"]]  # same order
        for doc in t["documents"][2:]:
            assert c.post("/api/step", json={**base, "step": "rate", "document": doc["id"],
                                             "rating": 2}).status_code == 200
        ranking = [d["id"] for d in t["documents"] if d["rank"]]
        assert c.post("/api/step", json={**base, "step": "rank", "ranking": ranking}).status_code == 200
        assert c.get("/api/next", params={"participant": "bob"}).json()["progress"]["answered"] == 1
    steps = open_store(db).steps("bob")
    assert [s["step"] for s in steps] == ["label"] + ["rate"] * len(t["documents"]) + ["rank"]


def test_every_step_is_checked(server, files):
    """The order (label, then ratings, then the ranking), each value, repeats (the same answer is
    stored once; a different one is refused) and the other kind's endpoint."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        t = c.get("/api/next", params={"participant": "carol"}).json()["task"]
        ids = [d["id"] for d in t["documents"]]
        ranked = [d["id"] for d in t["documents"] if d["rank"]]
        base = {"participant": "carol", "item": t["item"], "response_ms": 9}

        def step(**body):
            r = c.post("/api/step", json={**base, **body})
            return r.status_code, r.json()

        assert step(step="rate", document=ids[0], rating=3)[0] == 409  # before the label
        for label in ("", "   ", "a\nb", "tab\there", "x" * 201, 5, None):
            assert step(step="label", label=label, clarity=3)[0] == 422, label
        for clarity in (0, 6, "3", True, 2.5, None):
            assert step(step="label", label="ok", clarity=clarity)[0] == 422, clarity
        assert step(step="label", label="nul\x00", clarity=3)[0] == 400  # the body check
        assert step(step="guess", label="ok", clarity=3)[0] == 422
        assert step(step="label", label="Tax law", clarity=5) == (200, {"stored": True, "duplicate": False})
        assert step(step="label", label="Tax law", clarity=5) == (200, {"stored": True, "duplicate": True})
        assert step(step="label", label="Other", clarity=5)[0] == 409
        assert step(step="rank", ranking=ranked)[0] == 409  # before every rating
        for rating in (0, 6, "3", True, 2.5, None, [3]):
            assert step(step="rate", document=ids[0], rating=rating)[0] == 422, rating
        assert step(step="rate", document="d99", rating=3)[0] == 422
        assert step(step="rate", document=ids[0], rating=3)[1]["duplicate"] is False
        assert step(step="rate", document=ids[0], rating=3)[1]["duplicate"] is True
        assert step(step="rate", document=ids[0], rating=4)[0] == 409
        for doc in ids[1:]:
            assert step(step="rate", document=doc, rating=2)[0] == 200
        for bad in (ranked[:-1], ranked + ranked[:1], ids, "d1", [1, 2], ranked[:-1] + ["d99"]):
            assert step(step="rank", ranking=bad)[0] == 422, bad
        assert step(step="rank", ranking=ranked)[0] == 200
        assert step(step="rank", ranking=ranked)[1]["duplicate"] is True  # a retry of the last step
        assert step(step="rank", ranking=ranked[::-1])[0] == 409
        nxt = c.get("/api/next", params={"participant": "carol"}).json()
        assert nxt["progress"]["answered"] == 1 and nxt["task"]["item"] != t["item"]
        assert nxt["state"] == {"label": None, "clarity": None, "ratings": {}}
        other = {**base, "options": ["a", "b"], "choice": 0}
        assert c.post("/api/answer", json=other).status_code == 422  # a ProxAnn item has no options
        assert c.post("/api/step", json={**base, "participant": "nobody", "step": "label", "label": "x",
                                         "clarity": 1}).status_code == 403  # never opened the page
        assert c.post("/api/step", json={**base, "item": 7, "step": "label"}).status_code == 422


def test_attention_checks_exclude_on_the_admin_page(server, files):
    """Two careful annotators and one who rates every distractor 5 and ignores the instruction:
    the live scores leave the third out and say so; they equal `score_proxann` of the export."""
    key = files["by_item"]

    def careless(doc, docs):
        return 5 if doc["role"] in ("distractor", "instructed") else _rating(doc, docs)

    with httpx.Client(base_url=server.url, timeout=30) as c:
        _answer_all(c, "dan", key)
        _answer_all(c, "fay", key)
    with httpx.Client(base_url=server.url, timeout=30) as c:
        _answer_all(c, "gil", key, careless)
        live = c.get("/api/admin/summary", headers={"Authorization": f"Bearer {server.token}"}).json()
    assert live["family"] == "proxann" and "gil" in live["proxann"]["excluded_annotators"]
    from tealeaves.annotate import export_responses

    out = files["dir"] / f"admin-{server.port}.jsonl"
    export_responses(_db(server), out)
    offline = tl.proxann.score_proxann(files["key"], out, bootstrap=500)
    assert offline.attention_failures["gil"] == 4  # two tasks, each a distractor and an instruction
    assert live["proxann"]["summary"]["synthetic"]["tau_fit"] == pytest.approx(
        offline.summary["synthetic"]["tau_fit"])


def test_markup_and_sql_in_a_label_are_data(server, files, tmp_path):
    """A label made of markup is shown back as text (Chromium: no script runs), SQL is stored
    verbatim; the admin page shows the ProxAnn table with nothing injected."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    label = PAYLOADS[1] + "'; DROP TABLE proxann_steps; --"
    origin = server.url
    with httpx.Client(base_url=origin, timeout=30) as c:
        _answer_all(c, "hal", files["by_item"])  # a scored answer for the admin table
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin)
                   else route.abort())
        page.goto(f"{origin}/?participant=mallory")
        page.wait_for_selector("#px-label-step:not([hidden])")
        page.fill("#px-label", label)
        page.locator("#px-clarity input[value='2']").click()
        page.locator("#px-label-step button[type=submit]").click()
        page.wait_for_selector("#px-rate-step:not([hidden])")
        assert label in page.inner_text("#px-rating legend")
        page.locator("#px-context summary").click()
        page.wait_for_timeout(200)
        assert page.evaluate("() => window.__pwned") is None
        page.goto(f"{origin}/admin")
        page.fill("#token", server.token)
        page.locator("#login button").click()
        page.wait_for_selector("#px-scores tbody tr")
        assert page.locator("#scores").is_hidden() and page.evaluate("() => window.__pwned") is None
        browser.close()
    assert all(u.startswith(origin) for u in requests), [u for u in requests if not u.startswith(origin)]
    steps = open_store(_db(server)).steps("mallory")
    assert steps[0]["value"]["label"] == label


MEASURE = """() => {
  const sel = 'p, li, legend, label, h1, h2, blockquote, button, summary, td, th';
  const cut = [...document.querySelectorAll(sel)]
    .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent.slice(0, 60));
  const outside = [...document.querySelectorAll('body *')]
    .filter(e => e.offsetParent !== null && !e.closest('.table-wrap'))
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).map(e => e.tagName + ' ' + e.id);
  return {cut, outside, page: document.documentElement.scrollWidth, view: window.innerWidth};
}"""


@pytest.fixture(scope="module")
def sqlite_server(files):
    """The layout does not depend on the database: one SQLite server for it."""
    with AppServer(files["tasks"], str(files["dir"] / "layout.sqlite"), key=files["key"]) as s:
        yield s


@pytest.mark.parametrize("width", [1400, 420])
def test_every_step_fits_the_window(sqlite_server, files, width, tmp_path):
    """At 1400 and 420 pixels, each step and the admin page: nothing wider than the window (the
    admin table scrolls in its own frame), no text cut. Screenshots go to the test's folder (look at
    them when the pages change)."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    found = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(f"{sqlite_server.url}/?participant=w{width}")
        page.wait_for_selector("#px-label-step:not([hidden])")
        found["label"] = page.evaluate(MEASURE)
        page.screenshot(path=tmp_path / f"label-{width}.png", full_page=True)
        page.fill("#px-label", "A category with a rather long name to see how the legend wraps")
        page.locator("#px-clarity input[value='3']").click()
        page.locator("#px-label-step button[type=submit]").click()
        for j in range(6):
            page.wait_for_selector("#px-rate-step:not([hidden])")
            if j == 0:
                found["rate"] = page.evaluate(MEASURE)
                page.screenshot(path=tmp_path / f"rate-{width}.png", full_page=True)
            page.keyboard.press("3")
            page.keyboard.press("Enter")
            if j < 5:
                page.wait_for_function("s => document.querySelector('#px-rate-progress').textContent"
                                       ".startsWith('Document ' + s)", arg=str(j + 2))
        page.wait_for_selector("#px-rank-step:not([hidden])")
        found["rank"] = page.evaluate(MEASURE)
        page.screenshot(path=tmp_path / f"rank-{width}.png", full_page=True)
        page.goto(f"{sqlite_server.url}/admin")
        page.fill("#token", sqlite_server.token)
        page.locator("#login button").click()
        page.wait_for_function("() => !document.querySelector('#px-block').classList.contains('hidden')")
        found["admin"] = page.evaluate(MEASURE)  # a table wider than the window scrolls in its frame
        page.screenshot(path=tmp_path / f"admin-{width}.png", full_page=True)
        browser.close()
    for name, m in found.items():
        assert m["cut"] == [] and m["outside"] == [] and m["page"] <= m["view"], (name, m)
