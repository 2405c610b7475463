"""The annotation database (SQLAlchemy Core): the task set (annotator-facing rows only, never
the key), participants and responses.

SQLite by default, in WAL mode with `synchronous=FULL`, so a response is on disk before it is
acknowledged and a restarted server loses nothing; PostgreSQL (or any SQLAlchemy URL) by URL.
A response is unique per (annotator, item): storing the same answer again (a retry, a double
click) returns the stored row; a different answer to an answered item is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    inspect,
    select,
)
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, IntegrityError, OperationalError

from ..errors import InputFileError, MethodError
from ..files.records import parse_json
from .taskset import check_task_set

metadata = MetaData()
tasks_table = Table(
    "tasks",
    metadata,
    Column("item", String(200), primary_key=True),
    Column("position", Integer, nullable=False),
    Column("public", Text, nullable=False),  # the annotator-facing JSON row
)
meta_table = Table(
    "meta",
    metadata,
    Column("name", String(50), primary_key=True),
    Column("value", Text, nullable=False),
)
participants_table = Table(
    "participants",
    metadata,
    Column("annotator", String(200), primary_key=True),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("code", String(64), nullable=False),
    Column("token_hash", String(64), nullable=False),  # SHA-256 of the session token, hex
)
responses_table = Table(
    "responses",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("annotator", String(200), nullable=False),
    Column("item", String(200), nullable=False),
    Column("options", Text, nullable=False),  # JSON list, in the order shown
    Column("choice", Integer, nullable=False),  # position chosen
    Column("chosen", Text, nullable=False),  # the option's text
    Column("response_ms", Integer, nullable=False),
    Column("received_at", Float, nullable=False),
    UniqueConstraint("annotator", "item", name="one_answer_per_item"),
)
steps_table = Table(  # ProxAnn answers, one row per step: the label, each rating, the ranking
    "proxann_steps",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("annotator", String(200), nullable=False),
    Column("item", String(200), nullable=False),
    Column("step", String(10), nullable=False),  # label, rate or rank
    Column("document", String(40), nullable=False),  # the rated document's id; "" for label and rank
    Column("value", Text, nullable=False),  # JSON: {"label", "clarity"}, a rating, or the ranked ids
    Column("response_ms", Integer, nullable=False),
    Column("received_at", Float, nullable=False),
    UniqueConstraint("annotator", "item", "step", "document", name="one_answer_per_step"),
)
STEPS = ("label", "rate", "rank")


class ConflictError(MethodError):
    """A second, different answer to an item the annotator has already answered."""


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    """Per-connection settings (WAL, which SQLite keeps in the file, is set by `Store.install`
    once the database is known to be an annotation database: a foreign file is never changed)."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def check_db_name(url: str, create: bool = True) -> None:
    """Refuse a `--db` that names no lasting database: an empty name, or SQLite in memory
    (`:memory:`, `sqlite://`), which would lose every answer when the server stops (`create`)
    or holds nothing to export."""
    if not url.strip():
        raise InputFileError("--db is empty; give a database file name")
    parsed = parse_url(url)
    name = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and (
        name in ("", ":memory:") or name.startswith("file::memory:") or parsed.query.get("mode") == "memory"
    ):
        what = ("would lose every answer when the server stops" if create
                else "holds nothing to export")
        raise InputFileError(f"database {url}: an in-memory database {what}; give a file")


def parse_url(url: str) -> URL:
    """`url` as a SQLAlchemy URL (a plain path means SQLite): the one parse of a `--db`, so a URL
    SQLAlchemy cannot read (a port that is not a number, a malformed URL) is one line naming it."""
    try:
        return make_url(url if "://" in url else f"sqlite:///{url}")
    except (ArgumentError, ValueError) as exc:
        raise InputFileError(f"database {_shown(url)}: not a database URL ({_first_line(exc)}; the form is "
                             "dialect://user:password@host:port/name, the port a number)") from None


CONNECT_TIMEOUT = 10  # seconds a database server may take to accept a connection (PostgreSQL)
SECRET = re.compile(r"pass|secret|token|key", re.IGNORECASE)  # URL query parameters shown as ***


