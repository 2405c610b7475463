"""Every request and its answer, kept in SQLite so that a run resumes and nothing is paid twice.

The key is SHA-256 of the request as sent (canonical JSON: the address, the API path and the body:
the model's name, the messages or prompt, temperature, seed, the number of tokens and of
log-probabilities), so a different model, prompt or sampling setting is a different entry, and
the API key (a header) is never part of it. Each answer is committed as it arrives: a run that is
stopped keeps every answer it received. Only answers are kept; failed requests are not.

The qualifications of judges (`tealeaves judge qualify`: a judge's measured agreement with people)
are kept beside the answers, by the hash of the judge's settings, so that evaluate and the report
can show the agreement of a judge they use.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import statistics
import threading
import time
from typing import Any

from ..errors import InputFileError

SCHEMA = 1

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    llm TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS qualifications (
    judge TEXT NOT NULL,
    llm TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def request_key(url: str, path: str, body: dict[str, Any]) -> str:
    """The cache key of a request: SHA-256 of its canonical JSON."""
    text = json.dumps({"url": url, "path": path, "body": body}, sort_keys=True, ensure_ascii=True,
                      separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


class Cache:
    """Answers by request key, in the SQLite file `path` (":memory:" keeps them for this process
    only). Safe to share between the threads of one run."""

    def __init__(self, path: str | os.PathLike = ":memory:") -> None:
        self.path = os.fspath(path)
        if self.path != ":memory:" and os.path.exists(self.path) and not os.path.isfile(self.path):
            raise InputFileError(f"{self.path}: the judge's cache must be a regular file")
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            version = self._initialise()
        except sqlite3.DatabaseError as exc:
            raise InputFileError(f"{self.path}: not a judge cache ({exc})") from None
        if version != str(SCHEMA):
            raise InputFileError(f"{self.path}: a judge cache of schema {version!r}; this version reads "
                                 f"schema {SCHEMA}")
        self.hits = 0
        self.misses = 0

    def _initialise(self, wait: float = 30.0) -> str:
        """Create the tables and the schema row if missing and return the file's schema. Processes
        that open a new cache at the same moment race on its creation: SQLite answers "locked"
        at once, without its busy wait, while another connection switches the file to WAL, so
        that is retried for up to `wait` seconds; the schema row is INSERT OR IGNORE (both may
        find it missing)."""
        deadline = time.monotonic() + wait
        while True:
            try:
                if self.path != ":memory:":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(_TABLES)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
                self._db.commit()
                return self._db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()[0]
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                self._db.rollback()
                time.sleep(0.01)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT response, seconds FROM answers WHERE key=?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return {"response": json.loads(row[0]), "seconds": row[1]}

    def has(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM answers WHERE key=?", (key,)).fetchone() is not None

    def put(self, key: str, url: str, llm: str, request: dict[str, Any], response: dict[str, Any],
            seconds: float) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (key, url, llm, json.dumps(request, sort_keys=True), json.dumps(response),
                              float(seconds), time.time()))
            self._db.commit()

    def seconds_per_request(self, url: str, llm: str) -> float | None:
        """The median time one answer of `llm` at `url` took, from the answers kept (None if none)."""
        with self._lock:
            rows = self._db.execute("SELECT seconds FROM answers WHERE url=? AND llm=? ORDER BY created DESC "
                                    "LIMIT 200", (url, llm)).fetchall()
        return statistics.median(r[0] for r in rows) if rows else None

    def put_qualification(self, judge: str, llm: str, result: dict[str, Any]) -> None:
        """Keep a qualification (`judge.qualify`'s result as JSON) of the judge whose settings hash to
        `judge` (`qualify.judge_key`)."""
        with self._lock:
            self._db.execute("INSERT INTO qualifications VALUES (?, ?, ?, ?)",
                             (judge, llm, json.dumps(result, allow_nan=False), time.time()))
            self._db.commit()

    def qualifications(self, judge: str) -> list[dict[str, Any]]:
        """Every kept qualification of the judge `judge`, newest first."""
        with self._lock:
            rows = self._db.execute("SELECT result FROM qualifications WHERE judge=? ORDER BY created DESC, "
                                    "rowid DESC", (judge,)).fetchall()
        out = []
        for (text,) in rows:
            try:
                doc = json.loads(text)
            except ValueError:
                raise InputFileError(f"{self.path}: a kept qualification is not JSON") from None
            out.append(doc)
        return out

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


__all__ = ["Cache", "request_key"]
