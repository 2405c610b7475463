"""What the app serves: a task set of one family, intrusion (word and topic tasks, Chang et al.
2009) or ProxAnn (Hoyle et al. 2025), checked where it is read and again where it is installed,
and its key read by the family's own reader. Needs no extra (the CLI checks files before it
touches a database)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import InputFileError
from ..files import csvout
from ..files.records import numbered_json_lines
from ..intrusion import scoring as intrusion_scoring
from ..intrusion import taskset as intrusion_taskset
from ..intrusion.tasks import read_tasks
from ..proxann import taskset as proxann_taskset
from ..proxann.tasks import KIND as PROXANN

KINDS = (*intrusion_taskset.KINDS, PROXANN)


def family(tasks: Sequence[Any], source: str = "the task set") -> str:
    """"proxann" or "intrusion": the family every task belongs to (a task set holding both, or a
    task of another kind, is a one-line error naming the task)."""
    first = None
    for i, t in enumerate(tasks, 1):
        kind = t.get("kind") if isinstance(t, dict) else None
        if kind not in KINDS:
            if isinstance(t, dict):
                raise InputFileError(f"{source}: task {i}: kind must be word, topic or proxann, not "
                                     f"{str(kind)[:40]!r}")
            continue  # the family's check names what is wrong with it
        fam = PROXANN if kind == PROXANN else "intrusion"
        if first is None:
            first = fam
        elif fam != first:
            raise InputFileError(f"{source}: task {i} is a {kind} task among {first} tasks; a task set holds "
                                 "either intrusion tasks (word, topic) or ProxAnn tasks, not both")
    return first or "intrusion"


def check_task_set(tasks: Sequence[Any], source: str = "the task set") -> str:
    """Refuse, with a one-line error naming the task, a task set the app could not serve to the
    end (`intrusion.taskset.check_task_set`, `proxann.taskset.check_task`); return its family."""
    if not isinstance(tasks, list | tuple):
        raise InputFileError(f"{source}: expected a list of tasks, got {type(tasks).__name__}")
    if not tasks:
        raise InputFileError(f"{source}: no tasks")
    fam = family(tasks, source)
    if fam == PROXANN:
        seen: set[str] = set()
        for i, t in enumerate(tasks, 1):
            proxann_taskset.check_task(t, f"{source}: task {i}", seen)
    else:
        intrusion_taskset.check_task_set(tasks, source)
    return fam


def read_task_set(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Annotator-facing tasks: ProxAnn tasks as JSON lines, intrusion tasks as `read_tasks`
    reads them (JSON lines or the long CSV)."""
    if not csvout.is_csv(path):
        rows = numbered_json_lines(path)
        if any(r.get("kind") == PROXANN for _, r in rows):
            return [r for _, r in rows]
    return read_tasks(path)


def read_key(path: str | os.PathLike, tasks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The key of `tasks` (read by their family's reader), checked against them."""
    source = os.fspath(path)
    if family(tasks) == PROXANN:
        key = proxann_taskset.read_key(path)
        proxann_taskset.check_key(key, tasks, source=source)
    else:
        key = intrusion_scoring.read_key(path)
        intrusion_scoring.check_key(key, tasks, source=source)
    return key


def check_key(key: Sequence[dict[str, Any]], tasks: Sequence[dict[str, Any]]) -> None:
    """A key given in memory, checked against `tasks` by their family's check."""
    if family(tasks) == PROXANN:
        proxann_taskset.check_key(key, tasks)
    else:
        intrusion_scoring.check_key(key, tasks)
