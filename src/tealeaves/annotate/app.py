"""The annotation web app (FastAPI). Annotators open `/?participant=ID` (also accepted:
`PROLIFIC_PID`, `workerId`, `participant_id`), see one task at a time, answer by click or by
the keys 1-9, and get a completion code (or a redirect) at the end. A ProxAnn task is answered in
steps, each stored as it is sent (`POST /api/step`): the category label and its clarity, one fit
rating per document, the ranking; a participant who comes back goes on at the step they left.

What an attacker meets:
- Annotator-facing routes serve only what is shown: the item id (keyed by the task set's secret),
  the kind, the document text and the options in shown order. The key stays in this process (for
  the admin page); no annotator route reads it.
- Knowing a participant id is not enough: the first visit issues a session token in an HttpOnly,
  SameSite=Strict cookie, and every later request for that id must carry it (a participant goes
  on in the browser they started in). New participants are capped per minute (429 beyond).
- Submissions are JSON (`Content-Type: application/json`, so another site's form cannot post
  them) of at most `MAX_BODY` bytes and `MAX_DEPTH` levels, with no control characters or lone
  surrogates; anything malformed gets a 4xx and the server keeps serving. A client that hangs up
  mid-body is dropped without a log line; a database that fails gets a 503 and one log line.
- The admin token (at least 16 characters) travels in an `Authorization: Bearer` header or, after
  logging in on /admin, as a session cookie that holds not the token but an expiry and its HMAC
  under a key derived from the token and a secret of this process (a restart logs admins out);
  it is never in a URL and is compared in constant time.
- Cookies are HttpOnly and SameSite=Strict, and Secure when the request came over HTTPS (the
  ASGI scheme: uvicorn with TLS, or `X-Forwarded-Proto: https` from a proxy uvicorn trusts).
- Every response carries a content-security policy (scripts and styles from this server only, no
  framing, no requests elsewhere) and `X-Frame-Options: DENY`.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import html
import logging
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from ..errors import MethodError
from ..files.records import parse_json
from ..intrusion.scoring import score
from ..intrusion.taskset import MAX_BODY, bad_character, strings
from ..output.jsonout import json_safe
from ..proxann.taskset import label_problem, rating_problem
from .store import ConflictError, Store
from .taskset import family

MAX_DEPTH = 4  # an answer is a flat object holding one list
MIN_ADMIN_TOKEN = 16
PARTICIPANT_PARAMS = ("participant", "PROLIFIC_PID", "workerId", "participant_id")
PARTICIPANT_RE = re.compile(r"[A-Za-z0-9_.@:-]{1,200}")
PUBLIC_FIELDS = ("item", "kind", "text", "options")
PROMPTS = {
    "word": "Which word does not belong with the others?",
    "topic": "Which group of words does not fit this document?",
}
ADMIN_COOKIE = "tealeaves_admin"
ADMIN_SESSION_SECONDS = 86400
ADMIN_SESSION_RE = re.compile(r"([0-9]{1,12})\.([0-9a-f]{64})")
LOG = logging.getLogger("uvicorn.error")
SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
     b"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
PROXANN_FIELDS = ("item", "kind", "words", "exemplars", "documents")
TITLES = {"intrusion": "Word and topic intrusion", "proxann": "Categories of documents"}
STATIC = {"annotate.js": "text/javascript", "proxann.js": "text/javascript", "admin.js": "text/javascript",
          "style.css": "text/css"}


@dataclass
class AppConfig:
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    completion_code: str | None = None  # one code for everyone (crowd platforms); else per participant
    redirect: str | None = None  # URL template with {participant} and {code}
    per_annotator: int | None = None  # tasks per annotator (default all)
    title: str | None = None  # default by the task set's family (`TITLES`)
    new_participants_per_minute: int = 600

    def __post_init__(self) -> None:
        if not isinstance(self.admin_token, str) or len(self.admin_token) < MIN_ADMIN_TOKEN:
            raise MethodError(f"the admin token must have at least {MIN_ADMIN_TOKEN} characters "
                              "(leave it out for a random one)")
        bad = bad_character(self.admin_token)
        if bad:
            raise MethodError(f"the admin token holds {bad}; use printable characters")
        if self.redirect is not None:
            check_redirect(self.redirect)
        if self.per_annotator is not None and self.per_annotator < 1:
            raise MethodError("per_annotator must be at least 1")
        if self.new_participants_per_minute < 1:
            raise MethodError("new_participants_per_minute must be at least 1")


def check_redirect(url: str) -> None:
    """Refuse a redirect that is not an http(s) URL or a relative path (`javascript:`, `data:`
    would run in the annotator's browser), or that holds what browsers read differently from us
    (spaces, control characters, backslashes: percent-encode them)."""
    if not isinstance(url, str) or not url:
        raise MethodError("the redirect URL is empty; give an http(s) URL or leave it out")
    odd = next((c for c in url if ord(c) <= 0x20 or ord(c) == 0x7F or c == "\\"), None)
    if odd is not None:
        raise MethodError(f"the redirect URL {url[:60]!r} holds {odd!r}; percent-encode it (%{ord(odd):02X})")
    parts = urlsplit(url.replace("{participant}", "p").replace("{code}", "c"))  # as filled in
    if parts.scheme and (parts.scheme.lower() not in ("http", "https") or not parts.netloc):
        raise MethodError(f"the redirect URL {url[:60]!r} is not an http(s) URL or a relative path "
                          f"(scheme {parts.scheme[:20]!r})")


class SecurityHeaders:
    """ASGI middleware adding `SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                names = {k for k, _ in SECURITY_HEADERS}
                message["headers"] = [h for h in message.get("headers", []) if h[0] not in names]
                message["headers"] += SECURITY_HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


class Forbidden(Exception):
    """A request for a participant without that participant's session token."""


class NotStarted(Forbidden):
    """An answer from a participant id that has no session anywhere (never opened the page)."""


class TooManyNew(Exception):
    """More new participants this minute than the app admits."""


def _static(name: str) -> str:
    return resources.files("tealeaves.annotate").joinpath("static", name).read_text(encoding="utf-8")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _https(request: Request) -> bool:
    """Did the request come over HTTPS? The ASGI scheme, which uvicorn sets from its TLS or from
    `X-Forwarded-Proto` sent by a proxy it trusts (`FORWARDED_ALLOW_IPS`, default 127.0.0.1)."""
    return request.scope.get("scheme") == "https"


def _set_cookie(resp: Response, request: Request, name: str, value: str, max_age: int) -> None:
    resp.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="strict",
                    secure=_https(request))


def admin_session(key: bytes, expires: int) -> str:
    """The admin cookie's value: the expiry (Unix seconds) and its HMAC-SHA256 under `key`."""
    return f"{expires}.{hmac.new(key, str(expires).encode(), hashlib.sha256).hexdigest()}"


def session_cookie(annotator: str) -> str:
    """The name of `annotator`'s session cookie (one per participant id, so one browser can hold
    several)."""
    return "tl_" + hashlib.sha256(annotator.encode()).hexdigest()[:16]


async def _json_body(request: Request) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, or the 4xx response that refuses it."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        return _error(415, "submissions must be JSON (Content-Type: application/json)")
    declared = request.headers.get("content-length")
    if declared is not None and (not re.fullmatch(r"[0-9]{1,9}", declared) or int(declared) > MAX_BODY):
        return _error(413, f"submissions are at most {MAX_BODY} bytes")
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return _error(413, f"submissions are at most {MAX_BODY} bytes")
    except ClientDisconnect:  # hung up mid-body: nobody to answer, nothing worth a log line
        return _error(400, "the client went away before the submission ended")
    try:
        data = parse_json(body.decode("utf-8"), "the submission", max_depth=MAX_DEPTH)
    except (ValueError, RecursionError):  # InputFileError, UnicodeDecodeError, int() digit limit
        return _error(400, "the submission is not JSON (or is nested too deeply)")
    if not isinstance(data, dict):
        return _error(400, "the submission must be a JSON object")
    for where, text in strings(data):
        bad = bad_character(text)
        if bad:
            return _error(400, f"the submission's {where[:60]!r} holds {bad}")
    return data


async def _database_failed(request: Request, exc: Exception) -> JSONResponse:
    """A database error (server gone, disk full): one log line and a 503, never a traceback per
    request."""
    LOG.warning("database error on %s %s: %s", request.method, request.scope.get("path", ""),
                str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__)
    return _error(503, "the database is not answering; try again shortly")


def create_app(
    store: Store, key: list[dict[str, Any]] | None = None, config: AppConfig | None = None
) -> FastAPI:
    """The app over `store` (already holding the task set). `key` enables live scores on the
    admin page."""
    config = config or AppConfig()
    tasks = store.tasks()
    kind_of = family(tasks)
    public = {t["item"]: {f: t.get(f) for f in (PROXANN_FIELDS if kind_of == "proxann" else PUBLIC_FIELDS)}
              for t in tasks}
    for p in public.values():
        if kind_of != "proxann":
            p["prompt"] = PROMPTS.get(p["kind"], PROMPTS["word"])
    names = list(public)
    app = FastAPI(title="tealeaves annotate", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(SecurityHeaders)
    app.add_exception_handler(SQLAlchemyError, _database_failed)
    page = _static("annotate.html").replace("{{title}}", html.escape(config.title or TITLES[kind_of]))
    admin_page = _static("admin.html")
    admin_digest = _digest(config.admin_token)
    # the admin cookie's key: a new process secret, so the cookie never holds or reveals the token
    admin_key = hmac.new(secrets.token_bytes(32), config.admin_token.encode(), hashlib.sha256).digest()
    recent_new: collections.deque[float] = collections.deque()
    new_lock = threading.Lock()

    def assigned(annotator: str) -> list[str]:
        """This annotator's items, in an order of their own (hash of id and item) so that order
        effects average out; the first `per_annotator` of them."""
        order = sorted(names, key=lambda n: hashlib.sha256(f"{annotator}\x00{n}".encode()).digest())
        return order[: config.per_annotator] if config.per_annotator else order

    def participant_of(params: Any) -> str | None:
        for k in PARTICIPANT_PARAMS:
            v = params.get(k)
            if isinstance(v, str) and PARTICIPANT_RE.fullmatch(v):
                return v
        return None

    def may_add_participant() -> bool:
        """At most `new_participants_per_minute` new participants in any 60 s."""
        now = time.monotonic()
        with new_lock:
            while recent_new and recent_new[0] < now - 60:
                recent_new.popleft()
            if len(recent_new) >= config.new_participants_per_minute:
                return False
            recent_new.append(now)
            return True

    def session(annotator: str, token: str | None, create: bool) -> tuple[dict[str, Any], str | None]:
        """The participant's row and, for a new participant, the token to set. Raises Forbidden
        when the id exists and `token` is not its session token (or, without `create`, when
        the id does not exist)."""
        row = store.participant(annotator)
        if row is None and not create:
            raise NotStarted
        if row is None and create:
            if not may_add_participant():
                raise TooManyNew
            fresh = secrets.token_urlsafe(24)
            row = store.add_participant(annotator, _digest(fresh).hex())
            if row is not None:
                return row, fresh
            row = store.participant(annotator)  # created concurrently by another request
        if row is None or token is None or not secrets.compare_digest(
            _digest(token).hex().encode(), row["token_hash"].encode()
        ):
            raise Forbidden
        return row, None

    def next_task(annotator: str, token: str | None) -> tuple[dict[str, Any], str | None]:
        person, fresh = session(annotator, token, create=True)
        mine = assigned(annotator)
        done = store.answered(annotator)
        todo = [n for n in mine if n not in done]
        progress = {"answered": len(mine) - len(todo), "total": len(mine)}
        if todo and kind_of == "proxann":
            return {"done": False, "progress": progress, "task": proxann_shown(annotator, todo[0]),
                    "state": proxann_state(annotator, todo[0])}, fresh
        if todo:
            return {"done": False, "progress": progress, "task": public[todo[0]]}, fresh
        if person["finished_at"] is None:
            store.finish(annotator)
        code = config.completion_code or person["code"]
        out: dict[str, Any] = {"done": True, "code": code, "progress": progress}
        if config.redirect:
            out["redirect"] = (config.redirect.replace("{participant}", quote(annotator, safe=""))
                               .replace("{code}", quote(code, safe="")))
        return out, fresh

    def proxann_shown(annotator: str, item: str) -> dict[str, Any]:
        """A ProxAnn task with its documents in an order of this annotator's own (hash of id, item
        and document), so that order effects average out."""
        task = public[item]
        docs = sorted(task["documents"],
                      key=lambda d: hashlib.sha256(f"{annotator}\x00{item}\x00{d['id']}".encode()).digest())
        return {**task, "documents": docs}

    def proxann_state(annotator: str, item: str) -> dict[str, Any]:
        """What the annotator has already answered of a ProxAnn item: label, clarity, ratings."""
        state: dict[str, Any] = {"label": None, "clarity": None, "ratings": {}}
        for s in store.steps(annotator, item):
            if s["step"] == "label":
                state |= {"label": s["value"]["label"], "clarity": s["value"]["clarity"]}
            elif s["step"] == "rate":
                state["ratings"][s["document"]] = s["value"]
        return state

    def check_step(annotator: str, item: str, data: dict[str, Any]) -> tuple[str, str, Any] | str:
        """The (step, document, value) a ProxAnn submission stores, or why it is refused: the
        label (one line of 1-200 characters) and clarity (1-5) first; a rating (1-5) of one of
        the task's documents once the label is in; the ranking (every ranked document once) once
        every document is rated."""
        step = data.get("step")
        task = public[item]
        state = proxann_state(annotator, item)
        if step == "label":
            why = label_problem(data.get("label")) or rating_problem(data.get("clarity"), "clarity")
            return why or ("label", "", {"label": data["label"], "clarity": data["clarity"]})
        if step not in ("rate", "rank"):
            return "step must be label, rate or rank"
        if state["label"] is None:
            return "name the category first (the label step)"
        ids = [d["id"] for d in task["documents"]]
        if step == "rate":
            doc = data.get("document")
            if not isinstance(doc, str) or doc not in ids:
                return f"item {item!r} has no document {str(doc)[:40]!r}"
            why = rating_problem(data.get("rating"), "rating")
            return why or ("rate", doc, data["rating"])
        unrated = [i for i in ids if i not in state["ratings"]]
        if unrated:
            return f"rate every document before ranking ({len(unrated)} not rated yet)"
        ranked = [d["id"] for d in task["documents"] if d["rank"]]
        ranking = data.get("ranking")
        if not isinstance(ranking, list) or not all(isinstance(r, str) for r in ranking) or \
                sorted(ranking) != sorted(ranked):
            return f"the ranking must list each of the {len(ranked)} ranked documents once"
        return "rank", "", ranking

    def refused(annotator: str, exc: Forbidden) -> JSONResponse:
        if isinstance(exc, NotStarted):
            return _error(403, f"participant {annotator!r} has not started: open "
                               f"/?participant={quote(annotator, safe='')} first")
        return _error(403, f"participant {annotator!r} is answering in another browser (this one has "
                           "not got their session); go on where you started")

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(page)

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC:
            return _error(404, "not found")
        return Response(_static(name), media_type=STATIC[name])

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/next")
    async def api_next(request: Request) -> JSONResponse:
        annotator = participant_of(request.query_params)
        if annotator is None:
            return _error(400, "a participant id is needed (?participant=ID: 1-200 letters, digits, _.@:-)")
        cookie = session_cookie(annotator)
        try:
            data, fresh = await run_in_threadpool(next_task, annotator, request.cookies.get(cookie))
        except Forbidden as exc:
            return refused(annotator, exc)
        except TooManyNew:
            return _error(429, "too many new participants this minute; try again shortly")
        resp = JSONResponse(data)
        if fresh:
            _set_cookie(resp, request, cookie, fresh, 30 * 86400)
        return resp

    async def submission(request: Request, kind: str) -> tuple[str, str, dict[str, Any]] | JSONResponse:
        """(participant, item, body) of a submission of a `kind` task set's answer, or the 4xx
        that refuses it: not JSON, no participant or not their session, an item unknown or not
        theirs, a response time that is not whole milliseconds."""
        data = await _json_body(request)
        if isinstance(data, JSONResponse):
            return data
        annotator = participant_of(data)
        if annotator is None:
            return _error(422, "participant is missing or not a valid id")
        try:
            await run_in_threadpool(session, annotator, request.cookies.get(session_cookie(annotator)), False)
        except Forbidden as exc:
            return refused(annotator, exc)
        item, ms = data.get("item"), data.get("response_ms")
        if not isinstance(item, str) or item not in public:
            return _error(422, f"unknown item {item[:60]!r}" if isinstance(item, str) else
                          f"item must be a string, not {type(item).__name__}")
        if item not in assigned(annotator):
            return _error(422, f"item {item!r} is not assigned to this participant")
        if kind != kind_of:
            how = "in steps (POST /api/step)" if kind_of == "proxann" else "with POST /api/answer"
            return _error(422, f"item {item!r} is a{'' if kind_of == 'proxann' else 'n'} {kind_of} task: "
                               f"answer it {how}")
        if not isinstance(ms, int) or isinstance(ms, bool) or not 0 <= ms <= 86_400_000:
            return _error(422, "response_ms must be an integer number of milliseconds")
        return annotator, item, data

    @app.post("/api/answer")
    async def api_answer(request: Request) -> JSONResponse:
        got = await submission(request, "intrusion")
        if isinstance(got, JSONResponse):
            return got
        annotator, item, data = got
        choice, options = data.get("choice"), data.get("options")
        shown = public[item]["options"]
        if options != shown:
            return _error(422, f"options do not match item {item!r} as it is shown")
        if not isinstance(choice, int) or isinstance(choice, bool) or not 0 <= choice < len(shown):
            return _error(422, f"choice must be an option position 0..{len(shown) - 1}")
        try:
            _, duplicate = await run_in_threadpool(store.answer, annotator, item, shown, choice,
                                                   data["response_ms"])
        except ConflictError as exc:
            return _error(409, str(exc))
        return JSONResponse({"stored": True, "duplicate": duplicate})

    @app.post("/api/step")
    async def api_step(request: Request) -> JSONResponse:
        got = await submission(request, "proxann")
        if isinstance(got, JSONResponse):
            return got
        annotator, item, data = got
        checked = await run_in_threadpool(check_step, annotator, item, data)
        if isinstance(checked, str):
            return _error(409 if checked.startswith(("name the", "rate every")) else 422, checked)
        try:
            _, duplicate = await run_in_threadpool(store.step, annotator, item, *checked, data["response_ms"])
        except ConflictError as exc:
            return _error(409, str(exc))
        return JSONResponse({"stored": True, "duplicate": duplicate})

    def authorised(request: Request) -> bool:
        """The admin token in an `Authorization: Bearer` header, or an unexpired admin cookie."""
        header = request.headers.get("authorization", "")
        if header.startswith("Bearer "):
            return secrets.compare_digest(_digest(header[7:]), admin_digest)
        cookie = request.cookies.get(ADMIN_COOKIE, "")
        m = ADMIN_SESSION_RE.fullmatch(cookie)
        expires = int(m[1]) if m else 0  # a malformed cookie is compared too, and fails
        right = secrets.compare_digest(_digest(cookie), _digest(admin_session(admin_key, expires)))
        return right and expires >= time.time()

    def summary() -> dict[str, Any]:
        out: dict[str, Any] = {"tasks": len(names), "family": kind_of, **store.progress()}
        if key is not None and kind_of == "proxann":
            from ..proxann import rows_from_steps, score_proxann

            rows = rows_from_steps(store.steps())
            if rows:
                try:
                    res = score_proxann(key, rows, bootstrap=500)
                    out["proxann"] = {"summary": res.summary, "excluded_annotators": res.excluded_annotators,
                                      "responses_used": len(res.responses), "incomplete": res.incomplete}
                except MethodError as exc:
                    out["scores_error"] = str(exc)
        elif key is not None:
            responses = store.responses()
            if responses:
                try:
                    s = score(key, responses, bootstrap=500)
                    out["scores"] = {
                        "summary": s.summary,
                        "excluded_annotators": s.excluded_annotators,
                        "agreement": s.agreement,
                        "responses_used": s.responses_used,
                    }
                except MethodError as exc:
                    out["scores_error"] = str(exc)
        return out

    @app.get("/admin", response_class=HTMLResponse)
    def admin(request: Request) -> Response:
        if "token" in request.query_params:
            return HTMLResponse("the admin token is not accepted in a URL (URLs end up in logs and "
                                "browser history): open /admin and log in", status_code=400)
        return HTMLResponse(admin_page)  # holds no data: it asks /api/admin/summary, which checks

    @app.post("/api/admin/login")
    async def admin_login(request: Request) -> JSONResponse:
        data = await _json_body(request)
        if isinstance(data, JSONResponse):
            return data
        token = data.get("token")
        if not isinstance(token, str) or not secrets.compare_digest(_digest(token), admin_digest):
            return _error(403, "wrong admin token")
        resp = JSONResponse({"ok": True})
        expires = int(time.time()) + ADMIN_SESSION_SECONDS
        _set_cookie(resp, request, ADMIN_COOKIE, admin_session(admin_key, expires), ADMIN_SESSION_SECONDS)
        return resp

    @app.get("/api/admin/summary")
    async def admin_summary(request: Request) -> JSONResponse:
        if not authorised(request):
            return _error(403, "forbidden: log in on /admin, or send Authorization: Bearer TOKEN")
        return JSONResponse(json_safe(await run_in_threadpool(summary)))

    return app
