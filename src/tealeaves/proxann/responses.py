"""ProxAnn answers in their long format, the one `tealeaves annotate export` writes and `tealeaves
proxann score` reads: one row per annotator, task (item) and rated document, CSV or JSON lines.

| field | what |
|---|---|
| annotator | the app's participant id (pseudonymous: whatever id the study gave; nothing else is kept) |
| item | the task's opaque id |
| document | the document's id in the task (d1, d2, ...); empty on an answer's one row if nothing is rated |
| rating | how well the document fits the annotator's category, 1-5 (empty: not rated) |
| rank | its place in the annotator's ranking, 1 = most related (empty: not ranked yet, or never ranked) |
| label | the category the annotator named (the same on every row of the response) |
| clarity | how clearly the words and exemplars fit that category, 1-5 |
| label_ms, rating_ms, rank_ms | milliseconds the annotator spent on the step |
| received_at | when the server stored the rating (Unix seconds) |

A response is complete when every ranked document has a rank; the scores use complete responses
only and count the others.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..errors import BadValueError, InputFileError, MethodError
from ..files import csvout
from ..files.records import numbered_csv, numbered_json_lines, strict_id, strict_int
from .tasks import SCALE

EXPORT_FIELDS = ("annotator", "item", "document", "rating", "rank", "label", "clarity", "label_ms",
                 "rating_ms", "rank_ms", "received_at")


def rows_from_steps(steps: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The export rows of the app's stored steps (each: annotator, item, step = label, rate or
    rank, document, value, response_ms, received_at; in the order stored)."""
    responses: dict[tuple[str, str], dict[str, Any]] = {}
    for s in steps:
        r = responses.setdefault((s["annotator"], s["item"]),
                                 {"label": None, "ratings": {}, "ranking": None})
        if s["step"] == "label":
            r |= {"label": s["value"]["label"], "clarity": s["value"]["clarity"],
                  "label_ms": s["response_ms"], "received_at": s["received_at"]}
        elif s["step"] == "rate":
            r["ratings"][s["document"]] = (s["value"], s["response_ms"], s["received_at"])
        else:
            r |= {"ranking": s["value"], "rank_ms": s["response_ms"]}
    out = []
    for (annotator, item), r in responses.items():
        ranks = {d: i for i, d in enumerate(r["ranking"] or [], 1)}
        common = {"annotator": annotator, "item": item, "label": r["label"], "clarity": r.get("clarity"),
                  "label_ms": r.get("label_ms"), "rank_ms": r.get("rank_ms")}
        if not r["ratings"]:
            out.append({**common, "document": "", "rating": None, "rank": None, "rating_ms": None,
                        "received_at": r.get("received_at")})
        for doc, (rating, ms, at) in r["ratings"].items():
            out.append({**common, "document": doc, "rating": rating, "rank": ranks.get(doc), "rating_ms": ms,
                        "received_at": at})
    return [{f: row[f] for f in EXPORT_FIELDS} for row in out]


def numbered_responses(path: str | os.PathLike) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a ProxAnn answers file with their places, "FILE:LINE"."""
    p = os.fspath(path)
    if not csvout.is_csv(p):
        return numbered_json_lines(p)
    header, rows = numbered_csv(p, ("annotator", "item", "document", "rating", "rank"))
    return rows


def _number(value: Any, where: str, field: str, low: int, high: int | None, typed: bool) -> int | None:
    if value is None or value == "":
        return None
    if typed and isinstance(value, str):
        raise BadValueError(f"{where}: {field} {value[:20]!r} is text; in JSON a number is written as one")
    return strict_int(value, where, field, low, high)


def collect(placed: Iterable[tuple[str, Any]], typed: bool) -> dict[tuple[str, str], dict[str, Any]]:
    """Rows grouped into responses, (annotator, item) -> label, clarity, ratings {document: 1-5},
    ranks {document: place} and `where` (its first row): every field checked (an id is text, a
    rating 1..SCALE, a rank a whole number from 1), a document rated twice and a label or clarity
    that differs between rows of one response refused, with the row's place. `typed` (JSON): a
    number written as text is refused."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for where, r in placed:
        if not isinstance(r, dict):
            raise InputFileError(f"{where}: expected a record with annotator, item, document and rating")
        ann = strict_id(r.get("annotator"), where, "annotator")
        item = strict_id(r.get("item"), where, "item")
        doc = r.get("document")
        doc = "" if doc is None else doc
        if not isinstance(doc, str):
            raise BadValueError(f"{where}: document {doc!r} is not a document id (text such as d1)")
        rating = _number(r.get("rating"), where, "rating", 1, SCALE, typed)
        rank = _number(r.get("rank"), where, "rank", 1, None, typed)
        clarity = _number(r.get("clarity"), where, "clarity", 1, SCALE, typed)
        label = r.get("label")
        label = None if label in (None, "") else label
        if label is not None and not isinstance(label, str):
            raise BadValueError(f"{where}: label must be text")
        resp = out.setdefault((ann, item), {"label": label, "clarity": clarity, "ratings": {}, "ranks": {},
                                            "where": where})
        for name, value in (("label", label), ("clarity", clarity)):
            if value != resp[name]:
                raise MethodError(f"{where}: {name} {str(value)[:40]!r} differs from "
                                  f"{str(resp[name])[:40]!r} "
                                  f"on the first row of annotator {ann!r}'s answer to item {item!r} "
                                  f"({resp['where']})")
        if doc == "":
            if rating is not None or rank is not None:
                raise BadValueError(f"{where}: a rating or rank without a document")
            continue
        if doc in resp["ratings"] or doc in resp["ranks"]:
            raise MethodError(f"{where}: annotator {ann!r} answered document {doc!r} of item {item!r} twice")
        if rating is None and rank is not None:
            raise MethodError(f"{where}: document {doc!r} is ranked but not rated")
        if rating is not None:
            resp["ratings"][doc] = rating
        if rank is not None:
            resp["ranks"][doc] = rank
    return out


def read_responses(path: str | os.PathLike) -> dict[tuple[str, str], dict[str, Any]]:
    """A ProxAnn answers file (CSV or JSON lines) as responses (`collect`)."""
    return collect(numbered_responses(path), typed=not csvout.is_csv(path))


def grouped(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Rows in memory (the export's, or the app's) as responses (`collect`)."""
    return collect(((f"row {i}", r) for i, r in enumerate(rows, 1)), typed=True)


def by_item(responses: dict[tuple[str, str], dict[str, Any]]) -> dict[str, list[str]]:
    """item -> annotators who answered it."""
    out: dict[str, list[str]] = defaultdict(list)
    for ann, item in responses:
        out[item].append(ann)
    return out
