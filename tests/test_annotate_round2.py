"""The annotation app, second round (issue 20): task sets that could never be answered or stored
are refused where they are installed; no request content gets a 5xx or a traceback, on SQLite
and PostgreSQL; a client hanging up mid-body leaves no traceback in the log; the admin cookie
holds a derived session, not the token, and is Secure over HTTPS."""

from __future__ import annotations

import json
import os
import socket
import time

import httpx
import pytest
from servers import AppServer

import tealeaves as tl
from tealeaves.annotate import AppConfig, create_app, open_store, serve
from tealeaves.cli import main
from tealeaves.errors import TealeavesError

JSON = {"Content-Type": "application/json"}
TOKEN = "admin-secret-for-tests"


def _task(item: str = "t1", options=("apple", "pear", "plum"), **extra) -> dict:
    return {"item": item, "kind": "word", "text": "", "options": list(options), **extra}


# (case, task set, what the one-line error says)
UNANSWERABLE = [
    ("no-tasks", [], "no tasks"),
    ("no-options", [_task(options=())], "at least 2 options, got 0"),
    ("one-option", [_task(options=("apple",))], "at least 2 options, got 1"),
    ("options-not-list", [{**_task(), "options": "apple pear"}], "at least 2 options, got str"),
    ("options-number", [{**_task(), "options": 7}], "at least 2 options, got int"),
    ("duplicate", [_task(options=("apple", "pear", "apple"))], "options 0 and 2 look the same"),
    ("empty-string", [_task(options=("apple", "", "pear"))], "option 1 is blank"),
    ("blank", [_task(options=("apple", " \t ", "pear"))], "option 1 is blank"),
    ("invisible-only", [_task(options=("apple", "\u200b", "pear"))], "option 1 is blank"),
    ("non-string", [_task(options=("apple", 3, "pear"))], "option 1 is int, not a string"),
    ("null-option", [_task(options=("apple", None, "pear"))], "option 1 is NoneType"),
    ("whitespace-only-difference", [_task(options=("new york", "pear", " new  york"))],
     "options 0 and 2 look the same"),
    ("nfc-nfd", [_task(options=("caf\u00e9", "pear", "cafe\u0301"))], "options 0 and 2 look the same"),
    ("compatibility-form", [_task(options=("\ufb01le", "pear", "file"))], "options 0 and 2 look the same"),
    ("fullwidth", [_task(options=("\uff41pple", "apple"))], "options 0 and 1 look the same"),
    ("zero-width-space", [_task(options=("apple", "app\u200ble"))], "options 0 and 1 look the same"),
    ("soft-hyphen", [_task(options=("apple", "ap\u00adple"))], "options 0 and 1 look the same"),
    ("nul-option", [_task(options=("apple", "pe\x00ar"))], "holds the control character U+0000"),
    ("escape-option", [_task(options=("apple", "\x1b[31mpear"))], "holds the control character U+001B"),
    ("c1-option", [_task(options=("apple", "pear\x85"))], "holds the control character U+0085"),
    ("del-option", [_task(options=("apple", "pear\x7f"))], "holds the control character U+007F"),
    ("surrogate-option", [_task(options=("apple", "pear\ud800"))], "holds a lone surrogate U+D800"),
    ("nul-text", [{**_task(), "kind": "topic", "text": "a\x00b"}], "'text' holds the control character"),
    ("nul-item", [_task(item="t\x001")], "'item' holds the control character U+0000"),
    ("nul-other-field", [_task(model="m\x00")], "'model' holds the control character U+0000"),
    ("text-not-string", [{**_task(), "kind": "topic", "text": ["a"]}], "text must be a string"),
    ("too-long-to-answer", [_task(options=("apple", "p" * 4000))], "too long to answer"),
    ("many-options", [_task(options=[f"w{i}" for i in range(800)])], "too long to answer"),
    ("bad-kind", [_task(kind="picture")], "kind must be word, topic or proxann"),
    ("item-empty", [_task(item="")], "item id must be a string of 1-200"),
    ("item-number", [_task(item=5)], "item id must be a string of 1-200"),
    ("task-not-object", [["apple", "pear"]], "expected an object, got list"),
    ("duplicate-item", [_task(), _task()], "task 2 (item 't1'): the item appears twice"),
]


# rows the task file's reader already refuses (in its own words) before the app's check
READER_REFUSES = {"options-not-list", "options-number", "task-not-object", "non-string", "null-option"}


