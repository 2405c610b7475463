"""The annotation web app against real parts: the `tealeaves annotate serve` process, SQLite (WAL)
and a throwaway PostgreSQL server, headless Chromium driven by Playwright, and 50+ concurrent
annotators over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import httpx
import numpy as np
import pytest
from servers import CHROMIUM, CHROMIUM_ARGS, AppServer

import tealeaves as tl
from tealeaves.annotate import open_store
from tealeaves.annotate.simulate import run_annotators
from tealeaves.intrusion import infer_theta, topic_tasks, word_tasks, write_tasks

ANNOTATOR_FIELDS = {"item", "kind", "text", "options", "prompt"}


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    """8 word tasks + 2 attention checks + 5 topic tasks of a synthetic model; tasks and key files."""
    d = tmp_path_factory.mktemp("annotate")
    model = tl.synthetic.random_model(8, 200, seed=3)
    docs = tl.synthetic.generate(model, 5, 40, seed=4)
    theta = infer_theta(model, docs, burn_in=20, samples=50)
    texts = [" ".join(model.vocab[w] for w in docs[i][:12]) for i in range(len(docs))]
    tasks = word_tasks(model, seed=1, attention_checks=2) + topic_tasks(model, theta, texts=texts, seed=2)
    write_tasks(tasks, d / "tasks.jsonl", d / "key.jsonl")
    key = {t.item: t.key() for t in tasks}
    return {
        "dir": d,
        "tasks": str(d / "tasks.jsonl"),
        "key": str(d / "key.jsonl"),
        "by_item": key,
        "by_shown": {(t.text, *t.options): t.item for t in tasks},
    }


@pytest.fixture(scope="module")
def server(task_files, backend):
    with AppServer(
        task_files["tasks"], backend("shared"), "--completion-code", "DONE-7Q", key=task_files["key"]
    ) as s:
        yield s


def _no_key_in(body: str, key: dict) -> None:
    """A body served to annotators carries no answer: no key field names, and every task object in
    it has only the annotator fields."""
    for word in ("intruder", "option_log_theta", "option_topics", "attention"):
        assert word not in body, f"{word!r} served to an annotator"
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return
    task = data.get("task") if isinstance(data, dict) else None
    if task:
        assert set(task) <= ANNOTATOR_FIELDS
        assert task["options"] == key[task["item"]]["options"]


def _export_and_score(db: str, key: str, tmp) -> tuple[list[dict], dict]:
    out = tmp / "responses.csv"
    r = subprocess.run(
        [sys.executable, "-m", "tealeaves", "annotate", "export", "--db", db, "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    scores = tmp / "scores.json"
    r = subprocess.run(
        [sys.executable, "-m", "tealeaves", "intrusion", "score", key, str(out), "--json", str(scores)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return tl.intrusion.read_responses(out), json.loads(scores.read_text())


def test_browser_annotator_completes_task_set(task_files, backend, tmp_path):
    """An annotator answers every task in Chromium, half by click and half by keyboard; the export
    holds exactly those answers, and the scores equal model precision / topic log odds computed
    here from the key and the clicks."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    db = backend("browser")
    key = task_files["by_item"]
    clicked: dict[str, int] = {}
    bodies: list[str] = []
    with AppServer(task_files["tasks"], db, "--completion-code", "DONE-7Q", key=task_files["key"]) as srv:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.on("response", lambda resp: bodies.append(resp.text()) if resp.ok else None)
            page.goto(f"{srv.url}/?PROLIFIC_PID=alice")
            for step in range(len(key)):
                page.wait_for_selector("#options button:not([disabled])")
                assert page.inner_text("#progress-text") == f"Task {step + 1} of {len(key)}"
                options = page.locator("#options button").evaluate_all(
                    "bs => bs.map(b => b.childNodes[1].textContent)"
                )
                item = task_files["by_shown"][(page.locator("#text").text_content(), *options)]
                k = key[item]
                # attention checks answered right; others: the intruder on even steps, else option 1
                choice = k["intruder"] if (k["attention"] or step % 2 == 0) else 1
                clicked[item] = choice
                if step % 3 == 0:
                    page.keyboard.press(str(choice + 1))
                else:
                    page.locator("#options button").nth(choice).dblclick()  # a double click stores once
                if step < len(key) - 1:
                    page.wait_for_function(
                        "s => document.querySelector('#progress-text').textContent.startsWith('Task ' + s)",
                        arg=str(step + 2),
                    )
            page.wait_for_selector("#done", state="visible")
            assert page.inner_text("#code") == "DONE-7Q"
            bodies.append(page.content())
            browser.close()
        rows, scores = _export_and_score(db, task_files["key"], tmp_path)
    for body in bodies:
        _no_key_in(body, key)
    assert {r["item"]: int(r["choice"]) for r in rows} == clicked
    assert len(rows) == len(key)
    assert all(
        r["annotator"] == "alice" and json.loads(r["options"]) == key[r["item"]]["options"] for r in rows
    )
    for item, choice in clicked.items():
        k = key[item]
        if k["attention"]:
            continue
        if k["kind"] == "word":
            assert scores["model_precision"]["synthetic"][str(k["topic"])] == float(choice == k["intruder"])
        else:
            lt = k["option_log_theta"]
            assert scores["topic_log_odds"]["synthetic"][str(k["document"])] == pytest.approx(
                lt[k["intruder"]] - lt[choice], abs=1e-12
            )
    n_word = sum(1 for k in key.values() if k["kind"] == "word" and not k["attention"])
    expected_mp = np.mean(
        [clicked[i] == k["intruder"] for i, k in key.items() if k["kind"] == "word" and not k["attention"]]
    )
    assert scores["summary"]["synthetic"]["model_precision"] == pytest.approx(expected_mp)
    assert scores["summary"]["synthetic"]["topics"] == n_word