def connect(url: str) -> Engine:
    """An engine for `url` (a SQLAlchemy URL, or a plain path meaning SQLite). A PostgreSQL
    server that takes more than CONNECT_TIMEOUT seconds to answer (one that accepts the connection
    and never speaks) is a one-line error, never a wait; a `connect_timeout` in the URL wins."""
    parsed = parse_url(url)
    url = url if "://" in url else f"sqlite:///{url}"
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = create_engine(
                parsed, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=8, max_overflow=8
            )
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            args = ({"connect_timeout": CONNECT_TIMEOUT} if parsed.get_backend_name() == "postgresql"
                    and "connect_timeout" not in parsed.query else {})
            engine = create_engine(parsed, connect_args=args, pool_size=8, max_overflow=16,
                                   pool_pre_ping=True)
        with engine.connect():
            pass
        inspect(engine).get_table_names()  # reads the schema: a file that is not a database fails here
    except (ArgumentError, OperationalError, ImportError, TypeError) as exc:
        raise InputFileError(f"database {_shown(url)}: cannot connect ({_first_line(exc)})") from None
    except (DatabaseError, UnicodeDecodeError) as exc:
        raise InputFileError(f"database {_shown(url)}: not a usable database ({_first_line(exc)})") from None
    return engine


@contextlib.contextmanager
def readable(url: str) -> Iterator[None]:
    """Turn a database that breaks part-way (a damaged SQLite file reads its pages lazily) into
    a one-line InputFileError."""
    try:
        yield
    except (DatabaseError, UnicodeDecodeError) as exc:  # damaged text in a SQLite page
        raise InputFileError(f"database {_shown(url)}: not a usable database ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_schema(engine: Engine) -> None:
    """Tables this version needs, with their columns (a database from an older tealeaves or
    another program is refused rather than half-used)."""
    have = inspect(engine)
    for table in metadata.sorted_tables:
        if have.has_table(table.name):
            cols = {c["name"] for c in have.get_columns(table.name)}
            missing = [c.name for c in table.columns if c.name not in cols]
            if missing:
                raise MethodError(f"database {_shown(str(engine.url))}: table {table.name} lacks "
                                  f"{', '.join(missing)} (made by an older tealeaves or another program); "
                                  "use a new database")


def _shown(url: str | URL) -> str:
    """The URL for messages, every secret in it shown as ***: the password of user:password@ and
    every query parameter whose name says it holds one (`SECRET`: ?password=, ?sslpassword=, ...)."""
    try:
        parsed = make_url(url)
        shown = parsed.render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # not a URL SQLAlchemy reads: its secrets hidden all the same
        shown = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", str(url))
    return re.sub(r"([?&][^=&#]*=)([^&#]*)",
                  lambda m: m[1] + "***" if SECRET.search(m[1]) else m[0], shown)


def task_set_hash(tasks: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(tasks, sort_keys=True).encode()).hexdigest()


@dataclass
class Store:
    engine: Engine

    def install(self, tasks: list[dict[str, Any]]) -> None:
        """Check the task set (`check_task_set`), create the tables and load it; a database
        already holding another task set is refused (its responses would not match)."""
        check_task_set(tasks)
        self.check_ours()
        if self.engine.dialect.name == "sqlite":
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        metadata.create_all(self.engine)
        digest = task_set_hash(tasks)
        with self.engine.begin() as conn:
            row = conn.execute(select(meta_table.c.value).where(meta_table.c.name == "task_set")).first()
            if row is None:
                conn.execute(insert(meta_table), [{"name": "task_set", "value": digest}])
                conn.execute(
                    insert(tasks_table),
                    [
                        {"item": t["item"], "position": i, "public": json.dumps(t)}
                        for i, t in enumerate(tasks)
                    ],
                )
            elif row[0] != digest:
                raise MethodError("the database holds responses to another task set; use a new database")

    def check_ours(self) -> None:
        """Refuse a database that holds tables and is not an annotation database (another
        program's: its file must not get our tables), naming what it holds."""
        names = inspect(self.engine).get_table_names()
        foreign = sorted(set(names) - {t.name for t in metadata.sorted_tables})
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
            raise InputFileError(f"database {_shown(str(self.engine.url))} is not a tealeaves annotation "
                                 f"database (it holds table{'s' if len(foreign) > 1 else ''} {shown}); "
                                 "give a new file")
        _check_schema(self.engine)

    def has_tables(self) -> bool:
        """Does the database hold annotation tables? False for an empty database; a database
        with other tables is refused (`check_ours`)."""
        self.check_ours()
        return inspect(self.engine).has_table("responses")

    def tasks(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(tasks_table.c.public).order_by(tasks_table.c.position)).all()
        return [_json_field(r[0], dict, f"task {i}", self.engine) for i, r in enumerate(rows)]

    def participant(self, annotator: str) -> dict[str, Any] | None:
        """The participant's row, or None before their first visit."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(participants_table).where(participants_table.c.annotator == annotator)
            ).first()
        return None if row is None else dict(row._mapping)

    def add_participant(self, annotator: str, token_hash: str) -> dict[str, Any] | None:
        """Create the participant (with a fresh completion code and the hash of their session
        token); None if the id was created meanwhile by another request."""
        row = {"annotator": annotator, "started_at": time.time(), "finished_at": None,
               "code": secrets.token_hex(6).upper(), "token_hash": token_hash}
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(participants_table), [row])
        except IntegrityError:
            return None
        return row

    def finish(self, annotator: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                participants_table.update()
                .where(
                    participants_table.c.annotator == annotator, participants_table.c.finished_at.is_(None)
                )
                .values(finished_at=time.time())
            )

    def answered(self, annotator: str) -> set[str]:
        """The items `annotator` has finished: intrusion items answered, ProxAnn items ranked."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(responses_table.c.item).where(responses_table.c.annotator == annotator)
            )
            done = {r[0] for r in rows}
            rows = conn.execute(select(steps_table.c.item).where(
                steps_table.c.annotator == annotator, steps_table.c.step == "rank"))
            return done | {r[0] for r in rows}

    def step(self, annotator: str, item: str, step: str, document: str, value: Any,
             response_ms: int) -> tuple[dict[str, Any], bool]:
        """Store one ProxAnn step; returns (stored row, duplicate?). The same value again is a
        duplicate; a different one raises ConflictError (an answer is never changed)."""
        row = {"annotator": annotator, "item": item, "step": step, "document": document,
               "value": json.dumps(value), "response_ms": response_ms, "received_at": time.time()}
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(steps_table), [row])
            return row, False
        except IntegrityError:
            with self.engine.connect() as conn:
                old = conn.execute(select(steps_table).where(
                    steps_table.c.annotator == annotator, steps_table.c.item == item,
                    steps_table.c.step == step, steps_table.c.document == document)).first()
            if old is None:
                raise
            old_row = _step(dict(old._mapping), self.engine)
            if old_row["value"] != value:
                what = f"document {document!r}" if document else f"its {step} step"
                raise ConflictError(f"item {item!r}: {what} was already answered") from None
            return old_row, True

    def steps(self, annotator: str | None = None, item: str | None = None) -> list[dict[str, Any]]:
        """Stored ProxAnn steps (of one annotator and item when given), in the order stored, each
        value parsed and checked."""
        query = select(steps_table).order_by(steps_table.c.id)
        if annotator is not None:
            query = query.where(steps_table.c.annotator == annotator)
        if item is not None:
            query = query.where(steps_table.c.item == item)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [_step(dict(r._mapping), self.engine) for r in rows]

    def answer(
        self, annotator: str, item: str, options: list[str], choice: int, response_ms: int
    ) -> tuple[dict[str, Any], bool]:
        """Store one response; returns (stored row, duplicate?). A repeat of the stored answer is
        a duplicate; a different answer raises ConflictError."""
        row = {
            "annotator": annotator,
            "item": item,
            "options": json.dumps(options),
            "choice": choice,
            "chosen": options[choice],
            "response_ms": response_ms,
            "received_at": time.time(),
        }
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(responses_table), [row])
            return row, False
        except IntegrityError:
            with self.engine.connect() as conn:
                old = conn.execute(
                    select(responses_table).where(
                        responses_table.c.annotator == annotator, responses_table.c.item == item
                    )
                ).first()
            if old is None:
                raise
            old_row = dict(old._mapping)
            if old_row["choice"] != choice:
                raise ConflictError(
                    f"item {item!r} was already answered with option {old_row['choice']}"
                ) from None
            return old_row, True

    def responses(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(responses_table).order_by(responses_table.c.id)).all()
        return [_response(dict(r._mapping), self.engine) for r in rows]

    def progress(self) -> dict[str, Any]:
        with self.engine.connect() as conn:
            n = conn.execute(select(func.count()).select_from(responses_table)).scalar_one()
            people = conn.execute(select(func.count()).select_from(participants_table)).scalar_one()
            answering = conn.execute(select(func.count(responses_table.c.annotator.distinct()))).scalar_one()
            ranked = conn.execute(select(func.count()).select_from(steps_table)
                                  .where(steps_table.c.step == "rank")).scalar_one()
            answering += conn.execute(select(func.count(steps_table.c.annotator.distinct()))).scalar_one()
            done = conn.execute(
                select(func.count())
                .select_from(participants_table)
                .where(participants_table.c.finished_at.is_not(None))
            ).scalar_one()
        return {"responses": int(n) + int(ranked), "participants": int(people), "answering": int(answering),
                "finished": int(done)}


