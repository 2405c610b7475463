"""tealeaves' own file format for a `Study`: one gzip-compressed JSON object (`.json.gz`; plain
`.json` reads too), the format the bundled studies ship in and `save_study` writes.

    {"format": "tealeaves-judgments", "version": 1,
     "name", "title", "citation", "licence": the study's, kept with its data,
     "notes": [every counted policy applied when the file was made],
     "topics": {"ids", "words", "corpus", "model"},
     "documents": null or {"topic", "item", "role", "id", "text", "theta", "assigned"},
     "tasks": {task: JUDGMENTS}, "judges": {judge: {task: JUDGMENTS}},
     "metrics": {name: [one number or null per topic]},
     "extra": {study-specific material, e.g. each response's attention checks}}

    JUDGMENTS = {"task", "scale": {"kind", "low", "high", "labels"}, "annotators": [ids],
                 "topic", "annotator", "item": [ints], "value": [numbers or null],
                 "text": null or [strings], "familiar": null or [0/1], "choice": null or [ints]}

Columns are parallel lists (one entry per answer), so the file is small and a damaged one is
named by field and position.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from typing import Any

import numpy as np

from ..errors import InputFileError, shown
from ..files.atomic import atomic_path
from ..files.records import parse_json
from ..files.textfile import read_lines
from . import Documents, Judgments, Scale, Study, TopicSet

FORMAT = "tealeaves-judgments"
VERSION = 1


def _number(x: float) -> float | int | None:
    if not math.isfinite(x):
        return None
    return int(x) if x == int(x) and abs(x) < 2**53 else float(x)


def _judgments_dict(j: Judgments) -> dict[str, Any]:
    return {
        "task": j.task, "scale": j.scale.to_dict(), "annotators": list(j.annotators),
        "topic": j.topic.tolist(), "annotator": j.annotator.tolist(), "item": j.item.tolist(),
        "value": None if j.scale.kind == "text" else [_number(v) for v in j.value],
        "text": None if j.text is None else list(j.text),
        "familiar": None if j.familiar is None else j.familiar.astype(int).tolist(),
        "choice": None if j.choice is None else j.choice.tolist(),
    }


def study_dict(study: Study) -> dict[str, Any]:
    """The JSON object `save_study` writes."""
    return {
        "format": FORMAT, "version": VERSION, "name": study.name, "title": study.title,
        "citation": study.citation, "licence": study.licence, "notes": list(study.notes),
        "topics": study.topics.to_dict(),
        "documents": None if study.documents is None else study.documents.to_dict(),
        "tasks": {k: _judgments_dict(v) for k, v in study.tasks.items()},
        "judges": {k: {t: _judgments_dict(j) for t, j in v.items()} for k, v in study.judges.items()},
        "metrics": {k: [_number(x) for x in np.asarray(v, dtype=float)] for k, v in study.metrics.items()},
        "extra": study.extra,
    }


def save_study(study: Study, path: str | os.PathLike) -> None:
    """Write `study` in the format above (gzip-compressed unless the name ends in `.json`); the
    file is replaced whole or not at all."""
    text = json.dumps(study_dict(study), ensure_ascii=False, separators=(",", ":"))
    text = text.replace(',"', ',\n"')  # lines of bounded length for line-based readers
    data = text.encode("utf-8")
    if not os.fspath(path).endswith(".json"):
        data = gzip.compress(data, compresslevel=9, mtime=0)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


class _Reader:
    """Typed access to the parsed object, each error naming the file and the field."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, field: str, what: str) -> InputFileError:
        return InputFileError(f"{self.path}: {field}: {what}")

    def get(self, obj: Any, key: str, field: str, kind: type | tuple[type, ...],
            optional: bool = False) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(field, f"expected an object, got {type(obj).__name__}")
        if key not in obj or (optional and obj[key] is None):
            if optional:
                return None
            raise self.fail(f"{field}.{key}" if field else key, "missing")
        value = obj[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(f"{field}.{key}" if field else key,
                            f"expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
        return value

    def strings(self, obj: Any, key: str, field: str, n: int | None = None, optional: bool = False) -> Any:
        value = self.get(obj, key, field, list, optional)
        if value is None:
            return None
        bad = next((i for i, v in enumerate(value) if not isinstance(v, str)), None)
        if bad is not None:
            raise self.fail(f"{field}.{key}[{bad}]", f"expected text, got {shown(value[bad])}")
        if n is not None and len(value) != n:
            raise self.fail(f"{field}.{key}", f"{len(value)} entries for {n}")
        return tuple(value)

    def numbers(self, obj: Any, key: str, field: str, n: int | None, integer: bool = False,
                optional: bool = False, nulls: bool = False) -> np.ndarray | None:
        value = self.get(obj, key, field, list, optional)
        if value is None:
            return None
        if n is not None and len(value) != n:
            raise self.fail(f"{field}.{key}", f"{len(value)} entries for {n}")
        kinds = (int,) if integer else (int, float)
        def ok(v: Any) -> bool:
            return type(v) in kinds or (nulls and v is None)  # type(): a bool is not an int here

        if not all(ok(v) for v in value):
            i, v = next((i, v) for i, v in enumerate(value) if not ok(v))
            what = "a whole number" if integer else "a number"
            raise self.fail(f"{field}.{key}[{i}]", f"expected {what}, got {shown(v)}")
        if integer:
            return np.asarray(value, dtype=np.int64)
        return np.array([np.nan if v is None else v for v in value] if nulls else value, dtype=np.float64)


def _judgments(r: _Reader, obj: Any, field: str, topics: TopicSet, documents: Documents | None) -> Judgments:
    task = r.get(obj, "task", field, str)
    sc = r.get(obj, "scale", field, dict)
    try:
        at = f"{field}.scale"
        scale = Scale(r.get(sc, "kind", at, str), float(r.get(sc, "low", at, (int, float))),
                      float(r.get(sc, "high", at, (int, float))), r.strings(sc, "labels", at) or ())
    except InputFileError:
        raise
    except Exception as exc:  # a MethodError from Scale's checks
        raise r.fail(f"{field}.scale", str(exc)) from None
    annotators = r.strings(obj, "annotators", field)
    topic = r.numbers(obj, "topic", field, None, integer=True)
    n = len(topic)
    annotator = r.numbers(obj, "annotator", field, n, integer=True)
    item = r.numbers(obj, "item", field, n, integer=True)
    if scale.kind == "text":
        value = np.full(n, np.nan)
    else:
        value = r.numbers(obj, "value", field, n)
    text = r.strings(obj, "text", field, n, optional=True)
    familiar = r.numbers(obj, "familiar", field, n, integer=True, optional=True)
    choice = r.numbers(obj, "choice", field, n, integer=True, optional=True)
    j = Judgments(task, scale, topics, annotators, topic, annotator, item, value, text,
                  None if familiar is None else familiar.astype(bool), choice, documents, r.path)
    return j.check(f"{r.path}: {field}")


def read_study(path: str | os.PathLike, trusted: bool = False) -> Study:
    """A `Study` from a file `save_study` wrote (gzip-compressed or plain); every malformed part
    is a one-line error naming the file and the field. `trusted`: tealeaves' own bundled file,
    parsed without the bounded, strict reader every other file goes through (its structure is
    still checked)."""
    p = os.fspath(path)
    if trusted:
        with gzip.open(p, "rt", encoding="utf-8") as fh:
            obj = json.load(fh)
    else:
        obj = parse_json("".join(line for _, line in read_lines(p, decompress=True)), p)
    r = _Reader(p)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise InputFileError(f"{p}: not a tealeaves judgments file (no \"format\": {FORMAT!r})")
    if obj.get("version") != VERSION:
        raise InputFileError(f"{p}: judgments format version {shown(obj.get('version'))}; this tealeaves "
                             f"reads version {VERSION}")
    t = r.get(obj, "topics", "", dict)
    ids = r.strings(t, "ids", "topics")
    words = r.get(t, "words", "topics", list)
    if len(words) != len(ids) or not all(isinstance(w, list) and all(isinstance(x, str) for x in w)
                                         for w in words):
        raise r.fail("topics.words", f"expected {len(ids)} lists of words")
    try:
        topics = TopicSet(ids, tuple(tuple(w) for w in words), r.strings(t, "corpus", "topics", len(ids)),
                          r.strings(t, "model", "topics", len(ids)))
    except InputFileError:
        raise
    except Exception as exc:
        raise r.fail("topics", str(exc)) from None
    documents = None
    d = r.get(obj, "documents", "", dict, optional=True)
    if d is not None:
        dt = r.numbers(d, "topic", "documents", None, integer=True)
        m = len(dt)
        if np.any((dt < 0) | (dt >= len(ids))):
            raise r.fail("documents.topic", "a topic index out of range")
        try:
            documents = Documents(dt, r.numbers(d, "item", "documents", m, integer=True),
                                  r.strings(d, "role", "documents", m), r.strings(d, "id", "documents", m),
                                  r.strings(d, "text", "documents", m),
                                  r.numbers(d, "theta", "documents", m, nulls=True),
                                  r.numbers(d, "assigned", "documents", m, integer=True))
        except InputFileError:
            raise
        except Exception as exc:
            raise r.fail("documents", str(exc)) from None
    tasks = {k: _judgments(r, v, f"tasks.{k}", topics, documents)
             for k, v in r.get(obj, "tasks", "", dict).items()}
    judges = {}
    for name, per_task in r.get(obj, "judges", "", dict).items():
        judges[name] = {k: _judgments(r, v, f"judges.{name}.{k}", topics, documents)
                        for k, v in r.get({"x": per_task}, "x", f"judges.{name}", dict).items()}
    metrics = {k: r.numbers({"x": v}, "x", f"metrics.{k}", len(ids), nulls=True)
               for k, v in r.get(obj, "metrics", "", dict).items()}
    return Study(r.get(obj, "name", "", str), topics, tasks, judges, metrics, documents,
                 r.get(obj, "title", "", str), r.get(obj, "citation", "", str),
                 r.get(obj, "licence", "", str), r.strings(obj, "notes", ""), r.get(obj, "extra", "", dict))
