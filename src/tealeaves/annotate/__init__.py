"""Collecting human judgments for intrusion and ProxAnn tasks: a small web app (FastAPI +
SQLAlchemy; SQLite with WAL by default, PostgreSQL by URL) and the export of its responses in the
long formats that `tealeaves.intrusion.score` and `tealeaves.proxann.score_proxann` read.
The app and the store need the `annotate` extra; they are imported on first use, so
`tealeaves.annotate.simulate` (load testing) works without it."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import MethodError
from ..files import csvout
from ..files.atomic import atomic_path
from ..io.common import require

if TYPE_CHECKING:
    from .app import AppConfig

_LAZY = {"AppConfig": "app", "create_app": "app", "Store": "store", "open_store": "store"}


def __getattr__(name: str) -> Any:
    """The app and store, imported when first asked for (a missing extra is a one-line error)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
    except ImportError as exc:
        raise MethodError(
            f'the annotation app needs its extra ({exc.name} is missing): pip install "tealeaves[annotate]"'
        ) from None
    return getattr(module, name)

__all__ = ["AppConfig", "create_app", "Store", "open_store", "serve", "export_responses", "EXPORT_FIELDS"]

EXPORT_FIELDS = ("annotator", "item", "choice", "chosen", "options", "response_ms", "received_at")


def serve(
    tasks: list[dict[str, Any]],
    db: str,
    key: list[dict[str, Any]] | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    config: AppConfig | None = None,
    announce: Callable[[], None] | None = None,
) -> None:
    """Load `tasks` into the database at `db` and serve them until interrupted. Inputs are checked
    first (the task set, the key, an existing database), then the port is bound, and only then is a
    new database created: a busy port is an error, never a false "serving on", and a startup that
    fails leaves no new database (nor its -wal and -shm files) behind."""
    require("uvicorn", "annotate")
    import uvicorn

    if not 1 <= port <= 65535:
        raise MethodError(f"port {port} is not a TCP port (1-65535)")
    from .store import check_db_name, readable
    from .taskset import check_key, check_task_set

    check_db_name(db, create=True)
    check_task_set(tasks)
    if key is not None:
        check_key(key, tasks)
    files = sqlite_files(db)
    new_files = [f for f in files if not os.path.lexists(f)]
    if not files or os.path.lexists(files[0]):  # an existing database is checked before the port is taken
        existing = __getattr__("open_store")(db, create=False)
        try:
            with readable(db):
                existing.has_tables()
        finally:
            existing.engine.dispose()
    sock = _bind(host, port)
    store = None
    try:
        store = __getattr__("open_store")(db)
        with readable(db):
            store.install(tasks)
            app = __getattr__("create_app")(store, key, config)
    except BaseException:
        sock.close()
        if store is not None:
            store.engine.dispose()
        for f in new_files:
            with contextlib.suppress(OSError):
                os.unlink(f)
        raise
    if announce:
        announce()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                           limit_concurrency=2000, timeout_keep_alive=30))
    server.run(sockets=[sock])


def sqlite_files(db: str) -> list[str]:
    """The files SQLite keeps for `db` (a path or a sqlite:/// URL; none for other databases)."""
    if "://" not in db:
        path = db
    elif db.startswith("sqlite:///") and len(db) > len("sqlite:///"):
        path = db[len("sqlite:///"):].split("?")[0]
    else:
        return []
    return [path + end for end in ("", "-wal", "-shm", "-journal")]


def _bind(host: str, port: int) -> socket.socket:
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        raise MethodError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); is another server "
                          "using the port?") from None
    sock.set_inheritable(True)
    return sock


def export_responses(db: str, path: str | os.PathLike) -> int:
    """Write every stored response to `path` (.csv is CSV; .jsonl, .ndjson or no extension is JSON
    lines: `csvout.table_format`), atomically; return the number of rows written. Intrusion tasks:
    one row per response (`EXPORT_FIELDS`); ProxAnn tasks: one row per annotator, task and rated
    document (`tealeaves.proxann.EXPORT_FIELDS`, unfinished answers included). No other
    information on a participant than the id they came with is kept, so none is exported."""
    from ..proxann.responses import EXPORT_FIELDS as PROXANN_FIELDS
    from ..proxann.responses import rows_from_steps
    from .store import readable
    from .taskset import family

    csv_out = csvout.table_format(path, "the export") == "csv"

    store = __getattr__("open_store")(db, create=False)
    try:
        with readable(db):
            if not store.has_tables():
                raise MethodError(
                    f"database {db}: no annotation tables (was it served with `tealeaves annotate serve`?)"
                )
            proxann = family(store.tasks()) == "proxann"
            rows = rows_from_steps(store.steps()) if proxann else store.responses()
    finally:
        store.engine.dispose()  # closing the last connection removes SQLite's -wal and -shm files
    fields = PROXANN_FIELDS if proxann else EXPORT_FIELDS
    out = os.fspath(path)
    with atomic_path(out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        if csv_out:
            w = csvout.writer(fh)
            w.writerow(fields)
            for r in rows:
                w.writerow(["" if r[f] is None else json.dumps(r[f]) if f == "options" else r[f]
                            for f in fields])
        else:
            for r in rows:
                fh.write(json.dumps({f: r[f] for f in fields}) + "\n")
    return len(rows)