_RESPONSE_TYPES = {"annotator": str, "item": str, "choice": int, "chosen": str, "response_ms": int,
                   "received_at": (int, float)}


def _damaged(engine: Engine, where: str, what: str) -> InputFileError:
    return InputFileError(f"database {_shown(engine.url)}: damaged {where}: {what}")


def _json_field(text: Any, kind: type | tuple[type, ...], where: str, engine: Engine,
                field: str = "JSON") -> Any:
    """A JSON column's value, checked (SQLite stores whatever a damaged page holds)."""
    if not isinstance(text, str):
        raise _damaged(engine, where, f"expected JSON text, found {type(text).__name__}")
    try:
        value = parse_json(text, field)
    except InputFileError as exc:
        raise _damaged(engine, where, str(exc)) from None
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise _damaged(engine, where, f"expected a JSON {names}, found {type(value).__name__}")
    return value


def _response(row: dict[str, Any], engine: Engine) -> dict[str, Any]:
    where = f"response {row.get('id')}"
    for name, kind in _RESPONSE_TYPES.items():
        if not isinstance(row[name], kind) or isinstance(row[name], bool):
            raise _damaged(engine, where, f"{name} is {type(row[name]).__name__}")
    options = _json_field(row["options"], list, where, engine, "options")
    if not all(isinstance(o, str) for o in options):
        raise _damaged(engine, where, "options: expected a list of strings")
    return {**row, "options": options}


