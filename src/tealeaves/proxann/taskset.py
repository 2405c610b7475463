"""What the app accepts as a ProxAnn task, and the key that goes with it: every row checked and
typed where it is read, with a one-line error naming the task (needs no extra)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from ..errors import BadValueError, InputFileError, MethodError
from ..files import csvout
from ..files.records import numbered_json_lines, strict_float, strict_int
from ..intrusion.taskset import MAX_BODY, MAX_ID, bad_character, check_item
from ..util.text import shown_as
from .tasks import INSTRUCTED_RATING, KIND, MAX_DOCUMENTS, MAX_LABEL, ROLES, SCALE

DOC_ID = re.compile(r"[A-Za-z0-9_-]{1,20}")
PUBLIC = ("item", "kind", "words", "exemplars", "documents")
KEY_ONLY = ("model", "topic", "exemplar_documents", "exemplar_theta")
DOC_PUBLIC = ("id", "text", "rank")
DOC_KEY = ("role", "document", "theta", "expected")


def answer_bytes(item: str, ids: Sequence[str]) -> int:
    """The size of the largest answer the page sends for a task (as `JSON.stringify` writes it,
    with a participant id of the longest kind): the label (MAX_LABEL characters of 4 bytes each)
    or the ranking."""
    base = {"participant": "x" * MAX_ID, "item": item, "response_ms": 86_400_000}
    label = {**base, "step": "label", "label": "\U0001F600" * MAX_LABEL, "clarity": SCALE}
    rank = {**base, "step": "rank", "ranking": list(ids)}
    return max(len(json.dumps(b, ensure_ascii=False, separators=(",", ":")).encode()) for b in (label, rank))


def _texts(value: Any, where: str, field: str, least: int) -> list[str]:
    if not isinstance(value, list) or len(value) < least or not all(isinstance(v, str) for v in value):
        raise InputFileError(f"{where}: {field} must be a list of at least {least} strings")
    for i, v in enumerate(value):
        if not shown_as(v):
            raise InputFileError(f"{where}: {field} {i} is blank")
    return value


def check_task(t: Any, where: str, seen: set[str], key: bool = False) -> None:
    """One annotator-facing ProxAnn task (or, with `key`, the public part of a key row): an item
    id of 1-200 characters seen once; no control character or lone surrogate anywhere; words and
    exemplars lists of non-blank strings; 2 to MAX_DOCUMENTS documents, each an id (1-20 letters,
    digits, _ or -, unique in the task), a non-blank text that looks different from the others
    (`shown_as`) and whether it is ranked (at least 2 are); an answer that fits the app's limit;
    no answer fields (a key row served as tasks is refused)."""
    where = check_item(t, where, seen)
    item = t["item"]
    docs = t.get("documents")
    answers = [f for f in KEY_ONLY if f in t] + [f for d in docs or () if isinstance(d, dict)
                                                 for f in DOC_KEY if f in d]
    if answers and not key:
        raise MethodError(f"{where}: this looks like a key file (the task has its answer: {answers[0]}); "
                          "serve the annotator-facing tasks")
    extra = [f for f in t if f not in PUBLIC + (KEY_ONLY if key else ())]
    if extra:
        raise InputFileError(f"{where}: unknown field {extra[0][:40]!r} in a ProxAnn task")
    _texts(t.get("words"), where, "words", 1)
    _texts(t.get("exemplars"), where, "exemplars", 1)
    if not isinstance(docs, list) or not 2 <= len(docs) <= MAX_DOCUMENTS:
        n = len(docs) if isinstance(docs, list) else type(docs).__name__
        raise InputFileError(f"{where}: needs a list of 2 to {MAX_DOCUMENTS} documents, got {n}")
    ids: set[str] = set()
    looks: dict[str, int] = {}
    for i, d in enumerate(docs):
        at = f"{where}: document {i}"
        if not isinstance(d, dict):
            raise InputFileError(f"{at}: expected an object with id, text and rank")
        unknown = [f for f in d if f not in DOC_PUBLIC + (DOC_KEY if key else ())]
        if unknown:
            raise InputFileError(f"{at}: unknown field {unknown[0][:40]!r}")
        if not isinstance(d.get("id"), str) or not DOC_ID.fullmatch(d["id"]):
            raise InputFileError(f"{at}: id must be 1-20 letters, digits, _ or -")
        if d["id"] in ids:
            raise InputFileError(f"{at}: id {d['id']!r} appears twice")
        ids.add(d["id"])
        if not isinstance(d.get("text"), str) or not shown_as(d["text"]):
            raise InputFileError(f"{at}: text must be a non-blank string")
        look = shown_as(d["text"])
        if look in looks:
            raise InputFileError(f"{at}: its text looks the same as document {looks[look]}'s (annotators "
                                 "could not tell them apart)")
        looks[look] = i
        if not isinstance(d.get("rank"), bool):
            raise InputFileError(f"{at}: rank must be true or false (is it ranked?)")
    ranked = [d["id"] for d in docs if d["rank"]]
    if len(ranked) < 2:
        raise InputFileError(f"{where}: at least 2 documents must be ranked, got {len(ranked)}")
    size = answer_bytes(item, ranked)
    if size > MAX_BODY:
        raise InputFileError(f"{where}: an answer would be {size} bytes; the app takes at most {MAX_BODY}")


def key_row(k: Any, where: str) -> dict[str, Any]:
    """One key row checked and typed: the public task (`check_task`), a model name, a topic (a
    whole number), and per document a role (eval, distractor or instructed), its corpus row (a
    whole number, or null for an outside text or an instruction), theta_dk (a proportion in 0..1;
    required of evaluation documents) and, for an instructed item, the rating it asks for. One
    distractor; at least 2 evaluation documents; an instructed item is not ranked, the others are."""
    check_task(k, where, set(), key=True)
    if not isinstance(k.get("model"), str):
        raise BadValueError(f"{where}: model must be a string")
    row = {**k, "topic": strict_int(k.get("topic"), where, "topic", low=0)}
    docs = []
    for i, d in enumerate(k["documents"]):
        at = f"{where}: document {i} ({d['id']})"
        role = d.get("role")
        if role not in ROLES:
            raise BadValueError(f"{at}: role must be one of {', '.join(ROLES)}, not {str(role)[:40]!r}")
        out = {**d, "document": None if d.get("document") is None
               else strict_int(d["document"], at, "document", low=0),
               "theta": None if d.get("theta") is None
               else strict_float(d["theta"], at, "theta", low=0.0, high=1.0)}
        if role == "eval" and (out["theta"] is None or out["document"] is None):
            raise BadValueError(f"{at}: an evaluation document needs its corpus row and theta")
        if (role == "instructed") == d["rank"]:
            raise BadValueError(f"{at}: an instructed item is not ranked; every other document is")
        if role == "instructed":
            out["expected"] = strict_int(d.get("expected", INSTRUCTED_RATING), at, "expected", 1, SCALE)
        docs.append(out)
    roles = [d["role"] for d in docs]
    if roles.count("distractor") != 1 or roles.count("eval") < 2:
        raise BadValueError(f"{where}: a task has one distractor and at least 2 evaluation documents "
                            f"(got {roles.count('distractor')} and {roles.count('eval')})")
    row["documents"] = docs
    ex_docs, ex_theta = k.get("exemplar_documents") or [], k.get("exemplar_theta") or []
    if not isinstance(ex_docs, list) or not isinstance(ex_theta, list):
        raise BadValueError(f"{where}: exemplar_documents and exemplar_theta must be lists")
    row["exemplar_documents"] = [strict_int(d, where, "exemplar_documents", low=0) for d in ex_docs]
    row["exemplar_theta"] = [strict_float(v, where, "exemplar_theta", low=0.0, high=1.0) for v in ex_theta]
    return row


def public_of(row: dict[str, Any]) -> dict[str, Any]:
    """The annotator-facing task of a key row."""
    return {"item": row["item"], "kind": KIND, "words": row["words"], "exemplars": row["exemplars"],
            "documents": [{f: d[f] for f in DOC_PUBLIC} for d in row["documents"]]}


def read_key(path: str | os.PathLike) -> list[dict[str, Any]]:
    """A ProxAnn key file (JSON lines), every row checked and typed (`key_row`)."""
    if csvout.is_csv(path):
        raise InputFileError(f"{os.fspath(path)}: a ProxAnn key is JSON lines, not CSV")
    return [key_row(r, where) for where, r in numbered_json_lines(path)]


def check_key(key: Sequence[dict[str, Any]], tasks: Sequence[dict[str, Any]] | None = None,
              source: str = "the key") -> dict[str, dict[str, Any]]:
    """The key as item -> row (checked by `key_row`; a row that is not a ProxAnn task is refused),
    after checking that it matches the annotator-facing `tasks` when given: the same items, each
    with the same words, exemplars and documents."""
    items: dict[str, dict[str, Any]] = {}
    for i, k in enumerate(key, 1):
        where = f"{source}, row {i}"
        if not isinstance(k, dict) or k.get("kind") != KIND:
            kind = k.get("kind") if isinstance(k, dict) else type(k).__name__
            raise BadValueError(f"{where}: not a ProxAnn key row (kind {str(kind)[:40]!r}); score intrusion "
                                "items with `intrusion score`")
        row = key_row(k, where)
        if row["item"] in items:
            raise MethodError(f"{where}: item {row['item']!r} appears twice")
        items[row["item"]] = row
    if tasks is not None:
        names = [str(t.get("item")) for t in tasks]
        missing = [n for n in names if n not in items]
        if missing:
            raise MethodError(f"{source} does not match the tasks: {len(missing)} task item(s) are not in it "
                              f"(first {missing[0]!r})")
        for t in tasks:
            if t != public_of(items[str(t["item"])]):
                raise MethodError(f"{source} does not match the tasks: item {t['item']!r} shows other words, "
                                  "exemplars or documents")
        extra = sorted(set(items) - set(names))
        if extra:
            raise MethodError(f"{source} does not match the tasks: it has {len(extra)} item(s) the tasks "
                              f"lack (first {extra[0]!r})")
    return items


def label_problem(label: Any) -> str | None:
    """Why `label` is not a category label (a string of 1-MAX_LABEL characters on one line, not
    blank), or None."""
    if not isinstance(label, str):
        return f"the label must be a string, not {type(label).__name__}"
    if not label.strip():
        return "the label is blank"
    if len(label) > MAX_LABEL:
        return f"the label has {len(label)} characters; at most {MAX_LABEL}"
    if any(c in label for c in "\t\n\r") or bad_character(label):
        return "the label must be one line of text"
    return None


def rating_problem(value: Any, what: str) -> str | None:
    """Why `value` is not a rating 1..SCALE (an integer, not a boolean), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= SCALE:
        return f"{what} must be a whole number 1..{SCALE}"
    return None

