"""The annotation web app (FastAPI). Annotators open `/?participant=ID` (also accepted:
`PROLIFIC_PID`, `workerId`, `participant_id`), see one task at a time, answer by click or by
the keys 1-9, and get a completion code (or a redirect) at the end.

Annotator-facing routes serve only what is shown: the item id, the kind, the document text and
the options in shown order. The key stays in this process (for the admin page) and is never
sent to an annotator. Submissions are JSON of at most `MAX_BODY` bytes; anything malformed is
answered with a 4xx status and the server keeps serving.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from ..errors import MethodError
from ..intrusion.scoring import score
from ..jsonout import json_safe
from .store import ConflictError, Store

MAX_BODY = 4096
PARTICIPANT_PARAMS = ("participant", "PROLIFIC_PID", "workerId", "participant_id")
PARTICIPANT_RE = re.compile(r"^[A-Za-z0-9_.@:-]{1,200}$")
PUBLIC_FIELDS = ("item", "kind", "text", "options")
PROMPTS = {
    "word": "Which word does not belong with the others?",
    "topic": "Which group of words does not fit this document?",
}


@dataclass
class AppConfig:
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    completion_code: str | None = None  # one code for everyone (crowd platforms); else per participant
    redirect: str | None = None  # URL template with {participant} and {code}
    per_annotator: int | None = None  # tasks per annotator (default all)
    title: str = "Word and topic intrusion"


def _static(name: str) -> str:
    return resources.files("tealeaves.annotate").joinpath("static", name).read_text(encoding="utf-8")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(
    store: Store, key: list[dict[str, Any]] | None = None, config: AppConfig | None = None
) -> FastAPI:
    """The app over `store` (already holding the task set). `key` enables live scores on the
    admin page."""
    config = config or AppConfig()
    tasks = store.tasks()
    public = {t["item"]: {f: t.get(f) for f in PUBLIC_FIELDS} for t in tasks}
    for p in public.values():
        p["prompt"] = PROMPTS.get(p["kind"], PROMPTS["word"])
    names = list(public)
    app = FastAPI(title="tealeaves annotate", docs_url=None, redoc_url=None, openapi_url=None)
    page = _static("annotate.html").replace("{{title}}", config.title)
    admin_page = _static("admin.html")

    def assigned(annotator: str) -> list[str]:
        """This annotator's items, in an order of their own (hash of id and item) so that order
        effects average out; the first `per_annotator` of them."""
        order = sorted(names, key=lambda n: hashlib.sha256(f"{annotator}\x00{n}".encode()).digest())
        return order[: config.per_annotator] if config.per_annotator else order

    def participant_of(params: dict[str, Any]) -> str | None:
        for k in PARTICIPANT_PARAMS:
            v = params.get(k)
            if isinstance(v, str) and PARTICIPANT_RE.match(v):
                return v
        return None

    def next_task(annotator: str) -> dict[str, Any]:
        person = store.participant(annotator)
        mine = assigned(annotator)
        done = store.answered(annotator)
        todo = [n for n in mine if n not in done]
        progress = {"answered": len(mine) - len(todo), "total": len(mine)}
        if todo:
            return {"done": False, "progress": progress, "task": public[todo[0]]}
        if person["finished_at"] is None:
            store.finish(annotator)
        code = config.completion_code or person["code"]
        out: dict[str, Any] = {"done": True, "code": code, "progress": progress}
        if config.redirect:
            out["redirect"] = config.redirect.replace("{participant}", annotator).replace("{code}", code)
        return out

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    @app.get("/annotate.js")
    def script() -> Response:
        return Response(_static("annotate.js"), media_type="text/javascript")

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/next")
    async def api_next(request: Request) -> JSONResponse:
        annotator = participant_of(dict(request.query_params))
        if annotator is None:
            return _error(400, "a participant id is needed (?participant=ID; letters, digits, _.@:-)")
        return JSONResponse(await run_in_threadpool(next_task, annotator))

    @app.post("/api/answer")
    async def api_answer(request: Request) -> JSONResponse:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
            return _error(413, f"submissions are at most {MAX_BODY} bytes")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return _error(413, f"submissions are at most {MAX_BODY} bytes")
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the submission is not JSON")
        if not isinstance(data, dict):
            return _error(400, "the submission must be a JSON object")
        annotator = participant_of(data)
        if annotator is None:
            return _error(422, "participant is missing or not a valid id")
        item, choice, options, ms = (
            data.get("item"),
            data.get("choice"),
            data.get("options"),
            data.get("response_ms"),
        )
        if not isinstance(item, str) or item not in public:
            return _error(422, f"unknown item {str(item)[:60]!r}")
        if item not in assigned(annotator):
            return _error(422, f"item {item!r} is not assigned to this participant")
        shown = public[item]["options"]
        if options != shown:
            return _error(422, f"options do not match item {item!r} as it is shown")
        if not isinstance(choice, int) or isinstance(choice, bool) or not 0 <= choice < len(shown):
            return _error(422, f"choice must be an option position 0..{len(shown) - 1}")
        if not isinstance(ms, int) or isinstance(ms, bool) or not 0 <= ms <= 86_400_000:
            return _error(422, "response_ms must be an integer number of milliseconds")
        try:
            _, duplicate = await run_in_threadpool(store.answer, annotator, item, shown, choice, ms)
        except ConflictError as exc:
            return _error(409, str(exc))
        return JSONResponse({"stored": True, "duplicate": duplicate})

    def authorised(request: Request) -> bool:
        given = request.query_params.get("token") or request.headers.get("authorization", "").removeprefix(
            "Bearer "
        )
        return secrets.compare_digest(given.encode(), config.admin_token.encode())

    def summary() -> dict[str, Any]:
        out: dict[str, Any] = {"tasks": len(names), **store.progress()}
        if key is not None:
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
        if not authorised(request):
            return HTMLResponse("forbidden: the admin page needs ?token=ADMIN_TOKEN", status_code=403)
        return HTMLResponse(admin_page, headers={"Cache-Control": "no-store"})

    @app.get("/api/admin/summary")
    async def admin_summary(request: Request) -> JSONResponse:
        if not authorised(request):
            return _error(403, "forbidden")
        return JSONResponse(json_safe(await run_in_threadpool(summary)))

    return app