_STEP_TYPES = {"annotator": str, "item": str, "step": str, "document": str, "response_ms": int,
               "received_at": (int, float)}


def _step(row: dict[str, Any], engine: Engine) -> dict[str, Any]:
    """A stored ProxAnn step checked: its columns' types, the step's name and its value's shape
    (the label step an object with a label and a clarity, a rating a whole number, a ranking a
    list of document ids)."""
    where = f"ProxAnn step {row.get('id')}"
    for name, kind in _STEP_TYPES.items():
        if not isinstance(row[name], kind) or isinstance(row[name], bool):
            raise _damaged(engine, where, f"{name} is {type(row[name]).__name__}")
    if row["step"] not in STEPS:
        raise _damaged(engine, where, f"step {row['step'][:20]!r} is not one of {', '.join(STEPS)}")
    value = _json_field(row["value"], (dict, int, list), where, engine, "value")
    ok = {"label": lambda v: isinstance(v, dict) and isinstance(v.get("label"), str)
          and isinstance(v.get("clarity"), int) and not isinstance(v.get("clarity"), bool),
          "rate": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "rank": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)}[row["step"]]
    if not ok(value):
        raise _damaged(engine, where, f"value of a {row['step']} step has the wrong shape")
    return {**row, "value": value}


def open_store(url: str, create: bool = True) -> Store:
    """The store at `url`; without `create`, a SQLite path that does not exist is an error (an
    export from a mistyped path must not create an empty database)."""
    check_db_name(url, create)
    if not create and "://" not in url and not os.path.isfile(url):
        raise InputFileError(f"database {url}: no such file")
    return Store(connect(url))
