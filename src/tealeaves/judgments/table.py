"""A study as a table: one answer per row, the form a user's own study (or a spreadsheet) takes.

Columns: `topic`, `annotator`, `value` (a number; for the task "label", `text` instead) and
`task` (one of `judgments.TASKS`; a file may hold several), optionally `item` (empty or -1: the
topic as a whole; d >= 0: its d-th judged document), `familiar` (true/false), `choice`,
`low` and `high` (the scale's ends; else 0..1 for intrusion, 1..n for ranks and the answers'
own range for ratings and fits, which a note reports), and per topic `corpus`, `model` and
`words` (its top words, space-separated), which every row of a topic must repeat alike.
"""

from __future__ import annotations

import os

from ..errors import InputFileError, shown
from ..files.records import numbered_csv, strict_float
from . import TASKS, TEXT, Scale, Study, TopicSet, from_rows

KINDS = {"rating": "ordinal", "fit": "ordinal", "word-intrusion": "binary", "topic-intrusion": "binary",
         "rank": "rank", "label": "text"}


def read_table(path: str | os.PathLike, name: str | None = None) -> Study:
    """The study in a CSV of answers (see the module notes); every bad row is a one-line error
    naming the file and line."""
    p = os.fspath(path)
    header, rows = numbered_csv(p, ("topic", "annotator", "task"))
    if "value" not in header and "text" not in header:
        raise InputFileError(f"{p}: the header lacks a value (or text) column")
    topics: dict[str, dict[str, str]] = {}
    for where, row in rows:
        if row["task"] not in TASKS:
            raise InputFileError(f"{where}: task {shown(row['task'])} is not one of {', '.join(TASKS)}")
        t = row["topic"]
        about = {k: row.get(k, "") for k in ("corpus", "model", "words")}
        if t in topics and topics[t] != about:
            k = next(k for k in about if about[k] != topics[t][k])
            raise InputFileError(f"{where}: topic {shown(t)} has {k} {shown(about[k])} here but "
                                 f"{shown(topics[t][k])} in an earlier row")
        topics.setdefault(t, about)
    about = list(topics.values())
    topic_set = TopicSet(tuple(topics), tuple(tuple(v["words"].split()) for v in about),
                         tuple(v["corpus"] for v in about), tuple(v["model"] for v in about))
    tasks, notes = {}, []
    for task in dict.fromkeys(r["task"] for _, r in rows):
        mine = [(w, r) for w, r in rows if r["task"] == task]
        scale, note = _scale(task, mine, p)
        if note:
            notes.append(note)
        tasks[task] = from_rows([r for _, r in mine], task, scale, topic_set, None, p, [w for w, _ in mine])
    return Study(name or os.path.basename(p), topic_set, tasks, notes=tuple(notes))


def _scale(task: str, rows: list[tuple[str, dict[str, str]]], path: str) -> tuple[Scale, str]:
    kind = KINDS[task]
    if kind == "text":
        return TEXT, ""
    ends = set()
    for where, r in rows:
        if r.get("low", "") or r.get("high", ""):
            ends.add((strict_float(r.get("low", ""), where, "low"),
                      strict_float(r.get("high", ""), where, "high")))
    if len(ends) > 1:
        raise InputFileError(f"{path}: task {task}: the rows give {len(ends)} different scales "
                             f"({', '.join(f'{lo:g}..{hi:g}' for lo, hi in sorted(ends)[:3])})")
    if ends:
        low, high = ends.pop()
        return Scale(kind, low, high), ""
    if kind == "binary":
        return Scale(kind, 0, 1), ""
    values = [strict_float(r.get("value", ""), w, "value") for w, r in rows]
    if kind == "rank":
        return Scale(kind, 1, max(max(values, default=1), 2)), ""
    low, high = min(values, default=0), max(values, default=1)
    if low == high:
        raise InputFileError(f"{path}: task {task}: every answer is {low:g}; give the scale's ends "
                             "(columns low and high)")
    return Scale(kind, low, high), (f"{path}: task {task}: no low/high columns, so the scale is the "
                                    f"answers' range {low:g}..{high:g}")
