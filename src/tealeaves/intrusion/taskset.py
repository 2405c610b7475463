"""What the app accepts: the task set, checked once where it is installed (every task must be
answerable over HTTP and storable on every database), and the text of requests.

Needs no extra, so the CLI checks a task file before it touches a database."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import InputFileError, MethodError
from ..util.text import UNSHOWABLE, check_distinct_options

MAX_BODY = 4096  # bytes of a submission (an answer echoes the item and its options)
MAX_ID = 200  # characters of an item or participant id
KINDS = ("word", "topic")


def bad_character(text: str) -> str | None:
    """What is wrong with the first character of `text` that a database or a page cannot carry
    ("the control character U+0000 (...)", "a lone surrogate U+D800 (...)"), or None."""
    m = UNSHOWABLE.search(text)
    if m is None:
        return None
    code = ord(m.group())
    if code >= 0xD800:
        return f"a lone surrogate U+{code:04X} (not Unicode text)"
    return f"the control character U+{code:04X} (only tab, newline and carriage return are allowed)"


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string (keys included) in a JSON-like value, with where it is."""
    stack = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            yield where, v
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str):
                    yield f"{where}.{k}" if where else k, k
                stack.append((f"{where}.{k}" if where else str(k), x))
        elif isinstance(v, list | tuple):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))


def answer_bytes(item: str, options: list[str]) -> int:
    """The size of the largest answer the page sends for this task (as `JSON.stringify` writes
    it, with a participant id of the longest kind)."""
    body = {"participant": "x" * MAX_ID, "item": item, "options": options,
            "choice": len(options) - 1, "response_ms": 86_400_000}
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def check_task_set(tasks: Sequence[Any], source: str = "the task set") -> None:
    """Refuse, with a one-line error naming the task, a task set the app could not serve to the
    end: no tasks; a task that is not an object; an item id that is not a string of 1-200
    characters or appears twice; a kind other than word or topic; fewer than 2 options, an
    option that is not a string, is blank, or looks the same as another (`shown_as`); a text
    that is not a string; a control character or lone surrogate anywhere (`bad_character`); an
    answer larger than the app accepts; a key row (its answer) in place of a task."""
    if not isinstance(tasks, list | tuple):
        raise InputFileError(f"{source}: expected a list of tasks, got {type(tasks).__name__}")
    if not tasks:
        raise InputFileError(f"{source}: no tasks")
    seen: set[str] = set()
    for i, t in enumerate(tasks, 1):
        _check_task(t, f"{source}: task {i}", seen)


def check_item(t: Any, where: str, seen: set[str]) -> str:
    """What every task of the app needs: an object whose item id is a string of 1-MAX_ID
    characters not in `seen` (added), with no character a page or database cannot carry in any
    field; returns `where` with the item named."""
    if not isinstance(t, dict):
        raise InputFileError(f"{where}: expected an object, got {type(t).__name__}")
    item = t.get("item")
    if not isinstance(item, str) or not 1 <= len(item) <= MAX_ID:
        raise InputFileError(f"{where}: the item id must be a string of 1-{MAX_ID} characters")
    for path, text in strings(t):
        bad = bad_character(text)
        if bad:
            raise InputFileError(f"{where}: field {path!r} holds {bad}")
    where = f"{where} (item {item!r})"
    if item in seen:
        raise InputFileError(f"{where}: the item appears twice")
    seen.add(item)
    return where


def _check_task(t: Any, where: str, seen: set[str]) -> None:
    where = check_item(t, where, seen)
    if "intruder" in t or "option_log_theta" in t:
        raise MethodError(f"{where}: this looks like a key file (the task has its answer); "
                          "serve the annotator-facing tasks")
    if t.get("kind") not in KINDS:
        raise InputFileError(f"{where}: kind must be word or topic, not {str(t.get('kind'))[:40]!r}")
    if t.get("text") is not None and not isinstance(t["text"], str):
        raise InputFileError(f"{where}: text must be a string, not {type(t['text']).__name__}")
    _check_options(t.get("options"), t["item"], where)


def _check_options(options: Any, item: str, where: str) -> None:
    if not isinstance(options, list) or len(options) < 2:
        n = len(options) if isinstance(options, list) else type(options).__name__
        raise InputFileError(f"{where}: needs a list of at least 2 options, got {n}")
    for j, o in enumerate(options):
        if not isinstance(o, str):
            raise InputFileError(f"{where}: option {j} is {type(o).__name__}, not a string")
    check_distinct_options(options, where)
    size = answer_bytes(item, options)
    if size > MAX_BODY:
        raise InputFileError(f"{where}: the options are too long to answer (an answer would be {size} "
                             f"bytes; the app takes at most {MAX_BODY})")