@pytest.mark.parametrize("case,tasks,message", UNANSWERABLE, ids=[c[0] for c in UNANSWERABLE])
def test_unanswerable_task_sets_are_refused(case, tasks, message, tmp_path, capsys):
    """`annotate serve` refuses the task file in one line naming the task, before it creates the
    database; the library's install (`Store.install`, `serve`) refuses the same list."""
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks) if tasks else "\n", encoding="utf-8")
    db = tmp_path / "x.sqlite"
    code = main(["annotate", "serve", "--tasks", str(path), "--db", str(db), "--port", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("tealeaves: error: "), err
    if case not in READER_REFUSES:
        assert message in err and (not tasks or "task " in err), err  # names the task
    assert not db.exists()
    with pytest.raises(TealeavesError) as info:
        open_store(str(tmp_path / "lib.sqlite")).install(tasks)
    assert message in str(info.value)
    with pytest.raises(TealeavesError) as info:
        serve(tasks, str(tmp_path / "lib2.sqlite"), port=1)
    assert message in str(info.value) and not (tmp_path / "lib2.sqlite").exists()


def test_answerable_task_sets_are_accepted(tmp_path):
    """What the checks must not refuse: tab and newline in a text, options that differ in case or
    by a visible mark, accents, 2 options, long texts, and every task set tealeaves writes."""
    tasks = [
        {**_task("a"), "kind": "topic", "text": "line one\n\tline two\r\n" + "word " * 2000},
        _task("b", options=("US", "us", "U.S.")),
        _task("c", options=("caf\u00e9", "cafe")),
        _task("d", options=("\u65e5\u672c", "\U0001f600", "\u0645\u0635\u0631")),
        _task("e", options=("yes", "no")),
    ]
    open_store(str(tmp_path / "ok.sqlite")).install(tasks)
    model = tl.synthetic.random_model(6, 100, seed=1)
    made = tl.intrusion.word_tasks(model, seed=1)
    tl.intrusion.write_tasks(made, tmp_path / "t.csv", tmp_path / "k.csv")
    open_store(str(tmp_path / "made.sqlite")).install(tl.intrusion.read_tasks(tmp_path / "t.csv"))


def test_tasks_from_csv_and_a_key_outside_the_options(tmp_path, capsys):
    """A CSV task file with a blank option is refused like JSON lines; a key whose intruder is not
    an option position is refused by the CLI and by the library's `serve`."""
    csv = tmp_path / "tasks.csv"
    csv.write_text("item,kind,text,position,option\nq,word,,0,apple\nq,word,,1,\nq,word,,2,pear\n")
    assert main(["annotate", "serve", "--tasks", str(csv), "--db", str(tmp_path / "c.sqlite")]) == 2
    assert "task 1 (item 'q'): option 1 is blank" in capsys.readouterr().err
    tasks = [_task()]
    key = [{**_task(), "model": "m", "topic": 0, "intruder": 3}]
    tpath, kpath = tmp_path / "t.jsonl", tmp_path / "k.jsonl"
    tpath.write_text(json.dumps(tasks[0]) + "\n")
    kpath.write_text(json.dumps(key[0]) + "\n")
    db = tmp_path / "k.sqlite"
    assert main(["annotate", "serve", "--tasks", str(tpath), "--key", str(kpath), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "intruder 3: the item has no option 3" in err and err.count("\n") == 1 and not db.exists()
    with pytest.raises(TealeavesError, match="intruder 3: the item has no option 3"):
        serve(tasks, str(tmp_path / "k2.sqlite"), key=key, port=1)


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("round2")
    model = tl.synthetic.random_model(5, 120, seed=4)
    tl.intrusion.write_tasks(tl.intrusion.word_tasks(model, seed=2), d / "tasks.jsonl", d / "key.jsonl")
    return str(d / "tasks.jsonl")


def _log(srv: AppServer) -> str:
    with open(srv.log, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _raw(port: int, data: bytes, read: bool = True) -> bytes:
    """Send `data` on a fresh connection; the server's answer (until it closes or 10 s)."""
    if read:  # the server closes the connection after answering
        data = data.replace(b"\r\n", b"\r\nConnection: close\r\n", 1)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        if not read:
            return b""
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0


def test_no_request_content_gets_a_5xx(tasks_file, backend):
    """Hostile bodies and headers against the real server on SQLite and PostgreSQL: NUL and other
    control characters, lone surrogates, huge and non-finite numbers, wrong JSON types, Unicode
    digits in Content-Length, a bad Host, a bad admin login. Each gets a 4xx, the log holds no
    traceback, and a proper answer is stored afterwards (it was a 500 on PostgreSQL, answer lost)."""
    with AppServer(tasks_file, backend("no5xx")) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        task = c.get("/api/next", params={"participant": "p1"}).json()["task"]
        good = {"participant": "p1", "item": task["item"], "options": task["options"], "choice": 1,
                "response_ms": 5}
        bodies = [
            {**good, "options": [*task["options"][:-1], "x\x00"]},
            {**good, "item": task["item"] + "\x00"},
            {**good, "participant": "p1\x00"},
            {**good, "options": [o + "\x1b" for o in task["options"]]},
            {**good, "extra": "\x85"},
            {**good, "choice": 10**4000}, {**good, "choice": -(10**300)}, {**good, "choice": 1e308},
            {**good, "choice": "1"}, {**good, "choice": "\uff11"}, {**good, "choice": "\u00b2"},
            {**good, "choice": True}, {**good, "choice": None}, {**good, "choice": [1]},
            {**good, "choice": {"a": 1}}, {**good, "choice": 1.0}, {**good, "response_ms": 10**4000},
            {**good, "response_ms": -1}, {**good, "item": 10**4000}, {**good, "item": ["x"]},
            {**good, "item": None}, {**good, "options": {"a": 1}}, {**good, "options": "abc"},
            {**good, "participant": 5}, {**good, "participant": ["p1"]}, {"participant": "p1"}, {},
        ]
        raw_bodies = [json.dumps(b).encode() for b in bodies] + [
            json.dumps(good).replace('"p1"', '"p1\\ud800"').encode(),
            json.dumps(good).replace(task["item"], task["item"] + "\\udfff").encode(),
            json.dumps({**good, "choice": 0}).replace(" 0,", " NaN,").encode(),
            json.dumps({**good, "choice": 0}).replace(" 0,", " Infinity,").encode(),
            json.dumps({**good, "choice": 0}).replace(" 0,", " -1e999,").encode(),
            b"\xef\xbb\xbf" + json.dumps(good).encode(),  # a BOM
            json.dumps(good).encode("utf-16"),
            b'{"participant": "p1", "participant": "p2"}',
            b"[" * 4 + b"]" * 4, b"null", b"7", b'"x"', b"", b"{", b"\x00" * 100,
            b'{"a": "' + "\u00e9".encode("latin-1") + b'"}',
            b"{" + b'"k": 1, ' * 400 + b'"z": 2}',
        ]
        statuses = [c.post("/api/answer", content=b, headers=JSON).status_code for b in raw_bodies]
        logins = [json.dumps({"token": t}).encode()
                  for t in ("\ud800", "\x00" * 20, None, ["x"], {"a": 1}, "t" * 3000)]
        for body in [*logins, b'{"token": ' + b"9" * 4000 + b"}"]:
            statuses.append(c.post("/api/admin/login", content=body, headers=JSON).status_code)
        bearer = {"Authorization": b"Bearer \x7f\x80\xff"}
        statuses.append(c.get("/api/admin/summary", headers=bearer).status_code)
        statuses.append(c.get("/api/next", params={"participant": "p1\x00"}).status_code)
        assert all(400 <= s < 500 for s in statuses), statuses
        head = b"POST /api/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        raw = [
            head + "Content-Length: \u00b2\r\n\r\n{}".encode(),
            head + "Content-Length: \uff11\r\n\r\n{}".encode(),
            head + b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}",
            head + b"Content-Length: -1\r\n\r\n{}",
            head + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            b"GET /api/next?participant=p9 HTTP/1.1\r\nHost: [\r\n\r\n",
            b"GET /api/next?participant=%ff%00 HTTP/1.1\r\nHost: x\r\nCookie: \xff\x00=\xfe\r\n\r\n",
            b"GET /api/admin/summary HTTP/1.1\r\nHost: x\r\nCookie: tealeaves_admin=\x01\xff\r\n\r\n",
            b"GET /api/next?participant=%ED%A0%80%C0%AF HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /api/admin/summary HTTP/1.1\r\nHost: x\r\nCookie: tealeaves_admin=\"1.\\x\"\r\n\r\n",
            b"POST /api/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json; charset=\xff\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        ]
        got = [_status(_raw(srv.port, data)) for data in raw]
        # each its own answer: 400 for a malformed request; 200 for a bad Host header, which the
        # app never reads (the participant gets their next item); 403 for a forged admin cookie;
        # 422 for a request body that is not what the API takes
        assert got == [400, 400, 400, 400, 400, 200, 400, 400, 400, 403, 422], got
        assert c.post("/api/answer", json=good).status_code == 200
        assert c.get("/healthz").status_code == 200
    stored = open_store(srv.cmd[srv.cmd.index("--db") + 1]).responses()
    assert [(r["annotator"], r["item"], r["choice"]) for r in stored] == [("p1", task["item"], 1)]
    log = _log(srv)
    assert "Traceback" not in log and "Exception" not in log, log[-3000:]


def test_hanging_up_mid_body_logs_no_traceback(tasks_file, tmp_path):
    """Clients that declare a body (Content-Length) and hang up part-way, 30 times over: the
    server logs at most one line per request, no traceback, and goes on serving."""
    with AppServer(tasks_file, str(tmp_path / "hangup.sqlite")) as srv:
        for i in range(30):
            for path in ("/api/answer", "/api/admin/login"):
                head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        f"Content-Length: 1000\r\n\r\n").encode()
                _raw(srv.port, head + b'{"participant": "p' + str(i).encode(), read=False)
        # the server has handled every hang-up once it answers on a fresh connection again
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            while c.get("/healthz").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert c.get("/api/next", params={"participant": "after"}).status_code == 200
    srv.stop()
    log = _log(srv)
    lines = [line for line in log.splitlines() if line.strip()]
    assert "Traceback" not in log and "ClientDisconnect" not in log, log[-3000:]
    assert len(lines) <= 60, lines[:5]


def _cookie(response: httpx.Response, name: str) -> str:
    """The raw Set-Cookie header for `name`."""
    return next(h for h in response.headers.get_list("set-cookie") if h.startswith(name + "="))


def test_admin_cookie_is_a_derived_session(tasks_file, tmp_path):
    """The admin cookie holds neither the token nor anything equal for every login, still
    authenticates, and a forged, tampered or token-valued cookie does not; a restarted server
    does not accept the old cookie."""
    db = str(tmp_path / "admin.sqlite")
    with AppServer(tasks_file, db, token=TOKEN) as srv:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            r = c.post("/api/admin/login", json={"token": TOKEN})
            header = _cookie(r, "tealeaves_admin")
            value = c.cookies["tealeaves_admin"]
            assert TOKEN not in header and value != TOKEN
            assert "httponly" in header.lower() and "samesite=strict" in header.lower()
            assert "secure" not in header.lower()  # plain HTTP
            assert c.get("/api/admin/summary").status_code == 200
        expires, sig = value.split(".")
        forged = [
            TOKEN,
            value[:-1] + ("0" if value[-1] != "0" else "1"),
            f"{int(expires) + 10**6}.{sig}",  # a later expiry under the same signature
            f"{expires}.{'0' * 64}",
            f"99999999999.{'a' * 64}",
            value.upper(),
            value + "0",
            "",
        ]
        for bad in forged:
            with httpx.Client(base_url=srv.url, timeout=30, cookies={"tealeaves_admin": bad}) as c:
                assert c.get("/api/admin/summary").status_code == 403, bad
        with httpx.Client(base_url=srv.url, timeout=30, cookies={"tealeaves_admin": value}) as c:
            assert c.get("/api/admin/summary").status_code == 200
    with AppServer(tasks_file, db, token=TOKEN) as srv2:
        with httpx.Client(base_url=srv2.url, timeout=30, cookies={"tealeaves_admin": value}) as c:
            assert c.get("/api/admin/summary").status_code == 403
    with open(srv.log, encoding="utf-8") as fh:
        assert TOKEN not in fh.read()


def test_admin_cookie_expires(tasks_file, tmp_path, monkeypatch):
    """A cookie past its expiry is refused by the app that issued it (the signature is right)."""
    from fastapi.testclient import TestClient

    from tealeaves.annotate import app as app_module

    store = open_store(str(tmp_path / "exp.sqlite"))
    store.install(tl.intrusion.read_tasks(tasks_file))
    app = create_app(store, None, AppConfig(admin_token=TOKEN))
    monkeypatch.setattr(app_module, "ADMIN_SESSION_SECONDS", -5)  # a session that ended 5 s ago
    r = TestClient(app).post("/api/admin/login", json={"token": TOKEN})
    stale = r.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    monkeypatch.undo()
    assert TestClient(app, cookies={"tealeaves_admin": stale}).get("/api/admin/summary").status_code == 403
    again = TestClient(app)
    assert again.post("/api/admin/login", json={"token": TOKEN}).status_code == 200
    assert again.get("/api/admin/summary").status_code == 200


def test_cookies_are_secure_over_https(tasks_file, tmp_path):
    """Behind a proxy uvicorn trusts (127.0.0.1 by default) that says `X-Forwarded-Proto: https`,
    and in an app seeing an https scheme, the admin and the participant cookies carry Secure
    (HttpOnly and SameSite=Strict kept); over plain HTTP they do not."""
    from fastapi.testclient import TestClient

    proxy = {"X-Forwarded-Proto": "https"}
    with AppServer(tasks_file, str(tmp_path / "https.sqlite"), token=TOKEN) as srv:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            for headers, secure in ((proxy, True), ({}, False)):
                admin = _cookie(c.post("/api/admin/login", json={"token": TOKEN}, headers=headers),
                                "tealeaves_admin").lower()
                who = f"https{int(secure)}"
                person = c.get("/api/next", params={"participant": who}, headers=headers)
                session = person.headers["set-cookie"].lower()
                for h in (admin, session):
                    assert ("; secure" in h) == secure, h
                    assert "httponly" in h and "samesite=strict" in h
    store = open_store(str(tmp_path / "tc.sqlite"))
    store.install(tl.intrusion.read_tasks(tasks_file))
    client = TestClient(create_app(store, None, AppConfig(admin_token=TOKEN)), base_url="https://testserver")
    header = client.post("/api/admin/login", json={"token": TOKEN}).headers["set-cookie"].lower()
    assert "; secure" in header and TOKEN not in header
    assert client.get("/api/admin/summary").status_code == 200


def test_database_failure_is_one_line_and_503(tasks_file, tmp_path, caplog):
    """A database that fails under a request (server gone, disk full) gets a 503 and one log line,
    not a 500 with a traceback."""
    import logging

    from fastapi.testclient import TestClient

    store = open_store(str(tmp_path / "gone.sqlite"))
    store.install(tl.intrusion.read_tasks(tasks_file))
    client = TestClient(create_app(store, None, AppConfig(admin_token=TOKEN)), raise_server_exceptions=False)
    task = client.get("/api/next", params={"participant": "d1"}).json()["task"]
    os.remove(tmp_path / "gone.sqlite")
    store.engine.dispose()
    (tmp_path / "gone.sqlite").mkdir()  # the path is now a folder: every connection fails
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        r = client.post("/api/answer", json={"participant": "d1", "item": task["item"],
                                             "options": task["options"], "choice": 0, "response_ms": 5})
    assert r.status_code == 503 and "database" in r.json()["error"]
    records = [rec for rec in caplog.records if rec.name == "uvicorn.error"]
    assert len(records) == 1 and records[0].exc_info is None
    assert "\n" not in records[0].getMessage()


def test_topic_tasks_from_documents_with_control_characters_can_be_served(tmp_path):
    """A document's text is shown as it is, except characters the app refuses (a form feed from a
    paginated text, a NUL): those become spaces, so `intrusion topics` never writes tasks that
    `serve` then refuses."""
    model = tl.synthetic.random_model(6, 100, seed=1)
    docs = [[i % 100 for i in range(d, d + 20)] for d in range(4)]
    texts = ["page one\fpage two", "nul\x00here", "bell\x07 and tab\tkept", "plain"]
    made = tl.intrusion.topic_tasks(model, docs, texts=texts, n_topics=2, seed=1, burn_in=5, samples=5)
    assert [t.text for t in made] == ["page one page two", "nul here", "bell  and tab\tkept", "plain"]
    tl.intrusion.write_tasks(made, tmp_path / "t.jsonl", tmp_path / "k.jsonl")
    open_store(str(tmp_path / "made.sqlite")).install(tl.intrusion.read_tasks(tmp_path / "t.jsonl"))