def test_restart_loses_nothing_acknowledged(task_files, backend):
    """Answers acknowledged before the server is killed (SIGKILL) are there after a restart, and the
    annotator continues where they stopped."""
    db = backend("restart")
    srv = AppServer(task_files["tasks"], db, key=task_files["key"]).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            session = c.cookies
            acked = {}
            for step in range(5):
                task = c.get("/api/next", params={"participant": "bob"}).json()["task"]
                r = c.post(
                    "/api/answer",
                    json={
                        "participant": "bob",
                        "item": task["item"],
                        "options": task["options"],
                        "choice": step % 2,
                        "response_ms": 5,
                    },
                )
                assert r.status_code == 200
                acked[task["item"]] = step % 2
    finally:
        srv.stop(kill=True)
    with (
        AppServer(task_files["tasks"], db, key=task_files["key"]) as srv2,
        httpx.Client(base_url=srv2.url, timeout=30, cookies=session) as c,
    ):
        data = c.get("/api/next", params={"participant": "bob"}).json()
        assert data["progress"]["answered"] == 5
        assert data["task"]["item"] not in acked
    stored = {r["item"]: r["choice"] for r in open_store(db).responses() if r["annotator"] == "bob"}
    assert stored == acked


def test_bad_submissions_get_4xx_and_server_keeps_serving(server, task_files):
    key = task_files["by_item"]
    with httpx.Client(base_url=server.url, timeout=30) as c:
        task = c.get("/api/next", params={"participant": "carol"}).json()["task"]
        good = {
            "participant": "carol",
            "item": task["item"],
            "options": task["options"],
            "choice": 0,
            "response_ms": 10,
        }

        def post(**change):
            return c.post("/api/answer", json={**good, **change}).status_code

        as_json = {"Content-Type": "application/json"}
        assert c.post("/api/answer", content=b"{not json", headers=as_json).status_code == 400
        assert c.post("/api/answer", content=b"[1, 2]", headers=as_json).status_code == 400
        padded = json.dumps({**good, "pad": "x" * 5000})
        assert c.post("/api/answer", content=padded, headers=as_json).status_code == 413
        # a form on another site can post text/plain without asking; only JSON is taken
        plain = {"Content-Type": "text/plain"}
        assert c.post("/api/answer", content=json.dumps(good), headers=plain).status_code == 415

        def chunks():
            for _ in range(10):
                yield b" " * 1000

        assert c.post("/api/answer", content=chunks(), headers=as_json).status_code == 413  # no length
        assert post(item="nope") == 422
        assert post(participant="") == 422
        assert post(participant="a b <script>") == 422
        assert post(options=list(reversed(task["options"]))) == 422
        assert post(choice=len(task["options"])) == 422
        assert post(choice=-1) == 422
        assert post(choice=True) == 422
        assert post(choice="1") == 422
        assert post(response_ms=-5) == 422
        assert c.get("/api/next").status_code == 400
        assert c.get("/api/admin/summary").status_code == 403
        assert c.get("/api/admin/summary", headers={"Authorization": "Bearer wrong"}).status_code == 403
        assert post() == 200
        assert post(choice=1) == 409  # a different answer to an answered item
        assert c.get("/healthz").status_code == 200
        nxt = c.get("/api/next", params={"participant": "carol"}).json()
        assert nxt["progress"]["answered"] == 1
        _no_key_in(c.get("/").text + c.get("/static/annotate.js").text, key)


def test_admin_summary_matches_offline_scores(server, task_files, tmp_path):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        key = task_files["by_item"]

        def choose(task, step):  # attention checks answered right (so nobody is excluded), others vary
            k = key[task["item"]]
            return k["intruder"] if k["attention"] else step % len(task["options"])

        run_annotators(server.url, 3, choose, prefix="admin-test")
        live = c.get("/api/admin/summary", headers={"Authorization": f"Bearer {server.token}"}).json()
    db = server.cmd[server.cmd.index("--db") + 1]
    rows, offline = _export_and_score(db, task_files["key"], tmp_path)
    assert live["responses"] == len(rows)
    assert live["scores"]["responses_used"] == offline["responses_used"] > 0
    assert live["scores"]["excluded_annotators"] == offline["excluded_annotators"]
    for m, s in offline["summary"].items():
        assert live["scores"]["summary"][m]["model_precision"] == pytest.approx(s["model_precision"])
        if "topic_log_odds" in s and s["topic_log_odds"] is not None and math.isfinite(s["topic_log_odds"]):
            assert live["scores"]["summary"][m]["topic_log_odds"] == pytest.approx(s["topic_log_odds"])


def test_serve_and_export_errors_are_one_line(task_files, tmp_path):
    def run(*args):
        r = subprocess.run(
            [sys.executable, "-m", "tealeaves", *args], capture_output=True, text=True, timeout=120
        )
        return r.returncode, r.stderr.strip()

    other = tmp_path / "other_key.jsonl"
    rows = [json.loads(x) for x in open(task_files["key"])]
    other.write_text("".join(json.dumps(r) + "\n" for r in rows[:-1]))
    code, err = run(
        "annotate",
        "serve",
        "--tasks",
        task_files["tasks"],
        "--key",
        str(other),
        "--db",
        str(tmp_path / "x.sqlite"),
    )
    assert code == 2 and err.count("\n") == 0 and "does not match the tasks" in err
    code, err = run("annotate", "serve", "--tasks", task_files["key"], "--db", str(tmp_path / "x.sqlite"))
    assert code == 2 and "looks like a key file" in err
    code, err = run("annotate", "serve", "--tasks", task_files["tasks"], "--db", "nosuchdialect://x/y")
    assert code == 2 and "cannot connect" in err and err.count("\n") == 0
    code, err = run(
        "annotate", "export", "--db", "postgresql+psycopg://u:secretpw@127.0.0.1:1/x", "-o", "o.csv"
    )
    assert code == 2 and "cannot connect" in err and "secretpw" not in err
    (tmp_path / "empty.sqlite").write_bytes(b"")  # an empty file is an empty SQLite database
    code, err = run(
        "annotate", "export", "--db", str(tmp_path / "empty.sqlite"), "-o", str(tmp_path / "o.csv")
    )
    assert code == 2 and "no annotation tables" in err
    typo = str(tmp_path / "typo.sqlite")
    code, err = run("annotate", "export", "--db", typo, "-o", str(tmp_path / "o.csv"))
    assert code == 2 and "no such file" in err and not (tmp_path / "typo.sqlite").exists()
    (tmp_path / "garbage.sqlite").write_bytes(os.urandom(5000))
    for argv in (("export", "--db", str(tmp_path / "garbage.sqlite"), "-o", str(tmp_path / "o.csv")),
                 ("serve", "--tasks", task_files["tasks"], "--db", str(tmp_path / "garbage.sqlite"))):
        code, err = run("annotate", *argv)
        assert code == 2 and "not a usable database" in err and err.count("\n") == 0, err
    assert not (tmp_path / "o.csv").exists()
    bad = tmp_path / "bad.csv"
    bad.write_text("item,position,option\na,0,x\na,2,y\n")
    code, err = run("annotate", "serve", "--tasks", str(bad), "--db", str(tmp_path / "y.sqlite"))
    assert code == 2 and "expected position 1" in err


def test_redirect_per_annotator_limit_and_participant_names(task_files, tmp_path):
    """In-process (TestClient): crowd platforms' participant parameters, a per-annotator subset in
    an order of the annotator's own, and the completion redirect with code and id filled in."""
    from fastapi.testclient import TestClient

    from tealeaves.annotate import AppConfig, create_app

    store = open_store(str(tmp_path / "r.sqlite"))
    tasks = tl.intrusion.read_tasks(task_files["tasks"])
    store.install(tasks)
    config = AppConfig(per_annotator=4, redirect="https://example.org/done?cc={code}&pid={participant}")
    client = TestClient(create_app(store, None, config))
    orders = {}
    for param, who in (("PROLIFIC_PID", "p1"), ("workerId", "p2")):
        seen = []
        while True:
            data = client.get("/api/next", params={param: who}).json()
            if data["done"]:
                break
            t = data["task"]
            seen.append(t["item"])
            body = {
                "participant": who,
                "item": t["item"],
                "options": t["options"],
                "choice": 0,
                "response_ms": 1,
            }
            assert client.post("/api/answer", json=body).status_code == 200
        assert data["progress"] == {"answered": 4, "total": 4}
        code = store.participant(who)["code"]
        assert data["code"] == code and data["redirect"] == f"https://example.org/done?cc={code}&pid={who}"
        orders[who] = seen
    assert len(set(orders["p1"])) == 4 and orders["p1"] != orders["p2"]
    other = next(i for i in (t["item"] for t in tasks) if i not in orders["p1"])
    t = next(x for x in tasks if x["item"] == other)
    body = {"participant": "p1", "item": other, "options": t["options"], "choice": 0, "response_ms": 1}
    assert client.post("/api/answer", json=body).status_code == 422  # not assigned to p1
    with pytest.raises(tl.MethodError, match="another task set"):
        store.install(tasks[:-1])
